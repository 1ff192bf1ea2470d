# Stand-ins for the names of tinygrad's API that have no meaning on the tinygrad.cpp engine (other devices' runtimes,
# the Python codegen's internals): they import, so programs written for tinygrad import unchanged, and using one raises
# NotImplementedError("<name>: <why> on tinygrad.cpp"). Nothing here raises at import time.
from __future__ import annotations
from typing import Any, NoReturn

def _fail(name:str, why:str) -> NoReturn: raise NotImplementedError(f"{name}: {why} on tinygrad.cpp")

def unsupported_function(name:str, why:str):
  """A function that raises when called."""
  def fxn(*args, **kwargs): _fail(name, why)
  fxn.__name__ = fxn.__qualname__ = name.rsplit(".", 1)[-1]
  fxn.__doc__ = f"Not on tinygrad.cpp: {why}."
  fxn.__unsupported__ = why  # type: ignore[attr-defined]
  return fxn

def unsupported_class(name:str, why:str, bases:tuple[type, ...]=(), **attrs):
  """A class that raises when instantiated. isinstance/issubclass answer False for the engine's objects (a test's
  `isinstance(Device[...], HCQCompiled)` skips, as on a machine without that device), and it can be subclassed."""
  def __init__(self, *args, **kwargs): _fail(name, why)
  cls = type(name.rsplit(".", 1)[-1], bases, {"__init__": __init__, "__doc__": f"Not on tinygrad.cpp: {why}.",
                                              "__unsupported__": why, **attrs})
  cls.__module__ = name.rsplit(".", 1)[0] if "." in name else cls.__module__
  return cls

class UnsupportedValue:
  """A module-level value (a PatternMatcher, a cache dict, a list the engine would read) that raises on any use:
  calling it, reading an attribute, indexing, iterating, adding, testing membership or truth."""
  def __init__(self, name:str, why:str): object.__setattr__(self, "_name_why", (name, why))
  def __repr__(self): return f"<not on tinygrad.cpp: {self._name_why[0]}>"
  def __getattr__(self, attr:str):
    if attr.startswith("__") and attr.endswith("__"): raise AttributeError(attr)  # copy, pickle and friends probe these
    _fail(*self._name_why)
  def _use(self, *args, **kwargs) -> Any: _fail(*self._name_why)
  __call__ = __getitem__ = __setitem__ = __delitem__ = __iter__ = __len__ = __contains__ = __bool__ = _use
  __add__ = __radd__ = __or__ = __ror__ = __setattr__ = _use

def unsupported_module_getattr(module:str, why:str):
  """A module's __getattr__ for generated bindings (autogen's ctypes wrappers of driver headers): every name
  imports, as a value that raises when used."""
  def __getattr__(attr:str):
    if attr.startswith("__") and attr.endswith("__"): raise AttributeError(f"module {module!r} has no attribute {attr!r}")
    return UnsupportedValue(f"{module}.{attr}", why)
  return __getattr__
