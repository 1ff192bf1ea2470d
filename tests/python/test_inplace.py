# In-place operators assign, replace swaps a tensor's graph, and the methods that make or keep buffers (clone, size,
# from_blob, from_url, from_uop): each as tinygrad 0.10.3 defines it (x += y is x.assign(x + y) ...)
import ctypes, gzip
import numpy as np, pytest
from tinygrad import Tensor, Device, dtypes
from tinygrad.uop.ops import UOp

# *** x op= y: the caller's tensor changes, the object stays the same ***

def test_iadd_in_a_function_changes_the_callers_tensor():
  def f(x):
    x += 1
    x.realize()
  t = Tensor([0])
  f(t)
  assert t.tolist() == [1]
  f(t)
  assert t.tolist() == [2]

INPLACE = [  # (operator, dtype, x, y, expected)
  ("__iadd__", dtypes.float32, [1.0, 2.0], 0.5, [1.5, 2.5]),
  ("__isub__", dtypes.int32, [5, 7], [1, 2], [4, 5]),
  ("__imul__", dtypes.float32, [1.5, -2.0], 2, [3.0, -4.0]),
  ("__ipow__", dtypes.float32, [2.0, 3.0], 2, [4.0, 9.0]),
  ("__itruediv__", dtypes.float32, [3.0, -1.0], 2, [1.5, -0.5]),
  ("__ifloordiv__", dtypes.int32, [7, -7], 2, [3, -4]),  # floor, as python's //
  ("__iand__", dtypes.uint8, [12, 10], 6, [4, 2]),
  ("__ior__", dtypes.uint8, [12, 10], 1, [13, 11]),
  ("__ixor__", dtypes.uint8, [12, 10], 15, [3, 5]),
  ("__ilshift__", dtypes.uint8, [3, 5], 2, [12, 20]),
  ("__irshift__", dtypes.uint8, [12, 9], 2, [3, 2]),
]

@pytest.mark.parametrize("op,dtype,x,y,want", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_operator_assigns(op, dtype, x, y, want):
  t = Tensor(x, dtype=dtype)
  alias = t  # another name for the same object, as a caller holds it
  r = getattr(t, op)(Tensor(y, dtype=dtype) if isinstance(y, list) else y)
  assert r is t and alias.dtype == dtype
  assert alias.tolist() == want

def test_imatmul_assigns_and_keeps_the_object():
  a = Tensor([[1.0, 2.0], [3.0, 4.0]])
  b = a
  a @= Tensor([[0.0, 1.0], [1.0, 0.0]])
  assert a is b and b.tolist() == [[2.0, 1.0], [4.0, 3.0]]

def test_inplace_on_a_realized_buffer_and_repeatedly():
  t = Tensor.zeros(3).contiguous().realize()
  for _ in range(3): t += Tensor([1.0, 2.0, 3.0])
  assert t.tolist() == [3.0, 6.0, 9.0]
  t *= 0
  assert t.tolist() == [0.0, 0.0, 0.0]

def test_inplace_and_the_tensors_reading_it():
  a = Tensor([1, 2]).realize()
  before = (a * 2).realize()  # realized before: keeps the old values
  lazy = a * 1 + 1            # lazy: reads a when realized, after the assign (as the reference)
  a += 10
  assert (a.tolist(), before.tolist(), lazy.tolist()) == ([11, 12], [2, 4], [12, 13])

def test_inplace_never_changes_a_deduplicated_twin():
  a, c = Tensor.arange(2) + 1, Tensor.arange(2) + 1
  assert a.uop is c.uop  # one graph, so one buffer once realized
  a.realize()
  lazy = c * 1
  a += 10  # a gets a buffer of its own first (the reference writes the shared one: its c changes too)
  assert (a.tolist(), c.tolist(), lazy.tolist()) == ([11, 12], [1, 2], [1, 2])

def test_inplace_view_writes_the_base():
  t = Tensor.zeros(2, 3).contiguous().realize()
  row = t[1]
  row += 5
  row.realize()
  assert t.tolist() == [[0.0, 0.0, 0.0], [5.0, 5.0, 5.0]]

@pytest.mark.parametrize("fn,exc,msg", [
  (lambda: Tensor([1, 2]).__itruediv__(2), AssertionError, "assign dtype mismatch dtypes.int != dtypes.float"),  # int / 2 is float
  (lambda: Tensor([1.0, 2.0]).__iadd__(Tensor.ones(2, 2)), AssertionError, r"assign shape mismatch \(2,\) != \(2, 2\)"),
  (lambda: Tensor([1, 2]).__ilshift__(1), AssertionError, "lshift needs an unsigned dtype"),  # signed
  (lambda: Tensor([1], dtype=dtypes.uint8).__irshift__(1.5), AssertionError, "x=1.5"),
  (lambda: Tensor([1, 2]).__iadd__("a"), TypeError, "'a'"),
])
def test_inplace_bad_input(fn, exc, msg):
  with pytest.raises(exc, match=msg): fn()

def test_failed_inplace_leaves_the_tensor():
  t = Tensor([1, 2])
  before = t.uop
  with pytest.raises(AssertionError): t /= 2
  assert t.uop is before and t.tolist() == [1, 2]

def test_reflected_shift_is_not_supported():  # the reference's __rlshift__ asserts `not reverse`
  with pytest.raises(AssertionError, match="reversed"): 1 << Tensor([1], dtype=dtypes.uint8)
  with pytest.raises(AssertionError, match="reversed"): Tensor([1], dtype=dtypes.uint8).rshift(1, reverse=True)

# *** replace(x, allow_shape_mismatch=False) ***

def test_replace_swaps_the_graph_and_returns_self():
  w = Tensor([1.0, 2.0, 3.0])
  new = Tensor([4.0, 5.0, 6.0])
  assert w.replace(new) is w and w.uop is new.uop and w.tolist() == [4.0, 5.0, 6.0]

def test_replace_takes_dtype_but_checks_shape():
  w = Tensor.ones(2, 3)
  w.replace(Tensor.full((2, 3), 7, dtype=dtypes.int16))
  assert w.dtype == dtypes.int16 and w.tolist() == [[7] * 3] * 2
  with pytest.raises(AssertionError, match=r"replace shape mismatch \(2, 3\) != \(3, 2\)"): w.replace(Tensor.ones(3, 2))
  assert w.shape == (2, 3)
  assert w.replace(Tensor.ones(3, 2), allow_shape_mismatch=True).shape == (3, 2)
  assert w.replace(Tensor(5.0), True).shape == ()

def test_replace_needs_a_tensor():
  with pytest.raises(AttributeError, match="'list' object has no attribute 'shape'"): Tensor([1, 2, 3]).replace([4, 5, 6])

def test_replace_swaps_a_models_weights():  # how tinygrad's own tests swap in weights
  from tinygrad import nn
  layer = nn.Linear(2, 1, bias=False)
  layer.weight.replace(Tensor([[1.0, 2.0]]))
  assert layer(Tensor([[3.0, 4.0]])).tolist() == [[11.0]]

def test_replace_keeps_grad_state():
  w = Tensor([1.0, 2.0], requires_grad=True)
  (w * 2).sum().backward()
  w.replace(Tensor([3.0, 4.0]))
  assert w.requires_grad is True and w.grad.tolist() == [2.0, 2.0]

def test_setting_uop_is_an_unchecked_replace():
  w = Tensor([1, 2])
  w.uop = Tensor([[5, 6, 7]]).uop
  assert w.shape == (1, 3) and w.tolist() == [[5, 6, 7]]

# *** clone, size ***

def test_clone_is_a_separate_buffer():
  a = Tensor([1.0, 2.0], requires_grad=True)
  (a * a).sum().backward()
  c = a.clone()
  assert c.tolist() == [1.0, 2.0] and c.grad.tolist() == [2.0, 4.0] and c.uop is not a.uop
  c += 1
  assert c.tolist() == [2.0, 3.0] and a.tolist() == [1.0, 2.0]

def test_size():
  t = Tensor.ones(2, 3, 4)
  assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(dim=-1) == 4 and Tensor(1).size() == ()
  with pytest.raises(IndexError): t.size(3)

# *** from_blob, from_url, from_uop ***

def test_from_blob_aliases_the_memory():
  mem = (ctypes.c_int32 * 4)(1, 2, 3, 4)
  if Device.DEFAULT in ("GPU", "CL"):  # device memory (a cl_mem) is no host pointer
    with pytest.raises(RuntimeError, match="can't use external memory"): Tensor.from_blob(ctypes.addressof(mem), (4,), dtype=dtypes.int32)
    return
  t = Tensor.from_blob(ctypes.addressof(mem), (2, 2), dtype=dtypes.int32)
  assert t.shape == (2, 2) and (t + 1).tolist() == [[2, 3], [4, 5]]
  mem[3] = 40  # no copy was made: the tensor reads the caller's memory
  assert (t + 1).tolist() == [[2, 3], [4, 41]]

def test_from_url_reads_the_bytes(tmp_path, monkeypatch):
  monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
  (tmp_path / "f.bin").write_bytes(bytes([1, 2, 250]))
  assert Tensor.from_url(str(tmp_path / "f.bin")).tolist() == [1, 2, 250]  # a local path, read in place
  (tmp_path / "f.gz").write_bytes(gzip.compress(bytes([7, 8])))
  t = Tensor.from_url((tmp_path / "f.gz").as_uri(), gunzip=True, dtype=dtypes.int8)
  assert t.dtype == dtypes.int8 and t.tolist() == [7, 8]

def test_from_uop_of_consts():
  c = Tensor(0).uop.const_like(3)
  assert Tensor.from_uop(c * 2 + 1).item() == 7
  with pytest.raises(RuntimeError, match="unhandled UOp"): Tensor.from_uop(c.cast(dtypes.float))
  v = UOp.variable("a", 1, 10)
  assert Tensor.from_uop(v.bind(3)).item() == 3 and Tensor.from_uop(v.bind(3) * 2 + 1).item() == 7

# *** the reference's other new names ***

def test_kernelize_and_realize_take_several():
  a, b = Tensor([1, 2]) + 1, Tensor([3, 4]) * 2
  assert a.kernelize(b) is a
  assert a.realize(b, do_update_stats=False) is a and (a.tolist(), b.tolist()) == ([2, 3], [6, 8])

def test_softmax_single_kernel_and_fuse():
  x = Tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 5.0]])
  np.testing.assert_allclose(x.softmax(_single_kernel=True).numpy(), x.softmax().numpy(), rtol=1e-6)
  assert (x + 1).fuse().tolist() == [[2.0, 3.0, 4.0], [1.0, 1.0, 6.0]]
  x = Tensor([1.0, 2.0], requires_grad=True)
  assert (x * x).contiguous_backward().sum().gradient(x)[0].tolist() == [2.0, 4.0]

@pytest.mark.parametrize("fn", [lambda: Tensor([1], dtype=dtypes.uint8).keccak(), lambda: Tensor.ones(1, 1).image_dot(Tensor.ones(1, 1)),
                                lambda: Tensor.ones(1, 1, 1, 1).image_conv2d(Tensor.ones(1, 1, 1, 1))])
def test_features_this_engine_lacks_say_so(fn):
  with pytest.raises(NotImplementedError, match="on tinygrad.cpp"): fn()

def test_mathtrait_abstract_methods():  # as the reference's Tensor, which leaves MathTrait's alu/const_like abstract
  x = Tensor([1])
  with pytest.raises(NotImplementedError): x.alu(None)
  with pytest.raises(NotImplementedError): x.const_like(1)
  with pytest.raises(NotImplementedError): x.ufix(1)
  assert x.ufix(y := Tensor([2])) is y

def test_threefry_random_bits_and_the_generators_state():
  # jax's threefry_2x32 of key (0, 1337) over 0..19, the reference's own check
  counts0, counts1 = Tensor.arange(20, dtype=dtypes.uint32).chunk(2)
  r = Tensor._threefry_random_bits(Tensor([0, 1337], dtype=dtypes.uint32), counts0, counts1).tolist()
  assert r[:4] == [2221762175, 1752107825, 653745012, 1967534793] and r[-1] == 1692360114
  Tensor.manual_seed(0)
  assert len(Tensor._device_seeds) == 0 and len(Tensor._device_rng_counters) == 0
  Tensor.rand(3).realize()
  (dev,) = Tensor._device_rng_counters.keys()
  assert Tensor._device_rng_counters[dev].tolist() == [3] and len(Tensor._device_seeds) == 1
  Tensor.rand(5).realize()
  assert Tensor._device_rng_counters[dev].tolist() == [8]
