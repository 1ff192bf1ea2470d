from __future__ import annotations
import builtins
from typing import Union
from tinygrad import _C
from tinygrad._C import DType, least_upper_float, sum_acc_dtype, truncate  # noqa: F401

ConstType = Union[float, int, bool]
DTypeLike = Union[str, DType]
_T = _C.dtype_table

class _dtypes_meta(type):
  # default_float / default_int live in the C++ engine, so assigning them here changes what it uses
  @property
  def default_float(cls) -> DType: return _C.get_default_float()
  @default_float.setter
  def default_float(cls, d:DType): _C.set_default_float(d)
  @property
  def default_int(cls) -> DType: return _C.get_default_int()
  @default_int.setter
  def default_int(cls, d:DType): _C.set_default_int(d)

class dtypes(metaclass=_dtypes_meta):
  @staticmethod
  def is_float(x:DType) -> builtins.bool: return _C.is_float(x)
  @staticmethod
  def is_int(x:DType) -> builtins.bool: return _C.is_int(x)
  @staticmethod
  def is_unsigned(x:DType) -> builtins.bool: return _C.is_unsigned(x)
  @staticmethod
  def is_bool(x:DType) -> builtins.bool: return _C.is_bool(x)
  @staticmethod
  def from_py(x) -> DType:
    if x.__class__ is builtins.float: return dtypes.default_float
    if x.__class__ is builtins.int: return dtypes.default_int
    if x.__class__ is builtins.bool: return dtypes.bool
    # put this in the last is faster because there are more items than lists/tuples to check
    return max([dtypes.from_py(xi) for xi in x]) if x else dtypes.default_float
  @staticmethod
  def as_const(val, dtype:DType): return _C.as_const(val, dtype)
  @staticmethod
  def min(dtype:DType): return _C.dtype_min(dtype)
  @staticmethod
  def max(dtype:DType): return _C.dtype_max(dtype)
  @staticmethod
  def finfo(dtype:DType) -> tuple[builtins.int, builtins.int]: return _C.finfo(dtype)
  @staticmethod
  def fields() -> dict[str, DType]: return DTYPES_DICT
  void, bool, int8, uint8, int16, uint16 = _T["void"], _T["bool"], _T["int8"], _T["uint8"], _T["int16"], _T["uint16"]
  int32, uint32, int64, uint64 = _T["int32"], _T["uint32"], _T["int64"], _T["uint64"]
  fp8e4m3, fp8e5m2, float16, bfloat16, float32, float64 = _T["fp8e4m3"], _T["fp8e5m2"], _T["float16"], _T["bfloat16"], _T["float32"], _T["float64"]
  # aliases
  half, float, double = float16, float32, float64
  uchar, ushort, uint, ulong = uint8, uint16, uint32, uint64
  char, short, int, long = int8, int16, int32, int64
  fp8s = (fp8e4m3, fp8e5m2)
  floats = fp8s + (float16, bfloat16, float32, float64)
  uints = (uint8, uint16, uint32, uint64)
  sints = (int8, int16, int32, int64)
  ints = uints + sints
  all = floats + ints + (bool,)

DTYPES_DICT = {k: v for k, v in dtypes.__dict__.items() if isinstance(v, DType) and not k.startswith(("__", "default", "void"))}
INVERSE_DTYPES_DICT = {**{v.name:k for k,v in DTYPES_DICT.items()}, "void": "void"}

def least_upper_dtype(*ds:DType) -> DType: return _C.least_upper_dtype(*ds)
def to_dtype(x:Union[DType, str]) -> DType: return x if isinstance(x, DType) else getattr(dtypes, x)

# torch's dtype for a DType and back (through numpy, as the reference)
def _to_torch_dtype(dtype:DType):
  import numpy as np, torch
  try: return torch.from_numpy(np.array([], dtype=_to_np_dtype(dtype))).dtype
  except TypeError: return None
def _from_torch_dtype(torchdtype) -> DType:
  return {v:k for k in dtypes.all if (v:=_to_torch_dtype(k)) is not None}[torchdtype]

# numpy's dtype for a DType (None where numpy has none, as for bfloat16 and the fp8s), and back
def _to_np_dtype(dtype:DType):
  import numpy as np
  return np.dtype(dtype.fmt).type if dtype.fmt is not None else None
def _from_np_dtype(npdtype) -> DType:
  import numpy as np
  return dtypes.fields()[np.dtype(npdtype).name]
