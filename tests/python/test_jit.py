# TinyJit through the Python module: tinygrad's decorator, replays against plain numpy, and its loud failures
import numpy as np, pytest
from tinygrad import Tensor, TinyJit, GlobalCounters, Context
from tinygrad.engine.jit import TinyJit as TinyJit2

def rnd(*shape, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

def test_both_imports_are_the_same_class():
  assert TinyJit is TinyJit2

def test_decorator_replays_with_new_inputs():
  ran = []
  @TinyJit
  def add(a, b):
    ran.append(1)
    return (a + b).realize()
  for i in range(5):
    an, bn = rnd(4, 4, seed=i), rnd(4, 4, seed=10 + i)
    np.testing.assert_allclose(add(Tensor(an), Tensor(bn)).numpy(), an + bn, rtol=1e-6)
  assert len(ran) == 2 and len(add.jit_cache) == 1 and add.cnt == 5

@pytest.mark.parametrize("wrap,unwrap", [(lambda t: t, lambda r: r), (lambda t: [t], lambda r: r[0]),
                                         (lambda t: {"out": t}, lambda r: r["out"]), (lambda t: (t, None), lambda r: r[0])])
def test_return_structures(wrap, unwrap):
  @TinyJit
  def f(a, b): return wrap(a * b + 1)
  for i in range(5):
    an, bn = rnd(3, seed=i), rnd(3, seed=i + 7)
    np.testing.assert_allclose(unwrap(f(Tensor(an), Tensor(bn))).numpy(), an * bn + 1, rtol=1e-6)

def test_multiple_outputs_and_kernel_count():
  @TinyJit
  def f(a, b): return (a + b).realize(), (a - b).realize(), (a * b).realize()
  for i in range(5):
    an, bn = rnd(4, 4, seed=i), rnd(4, 4, seed=i + 1)
    a, b = Tensor(an).realize(), Tensor(bn).realize()
    before = GlobalCounters.kernel_count
    c, d, e = f(a, b)
    if i >= 2: assert GlobalCounters.kernel_count - before == len(f.jit_cache) == 3
    np.testing.assert_allclose(c.numpy(), an + bn, rtol=1e-6)
    np.testing.assert_allclose(d.numpy(), an - bn, rtol=1e-6)
    np.testing.assert_allclose(e.numpy(), an * bn, rtol=1e-6)

def test_kwargs_in_any_order():
  @TinyJit
  def div(first, second): return (first / second).realize()
  for i in range(4):
    a, b = rnd(3, seed=i), np.abs(rnd(3, seed=i + 3)) + 1
    out = div(first=Tensor(a), second=Tensor(b)) if i % 2 else div(second=Tensor(b), first=Tensor(a))
    np.testing.assert_allclose(out.numpy(), a / b, rtol=1e-6)

def test_method():
  class Fun:
    def __init__(self): self.a = Tensor(rnd(4, seed=1)).realize()
    @TinyJit
    def __call__(self, b): return (self.a + b).realize()
  fun = Fun()
  for i in range(5):
    b = rnd(4, seed=i)
    np.testing.assert_allclose(fun(Tensor(b)).numpy(), fun.a.numpy() + b, rtol=1e-6)

def test_const_inputs():
  @TinyJit
  def g(x, y, z): return (x + y + z).realize()
  for i in range(5): np.testing.assert_equal(g(Tensor([i] * 3), Tensor.ones(3), Tensor.zeros(3)).numpy(), [i + 1.0] * 3)

def test_outputs_share_the_captured_buffer():
  @TinyJit
  def foo(x): return x.sum().realize()
  r1, r2, r3 = foo(Tensor([1] * 2)), foo(Tensor([2] * 2)), foo(Tensor([3] * 2))
  assert r1.item() == 2 and r2.item() == 6 and r3.item() == 6

def test_value_arguments_are_captured():
  @TinyJit
  def f(x, k, mode="add"): return (x + k).realize() if mode == "add" else (x * k).realize()
  for i in range(4): np.testing.assert_allclose(f(Tensor([float(i)]), 3).numpy(), [i + 3.0])
  with pytest.raises(AssertionError, match="argument 1 is 4, the captured call had 3"): f(Tensor([1.0]), 4)
  with pytest.raises(AssertionError, match="args mismatch"): f(Tensor([1.0]), 3, mode="mul")

def test_other_objects_are_not_compared():  # as the reference: hlb_cifar10 passes a new OptimizerGroup each step
  class Scale:
    def __init__(self, w): self.w = w
  w = Tensor([2.0]).realize()
  @TinyJit
  def f(x, s, extra): return (x * s.w).realize()
  for i in range(4): np.testing.assert_allclose(f(Tensor([float(i)]), Scale(w), [Scale(w)]).numpy(), [2.0 * i])
  assert f.cnt == 4

def test_tensors_in_a_list_cannot_be_tracked():
  @TinyJit
  def f(xs): return (xs[0] + xs[1]).realize()
  with pytest.raises(AssertionError, match="can't track the tensors inside argument 0"): f([Tensor([1.0]), Tensor([2.0])])

def test_non_tensor_output_fails():
  @TinyJit
  def f(a): return (a + 1).realize(), 3
  with pytest.raises(AssertionError, match="a replay would return the captured value"): f(Tensor([1.0]))

def test_shape_mismatch():
  @TinyJit
  def add(a, b): return (a + b).realize()
  for i in range(3): add(Tensor(rnd(10, 10, seed=i)), Tensor(rnd(10, 10, seed=i + 1)))
  with pytest.raises(AssertionError, match=r"input 1 has shape \(20, 20\), the captured call had \(10, 10\)"):
    add(Tensor(rnd(10, 10)), Tensor(rnd(20, 20)))

def test_shape_views_mismatch():
  @TinyJit
  def add(a): return (a + 1).realize()
  with pytest.raises(AssertionError, match="is the view"):
    for i in range(1, 5): add(Tensor(rnd(10, 10)).realize().shrink(((0, 10), (i, i + 2))))

def test_duplicate_inputs_fail():
  @TinyJit
  def add(a, b): return (a + b).realize()
  a = Tensor(rnd(3))
  with pytest.raises(AssertionError, match="duplicate inputs"): add(a, a)

def test_nothing_jitted():
  @TinyJit
  def add(a, b): return None
  with pytest.raises(AssertionError, match="nothing to capture"):
    for _ in range(3): add(Tensor(rnd(2)), Tensor(rnd(2)))

def test_jit_inside_jit():
  @TinyJit
  def f(t): return t + 1
  @TinyJit
  def g(t): return f(t) * 3
  g(Tensor([1])).realize()
  with pytest.raises(RuntimeError, match="having TinyJit inside another TinyJit is not supported"): g(Tensor([1])).realize()

def test_jit_zero_does_not_jit():
  @TinyJit
  def add(a, b): return (a + b).realize()
  with Context(JIT=0):
    for i in range(5): np.testing.assert_allclose(add(Tensor([i]), Tensor([i])).numpy(), [2 * i])
  assert len(add.jit_cache) == 0 and add.captured is None

def test_reset():
  @TinyJit
  def add(a, b): return (a + b).realize()
  for i in range(4): np.testing.assert_allclose(add(Tensor([float(i)]), Tensor([1.0])).numpy(), [i + 1.0])
  assert len(add.jit_cache) == 1
  add.reset()
  assert len(add.jit_cache) == 0
  for i in range(4): np.testing.assert_allclose(add(Tensor([1.0, i]), Tensor([2.0, 2])).numpy(), [3.0, i + 2])
  assert add.captured is not None and len(add.captured.jit_cache) == 1

def test_output_fed_back():
  m = rnd(3, 3, seed=5)
  mt = Tensor(m).realize()
  @TinyJit
  def f(h): return (h @ mt).realize()
  h, want = Tensor(np.ones((1, 3), np.float32)), np.ones((1, 3), np.float32)
  for _ in range(6):
    h, want = f(h), want @ m
    np.testing.assert_allclose(h.numpy(), want, rtol=1e-5)

needs_assign = pytest.mark.skipif(not hasattr(Tensor, "assign"), reason="the Python Tensor has no assign yet")

@needs_assign
def test_assign_to_input():
  @TinyJit
  def add(a):
    a.assign(a + 1)
    a.realize()
  a = Tensor.zeros(1).contiguous().realize()
  for _ in range(5): add(a)
  assert a.item() == 5

@needs_assign
def test_training_step_with_assigned_state():
  w0 = rnd(3, 2, seed=3)
  w = Tensor(w0).realize()
  @TinyJit
  def step(x, y):
    err = x @ w - y
    w.assign(w - (x.T @ err) * (0.1 * 2 / err.numel()))
    return (err * err).mean().realize()
  wn = w0.astype(np.float64)
  for i in range(7):
    x, y = rnd(4, 3, seed=20 + i), rnd(4, 2, seed=40 + i)
    loss = step(Tensor(x), Tensor(y))
    err = x @ wn - y
    np.testing.assert_allclose(loss.item(), (err * err).mean(), rtol=1e-4)
    wn = wn - (x.T @ err) * (0.1 * 2 / err.size)
    np.testing.assert_allclose(w.numpy(), wn, rtol=1e-4, atol=1e-6)

def test_assign_into_a_slice_of_an_input_replays_on_the_new_input():
  # a BUFFER_VIEW of the input: each replay writes the new input's slice and reads it back (the reference's replays
  # return the second call's values here)
  @TinyJit
  def f(x, v):
    x[2:6].assign(v * 2).realize()
    return (x + 0).realize()
  for i in range(5):
    x = Tensor(np.zeros(10, dtype=np.float32)).realize()
    out = f(x, Tensor(np.full(4, i + 1, dtype=np.float32)).realize())
    want = np.zeros(10, dtype=np.float32)
    want[2:6] = 2 * (i + 1)
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal(x.numpy(), want)
