# tinygrad.runtime.support.am.ip: the reference's AM driver's IP blocks
from tinygrad._unsupported import unsupported_class
_WHY = "there is no AMD device"
AM_GMC = unsupported_class("tinygrad.runtime.support.am.ip.AM_GMC", _WHY)
