# tinygrad.runtime.support.allocator: the reference's sub-allocators for its HCQ devices
from tinygrad._unsupported import unsupported_class
_WHY = "the engine's devices allocate in C++ (src/tg/runtime/device.h); there is no TLSF sub-allocator"
TLSFAllocator = unsupported_class("tinygrad.runtime.support.allocator.TLSFAllocator", _WHY)
