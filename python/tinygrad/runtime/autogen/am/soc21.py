# tinygrad.runtime.autogen.am.soc21: the reference's ctypes bindings of AMD's SOC21 registers. Every name imports and raises when used
from tinygrad._unsupported import unsupported_module_getattr
__getattr__ = unsupported_module_getattr(__name__, "there is no AMD device")
