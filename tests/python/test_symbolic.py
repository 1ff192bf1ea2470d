# Symbolic shapes from Python, as tinygrad's users write them: a KV cache sliced by a bound start_pos, reductions
# over a Variable's axis, a TinyJit that replays one kernel for every value, and the errors of bad bindings.
import numpy as np
import pytest
from tinygrad import Tensor, TinyJit, Variable
from tinygrad.uop.ops import sym_infer

def test_variable_bind_unbind_val():
  v = Variable("start_pos", 1, 10)
  b = v.bind(4)
  var, val = b.unbind()
  assert var is v or var == v
  assert val == 4 and b.val == 4
  assert sym_infer(v * 2 + 1, {v: 3}) == 7
  with pytest.raises(Exception, match=r"11.*\[1, 10\]"): v.bind(11)

def test_reshape_to_a_variable_then_add():
  for i in range(1, 5):
    a = Tensor.arange(3 * i).reshape(3, i).float()
    s = (a.reshape(3, Variable("i", 1, 10).bind(i)) + 1).realize()
    np.testing.assert_equal(s.reshape(3, i).numpy(), a.numpy() + 1)

def test_kv_cache_slice_by_a_bound_start_pos():
  cache = Tensor.arange(2 * 8).reshape(2, 8).float().realize()
  for start_pos in range(1, 6):
    sp = Variable("start_pos", 1, 7).bind(start_pos)
    window = cache[:, :sp + 1]
    np.testing.assert_equal(window.sum(axis=1).numpy(), cache.numpy()[:, :start_pos + 1].sum(axis=1))
    np.testing.assert_equal(cache.shrink(((0, 2), (sp, sp + 1))).reshape(2).numpy(), cache.numpy()[:, start_pos])

def test_mean_var_softmax_over_a_variable():
  for i in range(2, 5):
    a = Tensor(np.arange(2 * i, dtype=np.float32).reshape(2, i))
    s = a.reshape(2, Variable("i", 1, 10).bind(i))
    np.testing.assert_allclose(s.mean(axis=1).numpy(), a.numpy().mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(s.var(axis=1).numpy(), a.numpy().var(axis=1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(s.softmax(axis=1).reshape(2, i).numpy(), a.softmax(axis=1).numpy(), rtol=1e-6)

def test_tensor_of_a_bound_variable():
  v = Variable("w", 0, 10).bind(2)
  assert Tensor(v).item() == 2
  assert (Tensor(3) * v).item() == 6 and (Tensor(3) * (v * 4)).item() == 24

def test_tinyjit_replays_one_kernel_for_every_value():
  cache = Tensor.arange(16).float().realize()
  @TinyJit
  def f(x): return (x * 2).realize()
  for i in range(1, 10):
    out = f(cache.shrink(((0, Variable("i", 1, 16).bind(i)),)))
    np.testing.assert_equal(out.reshape(i).numpy(), cache.numpy()[:i] * 2)
  assert len(f.jit_cache) == 1

def test_tinyjit_decodes_with_a_kv_cache_and_a_start_pos_argument():
  # gpt2's decode step: the position is a bound Variable argument; the step writes the cache at it and reads the
  # cache up to it, and the same kernels replay for every position
  cache = Tensor.zeros(8, 2).contiguous().realize()
  @TinyJit
  def step(x:Tensor, start_pos):
    cache.shrink(((start_pos, start_pos + 1), None)).assign(x).realize()
    return cache.shrink(((0, start_pos + 1), None)).sum(axis=0).realize()
  want = np.zeros((8, 2), np.float32)
  for pos in range(1, 7):
    x = np.full((1, 2), pos, np.float32)
    want[pos] = x[0]
    out = step(Tensor(x), Variable("start_pos", 1, 7).bind(pos))
    np.testing.assert_equal(out.numpy(), want[:pos + 1].sum(axis=0))
  assert step.cnt == 6 and len(step.jit_cache) >= 1
  with pytest.raises(AssertionError, match="bound Variable"): step(Tensor(x), Variable("start_pos", 1, 7))

def test_one_variable_with_two_values_is_an_error():
  a, b = Tensor.ones(3), Tensor.ones(4)
  x = a.reshape(Variable("i", 1, 10).bind(3)).sum() + b.reshape(Variable("i", 1, 10).bind(4)).sum()
  with pytest.raises(ValueError, match="Variable i is bound to both"): x.realize()

def test_random_numbers_of_a_symbolic_shape_are_a_value_error():
  with pytest.raises(ValueError, match="symbolic"): Tensor.rand(3, Variable("i", 1, 10).bind(2))

def test_arange_to_a_bound_variable():
  assert Tensor.arange(0, Variable("a", 1, 10).bind(4)).reshape(4).tolist() == [0, 1, 2, 3]
  assert Tensor.arange(Variable("a", 1, 6).bind(4), 7).reshape(3).tolist() == [4, 5, 6]
  assert Tensor.arange(Variable("b", 1, 5).bind(4), Variable("e", 6, 10).bind(7)).reshape(3).tolist() == [4, 5, 6]
  with pytest.raises(ValueError, match="step 1"): Tensor.arange(0, Variable("a", 1, 10).bind(4), 2)

def test_a_window_rounded_up_broadcasts_against_one():
  # a size that is an expression of a Variable (a KV cache's window in whole 16s) broadcasts against 1 as itself: the
  # broadcast shape was max(1, size), simplified into another node than the size, and the expand to it failed
  keys = Tensor.arange(256).float().reshape(64, 4).realize()
  for p in (0, 3, 17):
    sp = Variable("sp", 0, 40).bind(p)
    n = (sp + 4 + 15) // 16 * 16
    scores = Tensor.ones(1, 2, 3, 4).matmul(keys.shrink(((0, n), (0, 4))).reshape(1, 1, n, 4).transpose(2, 3))
    rows = (p + 19) // 16 * 16
    assert scores.sum().item() == 6 * np.arange(rows * 4).sum()
