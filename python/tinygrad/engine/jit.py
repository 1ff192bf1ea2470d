# tinygrad.engine.jit: TinyJit is the C++ one (src/tg/tensor/jit.h over engine/jit.h), bound in python/src/jit.cpp
from tinygrad._C import TinyJit  # noqa: F401
