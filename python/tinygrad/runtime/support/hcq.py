# tinygrad.runtime.support.hcq: the reference's hardware command queue devices (AMD, NV, QCOM)
from tinygrad.device import Compiled
from tinygrad._unsupported import unsupported_class
_WHY = "there are no HCQ devices"
HCQCompiled = unsupported_class("tinygrad.runtime.support.hcq.HCQCompiled", _WHY, (Compiled,))
HCQBuffer = unsupported_class("tinygrad.runtime.support.hcq.HCQBuffer", _WHY)
HWQueue = unsupported_class("tinygrad.runtime.support.hcq.HWQueue", _WHY)
HCQSignal = unsupported_class("tinygrad.runtime.support.hcq.HCQSignal", _WHY)
HCQProgram = unsupported_class("tinygrad.runtime.support.hcq.HCQProgram", _WHY)
HCQAllocator = unsupported_class("tinygrad.runtime.support.hcq.HCQAllocator", _WHY)
FileIOInterface = unsupported_class("tinygrad.runtime.support.hcq.FileIOInterface", _WHY)
MMIOInterface = unsupported_class("tinygrad.runtime.support.hcq.MMIOInterface", _WHY)
