# The exceptions tinygrad 0.10.3 raises, raised here too (same type, naming the values): loading a state dict that
# doesn't fit, convolutions with padding='same'; and UOp.ssimplify as the reference's
import pytest
from tinygrad import Tensor, nn, dtypes
from tinygrad.nn.state import load_state_dict, get_state_dict
from tinygrad.uop.ops import UOp, Ops, ssimplify

class Model:
  def __init__(self): self.l1, self.l2 = nn.Linear(2, 3), nn.Linear(3, 1, bias=False)
  def __call__(self, x:Tensor) -> Tensor: return self.l2(self.l1(x))

def good_state() -> dict:
  return {"l1.weight": Tensor.ones(3, 2), "l1.bias": Tensor.zeros(3), "l2.weight": Tensor.full((1, 3), 2.0)}

# *** load_state_dict ***

def test_load_state_dict_loads():
  m = Model()
  assert len(load_state_dict(m, good_state(), verbose=False)) == 3
  assert m(Tensor([[1.0, 1.0]])).tolist() == [[12.0]]

def test_load_state_dict_shape_mismatch_is_a_value_error_naming_key_and_shapes():
  m = Model()
  sd = dict(good_state(), **{"l1.weight": Tensor.ones(2, 3)})
  with pytest.raises(ValueError, match=r"shape mismatch in 'l1.weight': the model has \(3, 2\), the state dict \(2, 3\)"):
    load_state_dict(m, sd, verbose=False)
  assert get_state_dict(m)["l1.weight"].shape == (3, 2)  # nothing was loaded
  with pytest.raises(ValueError, match="l2.weight"): load_state_dict(m, dict(good_state(), **{"l2.weight": Tensor.ones(3)}), strict=False)
  with pytest.raises(ValueError, match=r"\(\)"): load_state_dict(m, dict(good_state(), **{"l1.bias": Tensor(0.0)}))

def test_load_state_dict_missing_key_is_a_key_error():  # the reference's state_dict[k]
  sd = good_state()
  del sd["l1.bias"]
  with pytest.raises(KeyError, match="missing keys \\['l1.bias'\\]"): load_state_dict(Model(), sd)
  assert len(load_state_dict(Model(), sd, strict=False, verbose=False)) == 2  # not strict: what is there loads

# *** padding='same' ***

@pytest.mark.parametrize("padding", ["same", "valid", "SAME", ""])
def test_tensor_conv2d_has_no_string_padding(padding):  # only nn.Conv2d takes 'same'; the reference's raises ValueError
  with pytest.raises(ValueError, match=f"padding={padding!r}"):
    Tensor.ones(1, 1, 4, 4).conv2d(Tensor.ones(1, 1, 3, 3), padding=padding)
  with pytest.raises(ValueError, match=f"padding={padding!r}"): Tensor.ones(1, 1, 4, 4).max_pool2d(padding=padding)

@pytest.mark.parametrize("stride", [2, (2, 1), (1, 3)])
def test_conv2d_same_with_a_stride_is_a_value_error(stride):
  with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
    nn.Conv2d(1, 1, 3, stride=stride, padding="same")

def test_conv1d_same_with_a_stride_is_a_value_error():
  with pytest.raises(ValueError, match="strided"): nn.Conv1d(2, 2, 3, stride=2, padding="same")

@pytest.mark.parametrize("padding", ["same", "SAME", "Same", "sAmE"])  # any case, as the reference's padding.lower()
def test_conv2d_same_keeps_the_size(padding):
  assert nn.Conv2d(1, 2, 3, padding=padding)(Tensor.ones(1, 1, 5, 6)).shape == (1, 2, 5, 6)
  assert nn.Conv2d(1, 1, 4, padding=padding, dilation=2)(Tensor.ones(1, 1, 7, 7)).shape == (1, 1, 7, 7)  # even kernel

@pytest.mark.parametrize("padding", ["valid", "full", "", "same "])
def test_conv2d_other_strings_are_value_errors(padding):
  with pytest.raises(ValueError, match=f"Invalid padding string {padding!r}, only 'same' is supported"):
    nn.Conv2d(1, 1, 3, padding=padding)

def test_conv2d_same_with_stride_one_as_a_tuple_is_accepted():  # the reference compares `stride != 1` and raises
  assert nn.Conv2d(1, 1, 3, stride=(1, 1), padding="same")(Tensor.ones(1, 1, 4, 4)).shape == (1, 1, 4, 4)

# *** UOp.ssimplify ***

def test_ssimplify_folds_to_a_python_number():
  a = UOp.variable("a", 0, 8)
  assert (r := (a * 0 + 5).ssimplify()) == 5 and type(r) is int
  assert (r := (a - a + 5).ssimplify()) == 5 and type(r) is int
  assert (r := UOp.const(dtypes.float, 3.5).ssimplify()) == 3.5 and type(r) is float
  assert UOp.const(dtypes.bool, True).ssimplify() is True

def test_ssimplify_keeps_what_does_not_fold():
  a = UOp.variable("a", 0, 8)
  r = (a * 2 + a).ssimplify()
  assert isinstance(r, UOp) and r is (a * 3).simplify() and r.op is Ops.MUL
  assert a.ssimplify() is a
  assert ssimplify(a * 1) is a and ssimplify(7) == 7  # the module-level one takes ints too
