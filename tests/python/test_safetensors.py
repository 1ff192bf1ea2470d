# tinygrad.nn.state safetensors through the Python module: round trips, metadata, the reference's exact bytes, errors
import pathlib, struct
import numpy as np, pytest
from tinygrad import Tensor, dtypes, nn
from tinygrad.nn.state import safe_save, safe_load, safe_load_metadata, get_state_dict, load_state_dict

# what the reference tinygrad's safe_save writes for REF_DICT and REF_META (its Python, run while writing this test)
REF_HEADER = ('{"__metadata__":{"format":"pt","note":"h\\u00e9llo"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},'
              '"b":{"dtype":"I8","shape":[3],"data_offsets":[16,19]},"s":{"dtype":"F64","shape":[],"data_offsets":[19,27]},'
              '"m":{"dtype":"BOOL","shape":[2],"data_offsets":[27,29]},"h":{"dtype":"F16","shape":[2],"data_offsets":[29,33]},'
              '"u":{"dtype":"U16","shape":[2],"data_offsets":[33,37]},"l":{"dtype":"I64","shape":[1],"data_offsets":[37,45]}}   ')
REF_DATA = bytes.fromhex("0000c03f000000c00000803e00004040ff020300000000000004400100003c00b80100fffffdffffffffffffff")
REF_META = {"format": "pt", "note": "h\u00e9llo"}

def ref_dict():
  return {"w": Tensor([[1.5, -2.0], [0.25, 3.0]]), "b": Tensor([-1, 2, 3], dtype=dtypes.int8), "s": Tensor(2.5, dtype=dtypes.float64),
          "m": Tensor([True, False]), "h": Tensor([1.0, -0.5], dtype=dtypes.float16), "u": Tensor([1, 65535], dtype=dtypes.uint16),
          "l": Tensor([-3], dtype=dtypes.int64)}

def test_same_bytes_as_tinygrad(tmp_path):
  safe_save(ref_dict(), str(tmp_path / "a.safetensors"), REF_META)
  assert (tmp_path / "a.safetensors").read_bytes() == struct.pack("<Q", 440) + REF_HEADER.encode() + REF_DATA
  safe_save({"x": Tensor([1.0, 2.0])}, tmp_path / "b.safetensors")  # a pathlib.Path; no metadata
  assert (tmp_path / "b.safetensors").read_bytes() == \
    b'8\x00\x00\x00\x00\x00\x00\x00{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}  \x00\x00\x80?\x00\x00\x00@'

def test_reads_the_reference_file(tmp_path):
  (tmp_path / "ref.safetensors").write_bytes(struct.pack("<Q", 440) + REF_HEADER.encode() + REF_DATA)
  sd = safe_load(tmp_path / "ref.safetensors")
  assert list(sd.keys()) == ["w", "b", "s", "m", "h", "u", "l"]
  for k, t in ref_dict().items():
    assert sd[k].dtype == t.dtype and sd[k].shape == t.shape, k
    np.testing.assert_equal(sd[k].numpy(), t.numpy())
  t, data_start, header = safe_load_metadata(str(tmp_path / "ref.safetensors"))
  assert data_start == 448 and header["__metadata__"] == REF_META
  assert header["s"] == {"dtype": "F64", "shape": [], "data_offsets": [19, 27]}
  assert t.dtype == dtypes.uint8 and t.shape == (448 + 45,)
  assert bytes(t[data_start:data_start + 4].numpy()) == REF_DATA[:4]

def test_round_trip(tmp_path):
  rng = np.random.default_rng(0)
  arrays = {"f32": rng.standard_normal((2, 3)).astype(np.float32), "f64": np.array(2.5), "f16": np.array([1, -0.5, 65504], np.float16),
            "i8": np.array([-128, 127], np.int8), "u8": np.array([[0, 255]], np.uint8), "i16": np.array([-32768], np.int16),
            "u16": np.array([65535], np.uint16), "i32": np.array([-5, 7], np.int32), "u32": np.array([4000000000], np.uint32),
            "i64": np.array([-(2**62)], np.int64), "u64": np.array([2**63], np.uint64), "bool": np.array([True, False, True]),
            "empty": np.zeros((0, 3), np.float32)}
  sd = {k: Tensor(v) for k, v in arrays.items()}
  fn = tmp_path / "r.safetensors"
  safe_save(sd, fn)
  back = safe_load(fn)
  assert list(back.keys()) == list(arrays.keys())
  for k, v in arrays.items():
    assert back[k].dtype == sd[k].dtype and back[k].shape == v.shape, k
    np.testing.assert_equal(back[k].numpy(), v)
  # a uint8 Tensor of the file's bytes loads the same
  from_t = safe_load(Tensor(fn.read_bytes()))
  np.testing.assert_equal(from_t["f32"].numpy(), arrays["f32"])

def test_metadata_round_trip(tmp_path):
  meta = {"format": "pt", "n": 3, "x": 0.5, "ok": True, "none": None, "list": [1, "a", [2]], "nested": {"k": "v"}, "uni": "\U0001F600"}
  safe_save({"t": Tensor([1])}, tmp_path / "m.safetensors", metadata=meta)
  _, _, header = safe_load_metadata(tmp_path / "m.safetensors")
  assert header["__metadata__"] == meta and list(header.keys()) == ["__metadata__", "t"]
  assert list(safe_load(tmp_path / "m.safetensors").keys()) == ["t"]
  with pytest.raises(TypeError): safe_save({"t": Tensor([1])}, tmp_path / "m.safetensors", metadata={"bad": object()})
  with pytest.raises(TypeError): safe_save({"t": Tensor([1])}, tmp_path / "m.safetensors", metadata={1: "int key"})
  with pytest.raises(TypeError): safe_save({"t": [1, 2]}, tmp_path / "m.safetensors")

@pytest.mark.parametrize("data,msg", [
  (b"\x01\x02", "too short"),
  (struct.pack("<Q", 100) + b"{}", "header length 100 goes beyond the file"),
  (struct.pack("<Q", 5) + b'{"t":', "bad JSON header"),
  (struct.pack("<Q", 36) + b'{"t":{"dtype":"F32","shape":[1]}}   ', 'has no "data_offsets"'),
  (struct.pack("<Q", 56) + b'{"t":{"dtype":"X","shape":[1],"data_offsets":[0,4]}}    ' + bytes(4), "unknown dtype 'X'"),
  (struct.pack("<Q", 56) + b'{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}  ' + bytes(4), "needs 8"),
])
def test_corrupt_files(tmp_path, data, msg):
  (tmp_path / "c.safetensors").write_bytes(data)
  with pytest.raises(RuntimeError, match=msg): safe_load(tmp_path / "c.safetensors")
  with pytest.raises(RuntimeError, match=msg): safe_load_metadata(tmp_path / "c.safetensors")

def test_load_state_dict_from_file(tmp_path):
  class Net:
    def __init__(self): self.l1, self.l2 = nn.Linear(3, 4), nn.Linear(4, 2)
    def __call__(self, x): return self.l2(self.l1(x).relu())
  Tensor.manual_seed(1)
  a, b = Net(), Net()
  safe_save(get_state_dict(a), tmp_path / "net.safetensors")
  load_state_dict(b, safe_load(tmp_path / "net.safetensors"), verbose=False)
  x = Tensor([[0.5, -1.0, 2.0]])
  np.testing.assert_equal(b(x).numpy(), a(x).numpy())
