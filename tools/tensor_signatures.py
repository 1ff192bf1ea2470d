#!/usr/bin/env python3
"""Writes the signatures of tinygrad's public Tensor API, read with `inspect` from a tinygrad checkout, as data.

  PYTHONPATH=REF_CHECKOUT python3 tools/tensor_signatures.py > tests/python/data/tensor_signatures.json
  PYTHONPATH=REF_CHECKOUT python3 tools/tensor_signatures.py --nn > tests/python/data/nn_signatures.json

One JSON object per line, for every public name of the reference's Tensor (its own and its MathTrait base's, the
operator dunders included, `_private` names left out): its kind and, for what is callable, its parameters in order,
each as [name, kind, default], kind being inspect's (POSITIONAL_OR_KEYWORD, VAR_POSITIONAL, KEYWORD_ONLY,
VAR_KEYWORD ...) and default the repr of the default value (null: no default). With --nn: the functions and classes
(their constructors, without self) that tinygrad.nn, nn.state, nn.optim and nn.datasets define, named by module.
tests/python/test_signatures.py holds ours to both. Run with TRACEMETA=0 (set here before tinygrad is imported):
with it, the reference replaces each Tensor method by a metadata wrapper, which turns its staticmethods into plain
functions.
"""
import importlib, inspect, json, os, sys

def params_of(fn, drop_self=False) -> list[list]:
  ps = [[p.name, p.kind.name, None if p.default is p.empty else repr(p.default)] for p in inspect.signature(fn).parameters.values()]
  return ps[1:] if drop_self and ps and ps[0][0] == "self" else ps

def entry(owner:type, name:str) -> dict|None:
  raw = inspect.getattr_static(owner, name)
  if isinstance(raw, property):
    return {"name": name, "kind": "property", "settable": raw.fset is not None}
  if isinstance(raw, staticmethod): kind, fn = "staticmethod", raw.__func__
  elif isinstance(raw, classmethod): kind, fn = "classmethod", raw.__func__
  elif inspect.isclass(raw): kind, fn = "class", raw  # Tensor.train: a context manager class
  elif inspect.isfunction(raw): kind, fn = "method", raw
  elif type(raw).__name__ == "member_descriptor": return {"name": name, "kind": "attribute"}  # __slots__: grad, uop ...
  elif isinstance(raw, (bool, int, float, str)): return {"name": name, "kind": "attribute", "value": repr(raw)}
  else: return None
  return {"name": name, "kind": kind, "params": params_of(fn)}

def names(cls:type) -> list[str]:
  seen: dict[str, None] = {}
  for c in cls.__mro__[:-1]:  # Tensor and MathTrait, not object
    for k, v in c.__dict__.items():
      dunder = k.startswith("__") and k.endswith("__")
      if k.startswith("_") and not (dunder and (inspect.isfunction(v) or k == "__init__")): continue
      if k in ("__del__", "__init_subclass__", "__class_getitem__"): continue
      seen.setdefault(k)
  return sorted(seen)

NN_MODULES = ("tinygrad.nn", "tinygrad.nn.state", "tinygrad.nn.optim", "tinygrad.nn.datasets")

def nn_entries() -> list[dict]:
  out = []
  for modname in NN_MODULES:
    mod = importlib.import_module(modname)
    for k, v in vars(mod).items():
      if k.startswith("_") or not callable(v) or getattr(v, "__module__", None) != modname: continue
      kind = "class" if inspect.isclass(v) else "function"
      out.append({"name": f"{modname}.{k}", "kind": kind, "params": params_of(v.__init__ if kind == "class" else v, drop_self=True)})
  return sorted(out, key=lambda e: e["name"])

def main() -> None:
  os.environ["TRACEMETA"] = "0"
  if "--nn" in sys.argv: out = nn_entries()
  else:
    from tinygrad.tensor import Tensor
    out = [e for n in names(Tensor) if (e := entry(Tensor, n)) is not None]
  sys.stdout.write("".join(json.dumps(e, sort_keys=True) + "\n" for e in out))

if __name__ == "__main__": main()
