# programs built from Python: UOps rendered and run by CompiledRunner, Kernel and its opts, and the UOp/UPat/ShapeTracker
# introspection tinygrad's test_uops reads (the reference's tests run unchanged with tools/conformance.py --module
# test_uops; these are the same behaviours in our suite)
import gc, pytest
import numpy as np
from tinygrad import Tensor, Device, dtypes
from tinygrad.device import Buffer
from tinygrad.uop.ops import UOp, Ops, UPat, KernelInfo
from tinygrad.renderer import ProgramSpec, Opt, OptOps
from tinygrad.codegen import full_rewrite
from tinygrad.codegen.kernel import Kernel, KernelOptError
from tinygrad.engine.realize import CompiledRunner, get_kernel
from tinygrad.shape.shapetracker import ShapeTracker
from tinygrad.helpers import Context

def _program(sink:UOp) -> CompiledRunner:
  renderer = Device[Device.DEFAULT].renderer
  uops = full_rewrite(sink, opts=renderer)
  return CompiledRunner(ProgramSpec("test", renderer.render(uops), Device.DEFAULT, sink, uops=uops))

def _buf(dtype, vals):
  return Buffer(Device.DEFAULT, len(vals), dtype).allocate().copyin(memoryview(np.array(vals, dtype=np.int32 if dtype == dtypes.int32 else np.float32)))

def test_compiled_runner_runs_hand_written_uops():
  out = UOp(Ops.DEFINE_GLOBAL, dtypes.float32.ptr(), (), 0)
  a, b = UOp(Ops.DEFINE_GLOBAL, dtypes.float32.ptr(), (), 1), UOp(Ops.DEFINE_GLOBAL, dtypes.float32.ptr(), (), 2)
  zero = UOp.const(dtypes.int32, 0)
  st = out.index(zero).store(a.index(zero).load() * b.index(zero).load() + UOp.const(dtypes.float32, 1.5))
  prg = _program(UOp.sink(st))
  assert prg.p.globals == [0, 1, 2] and prg.p.outs == [0] and prg.p.ins == [1, 2] and len(prg.lib) > 0
  res = Buffer(Device.DEFAULT, 1, dtypes.float32).allocate()
  prg.exec([res, _buf(dtypes.float32, [3.0]), _buf(dtypes.float32, [4.0])])
  assert res.numpy().tolist() == [13.5]
  # the engine names what's wrong: the buffer count, an unallocated buffer
  with pytest.raises(RuntimeError, match="takes 3 buffers, got 2"): prg.exec([res, res])
  with pytest.raises(RuntimeError, match="unallocated"): prg.exec([res, res, Buffer(Device.DEFAULT, 1, dtypes.float32)])
  with pytest.raises(ValueError, match="needs its uops"): CompiledRunner(ProgramSpec("test", "", Device.DEFAULT, UOp.sink(st)))

def test_compiled_runner_takes_a_variables_value():
  out = UOp(Ops.DEFINE_GLOBAL, dtypes.int32.ptr(), (), 0)
  n = UOp.variable("n", 0, 100)
  prg = _program(UOp.sink(out.index(UOp.const(dtypes.int32, 0)).store(n * 2)))
  res = Buffer(Device.DEFAULT, 1, dtypes.int32).allocate()
  for v in (3, 41):
    prg([res], {n: v})
    assert res.numpy().tolist() == [2 * v]
  with pytest.raises(RuntimeError, match="needs a value for variable 'n'"): prg([res], {})

def test_kernel_applies_opts_and_renders():
  ast = Tensor.empty(16, 16).sum(1).schedule()[-1].ast
  k = Kernel(ast)
  assert k.full_shape == (16, 16) and k.applied_opts == [] and k.first_reduce == 1
  k.apply_opt(Opt(OptOps.UPCAST, 0, 4))
  assert k.applied_opts == [Opt(OptOps.UPCAST, 0, 4)] and k.full_shape == (4, 16, 4) and k.upcasted == 1
  with pytest.raises(KernelOptError): k.apply_opt(Opt(OptOps.UPCAST, 0, 3))  # 4 isn't divisible by 3
  uops = k.linearize().uops
  assert uops[0].op is Ops.DEFINE_GLOBAL and any(u.op is Ops.STORE for u in uops)
  p = k.to_program()
  assert p.name == k.name and p.function_name.startswith("r_4_16_4") and p.function_name in p.src
  assert p.applied_opts == [Opt(OptOps.UPCAST, 0, 4)]
  res = Buffer(Device.DEFAULT, 16, dtypes.float32).allocate()
  CompiledRunner(p).exec([res, _buf(dtypes.float32, list(range(256)))])
  assert res.numpy().tolist() == np.arange(256, dtype=np.float32).reshape(16, 16).sum(1).tolist()
  # get_kernel: the engine's default opts (none under NOOPT)
  with Context(NOOPT=1): assert get_kernel(Device[Device.DEFAULT].renderer, ast).applied_opts == []

def test_upat_match_gives_the_named_captures():
  x = UOp.variable("x", 0, 10)
  y = x + 3
  assert UPat(Ops.ADD, src=(UPat.var("a"), UPat.cvar("c"))).match(y, {}) == [{"a": x, "c": UOp.const(dtypes.int32, 3)}]
  assert UPat(Ops.MUL).match(y, {}) == []
  assert UPat(Ops.ADD, name="root").match(y, {"extra": 1}) == [{"extra": 1, "root": y}]

def test_children_are_the_live_parents():
  a = UOp.variable("children_of_a", 0, 10)
  b, c = a * a, a * 2
  assert len(a.children) == 2 and any(r() is b for r in a.children)
  del b
  gc.collect()
  assert [r() for r in a.children] == [c]
  del c
  assert len(a.children) == 0

def test_shapetracker_movement_ops_and_views():
  st = ShapeTracker.from_shape((4, 2, 1))
  assert st.permute((1, 2, 0)).shape == (2, 1, 4) and st.reshape((8,)).shape == (8,)
  assert Tensor.empty(4, 2, 1).permute((1, 2, 0)).uop.st == st.permute((1, 2, 0))
  assert ShapeTracker.from_shape(()).reshape((1, 1)).expand((4, 4)) == Tensor.ones((4, 4)).uop.st
  shrunk = ShapeTracker.from_shape((4,)).shrink(((1, 2),))
  (v,) = shrunk.views
  assert v.shape == (1,) and v.strides == (0,) and v.offset == 1 and v.mask is None
  padded = ShapeTracker.from_shape((2,)).pad(((1, 1),))
  assert padded.views[-1].mask == ((1, 3),) and padded.shape == (4,)
  with pytest.raises(ValueError): st.reshape((7,))

def test_uop_fields_as_the_reference_has_them():
  buf = UOp.new_buffer(Device.DEFAULT, 10, dtypes.float)
  assert buf.op is Ops.BUFFER and buf.device == Device.DEFAULT and buf.buf_uop is buf
  const = UOp.const(dtypes.int, 1)
  assert const._device is None
  with pytest.raises(AssertionError, match="no device on"): const.device
  with pytest.raises(AssertionError, match="no field 'field'"): const.replace(field="a")
  g = UOp(Ops.SPECIAL, dtypes.int, (), ("gidx0", 8))
  assert [u.const_factor() for u in (UOp.const(dtypes.int, 17), g, g * 3, g * 3 + 6, g * 3 + 1)] == [17, 1, 3, 3, 1]
  t = Tensor.ones((4,)).contiguous().realize()
  assign = t.shrink(((1, 2),)).assign(Tensor.zeros((1,)))
  assert assign.uop.buf_uop.size == 4
  # a KernelInfo record is an arg: a printed kernel evaluates back to itself
  sink = UOp(Ops.SINK, dtypes.void, (), KernelInfo(name="k", upcasted=1))
  assert sink.arg.name == "k" and sink.arg.upcasted == 1 and eval(repr(sink)) is sink

def test_schedule_with_vars_keys_the_values_by_variable():
  a = UOp.variable("a", 1, 10)
  _, var_vals = (Tensor(a.bind(1)) + Tensor.empty((2, 1)).reshape((2, a.bind(1)))).schedule_with_vars()
  assert var_vals == {a: 1} and list(var_vals)[0] is a

def test_uop_args_given_as_uops():
  # a Variable's bounds given as CONST UOps, a SPECIAL's symbolic size
  a = UOp(Ops.DEFINE_VAR, dtypes.float.vec(16), arg=("a", UOp.const(dtypes.float, 0), UOp.const(dtypes.float, 1)))
  assert a.arg == ("a", 0.0, 1.0)
  assert UOp(Ops.WMMA, dtypes.float.vec(16), (a, a, a)).st is None
  n = UOp.variable("n", 1, 10)
  assert UOp(Ops.SPECIAL, dtypes.int, (), ("gidx0", n * 2)).arg == ("gidx0", n * 2)

def test_sym_folds_vector_consts():
  # the reference's sym has the codegen-time rules: a VECTORIZE of CONSTs is a VCONST, and an ALU of VCONSTs folds
  from tinygrad.uop.symbolic import sym
  from tinygrad.uop.ops import graph_rewrite
  three = UOp.const(dtypes.int, 3)
  vec = UOp(Ops.VECTORIZE, dtypes.int.vec(4), (three,) * 4) + UOp.const(dtypes.int.vec(4), (0, 1, 2, 3))
  out = graph_rewrite(vec, sym)
  assert out.op is Ops.VCONST and out.arg == (3, 4, 5, 6)

def test_wino_context_gives_the_direct_convs_values():
  from tinygrad import nn
  from tinygrad.helpers import WINO
  conv, x = nn.Conv2d(4, 6, 3, padding=1), Tensor.rand(2, 4, 10, 7)
  direct = conv(x).numpy()
  with Context(WINO=1):
    assert WINO.value == 1
    np.testing.assert_allclose(conv(x).numpy(), direct, atol=1e-5, rtol=1e-4)
