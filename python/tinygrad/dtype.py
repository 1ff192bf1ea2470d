# tinygrad.dtype: DType and the dtypes constants are the engine's (src/tg/dtype/); pointer dtypes are DTypes whose
# is_ptr() is true (PtrDType is that check); truncate and the fp8 conversions give a Python value the dtype's rounding
from __future__ import annotations
import builtins, math
from typing import Callable, Union
from tinygrad import _C
from tinygrad._C import DType, least_upper_float, sum_acc_dtype  # noqa: F401
from tinygrad._unsupported import unsupported_class, unsupported_function

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

# *** pointer and image dtypes ***

class _PtrDTypeMeta(type):
  def __instancecheck__(cls, x) -> builtins.bool: return isinstance(x, DType) and x.is_ptr()
class PtrDType(metaclass=_PtrDTypeMeta):
  """isinstance(d, PtrDType): d is a pointer dtype, made with DType.ptr(size, local)"""
  def __new__(cls, *args, **kwargs): raise TypeError("PtrDType: make pointer dtypes with DType.ptr(size, local)")

_NO_IMAGES = "image dtypes (QCOM's textures, IMAGE=1) are not an engine dtype"
ImageDType = unsupported_class("tinygrad.dtype.ImageDType", _NO_IMAGES)
dtypes.imageh = staticmethod(unsupported_function("dtypes.imageh", _NO_IMAGES))
dtypes.imagef = staticmethod(unsupported_function("dtypes.imagef", _NO_IMAGES))

# *** a Python value as the dtype stores it: truncate[dtype](x) ***

def truncate_fp16(x) -> float: return _C.truncate(float(x), dtypes.float16)   # rounds to nearest even; inf past 65504
def truncate_bf16(x) -> float: return _C.truncate(float(x), dtypes.bfloat16)  # drops the low 16 bits; inf past max

# fp8: e4m3 ("fn": no infinities, one NaN) and e5m2, both saturating at their largest finite value
_FP8 = {dtypes.fp8e4m3: (3, 7, 0x7E, 0x7F), dtypes.fp8e5m2: (2, 15, 0x7B, 0x7E)}  # mantissa bits, bias, max, NaN
def float_to_fp8(x:float, dtype:DType) -> builtins.int:
  """x rounded to nearest even in the fp8 dtype, as its byte; beyond the largest finite value (infinities too) it saturates"""
  assert dtype in dtypes.fp8s, "Only for fp8s"
  mbits, bias, max_code, nan_code = _FP8[dtype]
  sign = 0x80 if math.copysign(1.0, x) < 0 else 0
  if math.isnan(x): return sign | nan_code
  if math.isinf(x): return sign | max_code
  # the spacing of representable values around |x| (subnormals share the smallest normal binade's); x/ulp is exact
  min_normal = math.ldexp(1.0, 1 - bias)
  ulp = math.ldexp(1.0, max(math.frexp(abs(x))[1] - 1, 1 - bias) - mbits)
  v = round(abs(x) / ulp) * ulp  # round() ties to even
  if v > fp8_to_float(max_code, dtype): return sign | max_code
  if v < min_normal: return sign | builtins.int(v / math.ldexp(min_normal, -mbits))  # subnormal, or zero
  exp = math.frexp(v)[1] - 1
  return sign | ((exp + bias) << mbits) | (builtins.int(v / math.ldexp(1.0, exp - mbits)) - (1 << mbits))

def fp8_to_float(x:builtins.int, dtype:DType) -> float:
  assert dtype in dtypes.fp8s, "Only for fp8s"
  mbits, bias, _, _ = _FP8[dtype]
  sign, exp, mant = -1.0 if x & 0x80 else 1.0, (x & 0x7F) >> mbits, x & ((1 << mbits) - 1)
  if dtype == dtypes.fp8e4m3 and (x & 0x7F) == 0x7F: return math.nan
  if dtype == dtypes.fp8e5m2 and exp == 0x1F: return math.nan if mant else sign * math.inf
  if exp == 0: return sign * math.ldexp(mant, 1 - bias - mbits)  # subnormal
  return sign * math.ldexp((1 << mbits) + mant, exp - bias - mbits)

def _truncate_fp8(dtype:DType) -> Callable: return lambda x: fp8_to_float(float_to_fp8(x, dtype), dtype)
truncate: dict[DType, Callable] = {**{d: (lambda x, d=d: _C.truncate(x, d)) for d in dtypes.all},
                                   **{d: _truncate_fp8(d) for d in dtypes.fp8s}}
