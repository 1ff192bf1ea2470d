# The Tensor API under tinygrad 0.10.3's own names. data/tensor_signatures.json holds every public name of the
# reference's Tensor, with each parameter's name, kind and default (written by tools/tensor_signatures.py from a
# reference checkout). Here, for each of them:
#   - ours exists, is the same kind of thing, and its signature (pybind's, or inspect's for what is Python) has the
#     same parameter names in the same order, the same kinds and the same defaults;
#   - it is called with keyword arguments, under the reference's names, and gives what the positional call gives;
#   - passing each of the reference's defaults explicitly gives what leaving them out gives.
import atexit, ctypes, inspect, json, math, pathlib, re, shutil, tempfile
import numpy as np, pytest
from tinygrad import Tensor, Device, dtypes
from tinygrad.device import is_dtype_supported
from tinygrad.uop.ops import Ops
from tinygrad.nn.state import get_state_dict

ENTRIES = {e["name"]: e for e in map(json.loads, (pathlib.Path(__file__).parent / "data" / "tensor_signatures.json").read_text().splitlines())}
VAR = ("VAR_POSITIONAL", "VAR_KEYWORD")

def test_the_data_is_the_whole_api():
  assert len(ENTRIES) > 250
  assert {"reshape", "sum", "__iadd__", "replace", "conv2d", "rand", "T", "uop"} <= set(ENTRIES)
  assert ENTRIES["reshape"]["params"] == [["self", "POSITIONAL_OR_KEYWORD", None], ["shape", "POSITIONAL_OR_KEYWORD", None],
                                          ["args", "VAR_POSITIONAL", None]]

# *** our signatures: pybind's docstring (`name(self: Tensor, shape: object, *args) -> Tensor`), or inspect's ***

def _split_top(s:str) -> list[str]:  # on the commas outside brackets and quotes
  out, depth, cur, quote = [], 0, "", None
  for ch in s:
    if quote: quote = None if ch == quote else quote
    elif ch in "'\"": quote = ch
    elif ch in "([{": depth += 1
    elif ch in ")]}": depth -= 1
    if ch == "," and depth == 0 and not quote: out.append(cur.strip()); cur = ""
    else: cur += ch
  return out + ([cur.strip()] if cur.strip() else [])

def _parse_pybind(name:str, doc:str) -> list[list]:
  lines = [l for l in doc.splitlines() if l.startswith(name + "(")]
  assert "Overloaded function" not in doc and len(lines) == 1, f"{name}: one signature, not overloads:\n{doc}"
  body, depth = lines[0][len(name) + 1:], 1
  for end, ch in enumerate(body):
    depth += ch in "([{"
    depth -= ch in ")]}"
    if depth == 0: break
  params, kind = [], "POSITIONAL_OR_KEYWORD"
  for p in _split_top(body[:end]):
    if p == "*": kind = "KEYWORD_ONLY"
    elif p == "/": params = [[n, "POSITIONAL_ONLY", d] for n, _, d in params]
    elif p.startswith("**"): params.append([p[2:].split(":")[0], "VAR_KEYWORD", None])
    elif p.startswith("*"): params.append([p[1:].split(":")[0], "VAR_POSITIONAL", None]); kind = "KEYWORD_ONLY"
    else:
      m = re.fullmatch(r"(\w+)(?::\s*(.*?))?(?:\s=\s(.*))?", p)
      params.append([m.group(1), kind, m.group(3)])
  return params

def ours(name:str) -> dict:
  raw = inspect.getattr_static(Tensor, name)
  if isinstance(raw, property): return {"kind": "property", "settable": raw.fset is not None}
  if type(raw).__name__ in ("pybind11_static_property", "member_descriptor") or isinstance(raw, (bool, int, float)):
    return {"kind": "attribute"}
  kind, fn = ("staticmethod", raw.__func__) if isinstance(raw, staticmethod) else ("class", raw) if inspect.isclass(raw) else ("method", raw)
  if inspect.isfunction(fn) or inspect.isclass(fn):
    params = [[p.name, p.kind.name, None if p.default is p.empty else repr(p.default)] for p in inspect.signature(fn).parameters.values()]
  else: params = _parse_pybind(name, fn.__doc__ or "")
  return {"kind": kind, "params": params}

def _norm(params): return [("*" if k in VAR else n, k, d) for n, k, d in params]  # a var-arg's own name can't be passed

@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_signature_matches_the_reference(name):
  ref, got = ENTRIES[name], ours(name)
  if ref["kind"] in ("property", "attribute"):
    assert got["kind"] in ("property", "attribute"), f"{name} is a {got['kind']}"
    if ref["kind"] == "attribute" and "value" not in ref: assert got.get("settable", True), f"{name} can't be set"
    return
  assert got["kind"] == ref["kind"], f"{name}: a {got['kind']}, the reference's is a {ref['kind']}"
  assert _norm(got["params"]) == _norm(ref["params"])

def test_the_parser_reads_pybind_signatures():
  assert _parse_pybind("f", "f(self: X, shape: object, *args, dtype: object = None, **kwargs) -> X\n") == [
    ["self", "POSITIONAL_OR_KEYWORD", None], ["shape", "POSITIONAL_OR_KEYWORD", None], ["args", "VAR_POSITIONAL", None],
    ["dtype", "KEYWORD_ONLY", "None"], ["kwargs", "VAR_KEYWORD", None]]
  assert _parse_pybind("g", "g(self: X, k: tuple = (2, 2), m: str = 'a,b') -> X")[1:] == [
    ["k", "POSITIONAL_OR_KEYWORD", "(2, 2)"], ["m", "POSITIONAL_OR_KEYWORD", "'a,b'"]]
  with pytest.raises(AssertionError, match="overloads"): _parse_pybind("h", "h(*args, **kwargs)\nOverloaded function.\n\n1. h(x: int) -> int\n2. h(x: str) -> int")

# *** calls under the reference's keyword names ***

class Call:
  """How to call one name: recv makes the receiver (a fresh one per call, as several methods change it), kw are its
  named arguments by the reference's names, var its *args (or a function making them afresh), extra its **kwargs; cmp "meta" compares only shape, dtype
  and device (empty buffers), "type" only the result's type, "attrs" an object's attributes; raises: the exception
  the reference raises too."""
  def __init__(self, recv=None, kw=None, var=(), extra=None, cmp="value", raises=None):
    self.recv, self.kw, self.var, self.extra, self.cmp, self.raises = recv, kw or {}, var, extra or {}, cmp, raises

def F(): return Tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.5]])
def I(): return Tensor([[1, 2, 3], [4, 5, 6]])
def U(): return Tensor([3, 12], dtype=dtypes.uint8)
def B(): return Tensor([[True, False, True], [False, True, True]])
def P(): return Tensor([0.25, 0.75])
def IMG(): return Tensor.arange(32, dtype=dtypes.float32).reshape(1, 2, 4, 4)
def V(): return Tensor([1.0, 2.0, 3.0])
X = Tensor([1.0, 2.0], requires_grad=True)  # gradient's targets: one tensor for both calls
_POOLED, _IDX = IMG().max_pool2d(return_indices=True)
_BLOB = (ctypes.c_int32 * 4)(1, 2, 3, 4)
_SEQ = [lambda t: t + 1, lambda t: t * 2]
_FILE = pathlib.Path(tempfile.mkdtemp()) / "bytes.bin"  # from_url: a local path is read as it is (no cache, no network)
_FILE.write_bytes(bytes(range(7)))
atexit.register(shutil.rmtree, _FILE.parent, True)
NO_IMAGE = NotImplementedError
HALF = dtypes.float16 if is_dtype_supported(dtypes.float16) else dtypes.float64  # PoCL has no half: another float

CALLS: dict[str, Call] = {
  "__init__": Call(kw=dict(data=[1, 2], device=None, dtype=dtypes.float32, requires_grad=False)),
  "__getitem__": Call(F, dict(indices=(1, slice(None, 2)))),
  "__setitem__": Call(lambda: F().contiguous().realize(), dict(indices=0, v=7.0)),
  "__bool__": Call(F, raises=TypeError),
  "__hash__": Call(F, cmp="type"),  # the object's identity: two receivers, two hashes
  "alu": Call(F, dict(arg=Ops.ADD), raises=NotImplementedError),
  "const_like": Call(F, dict(b=1), raises=NotImplementedError),
  "threefry": Call(U, dict(seed=U()), raises=NotImplementedError),
  "ufix": Call(F, dict(x=V())),
  "arange": Call(kw=dict(start=1, stop=9, step=3), extra=dict(dtype=dtypes.int16)),
  "assign": Call(lambda: F().contiguous().realize(), dict(x=F() * 2)),
  "backward": Call(lambda: (X * X).sum(), dict(gradient=Tensor(2.0))),
  "batchnorm": Call(F, dict(weight=V(), bias=V(), mean=V(), invstd=V(), axis=1)),
  "binary_crossentropy": Call(P, dict(Y=Tensor([0.0, 1.0]), reduction="sum")),
  "binary_crossentropy_logits": Call(P, dict(Y=Tensor([0.0, 1.0]), reduction="none")),
  "bitcast": Call(F, dict(dtype=dtypes.int32)),
  "bitwise_not": Call(I), "__invert__": Call(B),
  "clamp": Call(F, dict(min_=-1, max_=2.5)), "clip": Call(I, dict(min_=2, max_=None)),
  "item": Call(lambda: Tensor([[2.5]])),
  "cast": Call(F, dict(dtype=dtypes.int32)),
  "cat": Call(F, dict(dim=1), var=(F(),)),
  "chunk": Call(F, dict(chunks=2, dim=1)),
  "clone": Call(F),
  "conv2d": Call(IMG, dict(weight=Tensor.ones(3, 2, 2, 2), bias=V(), groups=1, stride=2, dilation=1, padding=1, dtype=None)),
  "conv_transpose2d": Call(IMG, dict(weight=Tensor.ones(2, 1, 2, 2), bias=None, groups=1, stride=2, dilation=1, padding=1, output_padding=1)),
  "copysign": Call(F, dict(other=-1.0)),
  "cross_entropy": Call(F, dict(Y=Tensor([0, 2]), reduction="sum", label_smoothing=0.1)),
  "cumprod": Call(F, dict(axis=1)),
  "div": Call(I, dict(x=4, reverse=True, rounding_mode="floor")),
  "dot": Call(F, dict(w=F().T, dtype=dtypes.float32)),
  "dropout": Call(F, dict(p=0.3)),
  "einsum": Call(kw=dict(formula="ij,jk->ik", dtype=None), var=(F(), F().T)),
  "empty": Call(kw=dict(device=None, dtype=dtypes.int8), var=(2, 3), cmp="meta"),
  "empty_like": Call(F, extra=dict(dtype=dtypes.int8), cmp="meta"),
  "expand": Call(lambda: V().reshape(1, 3), dict(shape=(2, 3))),
  "eye": Call(kw=dict(n=3, m=2), extra=dict(dtype=dtypes.int32)),
  "flip": Call(F, dict(axis=1)),
  "from_url": Call(kw=dict(url=str(_FILE), gunzip=False), extra=dict(dtype=dtypes.int8)),
  "from_blob": Call(kw=dict(ptr=ctypes.addressof(_BLOB), shape=(4,)), extra=dict(dtype=dtypes.int32)),
  "full": Call(kw=dict(shape=(2, 3), fill_value=7), extra=dict(dtype=dtypes.int16)),
  "full_like": Call(F, dict(fill_value=2.5)),
  "gather": Call(F, dict(dim=1, index=Tensor([[0, 0], [2, 1]]))),
  "glorot_uniform": Call(var=(3, 4)),
  "gradient": Call(lambda: (X * X).sum(), dict(gradient=Tensor(3.0), materialize_grads=True), var=(X,)),
  "image_conv2d": Call(IMG, dict(weight=Tensor.ones(1, 2, 1, 1)), raises=NO_IMAGE),
  "image_dot": Call(F, dict(w=F().T), raises=NO_IMAGE),
  "interpolate": Call(IMG, dict(size=(2, 3), mode="nearest", align_corners=False)),
  "isclose": Call(F, dict(other=F() + 1e-6, rtol=1e-3, atol=1e-4, equal_nan=True)),
  "isinf": Call(F, dict(detect_positive=False, detect_negative=True)),
  "kaiming_normal": Call(var=(3, 4), kw=dict(a=0.5)),
  "kaiming_uniform": Call(var=(3, 4), kw=dict(a=0.5)),
  "keccak": Call(U, dict(cfg="sha3_256"), raises=NotImplementedError),
  "kernelize": Call(lambda: F() + 1, var=lambda: (I() * 2,)),
  "layernorm": Call(F, dict(axis=-1, eps=1e-3)),
  "lerp": Call(F, dict(end=F() * 0, weight=0.25)),
  "linear": Call(F, dict(weight=Tensor.ones(3, 4), bias=Tensor.ones(4), dtype=None)),
  "linspace": Call(kw=dict(start=0, stop=1, steps=5)),
  "llvm_bf16_cast": Call(lambda: F().cast(dtypes.bfloat16), dict(dtype=dtypes.float32)),
  "lshift": Call(U, dict(x=2, reverse=False)),
  "rshift": Call(U, dict(x=1, reverse=False)),
  "masked_fill": Call(F, dict(mask=B(), value=0.5)),
  "masked_select": Call(F, dict(mask=B())),
  "matmul": Call(F, dict(x=F().T, reverse=True, dtype=None)),
  "max_pool2d": Call(IMG, dict(kernel_size=(2, 2), stride=1, dilation=1, padding=1, ceil_mode=True, return_indices=False)),
  "avg_pool2d": Call(IMG, dict(kernel_size=(3, 3), stride=2, dilation=1, padding=1, ceil_mode=True, count_include_pad=False)),
  "max_unpool2d": Call(lambda: _POOLED, dict(indices=_IDX, kernel_size=(2, 2), stride=None, dilation=1, padding=0, output_size=None)),
  "meshgrid": Call(V, dict(indexing="xy"), var=(P(),)),
  "multinomial": Call(P, dict(num_samples=3, replacement=True)),
  "nll_loss": Call(lambda: F().log_softmax(), dict(Y=Tensor([0, 2]), weight=V(), ignore_index=1, reduction="sum")),
  "normal": Call(var=(2, 3), kw=dict(mean=1.0, std=2.0, requires_grad=False)),
  "one_hot": Call(lambda: Tensor([0, 2, 1]), dict(num_classes=4)),
  "ones": Call(var=(2, 3), extra=dict(dtype=dtypes.int8)),
  "pad": Call(F, dict(padding=(1, 2), mode="reflect", value=0.0)),
  "permute": Call(F, dict(order=(1, 0))),
  "rand": Call(var=(2, 3), kw=dict(device=None, dtype=HALF, contiguous=False)),
  "rand_like": Call(F, extra=dict(dtype=HALF)),
  "randint": Call(var=(2, 3), kw=dict(low=5, high=9, dtype=dtypes.int16)),
  "randn": Call(var=(2, 3), kw=dict(dtype=HALF, requires_grad=False)),
  "randn_like": Call(F, dict(dtype=HALF, requires_grad=False)),
  "randperm": Call(kw=dict(n=6, device=None, dtype=dtypes.int64)),
  "realize": Call(lambda: F() + 1, dict(do_update_stats=False), var=lambda: (I() * 2,)),
  "rearrange": Call(F, dict(formula="a b -> b a")),
  "repeat": Call(F, dict(repeats=(2, 1))),
  "repeat_interleave": Call(F, dict(repeats=2, dim=1)),
  "replace": Call(F, dict(x=F() + 1, allow_shape_mismatch=True)),
  "requires_grad_": Call(F, dict(requires_grad=False)),
  "reshape": Call(F, dict(shape=(3, -1))),
  "roll": Call(F, dict(shifts=1, dims=1)),
  "scaled_dot_product_attention": Call(lambda: F().reshape(1, 2, 3), dict(key=F().reshape(1, 2, 3), value=F().reshape(1, 2, 3), attn_mask=None, dropout_p=0.0, is_causal=True)),
  "scaled_uniform": Call(var=(3, 4)),
  "scatter": Call(F, dict(dim=1, index=Tensor([[0, 1], [2, 0]]), src=9.0, reduce="add")),
  "scatter_reduce": Call(F, dict(dim=1, index=Tensor([[0, 1], [2, 0]]), src=F()[:, :2], reduce="amax", include_self=False)),
  "schedule": Call(lambda: F() + 1, var=lambda: (I() * 2,)),
  "schedule_with_vars": Call(lambda: F() + 1, var=lambda: (I() * 2,)),
  "sequential": Call(F, dict(ll=_SEQ)),
  "shard": Call(F, dict(devices=("CPU", "CPU:1"), axis=0)),
  "shard_": Call(F, dict(devices=("CPU", "CPU:1"), axis=None)),
  "shrink": Call(F, dict(arg=((0, 1), None))),
  "size": Call(F, dict(dim=-1)),
  "softmax": Call(F, dict(axis=0, dtype=dtypes.float32, _single_kernel=True)),
  "sparse_categorical_crossentropy": Call(F, dict(Y=Tensor([0, 2]), ignore_index=1, label_smoothing=0.2, reduction="none")),
  "split": Call(F, dict(sizes=1, dim=1)),
  "squeeze": Call(lambda: V().reshape(1, 3), dict(dim=0)),
  "stack": Call(F, dict(dim=1), var=(F(),)),
  "to": Call(F, dict(device=Device.DEFAULT)),
  "to_": Call(F, dict(device=Device.DEFAULT)),
  "topk": Call(F, dict(k=2, dim=1, largest=False, sorted_=True)),
  "train": Call(kw=dict(mode=False), cmp="attrs"),
  "transpose": Call(F, dict(dim0=0, dim1=1)),
  "tril": Call(F, dict(diagonal=1)),
  "triu": Call(F, dict(diagonal=-1)),
  "unflatten": Call(F, dict(dim=1, sizes=(3, 1))),
  "unfold": Call(V, dict(dim=0, size=2, step=1)),
  "uniform": Call(var=(2, 3), kw=dict(low=-1.0, high=3.0, dtype=HALF, requires_grad=False)),
  "unsqueeze": Call(F, dict(dim=-1)),
  "view": Call(F, dict(shape=(3, 2))),
  "where": Call(B, dict(x=F(), y=0.0)),
  "zeros": Call(var=(2, 3), extra=dict(dtype=dtypes.int8)),
}
# the binary methods and operators: x is the other operand (for the shifts and bitwise ops, ints)
for _n, _e in ENTRIES.items():
  if _n not in CALLS and "params" in _e and [p[0] for p in _e["params"]][:2] == ["self", "x"]:
    shift, bitwise = "shift" in _n, any(s in _n for s in ("and", "or", "xor"))
    CALLS[_n] = Call(U if shift or bitwise else I if _n == "idiv" else F, dict(x=1 if shift else 6 if bitwise else 2 if _n == "idiv" else 2.0),
                     raises=AssertionError if _n in ("__rlshift__", "__rrshift__") else None)
CALLS["__imatmul__"] = Call(lambda: Tensor.eye(2).contiguous().realize(), dict(x=Tensor([[1.0, 2.0], [3.0, 4.0]])))
CALLS["__matmul__"] = CALLS["__rmatmul__"] = Call(F, dict(x=F().T))
CALLS["from_uop"] = Call(kw=dict(y=(Tensor(2).uop.const_like(3) * 2) + 1))  # a const expression: CONST, MUL, ADD

def _eval_default(text:str):
  return eval(text, {"dtypes": dtypes, "inf": math.inf, "nan": math.nan})

def _fn(name:str):
  return Tensor if name == "__init__" else getattr(Tensor, name)

def _call(name:str, c:Call, how:str, defaults:dict|None=None):
  """how: "keyword" (each named argument by name), "positional" (as many as may be), "required" (only what has
  no default), "explicit" (required plus each of the reference's defaults, passed by name)."""
  params = [p for p in ENTRIES[name]["params"] if p[0] != "self"]
  kw, var = c.kw() if callable(c.kw) else dict(c.kw), c.var() if callable(c.var) else c.var
  args, kwargs = [], {}
  for n, k, d in params:
    if k in VAR: continue
    if how in ("required", "explicit") and d is not None:
      if how == "explicit": kwargs[n] = defaults[n]
      continue
    if n not in kw: continue
    positional = k != "KEYWORD_ONLY" and (how == "positional" or len(var) > 0)  # before *args, names can't be used
    if positional:
      for m, mk, md in params[len(args):params.index([n, k, d])]:  # a gap before it: the default fills it
        args.append(kw.get(m, _eval_default(md)) if mk != "KEYWORD_ONLY" else None)
      args.append(kw[n])
    else: kwargs[n] = kw[n]
  fn = _fn(name)
  Tensor.manual_seed(1234)  # the random ones draw the same numbers each call
  if c.recv is not None: return fn(c.recv(), *args, *var, **kwargs, **c.extra)
  return fn(*args, *var, **kwargs, **c.extra)

def _same(a, b, cmp:str) -> bool:
  if cmp == "type": return type(a) is type(b)
  if isinstance(a, Tensor) and isinstance(b, Tensor):
    if (a.shape, a.dtype, a.device) != (b.shape, b.dtype, b.device): return False
    if cmp == "meta" or a.uop is b.uop: return True
    if a.dtype == dtypes.bfloat16: a, b = a.float(), b.float()
    return np.array_equal(a.numpy(), b.numpy(), equal_nan=True)
  if isinstance(a, (tuple, list)): return type(a) is type(b) and len(a) == len(b) and all(_same(x, y, cmp) for x, y in zip(a, b))
  if isinstance(a, memoryview): return a.tolist() == b.tolist()
  if isinstance(a, np.ndarray): return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
  if cmp == "attrs": return type(a) is type(b) and vars(a) == vars(b)
  return a == b or type(a).__name__ == "ScheduleItem"

def _entry(name:str) -> Call:  # a method without an entry is called on F(), a staticmethod with nothing
  return CALLS.get(name, Call(F) if ENTRIES[name]["kind"] == "method" else Call())

def _skip_unsupported(name:str):
  if name == "llvm_bf16_cast" and "LLVM" not in Device.get_available_devices(): pytest.skip("no LLVM device in this build")
  if name == "half" and HALF != dtypes.float16: pytest.skip(f"no half on {Device.DEFAULT}")
  if name == "from_blob" and Device.DEFAULT in ("GPU", "CL"): pytest.skip("a cl_mem is no host pointer (test_inplace.py checks the error)")

CALLABLE = sorted(n for n, e in ENTRIES.items() if "params" in e)

@pytest.mark.parametrize("name", CALLABLE)
def test_keywords_call_as_positionals(name):
  _skip_unsupported(name)
  c = _entry(name)
  names = {p[0] for p in ENTRIES[name]["params"] if p[1] not in VAR}
  kw = c.kw() if callable(c.kw) else c.kw
  assert set(kw) <= names, f"the table names {set(kw) - names}, not parameters of the reference's {name}"
  if c.raises is not None:
    with pytest.raises(c.raises): _call(name, c, "keyword")
    return
  assert _same(_call(name, c, "keyword"), _call(name, c, "positional"), c.cmp)

@pytest.mark.parametrize("name", [n for n in CALLABLE if any(p[2] is not None for p in ENTRIES[n]["params"])])
def test_the_reference_defaults_are_ours(name):
  _skip_unsupported(name)
  c = _entry(name)
  if c.raises is not None: pytest.skip(f"{name} raises {c.raises.__name__}: no result to compare")
  defaults = {n: _eval_default(d) for n, _, d in ENTRIES[name]["params"] if d is not None}
  try: required = _call(name, c, "required")
  except Exception as e:  # clamp() with neither bound: then the explicit defaults raise the same
    with pytest.raises(type(e)): _call(name, c, "explicit", defaults)
    return
  assert _same(required, _call(name, c, "explicit", defaults), c.cmp)

# *** the *args forms: reshape(2, 3), reshape((2, 3)), reshape(shape=(2, 3)) ***

@pytest.mark.parametrize("name,args", [("reshape", (3, 2)), ("view", (3, 2)), ("permute", (1, 0)), ("flip", (0, 1)),
                                       ("expand", (2, 2, 3)), ("repeat", (2, 1))])
def test_star_args_forms(name, args):
  f = getattr(F(), name)
  a, b, c = f(*args), f(args), f(list(args))
  assert a.uop is b.uop is c.uop
  first = ENTRIES[name]["params"][1][0]
  assert f(**{first: args}).uop is a.uop
  with pytest.raises(ValueError, match="bad arg"): f(args, 1)  # a sequence, then more: the reference's argfix error

def test_brief_examples():
  x = Tensor.arange(2 * 3 * 12 * 64).reshape(2, 3, 12 * 64)
  assert x.reshape(shape=(2, -1, 12, 64)).shape == (2, 3, 12, 64)
  assert x.sum(axis=1, keepdim=True).shape == (2, 1, 768)
  assert x.max(axis=(0, 2)).shape == (3,) and x.min(axis=-1, keepdim=True).shape == (2, 3, 1)
  assert x.permute(order=(2, 0, 1)).shape == (768, 2, 3)
  assert x.unsqueeze(dim=0).squeeze(dim=0).shape == x.shape and x.cat(x, dim=1).shape == (2, 6, 768)

def test_unknown_keywords_are_type_errors():
  with pytest.raises(TypeError): F().sum(axes=1)
  with pytest.raises(TypeError): F().reshape(shap=(6,))
  with pytest.raises(TypeError): Tensor.rand(2, bogus=1)
  with pytest.raises(TypeError): Tensor.zeros(2, dtpye=dtypes.int)

# *** tinygrad.nn: the layers' constructors and the functions of nn.state, nn.optim, nn.datasets ***

NN_ENTRIES = [json.loads(l) for l in (pathlib.Path(__file__).parent / "data" / "nn_signatures.json").read_text().splitlines()]
NN_MISSING = {  # the reference's helpers that programs don't reach for here, with why
  "tinygrad.nn.state.TensorIO": "nn.state's own reader over a uint8 tensor; not exported by ours",
  "tinygrad.nn.state.accept_filename": "a decorator of the reference's loaders; ours take a path or a tensor themselves",
  "tinygrad.nn.state.ggml_data_to_tensor": "gguf_load's dequantizer, internal here",
  "tinygrad.nn.datasets.cifar": "no CIFAR loader: nn.datasets has mnist only",
  "tinygrad.nn.optim.Optimizer": "the engine's optimizers' base: it has no constructor of its own here",
}

def _nn_default(d:str|None) -> str|None:
  """A default's repr, with what only names an object made comparable: the optimizers' fused=FUSE_OPTIM (a ContextVar
  there, None here: the engine reads the knob) and tensor_type=Tensor (tinygrad.tensor.Tensor there, _C.Tensor here)."""
  if d is None: return None
  if d.startswith("<tinygrad.helpers.ContextVar object"): return "None"
  if d.startswith("<class '") and d.endswith(".Tensor'>"): return "<class Tensor>"
  return d

@pytest.mark.parametrize("entry", NN_ENTRIES, ids=[e["name"] for e in NN_ENTRIES])
def test_nn_signature_matches_the_reference(entry):
  import importlib
  modname, name = entry["name"].rsplit(".", 1)
  if entry["name"] in NN_MISSING: pytest.skip(NN_MISSING[entry["name"]])
  obj = getattr(importlib.import_module(modname), name)
  if entry["kind"] == "class": assert inspect.isclass(obj), f"{entry['name']} is no class here: isinstance would fail"
  fn = obj.__init__ if inspect.isclass(obj) else obj
  if inspect.isfunction(fn): got = [[p.name, p.kind.name, None if p.default is p.empty else repr(p.default)] for p in inspect.signature(fn).parameters.values()]
  else: got = _parse_pybind("__init__" if inspect.isclass(obj) else name, fn.__doc__ or "")
  got = _norm(got[1:] if got and got[0][0] == "self" else got)
  ref = _norm(entry["params"])
  extra = got[len(ref):]  # keywords of ours after the reference's (mnist's dir=): every reference call stays valid
  assert all(d is not None and k != "VAR_POSITIONAL" for _, k, d in extra), extra
  assert [(n, k, _nn_default(d)) for n, k, d in got[:len(ref)]] == [(n, k, _nn_default(d)) for n, k, d in ref]

def test_get_state_dict_tensor_type():
  class Box:
    def __init__(self): self.t, self.n = Tensor([1.0]), [Tensor([2.0]), "x"]
  assert list(get_state_dict(Box())) == ["t", "n.0"]
  assert get_state_dict(Box(), prefix="b.", tensor_type=str) == {"b.n.1": "x"}
  assert get_state_dict(Tensor([1.0]), "w", Tensor)["w"].tolist() == [1.0]
