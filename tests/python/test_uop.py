# the UOp level through the Python module: identity, printing, arithmetic, UPat / PatternMatcher with Python rules
import gc, pytest
from tinygrad import dtypes, UOp as UOp_
from tinygrad.dtype import DType
from tinygrad.uop import UOp, Ops
from tinygrad.uop.ops import UPat, PatternMatcher, graph_rewrite, GroupOp
from tinygrad.uop.symbolic import symbolic
from tinygrad.codegen import full_rewrite_to_sink
from tinygrad.helpers import getenv, Context, DEBUG
from tinygrad.device import is_dtype_supported

def test_import_paths():
  assert UOp is UOp_ and isinstance(dtypes.int, DType) and callable(full_rewrite_to_sink) and getenv("TG_NOT_SET", 3) == 3
  assert is_dtype_supported(dtypes.float32) and not is_dtype_supported(dtypes.fp8e4m3)
  with Context(DEBUG=3): assert DEBUG.value == 3 and DEBUG >= 2
  assert DEBUG.value == 0

def test_identity():
  a, b = UOp(Ops.CONST, dtypes.int, arg=2), UOp(Ops.CONST, dtypes.int, arg=2)
  assert a is b and UOp.const(dtypes.int, 2) is a and a.const_like(2) is a
  assert (a + b) is (a + b) and (a + b).src[0] is a
  assert UOp.const(dtypes.float, 2.0) is not UOp.const(dtypes.int, 2)
  assert {a: 1}[b] == 1

def test_python_object_follows_node_lifetime():
  x = UOp.variable("x", 0, 10)
  y = x * 3 + 1
  yid = id(y)
  del y; gc.collect()
  assert (x * 3 + 1).op is Ops.ADD  # a fresh object for a fresh node: no stale registry entry
  assert id(x * 3 + 1) is not None and yid is not None

def test_fields():
  a = UOp(Ops.CONST, dtypes.int, arg=2)
  s = a + 3
  assert s.op == Ops.ADD and s.dtype == dtypes.int and s.arg is None and len(s.src) == 2 and s.src[1].arg == 3
  v = UOp.variable("i", 0, 7)
  assert v.arg == ("i", 0, 7) and v.op is Ops.DEFINE_VAR and (v * 2).vmax == 14 and (v + 1).vmin == 1
  r = UOp(Ops.REDUCE_AXIS, dtypes.float, (UOp.const(dtypes.float, 1.0),), (Ops.ADD, (0, 1)))
  assert r.arg == (Ops.ADD, (0, 1))
  assert UOp(Ops.PAD, dtypes.float, (), ((1, 1), (0, 2))).arg == ((1, 1), (0, 2))
  assert a.replace(arg=5) is UOp.const(dtypes.int, 5)
  assert str(Ops.ADD) == "Ops.ADD" and repr(dtypes.int.ptr(4)) == "dtypes.int.ptr(4)" and dtypes.float.vec(4).count == 4

def test_repr():
  a = UOp.const(dtypes.int, 2)
  assert repr(a + a) == "UOp(Ops.ADD, dtypes.int, arg=None, src=(\n  x0:=UOp(Ops.CONST, dtypes.int, arg=2, src=()),\n   x0,))"

def test_arithmetic():
  x = UOp.variable("x", 0, 10)
  assert (x + 1).op is Ops.ADD and (1 + x).src[0].op is Ops.CONST
  assert (x - 1).src[1].arg == -1 and (x * 2).op is Ops.MUL and (x // 2).op is Ops.IDIV and (x % 3).op is Ops.MOD
  assert (x < 3).dtype == dtypes.bool and (x < 3).op is Ops.CMPLT and (x > 3).src[0].arg == 3
  assert (UOp.const(dtypes.float, 1.0) / 2.0).op is Ops.MUL
  assert (x.maximum(3)).op is Ops.MAX and x.ne(3).op is Ops.CMPNE and (-x).op is Ops.MUL
  assert (x + 2 + 3).simplify().render() == "(x+5)" and (x + 0).simplify() is x
  assert graph_rewrite((x + 0) * 1, symbolic) is x

def test_pattern_matcher_python_rules():
  a = UOp.const(dtypes.int, 2)
  pm = PatternMatcher([(UPat(Ops.ADD, src=(UPat(Ops.CONST, name="c1"), UPat(Ops.CONST, name="c2"))),
                        lambda c1, c2: UOp(Ops.CONST, dtype=c1.dtype, arg=c1.arg + c2.arg))])
  assert graph_rewrite(a + a, pm) is UOp.const(dtypes.int, 4)
  pm2 = PatternMatcher([(UPat.cvar("c1") + UPat.cvar("c2"), lambda c1, c2: c1.const_like(c1.arg + c2.arg))])
  assert graph_rewrite(a + a + a, pm2) is UOp.const(dtypes.int, 6)
  assert pm2.rewrite(a + a) is UOp.const(dtypes.int, 4) and pm2.rewrite(a) is None and len((pm + pm2).patterns) == 2

def test_pattern_matcher_ctx_and_none():
  seen = []
  def rule(ctx, x):
    ctx.append(x.arg)
    return None
  pm = PatternMatcher([(UPat(Ops.CONST, name="x"), rule)])
  a = UOp.const(dtypes.int, 2)
  assert graph_rewrite(a + 3, pm, ctx=seen) is a + 3
  assert sorted(seen) == [2, 3]

def test_pattern_matcher_permuted_and_any():
  x = UOp.variable("x", 0, 10)
  pm = PatternMatcher([(UPat(Ops.ADD, src=[UPat.var("y"), UPat.cvar("c")]), lambda y, c: y * c)])
  assert graph_rewrite(3 + x, pm) is x * 3 and graph_rewrite(x + 3, pm) is x * 3
  pm_any = PatternMatcher([(UPat.any(UPat(Ops.MUL, name="m"), UPat(Ops.IDIV, name="m")), lambda m: m.src[0])])
  assert pm_any.rewrite(x * 2) is x and pm_any.rewrite(x // 2) is x and pm_any.rewrite(x + 2) is None
  assert Ops.ADD in GroupOp.Binary and Ops.ADD in GroupOp.Commutative and Ops.RESHAPE in GroupOp.Movement

def test_rule_errors_propagate():
  def bad(x): raise KeyError("from the rule")
  pm = PatternMatcher([(UPat(Ops.CONST, name="x"), bad)])
  with pytest.raises(KeyError, match="from the rule"): graph_rewrite(UOp.const(dtypes.int, 1), pm)
  pm = PatternMatcher([(UPat(Ops.CONST, name="x"), lambda x: 3)])
  with pytest.raises(TypeError): graph_rewrite(UOp.const(dtypes.int, 1), pm)

def test_errors_do_not_abort():
  from tinygrad import Tensor
  with pytest.raises(TypeError): UOp(Ops.CONST, dtypes.int, arg=object())
  with pytest.raises(RuntimeError, match="unknown device"): Tensor([1], device="NOPE")
  with pytest.raises(ValueError): Tensor([1, 2, 3]).reshape(2, 2)

def test_full_rewrite_to_sink():
  from tinygrad import Tensor
  t = Tensor([1, 2, 3, 4])
  s = t + 3 + 4
  s.kernelize()
  ast = s.uop.src[1].arg.ast
  out = full_rewrite_to_sink(ast)
  assert out.op is Ops.SINK and any(u.op is Ops.CONST and u.arg == 7 for u in out.toposort())
  assert [m.name for m in s.uop.src[1].arg.metadata] == ["__add__"]

def test_context_is_the_engines_and_never_writes_the_environment():
  import os, threading
  from tinygrad.helpers import ContextVar, BEAM, NOOPT
  before = dict(os.environ)
  with Context(BEAM=2, NOOPT=True, CPU_TILE_LANES=128):  # CPU_TILE_LANES: a knob with no ContextVar of Python's
    assert BEAM.value == 2 and NOOPT.value == 1 and NOOPT
    assert dict(os.environ) == before
    seen = []
    t = threading.Thread(target=lambda: seen.append(BEAM.value))  # a thread of its own: the process's knobs
    t.start(); t.join()
    assert seen == [0]
  assert BEAM.value == 0 and dict(os.environ) == before
  with pytest.raises(KeyError): Context(NOT_A_KNOB_NOR_VAR=1).__enter__()
  with pytest.raises(ValueError, match="read once"):
    with Context(VIZ=1): pass
  with pytest.raises(ValueError, match="not an integer"):
    with Context(BEAM="two"): pass
  assert BEAM.value == 0
  mine = ContextVar("TG_PY_ONLY_VAR", 5)  # a name the engine doesn't have lives in Python
  with Context(TG_PY_ONLY_VAR=6): assert mine.value == 6
  assert mine.value == 5

def test_vector_consts_and_the_expanders_rules():
  # UOp.const of a tuple is a VCONST (a CONST when the lanes are all one), as the reference's; sym pushes GEPs as the
  # reference's does (its symbolic ends with gep_pushing); the expander's rules are bound (tinygrad.codegen.expander)
  from tinygrad.uop.ops import graph_rewrite
  from tinygrad.uop.symbolic import sym
  from tinygrad.codegen.expander import expander
  v = UOp.const(dtypes.int.vec(4), (0, 1, 2, 3))
  assert v.op is Ops.VCONST and v.arg == (0, 1, 2, 3)
  assert UOp.const(dtypes.int.vec(2), (7, 7)).op is Ops.CONST
  assert graph_rewrite(UOp(Ops.GEP, dtypes.int.vec(2), (v,), (3, 1)), sym).arg == (3, 1)
  unrolled = UOp(Ops.UNROLL, dtypes.int, (v,), ((1, 4),))
  contracted = graph_rewrite(UOp(Ops.CONTRACT, dtypes.int.vec(4), (unrolled,), ((1, 4),)), sym + expander)
  assert contracted.op is Ops.VCONST and contracted.arg == (0, 1, 2, 3)
