# the [math] Tensor methods through the Python module, with tinygrad's signatures, against numpy (and, for seeded
# random numbers, what tinygrad 2025-06-12 printed on CPU)
import math
import numpy as np, pytest
from tinygrad import Tensor, dtypes

rng = np.random.default_rng(1)
def close(t:Tensor, ref, atol=2e-5, rtol=2e-5):
  out = t.numpy()
  assert out.shape == np.asarray(ref).shape, (out.shape, np.asarray(ref).shape)
  np.testing.assert_allclose(out, ref, atol=atol, rtol=rtol)

def np_erf(x): return np.vectorize(math.erf)(x)
def np_sigmoid(x): return 1 / (1 + np.exp(-x))
def np_softplus(x, beta=1.0): return np.log1p(np.exp(beta * x)) / beta

X = np.linspace(-3.5, 3.5, 15).astype(np.float32).reshape(3, 5)
U = np.linspace(-0.95, 0.95, 9).astype(np.float32)
UNARY = [
  ("tan", lambda t: t.tan(), np.tan, np.linspace(-1.4, 1.4, 9).astype(np.float32)),
  ("asin", lambda t: t.asin(), np.arcsin, U), ("acos", lambda t: t.acos(), np.arccos, U),
  ("atan", lambda t: t.atan(), np.arctan, X),
  ("trunc", lambda t: t.trunc(), np.trunc, X), ("ceil", lambda t: t.ceil(), np.ceil, X),
  ("floor", lambda t: t.floor(), np.floor, X), ("round", lambda t: t.round(), np.round, X),  # both half to even
  ("hardsigmoid", lambda t: t.hardsigmoid(), lambda x: np.clip(x / 6 + 0.5, 0, 1), X),
  ("hardsigmoid_kw", lambda t: t.hardsigmoid(alpha=0.2, beta=0.4), lambda x: np.clip(0.2 * x + 0.4, 0, 1), X),
  ("elu", lambda t: t.elu(alpha=0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x)), X),
  ("celu", lambda t: t.celu(alpha=2.0), lambda x: np.maximum(x, 0) + np.minimum(0, 2 * np.expm1(x / 2)), X),
  ("selu", lambda t: t.selu(), lambda x: 1.0507 * np.where(x >= 0, x, 1.67326 * np.expm1(x)), X),
  ("swish", lambda t: t.swish(), lambda x: x * np_sigmoid(x), X),
  ("silu", lambda t: t.silu(), lambda x: x * np_sigmoid(x), X),
  ("relu6", lambda t: (t * 3).relu6(), lambda x: np.clip(x * 3, 0, 6), X),
  ("hardswish", lambda t: t.hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6, X),
  ("tanh", lambda t: t.tanh(), np.tanh, X), ("sinh", lambda t: t.sinh(), np.sinh, X),
  ("cosh", lambda t: t.cosh(), np.cosh, X), ("atanh", lambda t: t.atanh(), np.arctanh, U),
  ("asinh", lambda t: t.asinh(), np.arcsinh, np.abs(X)),
  ("acosh", lambda t: t.acosh(), np.arccosh, np.abs(X) + 1),
  ("hardtanh", lambda t: t.hardtanh(min_val=-2, max_val=1.5), lambda x: np.clip(x, -2, 1.5), X),
  ("erf", lambda t: t.erf(), np_erf, X),
  ("gelu", lambda t: t.gelu(), lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), X),
  ("quick_gelu", lambda t: t.quick_gelu(), lambda x: x * np_sigmoid(1.702 * x), X),
  ("leaky_relu", lambda t: t.leaky_relu(neg_slope=0.2), lambda x: np.where(x < 0, 0.2 * x, x), X),
  ("mish", lambda t: t.mish(), lambda x: x * np.tanh(np_softplus(x)), X),
  ("softplus", lambda t: t.softplus(beta=2), lambda x: np_softplus(x, 2.0), X),
  ("softsign", lambda t: t.softsign(), lambda x: x / (1 + np.abs(x)), X),
  ("logsigmoid", lambda t: t.logsigmoid(), lambda x: -np_softplus(-x), X),
  ("clamp", lambda t: t.clamp(-1, 2.5), lambda x: np.clip(x, -1, 2.5), X),
  ("clip_min", lambda t: t.clip(min_=0.5), lambda x: np.maximum(x, 0.5), X),
]

@pytest.mark.parametrize("name,fn,ref,x", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, fn, ref, x):
  close(fn(Tensor(x)), ref(x.astype(np.float64)))

def test_special_values():
  t = Tensor([np.inf, -np.inf, np.nan, 0.0, 1.0])
  assert t.isinf().tolist() == [True, True, False, False, False]
  assert t.isinf(detect_negative=False).tolist() == [True, False, False, False, False]
  assert t.isinf(detect_positive=False).tolist() == [False, True, False, False, False]
  assert t.isnan().tolist() == [False, False, True, False, False]
  assert t.isfinite().tolist() == [False, False, False, True, True]
  np.testing.assert_allclose(t.tanh().numpy(), np.array([1, -1, np.nan, 0, 0.7615940570831299], np.float32), rtol=1e-6)

def test_int_dtypes():
  i = Tensor([-7, -3, 0, 2, 5, 9])
  assert i.floor().dtype == dtypes.int32 and i.floor().tolist() == [-7, -3, 0, 2, 5, 9]
  assert i.round().dtype == dtypes.float32
  assert i.clip(0, 6).dtype == dtypes.int32 and i.clip(0, 6).tolist() == [0, 0, 0, 2, 5, 6]
  assert i.clip(0.5, 6).dtype == dtypes.float32
  assert i.relu6().tolist() == [0, 0, 0, 2, 5, 6] and i.hardtanh().tolist() == [-1, -1, 0, 1, 1, 1]
  assert i.clamp(Tensor([0, 0, 0, 3, 3, 3]), 8).tolist() == [0, 0, 0, 3, 5, 8]
  assert (Tensor([1, 2, 3, 4]) ** 0.5).tolist() == [1, 1, 2, 2]  # an int base: rounded back to int
  with pytest.raises(Exception): i.clip()
  with pytest.raises(Exception): i.gelu()

def test_div_rounding_mode():
  a, b = rng.integers(-20, 20, size=(4, 1)).astype(np.int32), np.array([-3, -2, 2, 5], np.int32)
  ta, tb = Tensor(a), Tensor(b)
  np.testing.assert_equal(ta.div(tb, rounding_mode="floor").numpy(), np.floor_divide(a, b))
  np.testing.assert_equal(ta.div(tb, rounding_mode="trunc").numpy(), np.trunc(a / b).astype(np.int32))
  assert ta.div(tb, rounding_mode="floor").dtype == dtypes.int32
  np.testing.assert_equal((ta // tb).numpy(), np.floor_divide(a, b))
  np.testing.assert_equal((7 // tb).numpy(), np.floor_divide(7, b))
  np.testing.assert_equal(ta.div(3, rounding_mode="floor").numpy(), np.floor_divide(a, 3))
  np.testing.assert_equal(tb.div(7, reverse=True, rounding_mode="floor").numpy(), np.floor_divide(7, b))
  f = rng.uniform(-5, 5, size=(6,)).astype(np.float32)
  np.testing.assert_equal(Tensor(f).div(1.5, rounding_mode="floor").numpy(), np.floor(f / np.float32(1.5)))
  np.testing.assert_equal(Tensor(f).div(1.5, rounding_mode="trunc").numpy(), np.trunc(f / np.float32(1.5)))
  np.testing.assert_equal((Tensor(f) // 1.5).numpy(), np.floor(f / np.float32(1.5)))
  close(Tensor(f).div(1.5), f / 1.5)
  with pytest.raises(Exception): Tensor(f).div(2, rounding_mode="nope")

def test_copysign_isclose_masked_fill_lerp():
  a, b = np.array([1, -2, 3, 4], np.float32), np.array([-1, 1, -5, 2], np.float32)
  np.testing.assert_equal(Tensor(a).copysign(Tensor(b)).numpy(), np.copysign(a, b))
  np.testing.assert_equal(Tensor(a).copysign(-1).numpy(), -np.abs(a))
  x, y = np.array([1.0, 1.0 + 1e-6, np.inf, np.nan, 1.0], np.float32), np.array([1.0, 1.0, np.inf, np.nan, 1.1], np.float32)
  np.testing.assert_equal(Tensor(x).isclose(Tensor(y)).numpy(), np.isclose(x, y))
  np.testing.assert_equal(Tensor(x).isclose(Tensor(y), equal_nan=True).numpy(), np.isclose(x, y, equal_nan=True))
  np.testing.assert_equal(Tensor(x).isclose(Tensor(y), rtol=0.2, atol=0).numpy(), np.isclose(x, y, rtol=0.2, atol=0))
  m = np.array([[True], [False]])
  v = np.arange(6, dtype=np.float32).reshape(2, 3)
  np.testing.assert_equal(Tensor(v).masked_fill(Tensor(m), -1).numpy(), np.where(m, -1, v))
  np.testing.assert_equal(Tensor(v).masked_fill(Tensor(m), Tensor([7.0, 8.0, 9.0])).numpy(), np.where(m, [7, 8, 9], v))
  w = np.array([0.0, 0.25, 1.0], np.float32)
  close(Tensor([1.0, 2.0, -3.0]).lerp(Tensor([3.0, 6.0, 5.0]), Tensor(w)), np.array([1, 2, -3]) + (np.array([3, 6, 5]) - np.array([1, 2, -3])) * w)
  close(Tensor([1.0, 2.0]).lerp(Tensor([3.0, 6.0]), 0.5), [2.0, 4.0])
  u = Tensor(np.array([0, 10, 200, 255, 100], np.uint8)).lerp(Tensor(np.array([255, 0, 100, 0, 101], np.uint8)), Tensor([0.5, 0.25, 0.3, 1.0, 0.75]))
  assert u.dtype == dtypes.uint8 and u.tolist() == [0, 8, 170, 0, 101]  # the reference's fixed point, int8 wrap included

def test_linspace_and_like():
  close(Tensor.linspace(0, 1, 7), np.linspace(0, 1, 7, dtype=np.float32))
  close(Tensor.linspace(-1, 1, 5), np.linspace(-1, 1, 5))
  assert Tensor.linspace(0, 10, 5, dtype=dtypes.int32).tolist() == [0, 2, 5, 7, 10]
  assert Tensor.linspace(3, 10, 1).tolist() == [3.0] and Tensor.linspace(3, 10, 0).shape == (0,)
  with pytest.raises(Exception): Tensor.linspace(0, 1, -1)
  with pytest.raises(Exception): Tensor.linspace(0, 1, 3, dtype=dtypes.bool)
  e = Tensor.ones(2, 3, dtype=dtypes.int16).empty_like()
  assert e.shape == (2, 3) and e.dtype == dtypes.int16
  assert Tensor.ones(2).empty_like(dtype=dtypes.float64).dtype == dtypes.float64

def test_random_matches_the_reference():
  Tensor.manual_seed(42)
  assert Tensor.randint(2, 3, low=5, high=10).tolist() == [[9, 7, 6], [8, 9, 9]]
  Tensor.manual_seed(42)
  assert Tensor.randperm(6).tolist() == [2, 1, 3, 5, 4, 0]
  Tensor.manual_seed(42)
  assert Tensor([1, 2, 3, 4]).multinomial(20, replacement=True).tolist() == [2, 1, 3, 2, 3, 1, 2, 2, 3, 3, 3, 3, 3, 3, 2, 3, 2, 3, 3, 3]
  Tensor.manual_seed(42)
  close(Tensor.normal(2, 3, mean=10, std=2), [[11.955713272094727, 10.935577392578125, 11.105269432067871],
                                              [9.3423490524292, 8.288971900939941, 10.550528526306152]], atol=1e-5)
  Tensor.manual_seed(42)
  close(Tensor.glorot_uniform(2, 3), [[1.0889452695846558, 0.19699685275554657, -0.6078668832778931],
                                      [0.5587908625602722, 0.8887354731559753, 0.7994185090065002]], atol=1e-7)
  Tensor.manual_seed(42)
  close(Tensor.kaiming_uniform(2, 3), [[1.4057519435882568, 0.25430911779403687, -0.7847135066986084],
                                       [0.7213598489761353, 1.1472951173782349, 1.0319932699203491]], atol=1e-7)
  Tensor.manual_seed(42)
  close(Tensor.uniform(2, 3, low=2, high=10), [[9.976265907287598, 6.719330787658691, 3.780384063720703],
                                               [8.04041576385498, 9.245203018188477, 8.919063568115234]], atol=1e-6)

def test_random_shapes_and_statistics():
  Tensor.manual_seed(0)
  r = Tensor.randint(1000, low=-3, high=4).numpy()
  assert r.dtype == np.int32 and r.min() == -3 and r.max() == 3
  assert Tensor.randint((2, 2), dtype=dtypes.int64).dtype == dtypes.int64
  n = Tensor.normal(3000, mean=1.0, std=0.5).numpy()
  assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 0.5) < 0.05
  assert Tensor.scaled_uniform(4, 25).shape == (4, 25) and np.abs(Tensor.scaled_uniform(4, 25).numpy()).max() <= 0.1
  assert Tensor.kaiming_normal(4, 5, a=0.1, dtype=dtypes.float64).dtype == dtypes.float64
  assert Tensor.rand(2, 3).shape == (2, 3) and Tensor.randn(4).shape == (4,) and Tensor.rand((2,)).shape == (2,)
  p = Tensor.randperm(50).numpy()
  assert sorted(p.tolist()) == list(range(50)) and p.dtype == np.int32
  m = Tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]).multinomial(5, replacement=True).numpy()
  assert m.shape == (2, 5) and (m[0] == 1).all() and (m[1] == 2).all()
  with pytest.raises(TypeError): Tensor.randint(3, low=0.5)
  with pytest.raises(Exception): Tensor.randint(3, dtype=dtypes.float32)
  with pytest.raises(Exception): Tensor([1.0, 2.0]).multinomial(2)
  with pytest.raises(TypeError): Tensor.normal(3, nope=1)

def test_cast_shorthands():
  t = Tensor([-1.5, 0.0, 2.75])
  assert t.half().dtype == dtypes.half and t.double().dtype == dtypes.float64 and t.float().dtype == dtypes.float32
  assert t.int().tolist() == [-1, 0, 2] and t.long().dtype == dtypes.int64 and t.bool().tolist() == [True, False, True]
