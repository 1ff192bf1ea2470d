# GGUF (src/tg/nn/gguf.h): dequantization of every type llama.cpp writes for LLM weights, bit-exact against an
# independent numpy transcription of ggml's dequantize_row_* (and against llama.cpp's own libggml when it is installed:
# tools/fetch_llama_cpp.sh), gguf_save/gguf_load round trips, and corrupt files as ValueErrors naming the field.
import ctypes, os, pathlib, struct
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.nn.state import gguf_load, gguf_save, ggml_data_to_tensor, ggml_int8_pack, ggml_int8_linear, GGMLInt8Weight
from tinygrad.device import is_dtype_supported


TYPES = {"q4_0": (2, 32, 18), "q4_1": (3, 32, 20), "q5_0": (6, 32, 22), "q5_1": (7, 32, 24), "q8_0": (8, 32, 34),
         "q2_K": (10, 256, 84), "q3_K": (11, 256, 110), "q4_K": (12, 256, 144), "q5_K": (13, 256, 176),
         "q6_K": (14, 256, 210), "iq4_nl": (20, 32, 18), "iq4_xs": (23, 256, 136)}
KV_IQ4NL = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113], dtype=np.float32)

# *** numpy: ggml's dequantize_row_* loops, vectorized over blocks (float32 throughout, in ggml's order) ***

def f16(b, at): return b[:, at:at+2].copy().view(np.float16).astype(np.float32)  # (nb, 1)
def nib(x): return np.concatenate([x & 0xF, x >> 4], axis=-1).astype(np.int32)  # low nibbles, then high

def k4_scale_min(q):  # get_scale_min_k4 for j = 0..7 -> (nb, 8) each
  q = q.astype(np.int32)
  sc = np.concatenate([q[:, 0:4] & 63, (q[:, 8:12] & 0xF) | ((q[:, 0:4] >> 6) << 4)], axis=1)
  m = np.concatenate([q[:, 4:8] & 63, (q[:, 8:12] >> 4) | ((q[:, 4:8] >> 6) << 4)], axis=1)
  return sc.astype(np.float32), m.astype(np.float32)

def np_dequant(name, raw):
  _, bs, ts = TYPES[name]
  b = np.frombuffer(raw, np.uint8).reshape(-1, ts)
  nb = b.shape[0]
  if name == "q4_0": return ((nib(b[:, 2:18]) - 8).astype(np.float32) * f16(b, 0)).ravel()
  if name == "q4_1": return (nib(b[:, 4:20]).astype(np.float32) * f16(b, 0) + f16(b, 2)).ravel()
  if name in ("q5_0", "q5_1"):
    one = name == "q5_1"
    qh = b[:, (4 if one else 2):(8 if one else 6)].copy().view(np.uint32).astype(np.int64)  # (nb, 1)
    j = np.arange(32)
    x = nib(b[:, (8 if one else 6):]) | (((qh >> j) & 1) << 4).astype(np.int32)
    if one: return (x.astype(np.float32) * f16(b, 0) + f16(b, 2)).ravel()
    return ((x - 16).astype(np.float32) * f16(b, 0)).ravel()
  if name == "q8_0": return (b[:, 2:].view(np.int8).astype(np.float32) * f16(b, 0)).ravel()
  if name == "iq4_nl": return (f16(b, 0) * KV_IQ4NL[nib(b[:, 2:18])]).ravel()
  y = np.zeros((nb, 256), np.float32)
  if name == "q2_K":
    scales, qs, d, dmin = b[:, 0:16].astype(np.int32), b[:, 16:80].astype(np.int32), f16(b, 80), f16(b, 82)
    i = 0
    for n in range(2):
      for j in range(4):
        for h in range(2):
          sc = scales[:, n*8 + j*2 + h:n*8 + j*2 + h + 1]
          dl, ml = d * (sc & 0xF).astype(np.float32), dmin * (sc >> 4).astype(np.float32)
          y[:, i:i+16] = dl * ((qs[:, n*32 + h*16:n*32 + h*16 + 16] >> (2*j)) & 3).astype(np.float32) - ml
          i += 16
  elif name == "q3_K":
    hm, qs, d = b[:, 0:32].astype(np.int32), b[:, 32:96].astype(np.int32), f16(b, 108)
    aux = b[:, 96:108].copy().view(np.uint32).astype(np.uint64)  # (nb, 3)
    k1, k2, tmp = 0x03030303, 0x0f0f0f0f, aux[:, 2]
    a = [(aux[:, 0] & k2) | (((tmp >> 0) & k1) << 4), (aux[:, 1] & k2) | (((tmp >> 2) & k1) << 4),
         ((aux[:, 0] >> 4) & k2) | (((tmp >> 4) & k1) << 4), ((aux[:, 1] >> 4) & k2) | (((tmp >> 6) & k1) << 4)]
    scales = np.stack(a, 1).astype(np.uint32).view(np.int8).astype(np.int32)  # (nb, 16)
    i, m = 0, 1
    for n in range(2):
      for j in range(4):
        for h in range(2):
          dl = d * (scales[:, n*8 + j*2 + h:n*8 + j*2 + h + 1] - 32).astype(np.float32)
          q = (qs[:, n*32 + h*16:n*32 + h*16 + 16] >> (2*j)) & 3
          y[:, i:i+16] = dl * (q - np.where(hm[:, h*16:h*16 + 16] & m, 0, 4)).astype(np.float32)
          i += 16
        m <<= 1
  elif name in ("q4_K", "q5_K"):
    five = name == "q5_K"
    d, dmin = f16(b, 0), f16(b, 2)
    sc, mn = k4_scale_min(b[:, 4:16])
    qh, ql = b[:, 16:48].astype(np.int32), b[:, (48 if five else 16):].astype(np.int32)
    for c in range(4):
      for h in range(2):
        d1, m1 = d * sc[:, 2*c + h:2*c + h + 1], dmin * mn[:, 2*c + h:2*c + h + 1]
        q = (ql[:, c*32:c*32 + 32] >> (4*h)) & 0xF
        if five: q = q + np.where(qh & (1 << (2*c + h)), 16, 0)
        y[:, c*64 + h*32:c*64 + h*32 + 32] = d1 * q.astype(np.float32) - m1
  elif name == "q6_K":
    ql, qh, sc, d = b[:, 0:128].astype(np.int32), b[:, 128:192].astype(np.int32), b[:, 192:208].view(np.int8), f16(b, 208)
    for n in range(2):
      for l in range(32):
        for g in range(4):
          lo = (ql[:, n*64 + (g % 2)*32 + l] >> (4*(g // 2))) & 0xF
          q = (lo | (((qh[:, n*32 + l] >> (2*g)) & 3) << 4)) - 32
          s = sc[:, n*8 + 2*g + l // 16].astype(np.float32)
          y[:, n*128 + g*32 + l] = d[:, 0] * s * q.astype(np.float32)
  elif name == "iq4_xs":
    d, sh, sl, qs = f16(b, 0), b[:, 2:4].copy().view(np.uint16).astype(np.int32), b[:, 4:8].astype(np.int32), b[:, 8:]
    for ib in range(8):
      ls = ((sl[:, ib // 2] >> (4*(ib % 2))) & 0xF) | (((sh[:, 0] >> (2*ib)) & 3) << 4)
      dl = d * (ls - 32).astype(np.float32)[:, None]
      y[:, ib*32:ib*32 + 32] = dl * KV_IQ4NL[nib(qs[:, ib*16:ib*16 + 16])]
  return y.ravel()

def random_blocks(name, nb, rng):
  """random block bytes whose half scales are finite (extremes included): the largest half, zero blocks and
  negative mins among them"""
  _, bs, ts = TYPES[name]
  b = rng.integers(0, 256, (nb, ts), dtype=np.uint8)
  halves = {"q4_0": [0], "q4_1": [0, 2], "q5_0": [0], "q5_1": [0, 2], "q8_0": [0], "q2_K": [80, 82], "q3_K": [108],
            "q4_K": [0, 2], "q5_K": [0, 2], "q6_K": [208], "iq4_nl": [0], "iq4_xs": [0]}[name]
  vals = rng.standard_normal((nb, len(halves))).astype(np.float16)
  vals[0, :] = np.float16(65504)  # the largest half
  vals[1, :] = -np.float16(65504)  # negative scales and mins
  vals[2, :] = np.float16(6e-8)  # a subnormal half
  for k, at in enumerate(halves): b[:, at:at+2] = vals[:, k:k+1].view(np.uint8).reshape(nb, 2)
  b[3, :] = 0  # a zero block
  b[4, :] = 0xFF
  for at in halves: b[4, at:at+2] = np.frombuffer(np.float16(-1.5).tobytes(), np.uint8)
  return b.tobytes()

def bits(x): return np.asarray(x, np.float32).view(np.uint32)

@pytest.mark.parametrize("name", list(TYPES))
def test_dequant_matches_ggml_reference_bit_exact(name):
  rng = np.random.default_rng(TYPES[name][0])
  typ, bs, ts = TYPES[name]
  raw = random_blocks(name, 24, rng)
  got = ggml_data_to_tensor(Tensor(np.frombuffer(raw, np.uint8)), 24 * bs, typ).numpy()
  assert got.shape == (24 * bs,) and got.dtype == np.float32
  np.testing.assert_array_equal(bits(got), bits(np_dequant(name, raw)))

@pytest.mark.parametrize("name", ["q4_0", "q8_0", "q4_K", "q6_K"])
def test_int8_pack_keeps_the_weights_and_the_matvec(name):
  # ggml_int8_pack lays a Q4_0 / Q8_0 / Q4_K / Q6_K weight out for the int8 matvec (ours; llama.cpp repacks too): its dequantization
  # is the file's bit for bit, and the matvec on it is ggml_int8_linear's on the bytes (same products, another order)
  typ, bs, ts = TYPES[name]
  n, k = 64, 512
  raw = random_blocks(name, n * k // bs, np.random.default_rng(5))
  raw = np.frombuffer(raw, np.uint8).copy()
  halves = {"q4_K": [0, 2], "q6_K": [208]}.get(name, [0])
  for at in halves: raw.reshape(-1, ts)[:3, at:at+2] = np.frombuffer(np.float16(0.5).tobytes(), np.uint8)  # finite sums
  b = Tensor(raw)
  w = ggml_int8_pack(b, typ, n, k)
  assert isinstance(w, GGMLInt8Weight) and (w.n, w.k, w.ggml_type) == (n, k, typ) and w.d.dtype == dtypes.half
  want = np_dequant(name, raw.tobytes()).reshape(n, k)
  np.testing.assert_array_equal(bits(w.dequantize().numpy()), bits(want))
  # a decode step's row, and a prefill's rows: 8 (tiles of 4 rows by 16 of the weight's, the offset of Q4_0's,
  # Q8_0's and Q6_K's integers summed apart), 2 and 5 (other tiles)
  for rows in (1, 2, 5, 8):
    x = Tensor(np.random.default_rng(6 + rows).standard_normal((rows, k)).astype(np.float32))
    want = ggml_int8_linear(x, b, typ, n).numpy()  # float sums in another order: within float32's rounding of the sums
    np.testing.assert_allclose(ggml_int8_linear(x, w).numpy(), want, rtol=1e-5, atol=1e-6 * np.abs(want).max(),
                               err_msg=f"{rows} rows")
  with pytest.raises(ValueError, match="no int8 layout"): ggml_int8_pack(b, typ, 32, k)

@pytest.mark.skipif(not is_dtype_supported(dtypes.half), reason="F16 weights are half tensors")
def test_plain_types():
  x = np.arange(-8, 8, dtype=np.float32) / 3
  for typ, np_dt in [(0, np.float32), (1, np.float16), (24, np.int8), (25, np.int16), (26, np.int32), (27, np.int64), (28, np.float64)]:
    v = x.astype(np_dt)
    got = ggml_data_to_tensor(Tensor(np.frombuffer(v.tobytes(), np.uint8)), 16, typ).numpy()
    np.testing.assert_array_equal(got, v)
  bf = (x.view(np.uint32) >> 16).astype(np.uint16)
  got = ggml_data_to_tensor(Tensor(np.frombuffer(bf.tobytes(), np.uint8)), 16, 30)
  assert got.dtype == dtypes.bfloat16
  np.testing.assert_array_equal(got.float().numpy(), (bf.astype(np.uint32) << 16).view(np.float32))

def test_bad_types_and_sizes():
  with pytest.raises(ValueError, match="1337"): ggml_data_to_tensor(Tensor.empty(512, dtype=dtypes.uint8), 256, 1337)
  with pytest.raises(ValueError, match="blocks"): ggml_data_to_tensor(Tensor.empty(512, dtype=dtypes.uint8), 33, 2)
  with pytest.raises(ValueError, match="bytes"): ggml_data_to_tensor(Tensor.empty(17, dtype=dtypes.uint8), 32, 2)

# *** files ***

def test_save_load_round_trip(tmp_path):
  rng = np.random.default_rng(0)
  w = rng.standard_normal((4, 64)).astype(np.float32)
  raw = random_blocks("q6_K", 5, rng)
  meta = {"general.architecture": "llama", "general.alignment": 64, "n": 7, "neg": -3, "f": 0.5, "ok": True,
          "toks": ["a", "bé", ""], "ids": [1, -2, 3], "big": 2**40}
  half = is_dtype_supported(dtypes.half)  # F16 weights load as half tensors
  tensors = {"w": Tensor(w), "h": Tensor(w).cast(dtypes.half) if half else None, "q8": (Tensor(w), 8), "q4": (Tensor(w), 2),
             "k6": (Tensor(np.frombuffer(raw, np.uint8)), 14, (5, 256))}
  gguf_save(tmp_path / "m.gguf", {k: v for k, v in tensors.items() if v is not None}, meta)
  kv, sd = gguf_load(tmp_path / "m.gguf")
  assert kv == meta
  assert list(sd) == [k for k, v in tensors.items() if v is not None] and sd["k6"].shape == (5, 256) and sd["q4"].shape == (4, 64)
  np.testing.assert_array_equal(sd["w"].numpy(), w)
  if half: np.testing.assert_array_equal(sd["h"].numpy(), w.astype(np.float16))
  np.testing.assert_allclose(sd["q8"].numpy(), w, atol=np.abs(w).max() / 127)
  np.testing.assert_allclose(sd["q4"].numpy(), w, atol=np.abs(w).max() / 7)
  np.testing.assert_array_equal(bits(sd["k6"].numpy().ravel()), bits(np_dequant("q6_K", raw)))
  # the same file as a tensor of its bytes, on the CPU
  kv2, sd2 = gguf_load(Tensor(pathlib.Path(tmp_path / "m.gguf"), device="CPU"))
  assert kv2 == meta and sd2["q4"].device == "CPU"
  np.testing.assert_array_equal(sd2["q8"].numpy(), sd["q8"].numpy())

def header(n_tensors=0, n_kv=0, version=3): return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv)
def s(x:bytes): return struct.pack("<Q", len(x)) + x

@pytest.mark.parametrize("data,field", [
  (b"GGU", "magic"), (b"GGML" + bytes(20), "magic"), (header(version=1), "version"), (header(version=4), "version"),
  (header(n_kv=1 << 60), "n_kv"), (header(n_tensors=1 << 60), "n_tensors"),
  (header(n_kv=1) + s(b"k") + struct.pack("<I", 8) + s(b"\xff\xfe"), "UTF-8"),
  (header(n_kv=1) + s(b"k") + struct.pack("<I", 9) + struct.pack("<IQ", 4, 1 << 60), "array of"),
  (header(n_kv=1) + s(b"k") + struct.pack("<I", 13), "unknown value type"),
  (header(n_kv=1) + s(b"k") + struct.pack("<I", 4), "truncated"),
  (header(n_tensors=1) + s(b"t") + struct.pack("<IQIQ", 1, 32, 99, 0) + bytes(64), "unknown ggml type 99"),
  (header(n_tensors=1) + s(b"t") + struct.pack("<IQIQ", 1, 32, 2, 0) + bytes(8), "runs past the end"),
  (header(n_tensors=1) + s(b"t") + struct.pack("<IQQIQ", 2, 1 << 40, 1 << 40, 0, 0) + bytes(64), "overflow"),
  (header(n_tensors=1) + s(b"t") + struct.pack("<IQIQ", 1, 33, 2, 0) + bytes(64), "blocks"),
  (header(n_tensors=1) + s(b"t") + struct.pack("<IQIQ", 1, 4, 0, 3) + bytes(64), "alignment"),
])
def test_corrupt_files_are_value_errors(tmp_path, data, field):
  (tmp_path / "bad.gguf").write_bytes(data)
  with pytest.raises(ValueError, match=field):
    gguf_load(tmp_path / "bad.gguf")

# *** llama.cpp's own libggml (installed by tools/fetch_llama_cpp.sh; skipped without it) ***

def _libggml():
  root = pathlib.Path(os.environ.get("TG_LLAMA_CPP", pathlib.Path(__file__).parents[2] / ".deps" / "llama-cpp"))
  libs = sorted(root.glob("node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so"))
  if not libs: pytest.skip(f"llama.cpp's libggml not found under {root} (tools/fetch_llama_cpp.sh installs it)")
  lib = ctypes.CDLL(str(libs[0]))
  lib.ggml_quantize_chunk.restype = ctypes.c_size_t
  lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
  return lib

def ggml_dequant(lib, name, raw, n):
  out = np.zeros(n, np.float32)
  buf = np.frombuffer(raw, np.uint8).copy()
  getattr(lib, f"dequantize_row_{name}")(buf.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(n))
  return out

@pytest.mark.parametrize("name", list(TYPES))
def test_dequant_matches_libggml(name):
  lib = _libggml()
  typ, bs, ts = TYPES[name]
  rng = np.random.default_rng(typ + 100)
  # blocks ggml's own quantizer made from floats, and random blocks with extreme scales
  x = (rng.standard_normal(16 * bs) * 3).astype(np.float32)
  q = np.zeros(16 * ts, np.uint8)
  assert lib.ggml_quantize_chunk(typ, x.ctypes.data, q.ctypes.data, 0, 16, bs, None) == 16 * ts
  for raw in (q.tobytes(), random_blocks(name, 16, rng)):
    got = ggml_data_to_tensor(Tensor(np.frombuffer(raw, np.uint8)), 16 * bs, typ).numpy()
    np.testing.assert_array_equal(bits(got), bits(ggml_dequant(lib, name, raw, 16 * bs)))

def test_our_quantizers_match_libggml():
  lib = _libggml()
  import tinygrad.nn.state as st  # noqa: F401
  rng = np.random.default_rng(7)
  x = (rng.standard_normal((4, 64)) * 5).astype(np.float32)
  x[0, :32] = 0  # an all-zero block
  for name in ("q8_0", "q4_0", "q4_1", "q5_0", "q5_1"):
    typ, bs, ts = TYPES[name]
    want = np.zeros(x.size // bs * ts, np.uint8)
    lib.ggml_quantize_chunk(typ, x.ctypes.data, want.ctypes.data, 0, 4, 64, None)
    path = pathlib.Path(f"/tmp/tg_gguf_q_{os.getpid()}.gguf")
    try:
      gguf_save(path, {"w": (Tensor(x), typ)})
      kv, sd = gguf_load(path)
      data = path.read_bytes()
      np.testing.assert_array_equal(np.frombuffer(data[-len(want) - (-len(want) % 32):][:len(want)], np.uint8), want, err_msg=name)
    finally:
      path.unlink(missing_ok=True)

def test_our_k_quantizers_are_ggmls_format_and_as_close(tmp_path):
  # Q4_K and Q6_K: our own fit, not ggml's grid search; libggml reads our bytes as we do, and the error is ggml's within 10%
  lib = _libggml()
  rng = np.random.default_rng(11)
  for name in ("q4_K", "q6_K"):
    typ, bs, ts = TYPES[name]
    for scale in (0.02, 5.0):
      x = (rng.standard_normal((8, 512)) * scale).astype(np.float32)
      x[0, :256], x[1, :256], x[2, :256], x[3, :16] = 0, np.abs(x[1, :256]), -np.abs(x[2, :256]), 100 * scale
      want = np.zeros(x.size // bs * ts, np.uint8)
      lib.ggml_quantize_chunk(typ, x.ctypes.data, want.ctypes.data, 0, 8, 512, None)
      gguf_save(tmp_path / "k.gguf", {"w": (Tensor(x), typ)})
      ours = gguf_load(tmp_path / "k.gguf")[1]["w"].numpy().reshape(-1)
      data = (tmp_path / "k.gguf").read_bytes()
      np.testing.assert_array_equal(ggml_dequant(lib, name, data[-len(want) - (-len(want) % 32):][:len(want)], x.size), ours, err_msg=name)
      rmse = lambda y: np.sqrt(((y - x.reshape(-1)) ** 2).mean())
      assert rmse(ours) <= 1.1 * rmse(ggml_dequant(lib, name, want.tobytes(), x.size)), (name, scale)

def test_files_we_write_load_in_libggml(tmp_path):
  lib = _libggml()
  class Params(ctypes.Structure): _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.c_void_p)]
  lib.gguf_init_from_file.restype = ctypes.c_void_p
  lib.gguf_init_from_file.argtypes = [ctypes.c_char_p, Params]
  for f in ("gguf_get_n_tensors", "gguf_get_n_kv", "gguf_find_key", "gguf_get_data_offset"): getattr(lib, f).restype = ctypes.c_int64
  lib.gguf_get_tensor_name.restype = lib.gguf_get_key.restype = lib.gguf_get_val_str.restype = ctypes.c_char_p
  lib.gguf_get_tensor_offset.restype = ctypes.c_size_t
  for f in ("gguf_get_n_tensors", "gguf_get_n_kv", "gguf_get_data_offset", "gguf_free"): getattr(lib, f).argtypes = [ctypes.c_void_p]
  for f in ("gguf_get_tensor_name", "gguf_get_tensor_offset", "gguf_get_tensor_type", "gguf_get_key", "gguf_get_val_str",
            "gguf_get_val_u32", "gguf_get_kv_type"): getattr(lib, f).argtypes = [ctypes.c_void_p, ctypes.c_int64]
  rng = np.random.default_rng(3)
  tensors = {}
  for name, (typ, bs, ts) in TYPES.items(): tensors[f"t.{name}"] = (Tensor(np.frombuffer(random_blocks(name, 5, rng), np.uint8)), typ, (5, bs))
  tensors["f32"] = Tensor(rng.standard_normal((3, 32)).astype(np.float32))
  gguf_save(tmp_path / "ours.gguf", tensors, {"general.name": "tiny", "llama.block_count": 2})
  ctx = lib.gguf_init_from_file(str(tmp_path / "ours.gguf").encode(), Params(True, None))
  assert ctx, "libggml could not read our file"
  try:
    assert lib.gguf_get_n_tensors(ctx) == len(tensors) and lib.gguf_get_n_kv(ctx) == 2
    assert lib.gguf_get_val_str(ctx, lib.gguf_find_key(ctx, b"general.name")) == b"tiny"
    assert lib.gguf_get_val_u32(ctx, lib.gguf_find_key(ctx, b"llama.block_count")) == 2
    data = (tmp_path / "ours.gguf").read_bytes()
    _, sd = gguf_load(tmp_path / "ours.gguf")
    for i in range(lib.gguf_get_n_tensors(ctx)):
      name = lib.gguf_get_tensor_name(ctx, i).decode()
      if name == "f32": continue
      qname = name[2:]
      typ, bs, ts = TYPES[qname]
      assert lib.gguf_get_tensor_type(ctx, i) == typ
      off = lib.gguf_get_data_offset(ctx) + lib.gguf_get_tensor_offset(ctx, i)
      want = ggml_dequant(lib, qname, data[off:off + 5 * ts], 5 * bs)
      np.testing.assert_array_equal(bits(sd[name].numpy().ravel()), bits(want), err_msg=name)
  finally:
    lib.gguf_free(ctx)

@pytest.mark.parametrize("name", list(TYPES))
def test_dequant_fuses_into_the_matvec(name):
  from tinygrad.uop.ops import Ops
  typ, bs, ts = TYPES[name]
  raw = Tensor(np.frombuffer(random_blocks(name, 8, np.random.default_rng(1)), np.uint8)).realize()
  w = ggml_data_to_tensor(raw, 8 * bs, typ).reshape(4, 2 * bs)
  x = Tensor.ones(1, 2 * bs).contiguous().realize()
  y = x @ w.T
  sched = y.schedule()
  assert [si.ast.op for si in sched].count(Ops.SINK) == 1, [si.ast.op for si in sched]
  from tinygrad.engine.realize import run_schedule
  run_schedule(sched)
  np.testing.assert_allclose(y.numpy(), np.ones((1, 2 * bs), np.float32) @ w.numpy().T, rtol=1e-5, atol=1e-3)

@pytest.mark.parametrize("name", list(TYPES))
def test_packed_matvec_tile(name):
  # a matvec big enough for the CPU's packed-matvec tile (codegen/cpu_tiles.h: the reduce unrolled by a block or
  # super-block, rows upcast, bytes loaded as vectors and decoded lane-wise): random activations against numpy's
  # dequantization of the same blocks, on every type, 64 rows of 1024
  typ, bs, ts = TYPES[name]
  rng = np.random.default_rng(2)
  blocks = np.frombuffer(random_blocks(name, 64 * 1024 // bs, rng), np.uint8).reshape(-1, ts).copy()
  blocks[:3] = blocks[4:7]  # no extreme halves here: they overflow a float32 sum of products
  raw = blocks.tobytes()
  w = ggml_data_to_tensor(Tensor(blocks.ravel()).realize(), 64 * 1024, typ).reshape(64, 1024)
  xs = rng.standard_normal((1, 1024)).astype(np.float32)
  got = (Tensor(xs) @ w.T).numpy()
  want = xs.astype(np.float64) @ np_dequant(name, raw).reshape(64, 1024).T.astype(np.float64)
  np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * np.abs(want).max())
