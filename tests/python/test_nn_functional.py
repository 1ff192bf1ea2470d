# The [nn] Tensor methods through the Python module, with tinygrad's signatures and kwargs, against numpy
import itertools, math
import numpy as np, pytest
from tinygrad import Tensor, dtypes

rng = np.random.default_rng(1)
def rand(*shape): return rng.uniform(-1, 1, size=shape).astype(np.float32)
def close(t:Tensor, ref, atol=1e-5, rtol=1e-4):
  out = t.numpy()
  assert out.shape == np.asarray(ref).shape, (out.shape, np.asarray(ref).shape)
  np.testing.assert_allclose(out, ref, atol=atol, rtol=rtol)

def conv_ref(x, w, b=None, stride=(1, 1), dilation=(1, 1), padding=((0, 0), (0, 0)), groups=1):
  x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), *padding))
  bs, cin_, H, W = x.shape
  cout, cin, kh, kw = w.shape
  oh, ow = (H - dilation[0]*(kh-1) - 1)//stride[0] + 1, (W - dilation[1]*(kw-1) - 1)//stride[1] + 1
  out = np.zeros((bs, cout, oh, ow))
  for co in range(cout):
    g = co // (cout // groups)
    for i, j in itertools.product(range(oh), range(ow)):
      patch = x[:, g*cin:(g+1)*cin, i*stride[0]:i*stride[0]+dilation[0]*(kh-1)+1:dilation[0],
                j*stride[1]:j*stride[1]+dilation[1]*(kw-1)+1:dilation[1]]
      out[:, co, i, j] = (patch * w[co]).sum(axis=(1, 2, 3))
  return out if b is None else out + b.reshape(1, -1, 1, 1)

def pool_ref(x, k, s, fn, pad=0, fill=0.0):
  x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=fill)
  oh, ow = (x.shape[2] - k[0])//s[0] + 1, (x.shape[3] - k[1])//s[1] + 1
  out = np.zeros(x.shape[:2] + (oh, ow))
  for i, j in itertools.product(range(oh), range(ow)): out[:, :, i, j] = fn(x[:, :, i*s[0]:i*s[0]+k[0], j*s[1]:j*s[1]+k[1]], axis=(2, 3))
  return out

def log_softmax(x, axis=-1):
  m = x.max(axis=axis, keepdims=True)
  return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))

# *** reductions ***

def test_any_all():
  a = rng.uniform(size=(3, 4)) > 0.5
  close(Tensor(a).any(), a.any())
  close(Tensor(a).all(axis=1, keepdim=True), a.all(axis=1, keepdims=True))
  close(Tensor(a).any(axis=(0, 1)), a.any(axis=(0, 1)))

@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_std(correction):
  a = rand(3, 5)
  close(Tensor(a).var(axis=1, correction=correction), a.var(axis=1, ddof=correction))
  close(Tensor(a).std(axis=0, keepdim=True, correction=correction), a.std(axis=0, keepdims=True, ddof=correction))
  v, m = Tensor(a).var_mean(correction=correction)
  close(v, a.var(ddof=correction)); close(m, a.mean())
  s, m = Tensor(a).std_mean(axis=1)
  close(s, a.std(axis=1, ddof=1)); close(m, a.mean(axis=1))

def test_argmax_argmin():
  a = rand(4, 6)
  close(Tensor(a).argmax(), np.argmax(a)); close(Tensor(a).argmin(axis=1), np.argmin(a, axis=1))
  close(Tensor(a).argmax(axis=0, keepdim=True), np.argmax(a, axis=0)[None])
  assert Tensor(a).argmax().dtype == dtypes.int32

def test_logsumexp_logcumsumexp():
  a = rand(3, 4) * 30
  ref = np.log(np.exp(a.astype(np.float64)).sum(axis=1))
  close(Tensor(a).logsumexp(axis=1), ref)
  close(Tensor(a).logsumexp(), np.log(np.exp(a.astype(np.float64)).sum()))
  close(Tensor(a).logcumsumexp(axis=1), np.log(np.cumsum(np.exp(a.astype(np.float64)), axis=1)))

def test_cumulative():
  a = rand(3, 5)
  close(Tensor(a).cumsum(), np.cumsum(a, axis=0)); close(Tensor(a).cumsum(axis=1), np.cumsum(a, axis=1))
  close(Tensor(a).cumprod(1), np.cumprod(a, axis=1)); close(Tensor(a).cummax(1), np.maximum.accumulate(a, axis=1))
  long = rand(700)
  close(Tensor(long).cumsum(), np.cumsum(long.astype(np.float64)), atol=1e-4)

def test_dtype_arguments():
  a = rand(3, 4)
  assert Tensor(a).sum(dtype=dtypes.float64).dtype == dtypes.float64
  assert Tensor(a).sum(axis=1, dtype="float16").dtype == dtypes.float16
  assert Tensor([1, 2, 3], dtype=dtypes.int8).prod(dtype=dtypes.int32).item() == 6
  assert Tensor(a).softmax(dtype=dtypes.float64).dtype == dtypes.float64
  close(Tensor(a).log_softmax(axis=0), log_softmax(a, axis=0))
  assert Tensor(a).matmul(Tensor(rand(4, 2)), dtype=dtypes.float64).dtype == dtypes.float64
  assert Tensor(a).dot(Tensor(rand(4)), dtype=dtypes.float64).dtype == dtypes.float64

# *** processing ***

def test_conv2d():
  x, w, b = rand(2, 4, 7, 8), rand(6, 2, 3, 3), rand(6)
  close(Tensor(x).conv2d(Tensor(w), Tensor(b), groups=2), conv_ref(x, w, b, groups=2))
  close(Tensor(x).conv2d(Tensor(w), Tensor(b), groups=2, stride=2, padding=1),
        conv_ref(x, w, b, stride=(2, 2), padding=((1, 1), (1, 1)), groups=2))
  w2 = rand(3, 4, 2, 3)
  close(Tensor(x).conv2d(Tensor(w2), stride=(1, 2), dilation=(2, 1), padding=(1, 0)),
        conv_ref(x, w2, stride=(1, 2), dilation=(2, 1), padding=((1, 1), (0, 0))))
  close(Tensor(x).conv2d(Tensor(w2), padding=(0, 1, 2, 3)), conv_ref(x, w2, padding=((2, 3), (0, 1))))

def test_conv2d_errors_name_the_shapes():
  with pytest.raises((RuntimeError, AssertionError), match=r"\(2, 4, 7, 8\)"):
    Tensor(rand(2, 4, 7, 8)).conv2d(Tensor(rand(6, 3, 3, 3)))

def test_conv1d_conv_transpose2d():
  x, w = rand(2, 3, 10), rand(4, 3, 3)
  ref = np.stack([np.stack([sum(np.convolve(x[n, c], w[o, c][::-1], mode="valid") for c in range(3)) for o in range(4)]) for n in range(2)])
  close(Tensor(x).conv2d(Tensor(w)), ref)
  # conv_transpose2d of a 1x1 input is the kernel itself, scaled
  xt, wt = rand(1, 2, 1, 1), rand(2, 3, 3, 3)
  close(Tensor(xt).conv_transpose2d(Tensor(wt)), np.einsum("nc,cohw->nohw", xt[:, :, 0, 0], wt))
  assert Tensor(rand(1, 2, 4, 4)).conv_transpose2d(Tensor(wt), stride=2, padding=1, output_padding=1).shape == (1, 3, 8, 8)

def test_pools():
  x = rand(2, 3, 6, 7)
  close(Tensor(x).max_pool2d(), pool_ref(x, (2, 2), (2, 2), np.max))
  close(Tensor(x).max_pool2d(kernel_size=3, stride=1, padding=1), pool_ref(x, (3, 3), (1, 1), np.max, pad=1, fill=-np.inf))
  close(Tensor(x).avg_pool2d(kernel_size=(3, 2), stride=(1, 2)), pool_ref(x, (3, 2), (1, 2), np.mean))
  close(Tensor(x).avg_pool2d(kernel_size=(3, 3), stride=1, padding=1), pool_ref(x, (3, 3), (1, 1), np.mean, pad=1))
  ones = np.ones_like(x)
  close(Tensor(x).avg_pool2d(kernel_size=(3, 3), stride=1, padding=1, count_include_pad=False),
        pool_ref(x, (3, 3), (1, 1), np.sum, pad=1) / pool_ref(ones, (3, 3), (1, 1), np.sum, pad=1))
  assert Tensor(x).max_pool2d(kernel_size=(2, 2), ceil_mode=True).shape == (2, 3, 3, 4)
  assert Tensor(x).avg_pool2d(ceil_mode=True).shape == (2, 3, 3, 4)

def test_max_pool_indices_and_unpool():
  x = rand(1, 2, 4, 4)
  vals, idx = Tensor(x).max_pool2d(return_indices=True)
  close(vals, pool_ref(x, (2, 2), (2, 2), np.max))
  flat = x.reshape(1, 2, 16)
  np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(1, 2, 4).astype(np.int64), 2).reshape(1, 2, 2, 2), vals.numpy())
  un = Tensor.max_unpool2d(vals, idx).numpy()
  assert un.shape == x.shape and np.count_nonzero(un) == 8 and np.allclose(np.sort(un[un != 0]), np.sort(vals.numpy().ravel()))
  assert vals.max_unpool2d(idx, output_size=(5, 5)).shape == (1, 2, 5, 5)

def test_interpolate():
  x = rand(1, 2, 3, 4)
  close(Tensor(x).interpolate(size=(6, 8), mode="nearest"), x.repeat(2, axis=2).repeat(2, axis=3))
  t = Tensor([1., 2., 3., 4.])
  close(t.interpolate((7,), align_corners=True), [1, 1.5, 2, 2.5, 3, 3.5, 4])
  close(t.interpolate([2], mode="nearest-exact"), [2., 4.])
  close(Tensor(x).interpolate((3, 4)), x)  # linear at the same size is the identity
  with pytest.raises((RuntimeError, AssertionError)): t.interpolate((2,), mode="nearest", align_corners=True)

def test_einsum():
  a, b, c = rand(2, 3), rand(3, 4), rand(4, 5)
  close(Tensor.einsum("ij,jk->ik", Tensor(a), Tensor(b)), a @ b)
  close(Tensor.einsum("ij,jk,kl->il", [Tensor(a), Tensor(b), Tensor(c)]), a @ b @ c)
  close(Tensor.einsum("ij->ji", Tensor(a)), a.T)
  close(Tensor.einsum("ij,ij->", Tensor(a), Tensor(a)), (a * a).sum())
  ba = rand(2, 2, 3)
  close(Tensor.einsum("...ij,jk->...ik", Tensor(ba), Tensor(b)), np.einsum("...ij,jk->...ik", ba, b))
  bb = rand(2, 3, 2)
  close(Tensor.einsum("bij, bjk", Tensor(ba), Tensor(bb)), np.einsum("bij,bjk", ba, bb))  # implicit: the letters seen once
  assert Tensor.einsum("ij,jk->ik", Tensor(a), Tensor(b), dtype=dtypes.float64).dtype == dtypes.float64

def test_sequential():
  assert Tensor([1, 2, 3]).sequential([lambda x: x * 2, lambda x: x + 1]).tolist() == [3, 5, 7]

# *** nn functional ***

def test_linear_layernorm_batchnorm():
  x, w, b = rand(3, 4), rand(4, 2), rand(2)
  close(Tensor(x).linear(Tensor(w), Tensor(b)), x @ w + b)
  close(Tensor(x).linear(Tensor(w[:, 0])), x * w[:, 0])
  ref = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
  close(Tensor(x).layernorm(), ref, atol=1e-4)
  close(Tensor(x).layernorm(axis=(0, 1), eps=0.5), (x - x.mean()) / np.sqrt(x.var() + 0.5), atol=1e-4)
  img, m, inv, g, bb = rand(2, 3, 2, 2), rand(3), rand(3), rand(3), rand(3)
  r = lambda v: v.reshape(1, 3, 1, 1)
  close(Tensor(img).batchnorm(Tensor(g), Tensor(bb), Tensor(m), Tensor(inv)), (img - r(m)) * r(g) * r(inv) + r(bb))
  close(Tensor(img).batchnorm(None, None, Tensor(m), Tensor(inv)), (img - r(m)) * r(inv))

def test_dropout_is_identity_outside_training():
  t = Tensor(rand(4, 4))
  close(t.dropout(0.5), t.numpy())

def test_one_hot():
  close(Tensor([0, 2, 1]).one_hot(4), np.eye(4, dtype=np.int32)[[0, 2, 1]])
  assert Tensor([0, 2, 1]).one_hot().shape == (3, 3)
  with pytest.raises(RuntimeError): Tensor([0.5]).one_hot(2)

def test_scaled_dot_product_attention():
  q, k, v = rand(2, 3, 4), rand(2, 5, 4), rand(2, 5, 4)
  def ref(mask=0.0):
    s = q @ k.transpose(0, 2, 1) / math.sqrt(4) + mask
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v
  close(Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v)), ref(), atol=1e-5)
  causal = np.where(np.tril(np.ones((3, 5), dtype=bool)), 0.0, -np.inf)
  close(Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True), ref(causal), atol=1e-5)
  m = rand(3, 5)
  close(Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), attn_mask=Tensor(m)), ref(m), atol=1e-5)

def test_losses():
  p, y = rng.uniform(0.05, 0.95, size=(6,)).astype(np.float32), (rng.uniform(size=(6,)) > 0.5).astype(np.float32)
  bce = -(y * np.log(p) + (1 - y) * np.log(1 - p))
  close(Tensor(p).binary_crossentropy(Tensor(y)), bce.mean())
  close(Tensor(p).binary_crossentropy(Tensor(y), reduction="none"), bce)
  logits = rand(6) * 4
  s = 1 / (1 + np.exp(-logits))
  close(Tensor(logits).binary_crossentropy_logits(Tensor(y), reduction="sum"), -(y * np.log(s) + (1 - y) * np.log(1 - s)).sum())
  x, labels = rand(5, 4) * 3, np.array([0, 3, 1, 3, 2], dtype=np.int32)
  lp = log_softmax(x.astype(np.float64))
  picked = lp[np.arange(5), labels]
  close(Tensor(x).sparse_categorical_crossentropy(Tensor(labels)), -picked.mean())
  keep = labels != 3
  close(Tensor(x).sparse_categorical_crossentropy(Tensor(labels), ignore_index=3), -picked[keep].mean())
  close(Tensor(x).sparse_categorical_crossentropy(Tensor(labels), label_smoothing=0.1, reduction="none"),
        -(0.9 * picked + 0.1 * lp.mean(-1)))
  close(Tensor(x).cross_entropy(Tensor(labels)), -picked.mean())
  close(Tensor(x).cross_entropy(Tensor(labels), reduction="sum", label_smoothing=0.2),
        -(0.8 * picked + 0.2 * lp.mean(-1)).sum())
  probs = np.abs(rand(5, 4)); probs /= probs.sum(-1, keepdims=True)
  close(Tensor(x).cross_entropy(Tensor(probs), reduction="none"), -(lp * probs).sum(-1))
  w = np.array([0.5, 2.0, 1.0, 1.5], dtype=np.float32)
  close(Tensor(lp.astype(np.float32)).nll_loss(Tensor(labels)), -picked.mean())
  close(Tensor(lp.astype(np.float32)).nll_loss(Tensor(labels), weight=Tensor(w)), -(picked * w[labels]).sum() / w[labels].sum())
  close(Tensor(lp.astype(np.float32)).nll_loss(Tensor(labels), ignore_index=3, reduction="sum"), -picked[keep].sum())
  with pytest.raises((RuntimeError, ValueError)): Tensor(x).nll_loss(Tensor(labels), reduction="max")

def test_dropout_while_training():
  with Tensor.train():
    d = Tensor.ones(32, 32).dropout(0.25).numpy()
  assert set(np.unique(d).tolist()) <= {0.0, np.float32(1 / 0.75)} and 0.6 < (d != 0).mean() < 0.9

def test_backward_through_conv_pool_loss():
  x, w = Tensor(rand(2, 1, 4, 4), requires_grad=True), Tensor(rand(3, 1, 2, 2), requires_grad=True)
  labels = Tensor([1, 2])
  x.conv2d(w).max_pool2d(kernel_size=(3, 3)).flatten(1).sparse_categorical_crossentropy(labels).backward()
  assert x.grad.shape == (2, 1, 4, 4) and w.grad.shape == (3, 1, 2, 2)
  # conv2d(...).sum(): each weight's gradient is the sum of the inputs it touches
  x2, w2 = rand(1, 1, 3, 3), Tensor(rand(1, 1, 2, 2), requires_grad=True)
  Tensor(x2).conv2d(w2).sum().backward()
  close(w2.grad, np.array([[[[x2[0, 0, i:i+2, j:j+2].sum() for j in range(2)] for i in range(2)]]]))
