# autograd from Python: gradient(), backward() and .grad, Tensor.training / train(), as tinygrad's API
import math, numpy as np, pytest
from tinygrad import Tensor

def test_gradient_polynomial():
  x = Tensor([2.0], requires_grad=True)
  loss = (x**2 + 3*x + 1).sum()
  grad, = loss.gradient(x)
  assert grad.item() == 7.0

def test_backward_accumulates():
  x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
  loss = (x * x).sum()
  assert loss.backward() is loss
  np.testing.assert_allclose(x.grad.numpy(), [2, 4, 6])
  loss.backward()
  np.testing.assert_allclose(x.grad.numpy(), [4, 8, 12])

def test_gradient_matches_numpy_softmax():
  a = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
  x = Tensor(a, requires_grad=True)
  w = np.arange(15, dtype=np.float32).reshape(3, 5)
  e = (x - x.max(-1, keepdim=True).detach()).exp()
  (e / e.sum(-1, keepdim=True) * Tensor(w)).sum().backward()
  s = np.exp(a - a.max(-1, keepdims=True)); s /= s.sum(-1, keepdims=True)
  expected = s * (w - (s * w).sum(-1, keepdims=True))
  np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-6)

def test_seed_and_materialize():
  x, y = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0], requires_grad=True)
  g, = (x * 2).gradient(x, gradient=Tensor([1.0, 10.0]))
  assert g.tolist() == [2.0, 20.0]
  gx, gy = (x * 2).sum().gradient(x, y, materialize_grads=True)
  assert gy.tolist() == [0.0]
  with pytest.raises(RuntimeError): (x * 2).sum().gradient(y)
  with pytest.raises(AssertionError, match="scalar"): (x * 2).gradient(x)  # tinygrad asserts it

def test_training_flag():
  assert Tensor.training is False
  with Tensor.train():
    assert Tensor.training is True
    with Tensor.test():
      assert Tensor.training is False
    assert Tensor.training is True
  assert Tensor.training is False
  @Tensor.train()
  def f(): return Tensor.training
  assert f() is True and Tensor.training is False

def test_chain_rule_tutorial():
  x = Tensor([2.0], requires_grad=True)
  z = (x**2 + 1).log()
  assert z.item() == pytest.approx(math.log(5), rel=1e-6)
  assert z.sum().gradient(x)[0].item() == 0.800000011920929
