# tinygrad.tensor: the Tensor is the C++ engine's (src/tg/tensor/tensor.h), bound in python/src/tensor*.cpp; beside it
# the reference's module-level helpers
from __future__ import annotations
from tinygrad import _C
from tinygrad._C import Tensor  # noqa: F401
from tinygrad.dtype import DType, DTypeLike, dtypes, ConstType, least_upper_dtype, least_upper_float, sum_acc_dtype, to_dtype  # noqa: F401
from tinygrad.dtype import _to_np_dtype, _from_np_dtype  # noqa: F401
from tinygrad.device import Device, Buffer  # noqa: F401
from tinygrad.uop.ops import UOp, Ops, sint, smax  # noqa: F401
from tinygrad.helpers import all_same, Metadata
from tinygrad._unsupported import _fail
from contextlib import ContextDecorator
from typing import Literal, Optional, cast  # noqa: F401
import contextvars

class _MetadataVar:
  """tinygrad's _METADATA: the Metadata of the Tensor method being run, which names the UOps it makes. It reads None
  unless set: set to a Metadata, every Tensor method records that one instead of its own name (UOp.metadata,
  ScheduleItem.metadata), as the reference's methods only name their UOps while it is None; set(None) or
  reset(token) gives them back their names. A contextvars.ContextVar whose value the engine follows (per thread)."""
  def __init__(self, name:str): self._var: contextvars.ContextVar[Optional[Metadata]] = contextvars.ContextVar(name, default=None)
  @property
  def name(self) -> str: return self._var.name
  def get(self, *default): return self._var.get(*default)
  def set(self, value:Optional[Metadata]) -> contextvars.Token:
    token = self._var.set(value)
    _C.set_metadata(value)
    return token
  def reset(self, token:contextvars.Token) -> None:
    self._var.reset(token)
    _C.set_metadata(self._var.get())
  def __repr__(self): return f"<_MetadataVar name={self.name!r} value={self.get()!r}>"
_METADATA = _MetadataVar("_METADATA")
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

# *** the rest of the reference's Tensor API, in Python where it is Python's (fetch, UOps), as stand-ins where the
# engine has no such feature; each has the reference's signature (tests/python/test_signatures.py) ***

def _from_uop(y:UOp, **kwargs) -> Tensor:
  """A tensor of a symbolic value: a bound Variable, a const, or their sums and products."""
  if y.op is Ops.BIND: return Tensor(y, **kwargs, requires_grad=False)
  if y.op is Ops.CONST: return Tensor(y.arg, **kwargs, requires_grad=False)
  if y.op is Ops.MUL: return Tensor.from_uop(y.src[0]) * Tensor.from_uop(y.src[1])
  if y.op is Ops.ADD: return Tensor.from_uop(y.src[0]) + Tensor.from_uop(y.src[1])
  raise RuntimeError(f"unhandled UOp {y}")

def _from_url(url:str, gunzip:bool=False, **kwargs) -> Tensor:
  """The bytes at url (fetched once into the download cache, gunzipped if asked) as a uint8 tensor. NOTE: the
  reference's is a DISK tensor over the cached file; this one holds the bytes on the default device."""
  from tinygrad.helpers import fetch
  return Tensor(fetch(url, gunzip=gunzip).read_bytes(), **kwargs)

def _llvm_bf16_cast(self:Tensor, dtype:DTypeLike) -> Tensor:
  assert self.dtype == dtypes.bfloat16
  return self.to("LLVM").cast(dtype)

# MathTrait's abstract pair, which the reference's Tensor leaves unimplemented (its ops go through _apply_uop)
def _alu(self:Tensor, arg:Ops, *src) -> Tensor: raise NotImplementedError
def _const_like(self:Tensor, b) -> Tensor: raise NotImplementedError
def _ufix(self:Tensor, x): return self.const_like(x) if not isinstance(x, Tensor) else x
def _threefry(self:Tensor, seed): return self.alu(Ops.THREEFRY, seed)

Tensor.from_uop = staticmethod(_from_uop)
Tensor.from_url = staticmethod(_from_url)
Tensor.llvm_bf16_cast, Tensor.alu, Tensor.const_like, Tensor.ufix, Tensor.threefry = _llvm_bf16_cast, _alu, _const_like, _ufix, _threefry

_NO_IMAGE = "image dtypes (IMAGE=1) are not in this engine"
def _unsupported_method(fn, why:str):
  fn.__unsupported__ = why  # type: ignore[attr-defined]
  fn.__doc__ = f"Not on tinygrad.cpp: {why}."
  return fn
def _keccak(self:Tensor, cfg:str|tuple[int, int]="sha3_256"): _fail("Tensor.keccak", "the Keccak (SHA-3) hash is not ported")
def _image_dot(self:Tensor, w:Tensor, dtype:DTypeLike|None=None) -> Tensor: _fail("Tensor.image_dot", _NO_IMAGE)
def _image_conv2d(self:Tensor, weight:Tensor, bias:Tensor|None=None, groups=1, stride=1, dilation=1, padding=0, dtype=None) -> Tensor:
  _fail("Tensor.image_conv2d", _NO_IMAGE)
Tensor.keccak = _unsupported_method(_keccak, "the Keccak (SHA-3) hash is not ported")
Tensor.image_dot, Tensor.image_conv2d = _unsupported_method(_image_dot, _NO_IMAGE), _unsupported_method(_image_conv2d, _NO_IMAGE)
