# tinygrad.runtime.autogen.cuda: the reference's ctypes bindings of CUDA's driver API. Every name imports and raises when used
from tinygrad._unsupported import unsupported_module_getattr
__getattr__ = unsupported_module_getattr(__name__, "the engine's CUDA device loads the driver and NVRTC itself")
