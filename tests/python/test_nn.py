# tinygrad.nn through the Python module: optimizers against numpy loops, state dicts of Python objects, mnist
import collections, gzip, os, struct
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

def test_state_dict_holds_the_layers_own_tensors():  # hlb_cifar10 splits its parameters with `is`
  from tinygrad import nn
  m = {"bn": nn.BatchNorm2d(3), "fc": nn.Linear(2, 3), "conv": nn.Conv2d(1, 2, 3)}
  sd = get_state_dict(m)
  assert sd["bn.bias"] is m["bn"].bias and sd["fc.weight"] is m["fc"].weight and sd["conv.bias"] is m["conv"].bias
  assert [k for k, p in sd.items() if any(p is x for x in (m["bn"].running_var, m["fc"].bias))] == ["bn.running_var", "fc.bias"]
  ps = get_parameters(m["fc"])
  assert len([p for p in ps if p is not m["fc"].bias]) == 1

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
  with pytest.raises(KeyError, match=r"missing keys \['pair.x'\]"): load_state_dict(dst, sd2)
  load_state_dict(dst, sd2, strict=False, verbose=False)
  # as the reference: a key the model lacks is ignored, and a tensor takes the state dict's dtype (replace keeps it)
  assert len(load_state_dict(dst, dict(sd, extra=Tensor.ones(1)), verbose=False)) == 5
  load_state_dict(dst, dict(sd, **{"named.beta": Tensor([1, 2], dtype=dtypes.half)}), verbose=False)
  assert dst.named["beta"].dtype == dtypes.half and dst.named["beta"].numpy().tolist() == [1, 2]
  sd3 = dict(sd, **{"named.beta": Tensor.zeros(3)})
  with pytest.raises(ValueError, match=r"shape mismatch in 'named.beta'"): load_state_dict(dst, sd3)
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
  with pytest.raises(RuntimeError, match="dataset-fashion-mnist"): mnist(fashion=True, dir=str(tmp_path / "nope"))

@pytest.mark.skipif(not os.path.isdir("/usr/share/datasets/fashion-mnist"), reason="Debian's dataset-fashion-mnist")
def test_mnist_fashion():
  X_train, Y_train, X_test, Y_test = mnist(fashion=1)  # as the reference's examples call it: mnist(fashion=getenv(...))
  assert X_train.shape == (60000, 1, 28, 28) and Y_train.shape == (60000,) and X_test.shape == (10000, 1, 28, 28)
  assert Y_train[0].item() == 9 and Y_test[0].item() == 9  # ankle boots
  assert np.bincount(Y_test.numpy(), minlength=10).tolist() == [1000] * 10

# *** layers ***

from tinygrad.nn import (BatchNorm, BatchNorm2d, BatchNorm3d, Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, Linear,
                         GroupNorm, InstanceNorm, LayerNorm, LayerNorm2d, RMSNorm, Embedding, LSTMCell)

def arr(*shape, scale=1.0): return (scale * np.sin(0.37 * np.arange(np.prod(shape)) + 0.1)).reshape(shape).astype(np.float32)

def test_layer_classes():
  assert BatchNorm2d is BatchNorm and BatchNorm3d is BatchNorm
  assert isinstance(Conv1d(1, 2, 3), Conv2d) and isinstance(ConvTranspose1d(1, 2, 3), ConvTranspose2d)
  assert Conv1d(1, 2, 3).weight.shape == (2, 1, 3) and Conv2d(2, 4, (3, 2), groups=2).weight.shape == (4, 1, 3, 2)
  assert ConvTranspose2d(4, 6, 3, groups=2).weight.shape == (4, 3, 3, 3)
  assert Linear(3, 2, bias=False).bias is None and list(get_state_dict(Linear(3, 2, bias=False))) == ["weight"]
  bound = 1 / np.sqrt(50)
  w = Linear(50, 40).weight.numpy()
  assert w.min() >= -bound and w.max() <= bound and w.min() < -0.8 * bound and w.max() > 0.8 * bound

class Model:
  def __init__(self):
    self.c1, self.bn = Conv2d(1, 4, 3, padding="same"), BatchNorm2d(4)
    self.layers = [Linear(4, 3), LayerNorm(3)]

def test_model_state_dict():
  m = Model()
  assert list(get_state_dict(m)) == ["c1.weight", "c1.bias", "bn.weight", "bn.bias", "bn.num_batches_tracked", "bn.running_mean",
                                     "bn.running_var", "layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias"]
  m2 = Model()
  load_state_dict(m2, get_state_dict(m), verbose=False)
  np.testing.assert_equal(m2.layers[0].weight.numpy(), m.layers[0].weight.numpy())

def test_linear_conv():
  l = Linear(3, 2)
  x = arr(4, 3)
  np.testing.assert_allclose(l(Tensor(x)).numpy(), x @ l.weight.numpy().T + l.bias.numpy(), atol=1e-5)
  c = Conv2d(2, 3, 3, padding="same")
  assert c.padding == (1, 1, 1, 1) and c.kernel_size == (3, 3)
  x = arr(1, 2, 4, 5)
  w, b, xp = c.weight.numpy(), c.bias.numpy(), np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
  want = np.array([[[(xp[0, :, i:i+3, j:j+3] * w[o]).sum() + b[o] for j in range(5)] for i in range(4)] for o in range(3)])
  np.testing.assert_allclose(c(Tensor(x)).numpy()[0], want, atol=1e-5)
  assert ConvTranspose2d(2, 3, 2, stride=2)(Tensor(x)).shape == (1, 3, 8, 10)
  with pytest.raises(ValueError, match="padding='same' is not supported for strided"): Conv2d(1, 1, 3, stride=2, padding="same")

def test_batchnorm(training):
  bn = BatchNorm(3)
  x = arr(4, 3, 2, 2, scale=2.0)
  y = bn(Tensor(x)).numpy()
  mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
  np.testing.assert_allclose(y, (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5), atol=1e-5)
  np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * mean, atol=1e-6)
  np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * 48 / 45 * var, atol=1e-6)
  assert bn.num_batches_tracked.tolist() == [1] and bn.weight.tolist() == [1.0, 1.0, 1.0]

def test_norms():
  x = arr(2, 4, 3, scale=2.0)
  def ln(v, axes): return (v - v.mean(axis=axes, keepdims=True)) / np.sqrt(v.var(axis=axes, keepdims=True) + 1e-5)
  np.testing.assert_allclose(LayerNorm(3)(Tensor(x)).numpy(), ln(x, -1), atol=1e-5)
  np.testing.assert_allclose(LayerNorm((4, 3))(Tensor(x)).numpy(), ln(x, (1, 2)), atol=1e-5)
  np.testing.assert_allclose(GroupNorm(2, 4)(Tensor(x)).numpy(), ln(x.reshape(2, 2, 6), -1).reshape(2, 4, 3), atol=1e-5)
  np.testing.assert_allclose(InstanceNorm(4)(Tensor(x)).numpy(), ln(x, -1), atol=1e-5)
  np.testing.assert_allclose(RMSNorm(3)(Tensor(x)).numpy(), x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6), atol=1e-5)
  img = arr(1, 3, 2, 2)
  np.testing.assert_allclose(LayerNorm2d(3)(Tensor(img)).numpy(), ln(img, 1), atol=1e-5)

def test_embedding_lstm():
  e = Embedding(5, 3)
  np.testing.assert_allclose(e(Tensor([[4, 0], [2, 2]])).numpy(), e.weight.numpy()[[[4, 0], [2, 2]]], atol=1e-6)
  cell = LSTMCell(2, 3)
  h, c = cell(Tensor(arr(4, 2)))
  assert h.shape == (4, 3) and c.shape == (4, 3)
  h2, c2 = cell(Tensor(arr(4, 2)), (h, c))
  assert h2.shape == (4, 3)
  assert list(get_state_dict(cell)) == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]

def test_model_trains():
  Tensor.manual_seed(0)  # the initial weights: not whatever the tests before left the generator at
  class Tiny:
    def __init__(self): self.conv, self.bn, self.head = Conv2d(1, 2, 3, stride=3), BatchNorm(2), Linear(8, 2)
    def __call__(self, x): return self.head(self.bn(self.conv(x)).relu().flatten(1))
  m = Tiny()
  opt = Adam(get_parameters(m), lr=0.05)
  assert len(opt.params) == 6 and len(opt.buffers) == 3
  labels = np.arange(16) % 2
  x = 0.3 * np.sin(np.arange(16 * 36)).reshape(16, 1, 6, 6) + (np.arange(36).reshape(1, 1, 6, 6) < 18).astype(np.float64) * labels[:, None, None, None]
  x += (np.arange(36).reshape(1, 1, 6, 6) >= 18) * (1 - labels[:, None, None, None])
  X, Y = Tensor(x.astype(np.float32)), Tensor(labels.astype(np.int32))
  losses = []
  with Tensor.train():
    for _ in range(12):
      opt.zero_grad()
      loss = m(X).sparse_categorical_crossentropy(Y)
      loss.backward()
      opt.step()
      losses.append(loss.item())
  assert losses[-1] < losses[0] / 4 and m.bn.num_batches_tracked.tolist() == [12]
