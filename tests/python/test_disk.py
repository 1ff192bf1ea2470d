# The DISK device from Python (tinygrad's Tensor(pathlib.Path), "disk:" devices, assign and setitem writing the file)
import pathlib, struct
import numpy as np
import pytest
from tinygrad import Tensor, dtypes

def test_path_tensor_reads_the_file(tmp_path):
  p = tmp_path / "bytes.bin"
  p.write_bytes(bytes(range(100)))
  t = Tensor(p)
  assert t.shape == (100,) and t.dtype == dtypes.uint8 and t.device.startswith("DISK:")
  np.testing.assert_array_equal(t.numpy(), np.arange(100, dtype=np.uint8))
  h = Tensor(p, dtype=dtypes.int16)
  np.testing.assert_array_equal(h.numpy(), np.frombuffer(bytes(range(100)), dtype=np.int16))
  c = Tensor(p, device="CPU")
  assert c.device == "CPU" and c.tolist() == list(range(100))

def test_missing_path_is_file_not_found(tmp_path):
  with pytest.raises(FileNotFoundError):
    Tensor(tmp_path / "missing.bin")

def test_views_of_the_file(tmp_path):
  p = tmp_path / "rows.bin"
  p.write_bytes(bytes(range(256)) * 2)
  t = Tensor.empty(16, 32, dtype=dtypes.uint8, device=f"disk:{p}")
  want = [(x + 1) * 256 + x for x in range(32, 64, 2)]
  assert t[1].bitcast(dtypes.uint16).to("CPU").tolist() == want
  assert t.bitcast(dtypes.uint16)[1].tolist() == want

def test_write_through_to_assign_setitem(tmp_path):
  p = tmp_path / "w.bin"
  Tensor.ones(4, 4).contiguous().to(f"disk:{p}").realize()
  assert p.read_bytes() == struct.pack("<f", 1.0) * 16
  d = Tensor([[1], [2]]).to(f"disk:{tmp_path / 's.bin'}")
  d[1] = [3]
  assert d.tolist() == [[1], [3]]
  e = Tensor.empty(10, dtype=dtypes.int64, device=f"disk:{tmp_path / 'a.bin'}")
  for i in range(5): e[2*i:2*i+2].assign(np.array([3, 3]))
  assert e.tolist() == [3] * 10

def test_compute_on_disk_is_not_implemented(tmp_path):
  p = tmp_path / "c.bin"
  p.write_bytes(bytes(8))
  with pytest.raises(NotImplementedError):
    Tensor.empty(4, dtype=dtypes.int16, device=f"disk:{p}").cast(dtypes.float16).realize()
  with pytest.raises(RuntimeError):  # 3 bytes are not a whole number of halves
    Tensor.empty(3, dtype=dtypes.int8, device=f"disk:{p}").bitcast(dtypes.float16)
