from __future__ import annotations
from tinygrad._C import Tensor  # noqa: F401
from tinygrad.dtype import DType, dtypes, ConstType, _to_np_dtype, _from_np_dtype  # noqa: F401
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
