# the devices from Python: PYTHON (the uop interpreter) and NULL beside CPU, Tensor.to / to_, Device[...]
import numpy as np, pytest
from tinygrad import Tensor, Device, dtypes

def test_tutorial_add_on_python():
  t = Tensor([1, 2, 3], device="PYTHON") + 1
  assert t.device == "PYTHON"
  assert t.tolist() == [2, 3, 4]

def test_device_objects():
  assert Device["PYTHON"].renderer.has_local and Device["PYTHON"].renderer.has_shared
  assert not Device["CPU"].renderer.has_local
  assert Device["null"].device == "NULL"
  assert Device.canonicalize("python:0") == "PYTHON"
  assert set(["CPU", "PYTHON", "NULL"]) <= set(Device.get_available_devices())

def test_matmul_on_python_matches_numpy():
  a, b = np.random.default_rng(0).standard_normal((2, 33, 20), dtype=np.float32)[:, :, :20]
  got = (Tensor(a, device="PYTHON") @ Tensor(b[:20, :17], device="PYTHON")).numpy()
  np.testing.assert_allclose(got, a @ b[:20, :17], rtol=1e-5, atol=1e-5)

def test_to_and_to_():
  x = Tensor([1.0, 2.0], requires_grad=True)
  (x * x).sum().backward()
  y = x.to("PYTHON")
  assert y.device == "PYTHON" and y.grad.device == "PYTHON"
  assert y.grad.tolist() == [2.0, 4.0]
  assert x.to_("python:1") is x
  assert x.device == "PYTHON:1" and x.grad.device == "PYTHON:1"
  assert x.to(x.device) is x

def test_null_runs_nothing():
  t = (Tensor.empty(8, 8, device="NULL") + 1).contiguous().realize()
  assert t.device == "NULL"
  assert t.tolist() == [[0.0] * 8] * 8

def test_bad_device_names_the_available_ones():
  available = ", ".join(Device.get_available_devices())  # CPU, [LLVM, ]PYTHON, NULL
  with pytest.raises(RuntimeError, match=f"unknown device 'FOO'; available: {available}$"):
    Tensor([1], device="foo")

def test_buffer_spec():
  from tinygrad.device import Buffer, BufferSpec
  b = Buffer("PYTHON", 4, dtypes.int32, options=BufferSpec(nolru=True)).allocate()
  assert b.options == BufferSpec(nolru=True) and b.options.nolru
  b.copyin(memoryview(bytearray(np.arange(4, dtype=np.int32).tobytes())))
  assert np.frombuffer(b.as_buffer(), dtype=np.int32).tolist() == [0, 1, 2, 3]

def test_tensor_cores_under_emulate_cuda():
  # a fresh process: EMULATE_CUDA is read when the PYTHON device opens
  import os, subprocess, sys
  code = """
from tinygrad import Tensor, Device, dtypes
import numpy as np
tcs = Device["PYTHON"].renderer.tensor_cores
assert [str(t) for t in tcs][:3] == ["WMMA_8_16_16_half_float", "WMMA_8_16_16___bf16_float", "WMMA_8_16_16_half_half"], tcs
assert tcs[0].dims == (8, 16, 16) and tcs[0].threads == 32 and tcs[0].elements_per_thread == (8, 4, 4)
a = np.arange(32 * 48, dtype=np.float32).reshape(32, 48) % 7 - 3
b = np.arange(48 * 16, dtype=np.float32).reshape(48, 16) % 5 - 2
got = (Tensor(a, device="PYTHON").half() @ Tensor(b, device="PYTHON").half()).float().numpy()
np.testing.assert_allclose(got, a @ b)
print("ok")
"""
  env = dict(os.environ, EMULATE_CUDA="1")
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
  assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
  assert Device["CPU"].renderer.tensor_cores == []
