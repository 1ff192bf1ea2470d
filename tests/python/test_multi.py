# Tensors on many devices through tinygrad's API on our module (the reference's test_multitensor is run unchanged by
# `bash tools/conformance.sh REF --module test_multitensor`): device tuples, shard, to(), ops, gradients, errors.
import numpy as np
import pytest

from tinygrad import Tensor, Device
from tinygrad.uop.ops import Ops, UOp

D2 = (f"{Device.DEFAULT}:0", f"{Device.DEFAULT}:1")
D4 = tuple(f"{Device.DEFAULT}:{i}" for i in range(4))


def test_device_is_a_tuple():
  t = Tensor.arange(8).reshape(4, 2).shard(D2, axis=0)
  assert t.device == (Device.DEFAULT, f"{Device.DEFAULT}:1")  # canonicalized: ":0" dropped
  assert t.uop.op is Ops.MULTI and t.uop.axis == 0
  assert t.uop.bounds == ((0, 2), (2, 4))
  assert [lb.shape for lb in t.uop.src] == [(2, 2)]
  assert t.shape == (4, 2)
  assert t.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_shard_replicate_and_to():
  a = np.arange(32, dtype=np.float32).reshape(8, 4)
  for axis in (0, 1, None):
    np.testing.assert_equal(Tensor(a).shard(D2, axis=axis).numpy(), a)
  t = Tensor(a).to(D4)
  assert t.device == tuple(Device.canonicalize(d) for d in D4) and t.uop.axis is None
  np.testing.assert_equal((t + 1).numpy(), a + 1)
  x = Tensor(a).contiguous().realize()
  x.shard_(D2, 0)
  assert x.uop.op is Ops.MULTI


def test_ops_and_allreduce_match_one_device():
  rng = np.random.default_rng(0)
  a, b = rng.standard_normal((8, 16), dtype=np.float32), rng.standard_normal((16, 4), dtype=np.float32)
  xa, xb = Tensor(a).shard(D4, 0), Tensor(b).shard(D4)
  np.testing.assert_allclose((xa @ xb).numpy(), a @ b, rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(xa.sum(0).numpy(), a.sum(0), rtol=1e-5, atol=1e-5)  # allreduce
  np.testing.assert_allclose(xa.max(1).numpy(), a.max(1))
  np.testing.assert_allclose(Tensor(a).shard(D2, 1).softmax(1).numpy(), Tensor(a).softmax(1).numpy(), rtol=1e-5)
  np.testing.assert_allclose(xa.permute(1, 0).numpy(), a.T)
  np.testing.assert_allclose(xa[2:4].numpy(), a[2:4])  # one device's part


def test_uop_allreduce_naive_and_ring():
  from tinygrad.helpers import Context
  t = Tensor.rand(256, 64).realize()
  want = t.reshape(4, 64, 64).sum(0).numpy()
  for ring in (0, 2):
    with Context(RING=ring):
      ts = t.shard(D4, 0).realize()
      out = Tensor(UOp.allreduce(ts.uop, Ops.ADD, ts.device))
      np.testing.assert_allclose(out.numpy()[:64], want, rtol=1e-5, atol=1e-5)


def test_gradient_through_shards():
  rng = np.random.default_rng(1)
  x, w = rng.standard_normal((8, 6), dtype=np.float32), rng.standard_normal((6, 3), dtype=np.float32)
  w1 = Tensor(w, requires_grad=True)
  (Tensor(x) @ w1).relu().sum().backward()
  w2 = Tensor(w).to(D2).requires_grad_()
  (Tensor(x).shard(D2, 0) @ w2).relu().sum().backward()
  assert w2.grad.device == w2.device
  np.testing.assert_allclose(w2.grad.numpy(), w1.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_errors_name_the_problem():
  with pytest.raises(RuntimeError, match="uneven"):
    Tensor.ones(256).contiguous().realize().shard_(tuple(f"{Device.DEFAULT}:{i}" for i in range(3)), 0)
  s = Tensor.arange(16).reshape(4, 4).shard(D2, 0)
  with pytest.raises(AssertionError):
    s.shard(D2, 0)
  with pytest.raises(AssertionError):
    s[1:3].numpy()  # a shrink across the devices' parts


def test_jit_replays_per_device_kernels_with_their_device_number():
  # a kernel of a tuple runs once per device with `_device_num` bound: the captured items keep that binding
  from tinygrad import TinyJit, Context
  def f(t):
    ts = t.shard(D4, 0).realize()
    b = Tensor(UOp.allreduce(ts.uop, Ops.ADD, ts.device))
    return b.realize()
  with Context(RING=0):
    j = TinyJit(f)
    for _ in range(4):
      t = Tensor.rand(8, 4).realize()
      want = t.numpy().reshape(4, 2, 4).sum(0)
      np.testing.assert_allclose(j(t).numpy(), np.tile(want, (4, 1)), rtol=1e-5)
