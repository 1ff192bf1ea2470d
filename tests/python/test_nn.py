# tinygrad.nn through the Python module: optimizers against numpy loops, state dicts of Python objects, mnist
import collections, gzip, struct
import numpy as np, pytest
from tinygrad import Tensor, dtypes
from tinygrad.nn.optim import Optimizer, OptimizerGroup, LARS, LAMB, SGD, Adam, AdamW
from tinygrad.nn.state import get_state_dict, get_parameters, load_state_dict
from tinygrad.nn.datasets import mnist

@pytest.fixture
def training():
  old = Tensor.training
  Tensor.training = True
  yield
  Tensor.training = old

def grads(step): return [np.sin(0.7 * (step + 1) + np.arange(12.0)).reshape(3, 4), np.cos(0.3 * step + np.arange(3.0))]
W0, B0 = (np.arange(12.0).reshape(3, 4) / 10 - 0.5), np.array([0.1, -0.2, 0.3])

def run(make, steps=3):
  ps = [Tensor(W0.astype(np.float32), requires_grad=True), Tensor(B0.astype(np.float32), requires_grad=True)]
  opt = make(ps)
  out = []
  for s in range(steps):
    for p, g in zip(ps, grads(s)): p.grad = Tensor(g.astype(np.float32))
    opt.step()
    out.append([p.numpy() for p in ps])
  return opt, out

def sgd_ref(lr, momentum=0.0, wd=0.0, nesterov=False, steps=3):
  ts, bs, out = [W0.copy(), B0.copy()], [np.zeros(12).reshape(3, 4), np.zeros(3)], []
  for s in range(steps):
    for i, g in enumerate(grads(s)):
      g = g + wd * ts[i]
      if momentum:
        bs[i] = momentum * bs[i] + g
        g = g + momentum * bs[i] if nesterov else bs[i]
      ts[i] = ts[i] - g * lr
    out.append([t.copy() for t in ts])
  return out

def adam_ref(lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, lamb=False, steps=3):
  ts, ms, vs, b1t, b2t, out = [W0.copy(), B0.copy()], [np.zeros((3, 4)), np.zeros(3)], [np.zeros((3, 4)), np.zeros(3)], 1.0, 1.0, []
  for s in range(steps):
    b1t, b2t = b1t * b1, b2t * b2
    for i, g in enumerate(grads(s)):
      ms[i] = b1 * ms[i] + (1 - b1) * g
      vs[i] = b2 * vs[i] + (1 - b2) * g * g
      up = (ms[i] / (1 - b1t)) / (np.sqrt(vs[i] / (1 - b2t)) + eps) + wd * ts[i]
      r1, r2 = np.linalg.norm(ts[i]), np.linalg.norm(up)
      r = (r1 / r2 if r2 > 0 else 1.0) if lamb and r1 > 0 else 1.0
      ts[i] = ts[i] - lr * r * up
    out.append([t.copy() for t in ts])
  return out

def check(got, want):
  for g_step, w_step in zip(got, want):
    for g, w in zip(g_step, w_step): np.testing.assert_allclose(g, w, atol=2e-5, rtol=2e-5)

# *** optimizers ***

@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.05, momentum=0.9), dict(lr=0.05, momentum=0.8, weight_decay=0.1, nesterov=True)])
def test_sgd(training, kw):
  opt, got = run(lambda ps: SGD(ps, **kw))
  assert isinstance(opt, LARS) and isinstance(opt, Optimizer)  # SGD is LARS without the trust ratio, as in tinygrad
  check(got, sgd_ref(kw["lr"], kw.get("momentum", 0.0), kw.get("weight_decay", 0.0), kw.get("nesterov", False)))

@pytest.mark.parametrize("fused", [False, True])
def test_adam(training, fused):
  opt, got = run(lambda ps: Adam(ps, lr=0.01, fused=fused))
  assert isinstance(opt, LAMB) and opt.adam and opt.fused == fused
  check(got, adam_ref(0.01))

def test_adamw_lamb(training):
  check(run(lambda ps: AdamW(ps, lr=0.01, weight_decay=0.1))[1], adam_ref(0.01, wd=0.1))
  check(run(lambda ps: LAMB(ps, lr=0.01, weight_decay=0.01))[1], adam_ref(0.01, eps=1e-6, wd=0.01, lamb=True))

def test_step_needs_training():
  w = Tensor([1.0, 2.0], requires_grad=True)
  opt = SGD([w])
  w.grad = Tensor([1.0, 1.0])
  Tensor.training = False
  with pytest.raises(RuntimeError, match="training"): opt.step()

def test_lr_is_a_tensor(training):
  w = Tensor([1.0, 2.0], requires_grad=True)
  opt = SGD([w], lr=0.5)
  assert opt.lr.shape == (1,) and opt.lr.dtype == dtypes.float32
  w.grad = Tensor([1.0, 1.0])
  opt.step()
  opt.lr.assign(Tensor([0.25])).realize()
  w.grad = Tensor([1.0, 1.0])
  opt.step()
  np.testing.assert_allclose(w.numpy(), [0.25, 1.25])

def test_group_and_zero_grad(training):
  a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0], requires_grad=True)
  sgd, adam = SGD([a], lr=0.5), Adam([b], lr=0.1)
  g = OptimizerGroup(sgd, adam)
  assert len(g.params) == 2 and g[1].adam and len(g.optimizers) == 2
  a.grad, b.grad = Tensor([1.0, -1.0]), Tensor([2.0])
  g.step()
  np.testing.assert_allclose(a.numpy(), [0.5, 2.5])
  np.testing.assert_allclose(b.numpy(), [2.9], rtol=1e-5)
  g.zero_grad()
  assert a.grad is None and b.grad is None

def test_fits_least_squares():
  x = np.stack([np.sin(0.5 * np.arange(16)), np.cos(0.3 * np.arange(16))], 1).astype(np.float32)
  X, Y = Tensor(x), Tensor(x @ np.array([2, -3], dtype=np.float32) + 0.5)
  w, b = Tensor.zeros(2).contiguous().requires_grad_(), Tensor.zeros(1).contiguous().requires_grad_()
  opt = Adam([w, b], lr=0.1)
  with Tensor.train():
    for _ in range(60):
      opt.zero_grad()
      loss = ((X * w).sum(1) + b - Y).square().mean()
      loss.backward()
      opt.step()
  np.testing.assert_allclose(w.numpy(), [2, -3], atol=0.2)

def test_params_and_buffers():
  a, b = Tensor([1.0]), Tensor([2.0], requires_grad=False)
  opt = SGD([a, b, a])
  assert a.requires_grad is True and len(opt.params) == 1 and len(opt.buffers) == 1
  with pytest.raises(RuntimeError): SGD([b])

# *** state dicts ***

class Block:
  def __init__(self):
    self.w, self.b, self.eps = Tensor.ones(2, 3), None, 1e-5
class Net:
  def __init__(self):
    self.layers = [Block(), Block()]
    self.named = {"beta": Tensor.zeros(2)}
    self.pair = collections.namedtuple("Pair", "x y")(Tensor.zeros(1), Tensor.ones(1))
    self.me = self  # a cycle is not followed

def test_state_dict_names():
  net = Net()
  sd = get_state_dict(net)
  assert list(sd.keys()) == ["layers.0.w", "layers.1.w", "named.beta", "pair.x", "pair.y"]
  assert len(get_parameters(net)) == 5
  assert list(get_state_dict(net.layers[0], prefix="blk.").keys()) == ["blk.w"]
  assert list(get_state_dict(Tensor.ones(1), prefix="t.").keys()) == ["t"]

def test_load_state_dict():
  src, dst = Net(), Net()
  src.layers[1].w = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
  sd = get_state_dict(src)
  loaded = load_state_dict(dst, sd, verbose=False)
  assert len(loaded) == 5
  np.testing.assert_equal(dst.layers[1].w.numpy(), np.arange(6).reshape(2, 3))
  sd2 = dict(sd)
  del sd2["pair.x"]
  sd2["extra"] = Tensor.ones(1)
  with pytest.raises(RuntimeError, match=r"missing keys \['pair.x'\].*unexpected keys \['extra'\]"): load_state_dict(dst, sd2)
  load_state_dict(dst, sd2, strict=False, verbose=False)
  sd3 = dict(sd, **{"named.beta": Tensor.zeros(3)})
  with pytest.raises(RuntimeError, match=r"shape mismatch in 'named.beta'"): load_state_dict(dst, sd3)
  sd4 = dict(sd)
  load_state_dict(dst, sd4, consume=True, verbose=False)
  assert len(sd4) == 0

# *** mnist ***

def idx(dims, data): return struct.pack(">I", 0x800 + len(dims)) + b"".join(struct.pack(">I", d) for d in dims) + bytes(data)

def test_mnist(tmp_path):
  imgs = [(i * 7) % 256 for i in range(3 * 784)]
  (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(gzip.compress(idx([3, 28, 28], imgs)))
  (tmp_path / "train-labels-idx1-ubyte").write_bytes(idx([3], [1, 2, 3]))
  (tmp_path / "t10k-images-idx3-ubyte").write_bytes(idx([1, 28, 28], imgs[:784]))
  (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(idx([1], [9])))
  X_train, Y_train, X_test, Y_test = mnist(dir=str(tmp_path))
  assert X_train.shape == (3, 1, 28, 28) and X_train.dtype == dtypes.uint8 and Y_test.shape == (1,)
  assert Y_train.tolist() == [1, 2, 3] and Y_test.tolist() == [9]
  np.testing.assert_equal(X_train.numpy().flatten(), np.array(imgs, dtype=np.uint8))
  (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(idx([1], [9]))[:-5])
  with pytest.raises(RuntimeError, match="gzip"): mnist(dir=str(tmp_path))
  with pytest.raises(RuntimeError, match="fetch_mnist"): mnist(dir=str(tmp_path / "nope"))
