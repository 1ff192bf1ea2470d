# tinygrad.runtime.autogen.am.am: the reference's ctypes bindings of AMD's register headers for the AM driver. Every name imports and raises when used
from tinygrad._unsupported import unsupported_module_getattr
__getattr__ = unsupported_module_getattr(__name__, "there is no AMD device")
