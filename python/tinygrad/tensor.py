# tinygrad.tensor: the Tensor is the C++ engine's (src/tg/tensor/tensor.h), bound in python/src/tensor*.cpp
from __future__ import annotations
from tinygrad import _C
from tinygrad._C import Tensor  # noqa: F401
from tinygrad.dtype import DType, DTypeLike, dtypes, ConstType, least_upper_dtype, least_upper_float, sum_acc_dtype, to_dtype  # noqa: F401
from tinygrad.dtype import _to_np_dtype, _from_np_dtype  # noqa: F401
from tinygrad.device import Device, Buffer  # noqa: F401
from tinygrad.uop.ops import UOp, Ops  # noqa: F401
from contextlib import ContextDecorator

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
