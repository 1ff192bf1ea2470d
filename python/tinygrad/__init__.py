# tinygrad's Python API on the tinygrad.cpp engine (the extension tinygrad._C)
from tinygrad.tensor import Tensor                                    # noqa: F401
from tinygrad.uop.ops import UOp
Variable = UOp.variable
from tinygrad.dtype import dtypes                                     # noqa: F401
from tinygrad.helpers import GlobalCounters, fetch, Context, getenv   # noqa: F401
from tinygrad.device import Device                                    # noqa: F401
from tinygrad.engine.jit import TinyJit                               # noqa: F401
