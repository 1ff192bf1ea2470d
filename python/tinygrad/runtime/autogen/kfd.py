# tinygrad.runtime.autogen.kfd: the reference's ctypes bindings of AMD's KFD driver. Every name imports and raises when used
from tinygrad._unsupported import unsupported_module_getattr
__getattr__ = unsupported_module_getattr(__name__, "there is no AMD device")
