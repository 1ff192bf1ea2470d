# tinygrad.runtime.support.usb: the reference's USB GPU support (ASM24 controllers)
from tinygrad._unsupported import unsupported_class
_WHY = "there is no USB GPU support"
ASM24Controller = unsupported_class("tinygrad.runtime.support.usb.ASM24Controller", _WHY)
USBMMIOInterface = unsupported_class("tinygrad.runtime.support.usb.USBMMIOInterface", _WHY)
