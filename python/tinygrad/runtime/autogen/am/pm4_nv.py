# tinygrad.runtime.autogen.am.pm4_nv: the reference's ctypes bindings of AMD's PM4 packets. Every name imports and raises when used
from tinygrad._unsupported import unsupported_module_getattr
__getattr__ = unsupported_module_getattr(__name__, "there is no AMD device")
