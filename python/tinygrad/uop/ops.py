# tinygrad.uop.ops: UOp, UPat, PatternMatcher and graph_rewrite are the engine's (src/tg/uop/); beside them the
# reference's module-level helpers over UOps (resolve, smax, sym_infer), the Python ALU (exec_alu) and its VIZ names
from __future__ import annotations
import math, operator, contextvars  # noqa: F401
from dataclasses import dataclass
from typing import Any, Callable, Union
from tinygrad import _C
from tinygrad._C import UOp, Ops, UPat, PatternMatcher, graph_rewrite, ArgObject, print_uops, type_verify  # noqa: F401
from tinygrad.dtype import DType, dtypes, truncate
from tinygrad.helpers import ContextVar, argfix, cdiv, cmod, getenv
from tinygrad._unsupported import UnsupportedValue, unsupported_class, unsupported_function

class GroupOp:
  Unary, Binary, Ternary = frozenset(_C.ops_in("Unary")), frozenset(_C.ops_in("Binary")), frozenset(_C.ops_in("Ternary"))
  ALU = frozenset(_C.ops_in("ALU"))
  Irreducible, Movement = frozenset(_C.ops_in("Irreducible")), frozenset(_C.ops_in("Movement"))
  Buffer, Block = frozenset(_C.ops_in("Buffer")), frozenset(_C.ops_in("Block"))
  Commutative, Associative = frozenset(_C.ops_in("Commutative")), frozenset(_C.ops_in("Associative"))
  Idempotent, UnsafePad = frozenset(_C.ops_in("Idempotent")), frozenset(_C.ops_in("UnsafePad"))
  Meta, All = frozenset(_C.ops_in("Meta")), frozenset(_C.ops_in("All"))

sint = Union[int, UOp]  # a size: an int, or a UOp of Variables

# *** helpers over ints or UOps ***

def resolve(x:UOp|bool, default:bool=True) -> bool:
  """A bool UOp's value when its range decides it, else default."""
  if isinstance(x, bool): return x
  assert x.dtype == dtypes.bool, "UOp in resolve must be bool"
  return bool(sx.vmin) if (sx := x.simplify()).vmin == sx.vmax else default

def ssimplify(x): return (r.arg if (r := x.simplify()).op is Ops.CONST else r) if isinstance(x, UOp) else x
def _sfold(lst, uop_fxn, py_fxn):
  if not any(isinstance(x, UOp) for x in lst): return py_fxn(lst)
  ret = lst[0] if isinstance(lst[0], UOp) else UOp.const(dtypes.int, lst[0])
  for x in lst[1:]: ret = uop_fxn(ret, x)
  return ssimplify(ret)
def smax(*lst): return _sfold(argfix(*lst), UOp.maximum, max)
def smin(*lst): return _sfold(argfix(*lst), UOp.minimum, min)

def sym_infer(uop:sint, var_vals:dict[UOp, int]) -> int:
  """The value of a symbolic size once its Variables (DEFINE_VAR UOps) have these values."""
  if not isinstance(uop, UOp): return uop
  ret = uop.substitute({k: k.const_like(v) for k, v in var_vals.items()}).simplify()
  if ret.op is not Ops.CONST: raise ValueError(f"sym_infer: {uop.render()} has variables without a value in {var_vals}")
  return ret.arg

# a rewrite that replaces the nodes found in ctx (a dict UOp -> UOp): graph_rewrite(x, _substitute, {a: b})
_substitute = PatternMatcher([(UPat(tuple(Ops.__members__.values()), name="x"), lambda ctx, x: ctx.get(x, None))])

@dataclass(frozen=True)
class KernelInfo:
  # NOTE: the engine's kernels carry their own KernelInfo (an ArgObject on the SINK); this is the reference's record
  name: str = "test"             # name of the kernel
  local_dims: int = 0            # number of local dimensions  (RANGEs remapped to SPECIAL)
  upcasted: int = 0              # number of upcasted dimensions (RANGEs remapped to UNROLL)
  dont_use_locals: bool = False  # don't use local indexing

# *** the ALU in Python: what each op computes on Python numbers, and exec_alu, which rounds to the dtype ***

def _safe_exp2(x):
  try: return 2 ** x
  except OverflowError: return math.inf
def _safe_pow(x, y):
  try: return math.nan if isinstance(p := pow(x, y), complex) else p
  except ZeroDivisionError: return math.inf
  except ValueError: return math.inf if x > 0 else -math.inf

python_alu: dict[Ops, Callable] = {
  Ops.LOG2: lambda x: math.log2(x) if x > 0 else -math.inf if x == 0 else math.nan, Ops.EXP2: _safe_exp2,
  Ops.SQRT: lambda x: math.sqrt(x) if x >= 0 else math.nan, Ops.RECIP: lambda x: 1/x if x != 0 else math.copysign(math.inf, x),
  Ops.SIN: lambda x: math.sin(x) if not math.isinf(x) else math.nan, Ops.POW: _safe_pow,
  Ops.NEG: operator.neg, Ops.ADD: operator.add, Ops.SUB: operator.sub, Ops.MUL: operator.mul, Ops.CMPNE: operator.ne,
  Ops.CMPLT: operator.lt, Ops.XOR: operator.xor, Ops.OR: operator.or_, Ops.AND: operator.and_, Ops.SHR: operator.rshift,
  Ops.SHL: operator.lshift, Ops.MAX: max, Ops.MOD: cmod, Ops.IDIV: cdiv, Ops.MULACC: lambda x, y, z: x*y + z,
  Ops.WHERE: lambda c, x, y: x if c else y}

def exec_alu(op:Ops, dtype:DType, operands, truncate_output=True):
  """op on Python numbers (tuples for vector dtypes, lane by lane), the result rounded as dtype stores it."""
  if dtype.count > 1:
    return tuple(exec_alu(op, dtype.scalar(), [x[i] if isinstance(x, tuple) else x for x in operands]) for i in range(dtype.count))
  ret = python_alu[op](*operands)
  return truncate.get(dtype, lambda x: x)(ret) if truncate_output else ret

# *** VIZ: the engine traces every graph_rewrite itself (VIZ=1); these are the reference's Python-side records ***

TRACK_MATCH_STATS = ContextVar("TRACK_MATCH_STATS", 2 if getenv("VIZ") else 0)
_VIZ_WHY = "the engine records rewrites in its own VIZ trace (VIZ=1, src/tg/viz), not in Python lists"
tracked_keys: list[Any] = []
tracked_ctxs = UnsupportedValue("tinygrad.uop.ops.tracked_ctxs", _VIZ_WHY)
_name_cnt: dict[str, int] = {}
def track_rewrites(named=False, name_fxn:Callable|None=None):
  """Names the calls of the decorated function (the reference's VIZ groups rewrites by them); the function runs as is."""
  def decorator(func):
    def wrapper(*args, **kwargs):
      if TRACK_MATCH_STATS >= 2:
        if named or name_fxn or not args: _name_cnt[func.__name__] = _name_cnt.get(func.__name__, 0) + 1
        tracked_keys.append(f"{func.__name__}_{_name_cnt[func.__name__]}" if named or name_fxn or not args else args[0])
      return func(*args, **kwargs)
    return wrapper
  return decorator
class TrackedPatternMatcher(PatternMatcher): pass  # every matcher is tracked by the engine under VIZ=1
RewriteContext = unsupported_class("tinygrad.uop.ops.RewriteContext", "graph_rewrite's state lives in the engine (src/tg/uop/upat.h)")
graph_rewrite_map = unsupported_function("tinygrad.uop.ops.graph_rewrite_map", "graph_rewrite_map is not bound from the engine")

class _ChildRef:
  """One of UOp.children: called, it gives the parent node (the reference's weak references to its children)."""
  __slots__ = ("_u",)
  def __init__(self, u:UOp): self._u = u
  def __call__(self) -> UOp: return self._u
