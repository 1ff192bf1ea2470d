# The PYTHON device's program path as tinygrad's test/helpers.py eval_uop uses it: full_rewrite with a renderer,
# PythonRenderer().render, PythonCompiler().compile, PythonProgram(name, lib)(out, *ins) on the engine's interpreter,
# over Device["PYTHON"].allocator's memoryviews; and the errors a bad call gets
import math, struct, pytest
from tinygrad import Device, dtypes
from tinygrad.uop.ops import UOp, Ops
from tinygrad.codegen import full_rewrite
from tinygrad.renderer.cstyle import ClangRenderer
from tinygrad.runtime.ops_python import PythonRenderer, PythonCompiler, PythonProgram

def _program(uop:UOp, renderer=PythonRenderer) -> PythonProgram:
  g = UOp(Ops.DEFINE_GLOBAL, uop.dtype.ptr(), arg=0, src=())
  lst = full_rewrite(UOp.store(g.index(UOp.const(dtypes.int, 0)), uop).sink(), renderer)
  return PythonProgram("run", PythonCompiler().compile(PythonRenderer().render(lst)))

def _bufs(inputs):
  allocator, bufs = Device["PYTHON"].allocator, []
  for dt, data in inputs:
    bufs.append(buf := allocator.alloc(len(data) * dt.itemsize))
    allocator._copyin(buf, memoryview(struct.pack(f"{len(data)}{dt.fmt}", *data)))
  return bufs

def eval_uop(uop:UOp, inputs=()):
  prog = _program(uop)
  prog(out := Device["PYTHON"].allocator.alloc(uop.dtype.itemsize), *_bufs(inputs))
  return out.cast(uop.dtype.fmt).tolist()[0]

def _in(dt, i:int=1, idx:int=0) -> UOp:  # element idx of input buffer i
  return UOp(Ops.DEFINE_GLOBAL, dt.ptr(), arg=i, src=()).index(UOp.const(dtypes.int, idx)).load()

@pytest.mark.parametrize("expr,want", [
  (lambda: UOp.const(dtypes.float, 2.5) * 3.0, 7.5),
  (lambda: UOp.const(dtypes.int, 7) // 2, 3),
  (lambda: UOp.const(dtypes.int, -7) % 3, -1),  # C's remainder, as the reference's cmod
  (lambda: UOp.const(dtypes.int, 6) ^ 3, 5),
  (lambda: UOp.const(dtypes.float, 2.0).sqrt(), math.sqrt(2.0)),
  (lambda: (UOp.const(dtypes.int, 3) < 4).where(UOp.const(dtypes.float, 1.5), UOp.const(dtypes.float, -1.5)), 1.5),
  (lambda: UOp.const(dtypes.uchar, 250) + 10, 4),  # wraps in the dtype
])
def test_alu(expr, want):
  assert eval_uop(expr()) == pytest.approx(want, rel=1e-6)

def test_load_from_inputs():
  assert eval_uop(_in(dtypes.int, 1, 2) * 10 + _in(dtypes.int, 2), [(dtypes.int, [1, 2, 3]), (dtypes.int, [4])]) == 34
  assert eval_uop(_in(dtypes.double) * 2, [(dtypes.double, [1.25])]) == 2.5

def test_allocator_buffers_are_memoryviews():
  allocator = Device["PYTHON"].allocator
  buf = allocator.alloc(8)
  assert isinstance(buf, memoryview) and buf.nbytes == 8 and buf.cast("i").tolist() == [0, 0]  # zeroed
  allocator._copyin(buf, memoryview(struct.pack("2i", 3, -4)))
  out = memoryview(bytearray(8))
  allocator._copyout(out, buf)
  assert out.cast("i").tolist() == [3, -4]
  allocator.free(buf, 8)
  with pytest.raises(AssertionError): allocator.alloc(0)
  with pytest.raises(ValueError): allocator._copyin(buf, memoryview(b"\x00" * 4))  # the sizes differ

def test_program_text_round_trips():
  # the program the renderer writes reads back into the very same (interned) uops
  x = _in(dtypes.float) + 1.0
  g = UOp(Ops.DEFINE_GLOBAL, x.dtype.ptr(), arg=0, src=())
  lst = full_rewrite(UOp.store(g.index(UOp.const(dtypes.int, 0)), x).sink(), PythonRenderer())
  src = PythonRenderer().render(lst)
  assert isinstance(src, str) and "LOAD" in src and isinstance(PythonCompiler().compile(src), bytes)
  out, (inp,) = Device["PYTHON"].allocator.alloc(4), _bufs([(dtypes.float, [2.0])])
  assert PythonProgram("p", src)(out, inp, wait=True) >= 0.0  # wait: the seconds it took
  assert out.cast("f").tolist() == [3.0]

def test_launch_dims_and_vals():
  # one store per global index, the size from a variable
  n = UOp.variable("n", 1, 8)
  g = UOp(Ops.DEFINE_GLOBAL, dtypes.int.ptr(), arg=0, src=())
  gidx = UOp(Ops.SPECIAL, dtypes.int, arg=("gidx0", 4), src=())
  sink = g.index(gidx).store(gidx * n).sink()
  lst = full_rewrite(sink, PythonRenderer())
  prog = PythonProgram("k", PythonCompiler().compile(PythonRenderer().render(lst)))
  out = Device["PYTHON"].allocator.alloc(16)
  prog(out, global_size=(4, 1, 1), vals=(3,))
  assert out.cast("i").tolist() == [0, 3, 6, 9]

def test_other_renderers():
  # full_rewrite takes any of the engine's renderers, the class or its instance; the CPU's has no locals
  x = _in(dtypes.float) * 2.0
  g = UOp(Ops.DEFINE_GLOBAL, x.dtype.ptr(), arg=0, src=())
  sink = UOp.store(g.index(UOp.const(dtypes.int, 0)), x).sink()
  for r in (ClangRenderer, ClangRenderer(), Device["CPU"].renderer):
    lst = full_rewrite(sink, r)
    assert lst[-1].op is Ops.SINK and any(u.op is Ops.LOAD for u in lst)
    assert "*" in ClangRenderer().render(lst)  # C source
  assert eval_uop(x, [(dtypes.float, [4.0])]) == 8.0
  with pytest.raises(TypeError): full_rewrite(sink, "CPU")

# *** bad input: exceptions of the reference's types, never a crash ***

def test_too_few_buffers():
  prog = _program(_in(dtypes.int) + 1)
  out = Device["PYTHON"].allocator.alloc(4)
  with pytest.raises(IndexError): prog(out)  # the reference pops from an empty list of buffers
  with pytest.raises(IndexError): prog()

def test_too_small_buffer():
  prog = _program(_in(dtypes.int, 1, 5))  # reads element 5
  out = Device["PYTHON"].allocator.alloc(4)
  with pytest.raises(IndexError, match="out of bounds"): prog(out, *_bufs([(dtypes.int, [1, 2])]))
  with pytest.raises(IndexError, match="out of bounds"): prog(memoryview(bytearray(2)), *_bufs([(dtypes.int, [0] * 6)]))
  prog(out, *_bufs([(dtypes.int, [0, 0, 0, 0, 0, 42])]))
  assert out.cast("i").tolist() == [42]

def test_bad_buffers_and_programs():
  prog = _program(UOp.const(dtypes.int, 1))
  with pytest.raises(TypeError): prog(123)  # not a buffer
  with pytest.raises(TypeError): prog(memoryview(b"\x00" * 4))  # read-only
  with pytest.raises(ValueError): prog(bytearray(4), global_size=(1, 1))
  with pytest.raises(ValueError, match="not a PYTHON program"): PythonProgram("bad", b"0 NOT_AN_OP int () -")
  with pytest.raises(ValueError, match="not a PYTHON program"): PythonProgram("bad", b"0 CONST int (7) i1")
  with pytest.raises(ValueError, match="not a PYTHON program"): PythonProgram("bad", b"0 CONST int () \"open")
