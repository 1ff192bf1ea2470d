# tinygrad.tensor: the Tensor is the C++ engine's (src/tg/tensor/tensor.h), bound in python/src/tensor*.cpp; beside it
# the reference's module-level helpers
from __future__ import annotations
from tinygrad import _C
from tinygrad._C import Tensor  # noqa: F401
from tinygrad.dtype import DType, DTypeLike, dtypes, ConstType, least_upper_dtype, least_upper_float, sum_acc_dtype, to_dtype  # noqa: F401
from tinygrad.dtype import _to_np_dtype, _from_np_dtype  # noqa: F401
from tinygrad.device import Device, Buffer  # noqa: F401
from tinygrad.uop.ops import UOp, Ops, sint, smax  # noqa: F401
from tinygrad.helpers import all_same
from contextlib import ContextDecorator
from typing import Literal, Optional, cast  # noqa: F401
import contextvars

# the metadata (the Tensor method being run) the reference attaches to the UOps it creates. NOTE: the engine records
# its own (ScheduleItem.metadata); setting this changes nothing there
_METADATA: contextvars.ContextVar[Optional[object]] = contextvars.ContextVar("_METADATA", default=None)
ReductionStr = Literal["mean", "sum", "none"]

def get_shape(x) -> tuple[int, ...]:
  """The shape of nested lists/tuples (a str, a 0-d array and a scalar are scalars); ValueError when ragged."""
  if isinstance(x, str) or not (hasattr(x, "__len__") and hasattr(x, "__getitem__")) or getattr(x, "shape", None) == (): return ()
  if not all_same(subs := [get_shape(xi) for xi in x]): raise ValueError(f"inhomogeneous shape from {x}")
  return (len(subs),) + (subs[0] if subs else ())

def _broadcast_shape(*shapes:tuple[sint, ...]) -> tuple[sint, ...]:
  """numpy's broadcast of shapes aligned on the right; a 0 anywhere in a column wins (an empty dim)."""
  n = max((len(s) for s in shapes), default=0)
  cols = zip(*[(1,) * (n - len(s)) + tuple(s) for s in shapes])
  return tuple(0 if 0 in c else smax(c) for c in cols)

class _train(ContextDecorator):
  """`with Tensor.train():` / `@Tensor.train()`: sets Tensor.training inside, restores it after"""
  def __init__(self, mode:bool=True): self.mode = mode
  def __enter__(self): self.prev, Tensor.training = Tensor.training, self.mode
  def __exit__(self, *exc): Tensor.training = self.prev

class _test(_train):
  def __init__(self, mode:bool=False): super().__init__(mode)

Tensor.train = _train
Tensor.test = _test

def _schedule_with_vars(self:Tensor, *lst:Tensor):
  """The kernels that realize these tensors, memory-planned, and the bound Variables' values; run them with
  tinygrad.engine.realize.run_schedule. Afterwards the tensors stand for the buffers those kernels write."""
  return _C.schedule_with_vars([self, *lst])
def _schedule(self:Tensor, *lst:Tensor):
  schedule, var_vals = _schedule_with_vars(self, *lst)
  assert len(var_vals) == 0, f"schedule() has bound variables {var_vals}: use schedule_with_vars"
  return schedule
Tensor.schedule_with_vars = _schedule_with_vars
Tensor.schedule = _schedule
