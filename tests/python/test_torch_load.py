# tinygrad.nn.state.torch_load through the Python module: the checkpoint PyTorch 1.13 wrote (tests/data/nn), against
# numpy values, the same file read by torch when it is installed, a model saved by torch loaded into our layers
import pathlib
import numpy as np, pytest
from tinygrad import Tensor, dtypes, nn
from tinygrad.nn.state import torch_load, load_state_dict

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "nn"

def test_checkpoint_values():
  sd = torch_load(DATA / "checkpoint.pth")
  assert list(sd)[:3] == ["model.f32", "model.f16", "model.bf16"] and list(sd)[-2:] == ["hist.0", "hist.1"]
  base = np.arange(24, dtype=np.float32) * 0.5
  np.testing.assert_array_equal(sd["model.f32"].numpy(), base.reshape(2, 3, 4))
  np.testing.assert_array_equal(sd["model.transposed"].numpy(), base.reshape(4, 6).T)
  np.testing.assert_array_equal(sd["model.sliced"].numpy(), base[5:11].reshape(2, 3))
  np.testing.assert_array_equal(sd["model.expanded"].numpy(), np.array([[1, 1, 1], [2, 2, 2]], np.float32))
  assert sd["model.f16"].dtype == dtypes.float16 and sd["model.i64"].dtype == dtypes.int64
  np.testing.assert_array_equal(sd["model.u8"].numpy(), np.array([0, 128, 255], np.uint8))
  assert sd["model.scalar"].shape == () and sd["model.scalar"].item() == 3.25 and sd["model.empty"].shape == (0, 4)

def test_deflated_and_bytes_tensor():
  a, b = torch_load(str(DATA / "checkpoint.pth")), torch_load(DATA / "checkpoint_deflated.pth")
  raw = torch_load(Tensor(np.frombuffer((DATA / "checkpoint.pth").read_bytes(), dtype=np.uint8)))
  for k in a:
    if a[k].dtype == dtypes.bfloat16: a[k], b[k], raw[k] = a[k].float(), b[k].float(), raw[k].float()
    np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())
    np.testing.assert_array_equal(a[k].numpy(), raw[k].numpy())

def test_legacy_format_is_a_clear_error():
  with pytest.raises(RuntimeError, match="not a zip archive"): torch_load(DATA / "legacy.pth")

def test_same_tensors_as_torch(tmp_path):
  torch = pytest.importorskip("torch")
  ref = torch.load(DATA / "checkpoint.pth")["model"]
  sd = torch_load(DATA / "checkpoint.pth")
  for k, v in ref.items():
    mine = sd["model." + k]
    if v.dtype == torch.bfloat16: mine, v = mine.float(), v.float()
    np.testing.assert_array_equal(mine.numpy(), v.detach().numpy(), err_msg=k)
  # a model saved by torch loads into the same layers here and computes the same outputs
  torch.manual_seed(0)
  tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 5))
  torch.save(tm.state_dict(), tmp_path / "m.pth")
  class Net:
    def __init__(self): self.layers = [nn.Conv2d(3, 4, 3), None, None, nn.Linear(64, 5)]
    def __call__(self, x): return self.layers[3](self.layers[0](x).relu().flatten(1))
  net = Net()
  load_state_dict(net, {"layers." + k: v for k, v in torch_load(tmp_path / "m.pth").items()})
  x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
  np.testing.assert_allclose(net(Tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
