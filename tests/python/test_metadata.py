# Tensor metadata as tinygrad 0.10.3 keeps it: each UOp a Tensor method makes is named after that method
# (UOp.metadata, ScheduleItem.metadata, gradients marked backward), and tinygrad.tensor._METADATA, the context
# variable behind it, overrides the names while it is set
import threading
import pytest
from tinygrad import Tensor
from tinygrad.helpers import Metadata
from tinygrad.tensor import _METADATA

@pytest.fixture(autouse=True)
def no_metadata_set():
  _METADATA.set(None)  # as the reference's TestTensorMetadata.setUp
  yield
  _METADATA.set(None)

def names(ms) -> list[str]: return [m.name for m in ms]

def test_metadata_is_a_value():
  m = Metadata("relu", "x.py:3::f")
  assert (m.name, m.caller, m.backward) == ("relu", "x.py:3::f", False)
  assert str(m) == "relu" and repr(m) == "relu - x.py:3::f" and str(Metadata("relu", "", True)) == "relu bw"
  assert m == Metadata("relu", "x.py:3::f") and hash(m) == hash(Metadata("relu", "", True))
  with pytest.raises(AttributeError): m.name = "x"  # type: ignore[misc]

def test_methods_name_their_uops():
  x = Tensor.rand(3, requires_grad=True)
  out = x.matmul(Tensor.rand(3, 3))
  assert out.uop.metadata[0].name == "matmul"
  si = out.schedule()[-1]
  assert names(si.metadata) == ["matmul"]
  y = x.relu() * Tensor.rand(3).sigmoid()
  assert y.uop.metadata[0].name == "__mul__" and names(y.uop.src[0].metadata) == ["relu"]
  assert set(names(y.schedule()[-1].metadata)) == {"relu", "sigmoid", "__mul__"}

def test_sequential_is_not_a_name():  # as backward and gradient, left out of the reference's wrapper
  x = Tensor.rand(2, 3)
  y = x.sequential([lambda t: t.relu(), lambda t: t * 2])
  assert names(y.uop.metadata) == ["__mul__"] and names(y.uop.src[0].metadata) == ["relu"]

def test_backward_metadata():
  x = Tensor.rand(3, requires_grad=True).realize()
  y = Tensor.rand(3, requires_grad=True).realize()
  out = (x.relu() * y.sigmoid()).sum()
  out.backward()
  assert x.grad.uop.metadata[0].name == "relu" and x.grad.uop.metadata[0].backward
  assert y.grad.uop.metadata[0].name == "sigmoid" and y.grad.uop.metadata[0].backward
  si = Tensor.schedule(out, x.grad, y.grad)[-1]
  assert len(si.metadata) == 4 and set(names(si.metadata)) == {"sigmoid", "__mul__", "relu"}
  assert names(m for m in si.metadata if m.backward)[0] == "sigmoid"

def test_set_overrides_every_method_until_cleared():
  assert _METADATA.get() is None and _METADATA.name == "_METADATA"
  custom = Metadata("my_layer", "model.py:10::forward")
  token = _METADATA.set(custom)
  assert _METADATA.get() is custom
  y = (Tensor.rand(3).relu() * 2).sum()
  assert y.uop.metadata == (custom,) and y.uop.src[0].metadata == (custom,)
  assert [repr(m) for m in y.schedule()[-1].metadata] == ["my_layer - model.py:10::forward"]
  _METADATA.reset(token)
  assert _METADATA.get() is None
  z = Tensor.rand(3).relu() * 2
  assert names(z.uop.metadata) == ["__mul__"] and set(names(z.schedule()[-1].metadata)) == {"relu", "__mul__"}

def test_set_none_and_nested_tokens():
  outer = _METADATA.set(Metadata("outer", ""))
  inner = _METADATA.set(Metadata("inner", ""))
  assert names((Tensor([1.0]) + 1).uop.metadata) == ["inner"]
  _METADATA.reset(inner)
  assert names((Tensor([1.0]) * 3).uop.metadata) == ["outer"]
  _METADATA.reset(outer)
  assert names((Tensor([1.0]) * 3).uop.metadata) == ["__mul__"]
  with pytest.raises(RuntimeError, match="already been used"): _METADATA.reset(outer)  # once, as contextvars'

def test_set_is_per_thread():
  _METADATA.set(Metadata("main", ""))
  seen = []
  t = threading.Thread(target=lambda: seen.append((_METADATA.get(), names((Tensor([1.0]) + 1).uop.metadata))))
  t.start(); t.join()
  assert seen == [(None, ["__add__"])]
  assert names((Tensor([1.0]) + 2).uop.metadata) == ["main"]

def test_an_error_inside_a_method_leaves_no_metadata_behind():  # the reference's wrapper leaks it: ours doesn't
  with pytest.raises(ValueError): Tensor.ones(2).reshape(3)
  assert _METADATA.get() is None and names((Tensor([1.0]) + 1).uop.metadata) == ["__add__"]
