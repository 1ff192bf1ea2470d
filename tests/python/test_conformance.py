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

# *** the exception tinygrad raises for each mistake, raised from the C++ engine's error kinds ***

@pytest.mark.parametrize("exc,fn", [
  (IndexError, lambda: Tensor(3.14).cat(Tensor(3.14))),
  (IndexError, lambda: Tensor(3.0).cumsum(1)),
  (IndexError, lambda: Tensor.ones(4, 3).squeeze(dim=50)),
  (IndexError, lambda: Tensor.ones(8).unfold(1, 8, 3)),
  (IndexError, lambda: Tensor.stack(Tensor.ones(2), Tensor.ones(2), dim=3)),
  (RuntimeError, lambda: Tensor.ones(8).unfold(0, 9, 3)),
  (ValueError, lambda: Tensor.full((2, -3), 4)),
  (ValueError, lambda: Tensor.eye(-3, 3)),
  (ValueError, lambda: Tensor.kaiming_uniform((-3, 3), 3)),
  (ValueError, lambda: Tensor.kaiming_normal(-3, 3)),
  (ValueError, lambda: Tensor.ones(4, 3).reshape(5, 2)),
  (ValueError, lambda: Tensor.ones(4, 6, 3).repeat((2, 4))),
  (ValueError, lambda: Tensor.ones(32, 10).cross_entropy(Tensor.ones(32, 10), reduction="typo")),
  (ValueError, lambda: Tensor.ones(2, 16, 2, 2).conv_transpose2d(Tensor.ones(32, 16, 3, 3), padding=(1, 1, 1))),
  (NotImplementedError, lambda: Tensor.ones(1, 1, 5, 5).pad((3, -5, 1, -5), mode="circular")),
  (ValueError, lambda: Tensor.ones(1, 1, 5, 5).pad((3, 6, 0, 0), mode="circular")),
  (AssertionError, lambda: Tensor.einsum("pqrs,tuqvr->pstuv", Tensor.zeros(3, 8, 10, 5), Tensor.zeros(11, 5, 13, 16, 8))),
  (AssertionError, lambda: Tensor.einsum("ij,jk->ij", Tensor.zeros(10, 15), Tensor.zeros(15, 20), Tensor.zeros(20, 10))),
  (AttributeError, lambda: Tensor([1.0, 2.0]).sum(dtype="")),
])
def test_exception_types(exc, fn):
  with pytest.raises(exc): fn()

def test_circular_pad_and_bitcast():
  x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
  np.testing.assert_equal(Tensor(x).pad((0, 2, 3, 2), mode="circular").numpy(), np.pad(x, ((0, 0), (0, 0), (3, 2), (0, 2)), mode="wrap"))
  assert Tensor([1.0, 2.0]).bitcast(dtypes.int32).tolist() == [1065353216, 1073741824]
  assert Tensor([1, 2]).sum(dtype=dtypes.float32).dtype == dtypes.float32

# *** tinygrad's modules, where its users import from ***

def test_module_layout():
  from tinygrad.dtype import _to_np_dtype, _from_np_dtype, DType, dtypes, ConstType, least_upper_dtype  # noqa: F401
  from tinygrad.tensor import _to_np_dtype as t2np  # noqa: F401
  from tinygrad.device import Device, is_dtype_supported, Buffer
  from tinygrad.helpers import getenv, Context, DEBUG, GlobalCounters, Timing, tqdm, trange, colored, prod, flatten, dedup, all_same, CI, OSX  # noqa: F401
  from tinygrad.engine.jit import TinyJit  # noqa: F401
  from tinygrad.engine.realize import run_schedule, lower_schedule, CompiledRunner
  from tinygrad.engine.schedule import ScheduleItem  # noqa: F401
  from tinygrad.nn.state import safe_load, get_state_dict  # noqa: F401
  from tinygrad.uop.ops import UOp, Ops  # noqa: F401
  from tinygrad.gradient import compute_gradient
  from tinygrad.shape.shapetracker import ShapeTracker
  from tinygrad.renderer import Renderer  # noqa: F401
  assert _to_np_dtype(dtypes.float32) is np.float32 and _from_np_dtype(np.int8) == dtypes.int8 and _to_np_dtype(dtypes.bfloat16) is None
  dev = Device["CPU"]
  dev.synchronize()
  assert dev.device == "CPU" and dev.renderer.device == "CPU" and not dev.renderer.has_local and dev.compiler and dev.allocator
  assert is_dtype_supported(dtypes.float32) and not is_dtype_supported(dtypes.fp8e4m3)
  # the schedule, then running it
  a = Tensor([1.0, 2.0, 3.0]) * 2
  sched = a.schedule()
  assert sched[-1].ast.op is Ops.SINK and isinstance(sched[-1].bufs[0], Buffer)
  run_schedule(sched)
  assert a.tolist() == [2.0, 4.0, 6.0]
  b = Tensor([4.0]) + 1
  for _, ei in lower_schedule(b.schedule()): ei.run()
  assert b.item() == 5.0
  buf = Buffer("CPU", 3, dtypes.int32, initial_value=memoryview(np.array([7, 8, 9], dtype=np.int32)))
  assert buf.numpy().tolist() == [7, 8, 9] and buf.nbytes == 12
  x = Tensor([3.0])
  y = x * x
  assert Tensor(compute_gradient(y.uop, y.uop.const_like(1.0), {x.uop})[x.uop]).item() == 6.0
  assert ShapeTracker.from_shape((2, 3)).shape == (2, 3)
  GlobalCounters.reset()
  (Tensor.arange(4) + 1).realize()
  assert GlobalCounters.kernel_count == 1 and GlobalCounters.global_mem > 0
