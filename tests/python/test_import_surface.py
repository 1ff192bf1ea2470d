# the importable surface of tinygrad 0.10.3: every (module, name) that the reference's test/, examples/ and extra/models/
# import from tinygrad (data/import_surface.txt, made by tools/import_surface.py --dump-names) imports here; the names with
# no meaning on this engine raise NotImplementedError when used, never at import; the pure-Python helpers work
import importlib, io, math, pathlib, struct, tarfile
import numpy as np, pytest
from tinygrad import Tensor, Device, dtypes
from tinygrad.device import is_dtype_supported
from tinygrad._unsupported import UnsupportedValue

def _pairs() -> list[tuple[str, str]]:
  lines = (pathlib.Path(__file__).parent / "data" / "import_surface.txt").read_text().splitlines()
  return [(m, n) for m, _, n in (line.partition(" ") for line in lines if line and not line.startswith("#"))]
PAIRS = _pairs()

def _lookup(mod:str, name:str):  # as `from mod import name` does: an attribute, else a submodule
  m = importlib.import_module(mod)
  if not name: return m
  if hasattr(m, name): return getattr(m, name)
  return importlib.import_module(f"{mod}.{name}")

def test_surface_is_large():
  assert len(PAIRS) > 300 and ("tinygrad.uop.ops", "sint") in PAIRS and ("tinygrad.helpers", "mv_address") in PAIRS

@pytest.mark.parametrize("mod,name", PAIRS, ids=[f"{m}:{n}" for m, n in PAIRS])
def test_name_imports(mod, name): _lookup(mod, name)

# *** the stand-ins: each raises NotImplementedError saying why, when used ***

def _stand_ins():
  seen, ret = set(), []
  for mod, name in PAIRS:
    if not name: continue
    obj = _lookup(mod, name)
    if (isinstance(obj, UnsupportedValue) or getattr(obj, "__dict__", {}).get("__unsupported__")) and id(obj) not in seen:
      seen.add(id(obj))
      ret.append((f"{mod}.{name}", obj))
  return ret
STAND_INS = _stand_ins()

@pytest.mark.parametrize("name,obj", STAND_INS, ids=[n for n, _ in STAND_INS])
def test_stand_in_raises_when_used(name, obj):
  with pytest.raises(NotImplementedError, match="on tinygrad.cpp"):
    if isinstance(obj, UnsupportedValue): len(obj)
    else: obj()

def test_stand_ins_are_many_and_answer_isinstance():
  assert len(STAND_INS) > 60
  from tinygrad.runtime.support.hcq import HCQCompiled
  from tinygrad.device import LRUAllocator
  assert not issubclass(type(Device["CPU"]), HCQCompiled) and not isinstance(Device["CPU"].allocator, LRUAllocator)
  from tinygrad.runtime.ops_cuda import CUDAProgram
  class MyProgram(CUDAProgram): pass  # subclassing works; instantiating raises
  assert issubclass(MyProgram, CUDAProgram)
  with pytest.raises(NotImplementedError): MyProgram()

def test_autogen_modules_raise_on_use():
  from tinygrad.runtime.autogen import cuda, libc
  import tinygrad.runtime.autogen.am.am as am
  for fn in (lambda: cuda.cuInit(0), lambda: libc.mmap(0, 4096), lambda: am.regGCVM_L2_CNTL + 1):
    with pytest.raises(NotImplementedError, match="on tinygrad.cpp"): fn()
  with pytest.raises(AttributeError): cuda.__wrapped__  # dunders stay missing: copy/pickle/inspect probe them

def test_unsupported_context_vars():
  from tinygrad.helpers import Context, AMX, IMAGE
  assert AMX.value == 0 and IMAGE.value == 0
  with pytest.raises(NotImplementedError, match="AMX=1"):
    with Context(AMX=1): pass
  with pytest.raises(NotImplementedError): IMAGE.value = 2
  with Context(AMX=0): pass  # the default is fine

# *** the real ones ***

def test_knob_context_vars():
  from tinygrad.helpers import Context, FUSE_ARANGE, FUSE_CONV_BW
  assert FUSE_ARANGE.value == 1 and FUSE_CONV_BW.value == 0
  with Context(FUSE_ARANGE=0): assert FUSE_ARANGE.value == 0
  assert FUSE_ARANGE.value == 1

def test_memoryview_helpers():
  from tinygrad.helpers import mv_address, to_mv, from_mv, flat_mv, getbits, to_char_p_p, init_c_struct_t, init_c_var
  import ctypes
  b = bytearray(b"tinygrad")
  to_mv(mv_address(memoryview(b)), 4)[0] = ord("T")
  assert b == bytearray(b"Tinygrad") and bytes(from_mv(memoryview(b))) == b"Tinygrad"
  assert flat_mv(memoryview(np.zeros((2, 3), np.int32))).shape == (24,)
  assert getbits(0b101100, 2, 3) == 0b11 and getbits(0xABCD, 8, 15) == 0xAB
  assert ctypes.string_at(to_char_p_p([b"-O2", b"-g"])[1]) == b"-g"
  assert ctypes.sizeof(init_c_struct_t((("a", ctypes.c_uint8), ("b", ctypes.c_uint32)))) == 5  # packed
  assert init_c_var(ctypes.c_int(), lambda x: ctypes.memmove(ctypes.byref(x), (ctypes.c_int * 1)(7), 4)).value == 7

def test_profiling(capsys):
  from tinygrad.helpers import Profiling
  def busy(): return sum(i * i for i in range(20000))
  with Profiling(frac=1.0): busy()
  assert "busy" in capsys.readouterr().out

def test_diskcache(tmp_path, monkeypatch):
  from tinygrad import helpers
  monkeypatch.setattr(helpers, "CACHEDB", str(tmp_path / "cache.db"))
  monkeypatch.setattr(helpers, "_db_connection", None)
  monkeypatch.setattr(helpers, "_db_tables", set())
  assert helpers.diskcache_get("t", "k") is None
  assert helpers.diskcache_put("t", "k", {"v": [1, 2]}) == {"v": [1, 2]}
  assert helpers.diskcache_get("t", "k") == {"v": [1, 2]} and helpers.diskcache_get("t", "other") is None
  helpers.diskcache_put("t2", {"name": "x", "n": 3}, b"bytes")
  assert helpers.diskcache_get("t2", {"name": "x", "n": 3}) == b"bytes" and helpers.diskcache_get("t2", {"name": "x", "n": 4}) is None
  calls = []
  @helpers.diskcache
  def twice(x): calls.append(x); return 2 * x
  assert (twice(21), twice(21), calls) == (42, 42, [21])
  helpers.diskcache_clear()
  assert helpers.diskcache_get("t", "k") is None and (tmp_path / "cache.db").exists()
  helpers._db_connection.close()

def test_dtype_truncate_and_fp8():
  from tinygrad.dtype import truncate, truncate_fp16, truncate_bf16, float_to_fp8, fp8_to_float, PtrDType, ImageDType
  assert truncate_fp16(70000.0) == math.inf and truncate_fp16(1/3) == float(np.float16(1/3))
  assert truncate_bf16(1.1) == 1.09375  # the low 16 bits are dropped
  assert truncate[dtypes.uint8](300) == 44 and truncate[dtypes.int8](200) == -56 and truncate[dtypes.bool](3) is True
  assert float_to_fp8(1.0, dtypes.fp8e4m3) == 0x38 and float_to_fp8(1.0, dtypes.fp8e5m2) == 0x3C
  assert float_to_fp8(1e6, dtypes.fp8e4m3) == 0x7E and float_to_fp8(-math.inf, dtypes.fp8e5m2) == 0xFB  # saturates
  assert float_to_fp8(math.nan, dtypes.fp8e4m3) == 0x7F and math.isnan(fp8_to_float(0x7F, dtypes.fp8e4m3))
  assert fp8_to_float(0x7E, dtypes.fp8e4m3) == 448.0 and fp8_to_float(0x7B, dtypes.fp8e5m2) == 57344.0
  for d in dtypes.fp8s:  # every finite byte round-trips
    for b in range(256):
      if not math.isnan(f := fp8_to_float(b, d)) and not math.isinf(f): assert float_to_fp8(f, d) == b or f == 0.0
  assert truncate[dtypes.fp8e4m3](0.3) == fp8_to_float(float_to_fp8(0.3, dtypes.fp8e4m3), dtypes.fp8e4m3) == 0.3125
  assert isinstance(dtypes.float.ptr(), PtrDType) and not isinstance(dtypes.float, PtrDType)
  assert not isinstance(dtypes.float, ImageDType)

def test_uop_helpers():
  from tinygrad.uop.ops import UOp, Ops, sint, resolve, smax, smin, sym_infer, exec_alu, _substitute, graph_rewrite
  from typing import get_args
  assert set(get_args(sint)) == {int, UOp}
  a = UOp.variable("a", 1, 10)
  assert resolve(a < 11) is True and resolve(a < 5) is True and resolve(a < 5, False) is False and resolve(a > 10) is False
  assert smax(3, 4) == 4 and smin([3, 4]) == 3 and isinstance(smax(a, 3), UOp) and smax(a, 0) is a or smax(a, 0).op is not None
  assert sym_infer(a * 2 + 1, {a: 4}) == 9 and sym_infer(5, {}) == 5
  assert exec_alu(Ops.ADD, dtypes.uint8, [250, 10]) == 4 and exec_alu(Ops.IDIV, dtypes.int, [-7, 2]) == -3
  assert exec_alu(Ops.MUL, dtypes.float.vec(2), [(1.5, 2.0), 3]) == (4.5, 6.0) and exec_alu(Ops.RECIP, dtypes.float, [0.0]) == math.inf
  assert graph_rewrite(a + 1, _substitute, {a: UOp.const(dtypes.int, 5)}).simplify().arg == 6

def test_tensor_helpers():
  from tinygrad.tensor import get_shape, _broadcast_shape, _METADATA
  assert get_shape([[1, 2, 3], [4, 5, 6]]) == (2, 3) and get_shape(3.0) == () and get_shape("ab") == () and get_shape([]) == (0,)
  with pytest.raises(ValueError): get_shape([[1], [2, 3]])
  assert _broadcast_shape((3, 1), (4,)) == (3, 4) and _broadcast_shape((0, 1), (1, 5)) == (0, 5)
  assert _METADATA.get() is None

def test_shape_arithmetic():
  from tinygrad.shape.view import merge_dims, strides_for_shape
  from tinygrad.codegen.lowerer import get_contraction, get_contraction_with_reduce
  assert strides_for_shape((2, 1, 3)) == (3, 0, 1)
  assert merge_dims((2, 3, 4), (12, 4, 1)) == ((24, 1, 24),)
  assert merge_dims((2, 3, 4), (0, 4, 1)) == ((2, 0, 0), (12, 1, 12)) and merge_dims((2, 3, 4), (3, 1, 0)) == ((6, 1, 6), (4, 0, 4))
  assert get_contraction((2, 3, 4), (6, 4)) == [[0, 1], [2]] and get_contraction((2, 3, 4), (4, 6)) is None
  assert get_contraction((1, 2, 3), (1, 6)) == [[], [0, 1, 2]] and get_contraction_with_reduce((1, 2, 3), (1, 6), (0,)) is None
  assert get_contraction((4, 1, 1), (4, 1, 1)) == [[0], [], [1, 2]] and get_contraction_with_reduce((4, 1, 1), (4, 1, 1), (1,)) == [[0], [1], [2]]

def test_renderer_records():
  from tinygrad.renderer import Opt, OptOps, Estimates, ProgramSpec
  from tinygrad.codegen import full_rewrite
  from tinygrad.helpers import Context
  assert Opt(OptOps.UPCAST, 0, 4) < Opt(OptOps.LOCAL, 0, 2) and Estimates(1, 2, 3) + Estimates(1, 1, 1) == Estimates(2, 3, 4)
  with Context(NOOPT=1): ast = (Tensor.empty(4, 8) @ Tensor.empty(8, 3)).relu().schedule()[-1].ast
  uops = full_rewrite(ast)
  # 4*3 outputs of 8 multiply-adds plus the relu: the reference's numbers for the same uops
  assert Estimates.from_uops(uops) == Estimates(540, 816, 816) and Estimates.from_uops(uops, True).ops == 216
  p = ProgramSpec("r_4_3_8", "src", "CPU", ast, uops=uops, global_size=[1, 1, 1], local_size=[1, 1, 1])
  assert (p.globals, p.outs, p.ins, p.function_name) == ([0, 1, 2], [0], [1, 2], "r_4_3_8")

def test_device_objects_through_reference_classes():
  from tinygrad.renderer.cstyle import CStyleLanguage, ClangRenderer
  from tinygrad.renderer.ptx import PTXRenderer
  from tinygrad.runtime.ops_python import PythonRenderer, PythonCompiler
  from tinygrad.runtime.ops_cpu import ClangJITCompiler
  assert isinstance(Device["CPU"].renderer, CStyleLanguage) and not isinstance(Device["PYTHON"].renderer, CStyleLanguage)
  assert isinstance(Device["PYTHON"].renderer, PythonRenderer) and not isinstance(Device["CPU"].renderer, (PTXRenderer, PythonRenderer))
  assert PythonRenderer().device == "PYTHON" and ClangRenderer().device == "CPU"
  assert PythonCompiler() is Device["PYTHON"].compiler and ClangJITCompiler().cachekey == Device["CPU"].compiler.cachekey
  assert Device["CPU"].graph is None

def test_realize_runners():
  from tinygrad.engine.realize import BufferCopy, lower_schedule_item
  from tinygrad.device import Buffer
  src = Buffer("CPU", 3, dtypes.int32, initial_value=memoryview(np.array([7, 8, 9], dtype=np.int32)))
  dest = Buffer("PYTHON", 3, dtypes.int32)
  BufferCopy(12, "PYTHON", "CPU")([dest, src], {})
  assert dest.numpy().tolist() == [7, 8, 9]
  t = Tensor([1, 2]) + 1
  for si in t.schedule(): lower_schedule_item(si).run()
  assert t.tolist() == [2, 3]

def test_search_records():
  from tinygrad.engine.search import actions, get_test_global_size
  from tinygrad.renderer import Opt, OptOps
  assert Opt(OptOps.UPCAST, 0, 0) == actions[0] and Opt(OptOps.SWAP, 3, 4) == actions[-1]
  assert get_test_global_size([1024, 33, 64], 4096, {}) == ([16, 16, 16], 528.0)

def test_tensor_io_and_tar(tmp_path):
  from tinygrad.nn.state import TensorIO, tar_extract
  f = TensorIO(Tensor(np.frombuffer(b"0123456789", dtype=np.uint8)))
  assert f.read(3) == b"012" and f.seek(-2, 2) == 8 and f.read() == b"89" and f.seek(1) == 1 and f.read(2) == b"12"
  with pytest.raises(ValueError): TensorIO(Tensor([1, 2]))
  with tarfile.open(tmp_path / "a.tar", "w") as tar:
    for name, data in [("a.txt", b"hello"), ("d/b.bin", bytes(range(100)))]:
      info = tarfile.TarInfo(name)
      info.size = len(data)
      tar.addfile(info, io.BytesIO(data))
  files = tar_extract(tmp_path / "a.tar")
  assert sorted(files) == ["a.txt", "d/b.bin"] and files["a.txt"].numpy().tobytes() == b"hello"
  assert files["d/b.bin"].numpy().tolist() == list(range(100))

def _gguf(kv:list[tuple[str, int, bytes]], tensors:list[tuple[str, tuple[int, ...], int, bytes]]) -> bytes:
  def s(x:str) -> bytes: return struct.pack("<Q", len(x)) + x.encode()
  out = b"GGUF" + struct.pack("<iqq", 3, len(tensors), len(kv)) + b"".join(s(k) + struct.pack("<i", t) + v for k, t, v in kv)
  data = b""
  for name, dims, typ, raw in tensors:
    out += s(name) + struct.pack(f"<I{len(dims)}QiQ", len(dims), *dims, typ, len(data))
    data += raw + b"\0" * (-len(raw) % 32)
  return out + b"\0" * (-len(out) % 32) + data

@pytest.mark.skipif(not is_dtype_supported(dtypes.half), reason="the quantized blocks' scales are float16")
def test_gguf_load(tmp_path):
  from tinygrad.nn.state import gguf_load, ggml_data_to_tensor
  w = np.arange(12, dtype=np.float32).reshape(3, 4)
  q = np.random.default_rng(0).integers(-128, 127, 64, dtype=np.int8)
  q8 = b"".join(np.float16(0.5).tobytes() + q[i:i + 32].tobytes() for i in (0, 32))  # Q8_0: a half scale, 32 int8s
  kv = [("general.name", 8, struct.pack("<Q", 4) + b"tiny"), ("n", 4, struct.pack("<I", 7)),
        ("arr", 9, struct.pack("<iQ3i", 5, 3, 1, -2, 3))]
  (tmp_path / "t.gguf").write_bytes(_gguf(kv, [("w", (4, 3), 0, w.tobytes()), ("q", (64,), 8, q8)]))
  meta, sd = gguf_load(tmp_path / "t.gguf")
  assert meta == {"general.name": "tiny", "n": 7, "arr": [1, -2, 3]}
  assert sd["w"].shape == (3, 4) and sd["w"].numpy().tolist() == w.tolist()
  np.testing.assert_equal(sd["q"].numpy(), q.astype(np.float32) * 0.5)
  # Q4_0: (nibble - 8) * scale, the 16 low nibbles first
  nib = np.arange(32, dtype=np.uint8) % 16
  q4 = np.float16(2.0).tobytes() + (nib[:16] | (nib[16:] << 4)).tobytes()
  np.testing.assert_equal(ggml_data_to_tensor(Tensor(np.frombuffer(q4, np.uint8)), 32, 2).numpy().ravel(), (nib.astype(np.float32) - 8) * 2)
  with pytest.raises(ValueError, match="not supported"): ggml_data_to_tensor(Tensor(np.zeros(64, np.uint8)), 32, 99)
