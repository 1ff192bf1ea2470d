# What tinygrad's test_ops.py checks (tools/conformance.py runs it) kept in our own suite: the exception types
# tinygrad raises, activations at the extremes, and the modules tinygrad's users import from
import math, numpy as np, pytest
from tinygrad import Tensor, dtypes

# *** numerics at the extremes: where exp2 of the input overflows float32, values and gradients stay finite ***

def _sig(v): return 1 / (1 + math.exp(-v))

@pytest.mark.parametrize("name,ref,dref", [
  ("sigmoid", _sig, lambda v: _sig(v) * (1 - _sig(v))),
  ("tanh", math.tanh, lambda v: 1 - math.tanh(v) ** 2),
  ("gelu", lambda v: max(v, 0.0), lambda v: float(v > 0)),
  ("quick_gelu", lambda v: max(v, 0.0), lambda v: float(v > 0)),
  ("hardsigmoid", lambda v: float(v > 0), lambda v: 0.0),
])
def test_activation_extremes(name, ref, dref):
  vals = [-400.0, -350.5, -300.0, -297.0, 297.0, 300.0, 350.5, 400.0]
  x = Tensor(vals)
  y = getattr(x, name)()
  g = y.sum().gradient(x)[0]
  np.testing.assert_allclose(y.numpy(), [ref(v) for v in vals], atol=1e-6, rtol=1e-6)
  np.testing.assert_allclose(g.numpy(), [dref(v) for v in vals], atol=1e-6)

def test_softplus_negative_extreme():
  x = Tensor([-400.0, -300.0])
  assert x.softplus().tolist() == [0.0, 0.0]
  assert x.softplus().sum().gradient(x)[0].tolist() == [0.0, 0.0]
