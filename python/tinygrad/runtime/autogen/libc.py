# tinygrad.runtime.autogen.libc: the reference's ctypes bindings of libc for its device runtimes (mmap, ioctl). Every
# name imports and raises when used
from tinygrad._unsupported import unsupported_module_getattr
__getattr__ = unsupported_module_getattr(__name__, "the engine's runtimes are C++")
