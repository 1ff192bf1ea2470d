# High-level movement and indexing through the Python module, against numpy
import numpy as np, pytest
from tinygrad import Tensor, dtypes

rng = np.random.default_rng(0)
A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)

def eq(t:Tensor, ref):
  ref = np.asarray(ref)
  out = t.numpy()
  assert out.shape == ref.shape, (out.shape, ref.shape)
  np.testing.assert_equal(out, ref)

# *** __getitem__ ***

BASIC = [1, -1, (1, 2), (0, 0, 0), slice(None), slice(1, 3), slice(None, None, -1), slice(None, None, 2),
         slice(-2, None), slice(None, -1, -2), slice(10, -10, -3), slice(-100, 100, 3), slice(3, 1),
         (slice(None, None, 3), slice(None, None, -3), slice(1, 5, 2)), (Ellipsis, 0), (None, 1, Ellipsis, None),
         (slice(None), None, slice(None, None, -2), 4), Ellipsis, None, (0, Ellipsis, slice(None, None, -1), None),
         np.int64(2)]

@pytest.mark.parametrize("idx", BASIC, ids=[repr(i) for i in BASIC])
def test_basic_indexing(idx):
  eq(Tensor(A)[idx], A[idx])

def test_bool_is_an_int_index():  # as in tinygrad (numpy reads True as a mask)
  eq(Tensor(A)[True], A[1])

def test_zero_and_one_size_dims():
  e, o = np.zeros((0, 3), np.float32), np.arange(3, dtype=np.float32).reshape(1, 3)
  for idx in [slice(None), (slice(None, None, -1), 1), (slice(None, None, 2), None, slice(None, None, -2))]: eq(Tensor(e)[idx], e[idx])
  for idx in [0, (-1, slice(None, None, -1)), slice(1, 5)]: eq(Tensor(o)[idx], o[idx])

ADVANCED = [[2, 0, -1, 2], (slice(None), [3, 0]), (Ellipsis, [[4, 0], [1, 1]]), ([[1], [0]], [3, 0]), ([2, 0], slice(None), [3, 0]),
            (slice(None, None, -1), [3, 0]), ([[0, 1], [2, 2]],), (None, [2, 0])]

@pytest.mark.parametrize("idx", ADVANCED, ids=[repr(i) for i in ADVANCED])
def test_advanced_indexing_like_numpy(idx):
  ref = A[tuple(np.array(i) if isinstance(i, list) else i for i in (idx if isinstance(idx, tuple) else (idx,)))]
  eq(Tensor(A)[idx], ref)
  eq(Tensor(A)[tuple(Tensor(i) if isinstance(i, list) else i for i in (idx if isinstance(idx, tuple) else (idx,)))], ref)

def test_advanced_dims_apart_go_first():
  b = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
  eq(Tensor(b)[:, Tensor([2, 1]), :, Tensor([3, 0])], b[:, [2, 1], :, [3, 0]])
  # an int is a basic index in tinygrad: it drops its dim first, so the index tensor's dim stays in place (numpy moves it)
  assert Tensor(b)[:, 0, :, Tensor([0, 1])].shape == (2, 4, 2)

def test_out_of_range_index_tensor_selects_zero():
  eq(Tensor([1.0, 2.0, 3.0])[Tensor([5, -4, 1])], [0.0, 0.0, 2.0])
  eq(Tensor([np.inf, 1.0, -np.inf])[[1, 0, 2]], [1.0, np.inf, -np.inf])

def test_index_errors():
  t = Tensor(A)
  with pytest.raises(IndexError, match="index 3 is out of bounds for dim 0 with size 3"): t[3]
  with pytest.raises(IndexError, match="index -6 is out of bounds for dim 2 with size 5"): t[0, 0, -6]
  with pytest.raises(IndexError): t[..., 0, ...]
  with pytest.raises(IndexError): t[0, 0, 0, 0]
  with pytest.raises(ValueError): t[::0]
  with pytest.raises(IndexError): t[Tensor([0.5])]
  with pytest.raises(IndexError): t["a"]
  with pytest.raises(IndexError): t[Tensor([0, 1]), Tensor([0, 1, 2])]

# *** __setitem__ ***

def test_setitem_basic_and_advanced():
  ref = np.arange(12, dtype=np.float32).reshape(3, 4)
  t = Tensor(ref.copy()).contiguous().realize()
  for idx, v in [(1, 50.0), ((slice(None), slice(None, None, 2)), np.array([-1.0, -2.0], np.float32)),
                 ((slice(None, None, -1), 3), np.array([7.0, 8.0, 9.0], np.float32)), ([0, 2], np.array([1.0, 2.0, 3.0, 4.0], np.float32)),
                 ((slice(1, 3), [0, 3]), np.array([[-1.0, -2.0], [-3.0, -4.0]], np.float32)), (Ellipsis, 3)]:
    t[idx] = Tensor(v) if isinstance(v, np.ndarray) else v
    ref[idx] = v
    eq(t, ref)

def test_setitem_repeated_index_last_wins_and_errors():
  t = Tensor.zeros(4).contiguous().realize()
  t[[1, 1, 2]] = Tensor([5.0, 6.0, 7.0])
  eq(t, [0.0, 6.0, 7.0, 0.0])
  with pytest.raises(TypeError): t[0] = "x"
  with pytest.raises(NotImplementedError): Tensor.zeros(2, requires_grad=True).contiguous()[0] = 1.0
  with pytest.raises(RuntimeError): t.reshape(2, 2).T[0] = 1.0

# *** movement ***

def test_view_repeat_roll_unflatten():
  a = np.arange(6, dtype=np.float32).reshape(2, 3)
  eq(Tensor(a).view(3, 2), a.reshape(3, 2))
  eq(Tensor(a).repeat(2, 1, 2), np.tile(a, (2, 1, 2)))
  eq(Tensor(a).repeat((2, 2)), np.tile(a, (2, 2)))
  eq(Tensor(a).repeat_interleave(2, dim=1), np.repeat(a, 2, axis=1))
  eq(Tensor(a).repeat_interleave(3), np.repeat(a, 3))
  eq(Tensor(a).roll(1, 1), np.roll(a, 1, 1))
  eq(Tensor(a).roll((1, -4), (0, 1)), np.roll(a, (1, -4), (0, 1)))
  assert Tensor.ones(3, 4, 1).unflatten(1, (-1, 2)).shape == (3, 2, 2, 1)

@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_modes(mode):
  a = np.arange(12, dtype=np.float32).reshape(3, 4)
  np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
  eq(Tensor(a).pad(((1, 2), (2, 1)), mode=mode), np.pad(a, ((1, 2), (2, 1)), mode=np_mode))
  eq(Tensor(a).pad((1, 2), mode=mode), np.pad(a, ((0, 0), (1, 2)), mode=np_mode))  # torch style: the last dim first
  eq(Tensor(a).pad((None, (0, 3)), mode=mode), np.pad(a, ((0, 0), (0, 3)), mode=np_mode))

def test_pad_errors():
  t = Tensor.ones(2, 3)
  with pytest.raises(NotImplementedError): t.pad((1, 1), mode="wrap")
  with pytest.raises(ValueError): t.pad((3, 0), mode="reflect")
  with pytest.raises(ValueError): t.pad((1, 1, 1))
  eq(t.pad((1, -1), value=2.0), np.array([[2, 1, 1]] * 2, np.float32))

def test_pad_value_dtype():  # as the reference: an int fill keeps an int tensor int, a float fill makes it float
  i = Tensor([3, -1, 5])
  assert i.pad((1, 1), value=7).dtype == dtypes.int32
  eq(i.pad((1, 1), value=7), np.array([7, 3, -1, 5, 7], np.int32))
  eq(i.pad((2, 0), value=-2**31), np.array([-2**31, -2**31, 3, -1, 5], np.int32))
  eq(i.pad((1, 0), value=2.5), np.array([2.5, 3, -1, 5], np.float32))
  eq(Tensor([1, 2], dtype=dtypes.uint8).pad((0, 1), value=255), np.array([1, 2, 255], np.uint8))
  eq(Tensor([True, False]).pad((1, 0), value=True), np.array([1, 1, 0], np.int32))

def test_split_chunk_unfold_meshgrid():
  a = np.arange(10, dtype=np.float32).reshape(5, 2)
  parts = Tensor(a).split(2)
  assert isinstance(parts, tuple) and [p.shape for p in parts] == [(2, 2), (2, 2), (1, 2)]
  for p, r in zip(Tensor(a).split([1, 4]), np.split(a, [1])): eq(p, r)
  for p, r in zip(Tensor(a).split(1, dim=1), np.split(a, 2, axis=1)): eq(p, r)
  assert [c.shape[0] for c in Tensor.arange(13).chunk(6)] == [3, 3, 3, 3, 1]
  eq(Tensor.arange(8).unfold(0, 3, 2), np.lib.stride_tricks.sliding_window_view(np.arange(8), 3)[::2])
  b = np.arange(27).reshape(3, 3, 3)
  eq(Tensor(b).unfold(-1, 2, 1), np.lib.stride_tricks.sliding_window_view(b, 2, axis=-1))
  x, y = Tensor([1, 2, 3]), Tensor([4, 5])
  for got, want in zip(x.meshgrid(y), np.meshgrid([1, 2, 3], [4, 5], indexing="ij")): eq(got, want)
  for got, want in zip(x.meshgrid(y, indexing="xy"), np.meshgrid([1, 2, 3], [4, 5], indexing="xy")): eq(got, want)

def test_rearrange():
  a = np.arange(48, dtype=np.float32).reshape(2, 3, 4, 2)
  eq(Tensor(a).rearrange("b c h w -> b (c h w)"), a.reshape(2, 24))
  eq(Tensor(a).rearrange("b c h w -> w b h c"), a.transpose(3, 0, 2, 1))
  eq(Tensor(a).rearrange("b c (h1 h2) w -> b h1 (c h2 w)", h1=2),
     a.reshape(2, 3, 2, 2, 2).transpose(0, 2, 1, 3, 4).reshape(2, 2, 12))
  assert Tensor(a).rearrange("... w -> w ...").shape == (2, 2, 3, 4)
  with pytest.raises(AssertionError): Tensor(a).rearrange("a b -> b a")  # the reference asserts

def test_cat_stack():
  eq(Tensor.cat(Tensor([[1, 2]]), Tensor([[3, 4]]), Tensor([[5, 6]]), dim=1), [[1, 2, 3, 4, 5, 6]])
  eq(Tensor([1, 2]).stack(Tensor([3, 4]), dim=1), [[1, 3], [2, 4]])

def test_triu_tril():
  a = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)
  for d in (-2, 0, 1, 5):
    eq(Tensor(a).triu(d), np.triu(a, d))
    eq(Tensor(a).tril(diagonal=d), np.tril(a, d))

# *** gather, scatter, select, sort ***

def test_gather_scatter():
  a = np.arange(12, dtype=np.float32).reshape(3, 4)
  idx = np.array([[2, 0, 1, 1], [0, 0, 2, 1]])
  eq(Tensor(a).gather(0, Tensor(idx)), np.take_along_axis(a, idx, 0))
  eq(Tensor(a).gather(1, Tensor(idx[:, :2])), np.take_along_axis(a[:2], idx[:, :2], 1))
  src = np.arange(1, 11, dtype=np.float32).reshape(2, 5)
  want = np.zeros((3, 5), np.float32)
  for r in range(1):
    for c in range(4): want[[0, 1, 2, 0][c], c] = src[r, c]
  eq(Tensor.zeros(3, 5).scatter(0, Tensor([[0, 1, 2, 0]]), Tensor(src)), want)
  eq(Tensor.full((2, 4), 2.0).scatter(1, Tensor([[2], [3]]), 1.5, reduce="add"), [[2, 2, 3.5, 2], [2, 2, 2, 3.5]])
  eq(Tensor.full((2, 4), 2.0).scatter(1, Tensor([[2], [3]]), 1.5, reduce="multiply"), [[2, 2, 3, 2], [2, 2, 2, 3]])
  with pytest.raises(TypeError): Tensor.zeros(2, 4).scatter(1, Tensor([[2], [3]]), Tensor.ones(2, 1), reduce="add")
  with pytest.raises(RuntimeError): Tensor.zeros(2, 4).scatter(1, Tensor([[2], [3]]), Tensor([[1], [2]]))
  with pytest.raises(AssertionError): Tensor.zeros(2, 4).scatter(1, Tensor([2, 3]), Tensor.ones(2, 1))
  with pytest.raises(AssertionError): Tensor(a).gather(0, Tensor([0, 1]))
  with pytest.raises(AssertionError): Tensor(a).split([1, 1])

@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
  self_, src = np.array([[-10, 20, 0, 5, 10]], np.float32), np.arange(1, 11, dtype=np.float32).reshape(2, 5)
  idx = np.zeros((2, 5), np.int32)
  fold = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
  want = np.array([[fold(([self_[0, c]] if include_self else []) + list(src[:, c])) for c in range(5)]], np.float32)
  got = Tensor(self_).scatter_reduce(0, Tensor(idx), Tensor(src), reduce=reduce, include_self=include_self)
  np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)

def test_masked_select():
  a = np.arange(9).reshape(3, 3)
  m = np.array([[True, False, True], [False, True, False], [False, False, True]])
  eq(Tensor(a).masked_select(Tensor(m)), a[m])
  eq(Tensor(a).masked_select(Tensor([False, True, True])), a[np.broadcast_to([False, True, True], (3, 3))])

@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable(descending):
  a = rng.integers(0, 4, size=(3, 7)).astype(np.float32)
  values, indices = Tensor(a).sort(dim=-1, descending=descending)
  order = np.argsort(-a if descending else a, axis=-1, kind="stable")
  eq(indices, order.astype(np.int32))
  eq(values, np.take_along_axis(a, order, -1))
  v0, i0 = Tensor(a).sort(0, descending)
  order0 = np.argsort(-a if descending else a, axis=0, kind="stable")
  eq(i0, order0.astype(np.int32))

def test_topk():
  t = Tensor([[0.1, 0.5, 1.2, 3.4, 2.1], [2.2, 1.9, 0.3, 4.5, 0.8]])
  v, i = t.topk(2, dim=1)
  np.testing.assert_allclose(v.numpy(), [[3.4, 2.1], [4.5, 2.2]], rtol=1e-6)
  eq(i, np.array([[3, 4], [3, 0]], np.int32))
  v, i = t.topk(1, dim=0, largest=False)
  eq(i, np.array([[0, 0, 1, 0, 1]], np.int32))
  with pytest.raises(ValueError): t.topk(6)
  with pytest.raises(NotImplementedError): t.topk(1, sorted_=False)
