# tinygrad.runtime.autogen.nv_gpu: the reference's ctypes bindings of NVIDIA's open kernel driver headers. Every name imports and raises when used
from tinygrad._unsupported import unsupported_module_getattr
__getattr__ = unsupported_module_getattr(__name__, "there is no NV device")
