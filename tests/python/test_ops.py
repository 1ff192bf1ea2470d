# Tensor ops through the Python module, against numpy
import numpy as np, pytest
from tinygrad import Tensor, dtypes, Device, GlobalCounters
from tinygrad.device import is_dtype_supported
from conftest import cpu_only

rng = np.random.default_rng(0)
def rand(*shape, lo=-2.0, hi=2.0): return rng.uniform(lo, hi, size=shape).astype(np.float32)
def close(t:Tensor, ref, atol=1e-5, rtol=1e-5):
  out = t.numpy()
  assert out.shape == np.asarray(ref).shape, (out.shape, np.asarray(ref).shape)
  np.testing.assert_allclose(out, ref, atol=atol, rtol=rtol)

# *** creation ***

def test_scalar_and_list_dtypes():
  assert Tensor(3).dtype == dtypes.int and Tensor(3).shape == ()
  assert Tensor(3.0).dtype == dtypes.float and Tensor(True).dtype == dtypes.bool
  assert Tensor([1, 2]).dtype == dtypes.int32 and Tensor([1, 2.5]).dtype == dtypes.float32
  assert Tensor([True, False]).dtype == dtypes.bool and Tensor([]).dtype == dtypes.float32
  assert Tensor([]).shape == (0,) and Tensor([]).tolist() == [] and Tensor.zeros(2, 0).tolist() == [[], []]
  assert Tensor([[1, 2], [3, 4]]).shape == (2, 2) and Tensor(((1,), (2,))).shape == (2, 1)
  assert Tensor([1, 2], dtype=dtypes.float16).dtype == dtypes.half
  assert Tensor([1, 2], dtype="float32").dtype == dtypes.float32

def test_tolist_item():
  assert Tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
  assert Tensor([1.5, 2.5]).tolist() == [1.5, 2.5]
  assert Tensor([True, False]).tolist() == [True, False]
  assert Tensor(7).item() == 7 and Tensor([2.0]).item() == 2.0 and Tensor(7).tolist() == 7
  with pytest.raises(ValueError): Tensor([1, 2]).item()

def test_ragged_list():
  with pytest.raises(ValueError): Tensor([[1, 2], [3]])

@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                np.uint64, np.bool_, np.float16])
def test_from_numpy(dt):
  if dt == np.float16 and not is_dtype_supported(dtypes.half): pytest.skip(f"no half on {Device.DEFAULT}")
  a = (rng.uniform(0, 100, size=(3, 4))).astype(dt)
  t = Tensor(a)
  assert t.shape == (3, 4) and t.numpy().dtype == a.dtype
  np.testing.assert_equal(t.numpy(), a)

def test_from_numpy_noncontiguous_and_bytes():
  a = np.arange(12, dtype=np.int32).reshape(3, 4).T
  np.testing.assert_equal(Tensor(a).numpy(), a)
  t = Tensor(b"\x01\x02\xff")
  assert t.dtype == dtypes.uint8 and t.tolist() == [1, 2, 255]

def test_options():
  t = Tensor([1.0, 2.0], device="cpu", requires_grad=True)
  assert t.device == "CPU" and t.requires_grad is True and t.grad is None
  assert Tensor([1.0]).requires_grad is None
  assert t.ndim == 1 and t.numel() == 2 and t.element_size() == 4 and t.nbytes() == 8 and len(t) == 2

def test_creation_helpers():
  np.testing.assert_equal(Tensor.zeros(2, 3).numpy(), np.zeros((2, 3), np.float32))
  np.testing.assert_equal(Tensor.ones((2, 3)).numpy(), np.ones((2, 3), np.float32))
  np.testing.assert_equal(Tensor.full((2,), 7).numpy(), np.full((2,), 7, np.int32))
  np.testing.assert_equal(Tensor.arange(5).numpy(), np.arange(5))
  np.testing.assert_allclose(Tensor.arange(1, 3, 0.5).numpy(), np.arange(1, 3, 0.5, dtype=np.float32))
  np.testing.assert_equal(Tensor.eye(3).numpy(), np.eye(3, dtype=np.float32))
  np.testing.assert_equal(Tensor([1, 2]).zeros_like().numpy(), np.zeros(2, np.int32))

@cpu_only
def test_repr():
  assert repr(Tensor([1, 2, 3, 4])) == "<Tensor <UOp CPU (4,) int (<Ops.COPY: 7>, None)> on CPU with grad None>"

# *** elementwise ***

UNARY = [("neg", lambda t: -t, np.negative), ("relu", Tensor.relu, lambda x: np.maximum(x, 0)), ("exp", Tensor.exp, np.exp),
         ("abs", Tensor.abs, np.abs), ("sigmoid", Tensor.sigmoid, lambda x: 1/(1+np.exp(-x))), ("square", Tensor.square, np.square),
         ("sin", Tensor.sin, np.sin), ("cos", Tensor.cos, np.cos), ("sign", Tensor.sign, np.sign),
         ("reciprocal", Tensor.reciprocal, np.reciprocal), ("exp2", Tensor.exp2, np.exp2)]
@pytest.mark.parametrize("name,fn,ref", UNARY)
def test_unary(name, fn, ref):
  a = rand(3, 5)
  close(fn(Tensor(a)), ref(a), atol=1e-4, rtol=1e-4)

@pytest.mark.parametrize("name,fn,ref", [("sqrt", Tensor.sqrt, np.sqrt), ("log", Tensor.log, np.log), ("log2", Tensor.log2, np.log2),
                                         ("rsqrt", Tensor.rsqrt, lambda x: 1/np.sqrt(x))])
def test_unary_positive(name, fn, ref):
  a = rand(4, 4, lo=0.1, hi=3.0)
  close(fn(Tensor(a)), ref(a), atol=1e-4, rtol=1e-4)

BINARY = [("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b), ("div", lambda a, b: a / b),
          ("max", lambda a, b: a.maximum(b) if isinstance(a, Tensor) else np.maximum(a, b)),
          ("lt", lambda a, b: a < b), ("gt", lambda a, b: a > b), ("le", lambda a, b: a <= b), ("ge", lambda a, b: a >= b),
          ("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b)]
@pytest.mark.parametrize("name,fn", BINARY, ids=[b[0] for b in BINARY])
def test_binary_broadcast(name, fn):
  a, b = rand(3, 1, 4), rand(5, 1) + 3
  close(fn(Tensor(a), Tensor(b)), fn(a, b), atol=1e-5, rtol=1e-5)

def test_scalar_operands_and_reflected():
  a = rand(4)
  t = Tensor(a)
  close(t + 1, a + 1); close(1 + t, 1 + a); close(t - 1.5, a - 1.5); close(2 - t, 2 - a)
  close(t * 3, a * 3); close(3 * t, 3 * a); close(t / 2, a / 2); close(2 / (t + 5), 2 / (a + 5), rtol=1e-5)
  close(t + a, a + a)  # a numpy operand
  i = Tensor([7, -7, 9])
  assert (i // 2).tolist() == [3, -4, 4] and (i % 4).tolist() == [3, 1, 1]  # python's floor semantics, as tinygrad
  assert i.idiv(2).tolist() == [3, -3, 4]  # truncating
  assert (i & 3).tolist() == [3, 1, 1] and (i | 8).tolist() == [15, -7, 9] and (i ^ 1).tolist() == [6, -8, 8]
  assert (Tensor([1, 2], dtype=dtypes.uint32) << 2).tolist() == [4, 8] and (Tensor([8, 9], dtype=dtypes.uint8) >> 1).tolist() == [4, 4]
  assert (Tensor([1, 2, 3]) * 2).dtype == dtypes.int and (Tensor([1, 2, 3]) * 2.5).dtype == dtypes.float

def test_where_clip_cast():
  a = rand(6)
  t = Tensor(a)
  close((t > 0).where(t, 0.0), np.where(a > 0, a, 0.0))
  close((t > 0).where(1.0, t), np.where(a > 0, 1.0, a))
  close(t.clip(-0.5, 0.5), np.clip(a, -0.5, 0.5))
  assert Tensor([1.7, -1.7]).cast(dtypes.int32).tolist() == [1, -1]
  assert Tensor([1, 0]).bool().tolist() == [True, False] and Tensor([1, 2]).float().dtype == dtypes.float

def test_matmul():
  a, b = rand(4, 3), rand(3, 5)
  close(Tensor(a) @ Tensor(b), a @ b, atol=1e-4)
  close(Tensor(a).dot(Tensor(b)), a @ b, atol=1e-4)
  close(Tensor(a).matmul(Tensor(b)), a @ b, atol=1e-4)

# *** movement ***

def test_movement():
  a = rand(2, 3, 4)
  t = Tensor(a)
  close(t.reshape(6, 4), a.reshape(6, 4)); close(t.reshape((4, -1)), a.reshape(4, -1)); close(t.reshape(None, 12), a.reshape(2, 12))
  close(t.permute(2, 0, 1), a.transpose(2, 0, 1)); close(t.permute((1, 0, 2)), a.transpose(1, 0, 2))
  close(Tensor([1, 2, 3]).flip(0), [3, 2, 1]); close(Tensor([1, 2]).pad(((1, 2),)), [0, 1, 2, 0, 0])
  close(t.shrink(((0, 1), None, (1, 3))), a[0:1, :, 1:3])
  assert t.flip((1, 2)).shape == (2, 3, 4) and t.pad(((1, 0), None, (0, 2))).shape == (3, 3, 6) and t.pad((1, 2)).shape == (2, 3, 7)
  b = rand(3, 1)
  close(Tensor(b).expand(3, 4), np.broadcast_to(b, (3, 4))); close(Tensor(b).expand(-1, 2), np.broadcast_to(b, (3, 2)))
  close(t.transpose(), a.swapaxes(1, 0)); close(t.T, a.swapaxes(1, 0)); close(t.flatten(), a.flatten())
  close(t.flatten(1), a.reshape(2, 12)); close(t.unsqueeze(0), a[None])
  close(t.unsqueeze(-1), a[..., None]); close(Tensor(b).squeeze(), b.squeeze()); close(Tensor(b).squeeze(1), b.squeeze(1))

# multi-dim flip and pad: the realize hangs in the C++ engine today, so they run in a subprocess with a time limit
MULTIDIM = [("flip", "t.flip(0)", "a[::-1]"), ("flip2", "t.flip((1, 2))", "a[:, ::-1, ::-1]"),
            ("pad", "t.pad(((1, 0), None, (0, 2)))", "np.pad(a, ((1, 0), (0, 0), (0, 2)))"),
            ("padflat", "t.pad((1, 2))", "np.pad(a, ((0, 0), (0, 0), (1, 2)))"),
            ("padvalue", "t.pad(((0, 0), (1, 1), (0, 0)), value=3.0)", "np.pad(a, ((0, 0), (1, 1), (0, 0)), constant_values=3.0)")]
@pytest.mark.xfail(reason="realize of a multi-dim flip or pad does not finish in the C++ engine yet", strict=False)
@pytest.mark.parametrize("name,expr,ref", MULTIDIM, ids=[m[0] for m in MULTIDIM])
def test_movement_multidim(name, expr, ref):
  import subprocess, sys
  code = f"import numpy as np\nfrom tinygrad import Tensor\na = np.arange(24, dtype=np.float32).reshape(2, 3, 4)\nt = Tensor(a)\n" \
         f"np.testing.assert_equal(({expr}).numpy(), {ref})\n"
  subprocess.run([sys.executable, "-c", code], check=True, timeout=10)

def test_movement_errors():
  # the exception types tinygrad raises for each mistake
  with pytest.raises(ValueError, match="size mismatched"): Tensor(rand(2, 3)).reshape(4, 2)
  with pytest.raises(RuntimeError, match="permutation"): Tensor(rand(2, 3)).permute(0, 0)
  with pytest.raises(ValueError, match="broadcast"): Tensor(rand(2, 3)) + Tensor(rand(4, 3))

# *** reduce ***

@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduce(axis, keepdim):
  a = rand(3, 4, 5)
  t = Tensor(a)
  close(t.sum(axis, keepdim), a.sum(axis=axis, keepdims=keepdim), atol=1e-4)
  close(t.max(axis, keepdim), a.max(axis=axis, keepdims=keepdim))
  close(t.min(axis=axis, keepdim=keepdim), a.min(axis=axis, keepdims=keepdim))
  close(t.mean(axis, keepdim=keepdim), a.mean(axis=axis, keepdims=keepdim), atol=1e-5)
  close(Tensor(a / 2 + 1.5).prod(axis, keepdim), (a / 2 + 1.5).prod(axis=axis, keepdims=keepdim), rtol=1e-4)

def test_fused_chain_is_one_kernel():
  t = Tensor(rand(16)).realize()
  before = GlobalCounters.kernel_count
  ((t + 1) * 2 - 3).relu().realize()
  assert GlobalCounters.kernel_count - before == 1

@cpu_only
def test_realize_returns_self_and_dedup():
  t = Tensor([1, 2, 3, 4])
  assert t.realize() is t
  assert (t * 4).uop is (t * 4).uop
  assert Device.DEFAULT == "CPU"
