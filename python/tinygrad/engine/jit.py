# tinygrad.engine.jit: TinyJit is the C++ engine's (src/tg/engine/jit.h), bound in python/src/jit.cpp
from tinygrad._C import TinyJit  # noqa: F401
