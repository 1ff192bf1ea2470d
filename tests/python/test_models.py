# model-sized pieces as tinygrad's extra/models build them (a ResNet basic block, a BERT attention layer, a ConvNeXt
# block, a UNet ResBlock with upsampling, an hlb_cifar10-style training step under TinyJit), with weights loaded
# through the state dict and the outputs checked against numpy; tools/models_check.py runs the models' own files
# against the reference
import math
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from tinygrad import Tensor, TinyJit, nn, dtypes
from tinygrad.nn.state import get_state_dict, load_state_dict, get_parameters

@pytest.fixture(autouse=True)
def inference():
  old = Tensor.training
  Tensor.training = False
  yield
  Tensor.training = old

def fill(model, seed=0):
  # numpy weights for every state-dict entry, loaded as a checkpoint would be; returns them by key
  rng, sd = np.random.default_rng(seed), {}
  for k, v in get_state_dict(model).items():
    if "running_var" in k: a = rng.uniform(0.5, 1.5, v.shape)
    elif len(v.shape) >= 2: a = rng.normal(0, 1, v.shape) / math.sqrt(np.prod(v.shape[1:]))
    else: a = rng.normal(0.5 if k.endswith("weight") else 0, 0.2, v.shape)
    sd[k] = a.astype(np.float32)
  load_state_dict(model, {k: Tensor(a) for k, a in sd.items()}, verbose=False)
  return sd

def conv(x, w, b=None, stride=1, pad=0, groups=1):
  x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
  o, cg, kh, kw = w.shape
  win = sliding_window_view(x, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]  # (n, c, oh, ow, kh, kw)
  n, _, oh, ow = win.shape[:4]
  out = np.einsum("ngchwij,gocij->ngohw", win.reshape(n, groups, cg, oh, ow, kh, kw), w.reshape(groups, o // groups, cg, kh, kw))
  out = out.reshape(n, o, oh, ow)
  return out if b is None else out + b.reshape(1, -1, 1, 1)

def bn(x, sd, p, eps=1e-5):
  s = lambda a: sd[p + a].reshape(1, -1, 1, 1)
  return (x - s("running_mean")) / np.sqrt(s("running_var") + eps) * s("weight") + s("bias")

def layernorm(x, w, b, eps):
  mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
  return (x - mu) / np.sqrt(var + eps) * w + b

def gelu(x): return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

class BasicBlock:  # resnet.py's, with a strided 1x1 downsample
  def __init__(self, cin, cout, stride):
    self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
    self.bn1 = nn.BatchNorm2d(cout)
    self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
    self.bn2 = nn.BatchNorm2d(cout)
    self.downsample = [nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)]
  def __call__(self, x):
    out = self.bn2(self.conv2(self.bn1(self.conv1(x)).relu()))
    return (out + x.sequential(self.downsample)).relu()

def test_resnet_basic_block():
  m = BasicBlock(16, 32, 2)
  sd = fill(m)
  x = np.random.default_rng(1).normal(size=(2, 16, 12, 12)).astype(np.float32)
  out = m(Tensor(x)).numpy()
  h = np.maximum(bn(conv(x, sd["conv1.weight"], stride=2, pad=1), sd, "bn1."), 0)
  h = bn(conv(h, sd["conv2.weight"], pad=1), sd, "bn2.")
  ref = np.maximum(h + bn(conv(x, sd["downsample.0.weight"], stride=2), sd, "downsample.1."), 0)
  np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)

class BertLayer:  # bert.py's attention and feed-forward, with its additive mask and erf gelu
  def __init__(self, d, heads, ff):
    self.heads, self.query, self.key, self.value = heads, nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
    self.out, self.ln1, self.up, self.down, self.ln2 = nn.Linear(d, d), nn.LayerNorm(d, eps=1e-12), nn.Linear(d, ff), nn.Linear(ff, d), nn.LayerNorm(d, eps=1e-12)
  def __call__(self, x, mask):
    b, t, d = x.shape
    split = lambda y: y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
    mask = ((1.0 - mask.unsqueeze(1).unsqueeze(2)) * -10000.0)
    a = Tensor.scaled_dot_product_attention(split(self.query(x)), split(self.key(x)), split(self.value(x)), mask)
    x = self.ln1(self.out(a.transpose(1, 2).reshape(b, t, d)) + x)
    h = self.up(x)
    return self.ln2(self.down(h * 0.5 * (1.0 + (h / 1.41421).erf())) + x)

def test_bert_layer():
  m = BertLayer(16, 2, 32)
  sd = fill(m)
  rng = np.random.default_rng(2)
  x = rng.normal(size=(2, 5, 16)).astype(np.float32)
  mask = np.array([[1] * 5, [1] * 3 + [0] * 2], np.float32)
  out = m(Tensor(x), Tensor(mask)).numpy()
  lin = lambda y, p: y @ sd[p + ".weight"].T + sd[p + ".bias"]
  split = lambda y: y.reshape(2, 5, 2, 8).transpose(0, 2, 1, 3)
  q, k, v = split(lin(x, "query")), split(lin(x, "key")), split(lin(x, "value"))
  s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(8) + ((1 - mask) * -10000.0)[:, None, None, :]
  p = np.exp(s - s.max(-1, keepdims=True))
  a = (p / p.sum(-1, keepdims=True)) @ v
  h = layernorm(lin(a.transpose(0, 2, 1, 3).reshape(2, 5, 16), "out") + x, sd["ln1.weight"], sd["ln1.bias"], 1e-12)
  u = lin(h, "up")
  u = u * 0.5 * (1 + np.vectorize(math.erf)(u / 1.41421))
  ref = layernorm(lin(u, "down") + h, sd["ln2.weight"], sd["ln2.bias"], 1e-12)
  np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)

class ConvNeXtBlock:  # convnext.py's: a depthwise 7x7 conv, channels-last LayerNorm and MLP, a layer scale
  def __init__(self, dim):
    self.dwconv, self.norm = nn.Conv2d(dim, dim, 7, padding=3, groups=dim), nn.LayerNorm(dim, eps=1e-6)
    self.pwconv1, self.pwconv2, self.gamma = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim), Tensor.ones(dim)
  def __call__(self, x):
    return x + x.sequential([self.dwconv, lambda x: x.permute(0, 2, 3, 1), self.norm, self.pwconv1, Tensor.gelu,
                             self.pwconv2, lambda x: (self.gamma * x).permute(0, 3, 1, 2)])

def test_convnext_block_then_layernorm2d():
  m = ConvNeXtBlock(8)
  norm = nn.LayerNorm2d(8, eps=1e-6)
  sd, sn = fill(m), fill(norm, 1)
  x = np.random.default_rng(3).normal(size=(2, 8, 9, 9)).astype(np.float32)
  out = norm(m(Tensor(x))).numpy()
  h = conv(x, sd["dwconv.weight"], sd["dwconv.bias"], pad=3, groups=8).transpose(0, 2, 3, 1)
  h = gelu(layernorm(h, sd["norm.weight"], sd["norm.bias"], 1e-6) @ sd["pwconv1.weight"].T + sd["pwconv1.bias"])
  h = x + (sd["gamma"] * (h @ sd["pwconv2.weight"].T + sd["pwconv2.bias"])).transpose(0, 3, 1, 2)
  ref = layernorm(h.transpose(0, 2, 3, 1), sn["weight"], sn["bias"], 1e-6).transpose(0, 3, 1, 2)
  np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)

def test_unet_resblock_and_upsample():
  # unet.py's ResBlock pieces (GroupNorm, SiLU, a timestep embedding added per channel) and its nearest upsampling
  gn, c, emb = nn.GroupNorm(4, 8), nn.Conv2d(8, 16, 3, padding=1), nn.Linear(12, 16)
  sd = {f"{i}.{k}": v for i, mod in enumerate((gn, c, emb)) for k, v in fill(mod, i).items()}
  rng = np.random.default_rng(4)
  x, t = rng.normal(size=(2, 8, 5, 5)).astype(np.float32), rng.normal(size=(2, 12)).astype(np.float32)
  h = c(gn(Tensor(x)).silu()) + emb(Tensor(t).silu()).reshape(2, 16, 1, 1)
  bs, ch, py, px = h.shape
  out = h.reshape(bs, ch, py, 1, px, 1).expand(bs, ch, py, 2, px, 2).reshape(bs, ch, py * 2, px * 2).numpy()
  g = x.reshape(2, 4, -1)
  g = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
  g = g * sd["0.weight"].reshape(1, -1, 1, 1) + sd["0.bias"].reshape(1, -1, 1, 1)
  silu = lambda a: a / (1 + np.exp(-a))
  ref = conv(silu(g), sd["1.weight"], sd["1.bias"], pad=1) + (silu(t) @ sd["2.weight"].T + sd["2.bias"])[:, :, None, None]
  np.testing.assert_allclose(out, ref.repeat(2, 2).repeat(2, 3), rtol=1e-4, atol=1e-4)

class Net:  # hlb_cifar10's shape: conv, max pool, batchnorm in training mode, quick_gelu, a global max, a linear
  def __init__(self):
    self.conv, self.norm, self.fc = nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8, track_running_stats=False), nn.Linear(8, 4, bias=False)
  def __call__(self, x): return self.fc(self.norm(self.conv(x).max_pool2d(2)).quick_gelu().max((2, 3)))

def test_jitted_training_step_matches_eager():
  # the step is given a new OptimizerGroup each call, as hlb_cifar10's loop does: the replays still train
  def make():
    m = Net()
    fill(m)
    bias = [m.norm.bias]
    rest = [p for p in get_parameters(m) if p is not m.norm.bias and p.requires_grad is not False]
    return m, nn.optim.SGD(bias, lr=0.1, momentum=0.85, nesterov=True, weight_decay=1e-3), nn.optim.SGD(rest, lr=0.05, momentum=0.85, nesterov=True, weight_decay=5e-3)
  def step(m, opt, x, y):
    loss = -(m(x).log_softmax(axis=1) * y).sum(axis=1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.realize()
  rng = np.random.default_rng(5)
  data = [(rng.normal(size=(4, 3, 8, 8)).astype(np.float32), np.eye(4, dtype=np.float32)[rng.integers(0, 4, 4)]) for _ in range(4)]
  results = []
  for f in (step, TinyJit(step)):
    m, o1, o2 = make()
    with Tensor.train():
      losses = [f(m, nn.optim.OptimizerGroup(o1, o2), Tensor(x), Tensor(y)).item() for x, y in data]
    results.append((losses, [p.numpy() for p in get_parameters(m)]))
  (l_eager, p_eager), (l_jit, p_jit) = results
  np.testing.assert_allclose(l_jit, l_eager, rtol=1e-5, atol=1e-6)
  assert l_eager[-1] < l_eager[0]
  for a, b in zip(p_jit, p_eager): np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)

def test_optimizer_step_reads_the_weights_before_it_overwrites_them():
  # the gradients and the updates in one schedule: a kernel recomputing the normalized output for the gradient reads
  # the BatchNorm bias that the step assigns, and must run first (the reference's order let the assign go first)
  def stepped(realize_grads_first):
    conv, norm = nn.Conv2d(4, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8, track_running_stats=False)
    sd = fill([conv, norm], 6)
    opt = nn.optim.SGD([conv.weight, norm.bias], lr=1.0)
    rng = np.random.default_rng(7)
    x, r = Tensor(rng.normal(size=(4, 4, 8, 8)).astype(np.float32)), Tensor(rng.normal(size=(4, 8, 8, 8)).astype(np.float32))
    with Tensor.train():
      loss = (norm(conv(x)).quick_gelu() * r).sum()
      opt.zero_grad()
      loss.backward()
      if realize_grads_first: Tensor.realize(conv.weight.grad, norm.bias.grad)
      opt.step()
    return conv.weight.numpy(), norm.bias.numpy()
  for a, b in zip(stepped(False), stepped(True)): np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
