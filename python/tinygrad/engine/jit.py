# tinygrad.engine.jit: TinyJit is the C++ one (src/tg/tensor/jit.h over engine/jit.h), bound in python/src/jit.cpp.
# The engine replays captured kernels itself; there are no per-device graph runners.
from tinygrad._C import TinyJit  # noqa: F401
from tinygrad.engine.realize import Runner
from tinygrad._unsupported import unsupported_class, unsupported_function

_NO_GRAPHS = "the JIT replays its captured kernels one by one (src/tg/engine/jit.h); there are no device graphs"
class GraphException(Exception): pass
GraphRunner = unsupported_class("tinygrad.engine.jit.GraphRunner", _NO_GRAPHS, (Runner,))
MultiGraphRunner = unsupported_class("tinygrad.engine.jit.MultiGraphRunner", _NO_GRAPHS, (GraphRunner,))
apply_graph_to_jit = unsupported_function("tinygrad.engine.jit.apply_graph_to_jit", _NO_GRAPHS)
