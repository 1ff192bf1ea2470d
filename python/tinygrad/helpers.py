# tinygrad.helpers: the reference's small helpers, knobs (ContextVar/Context over the engine's table), a disk cache
from __future__ import annotations
import os, dataclasses, functools, operator, contextlib, re, platform, string, ctypes, sqlite3, pickle, hashlib
from typing import ClassVar, Iterable, TypeVar, Union, Sequence, Any
from tinygrad import _C
from tinygrad._C import GlobalCounters  # noqa: F401

T = TypeVar("T")
OSX = platform.system() == "Darwin"
CI = os.getenv("CI", "") != ""

def prod(x:Iterable[T]) -> Union[T,int]: return functools.reduce(operator.mul, x, 1)
def dedup(x:Iterable[T]): return list(dict.fromkeys(x))   # retains list order
def argfix(*x):
  if x and x[0].__class__ in (tuple, list):
    if len(x) != 1: raise ValueError(f"bad arg {x}")
    return tuple(x[0])
  return x
def argsort(x): return type(x)(sorted(range(len(x)), key=x.__getitem__))
def all_same(items:Union[tuple[T, ...], list[T]]): return all(x == items[0] for x in items)
def all_int(t: Sequence[Any]) -> bool: return all(isinstance(s, int) for s in t)
def colored(st, color:str|None, background=False):
  if color is None: return st
  return f"\u001b[{10*background+60*(color.upper() == color)+30+['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'].index(color.lower())}m{st}\u001b[0m"  # noqa: E501
def ansistrip(s:str): return re.sub('\x1b\\[(K|.*?m)', '', s)
def ansilen(s:str): return len(ansistrip(s))
def make_tuple(x:Union[int, Sequence[int]], cnt:int) -> tuple[int, ...]: return (x,)*cnt if isinstance(x, int) else tuple(x)
def flatten(l:Iterable[Iterable[T]]): return [item for sublist in l for item in sublist]
def ceildiv(num, amt): return int(ret) if isinstance((ret:=-(num//-amt)), float) else ret
def round_up(num:int, amt:int) -> int: return (num+amt-1)//amt * amt
def cdiv(x:int, y:int) -> int: return abs(x)//abs(y)*(1,-1)[x*y<0] if y != 0 else 0
def cmod(x:int, y:int) -> int: return x-cdiv(x,y)*y
def unwrap(x:T|None) -> T:
  assert x is not None
  return x
def to_function_name(s:str): return ''.join([c if c in (string.ascii_letters+string.digits+'_') else f'{ord(c):02X}' for c in ansistrip(s)])
def getenv(key:str, default=0): return type(default)(os.getenv(key, default))
def fully_flatten(l):
  if not (hasattr(l, "__len__") and hasattr(l, "__getitem__") and not isinstance(l, str)): return [l]
  if hasattr(l, "shape") and l.shape == (): return [l[()]]
  return [y for x in l for y in fully_flatten(x)]
def strip_parens(s:str): return s[1:-1] if s[:1] == "(" and s[-1:] == ")" and s[1:-1].find("(") <= s[1:-1].find(")") else s
def merge_dicts(ds:Iterable[dict]) -> dict:
  out:dict = {}
  for d in ds:
    for k, v in d.items():
      if k in out and out[k] != v: raise AssertionError(f"cannot merge, {k} has {out[k]!r} and {v!r}")
      out[k] = v
  return out
def partition(itr:Iterable[T], fxn) -> tuple[list[T], list[T]]:
  yes:list[T] = []
  no:list[T] = []
  for x in itr: (yes if fxn(x) else no).append(x)
  return yes, no
def get_single_element(x:list[T]) -> T:
  assert len(x) == 1, f"{x} must have exactly one element"
  return x[0]
def getbits(value:int, start:int, end:int) -> int: return (value >> start) & ((1 << (end - start + 1)) - 1)  # bits start..end
def get_child(obj, key:str):
  for k in key.split("."):
    obj = obj[int(k)] if k.isnumeric() else obj[k] if isinstance(obj, dict) else getattr(obj, k)
  return obj
def polyN(x, p:list[float]):  # Horner: p[0]*x**(n-1) + ... + p[-1]
  acc = 0.0
  for c in p: acc = acc * x + c
  return acc
def next_power2(x:int) -> int: return 1 if x == 0 else 1 << (x - 1).bit_length()
def time_to_str(t:float, w=8) -> str:
  # seconds above 10 s, milliseconds above 10 ms, else microseconds; "s " keeps every unit two characters wide
  scale, unit = (1, "s ") if t > 10 else (1e3, "ms") if t > 1e-2 else (1e6, "us")
  return f"{t * scale:{w}.2f}{unit}"
def colorize_float(x:float): return colored(f"{x:7.2f}x", "green" if x < 0.75 else "red" if x > 1.15 else "yellow")
def temp(x:str, append_user:bool=False) -> str:
  import tempfile, getpass
  return str(__import__("pathlib").Path(tempfile.gettempdir()) / (f"{x}.{getpass.getuser()}" if append_user else x))

# Metadata: which Tensor method made a UOp (its name; backward for the nodes of its gradient), as the engine records it;
# UOp.metadata, ScheduleItem.metadata and tinygrad.tensor._METADATA hold these. Equal by value, hashed by name.
@dataclasses.dataclass(frozen=True)
class Metadata:
  name: str
  caller: str
  backward: bool = False
  def __hash__(self): return hash(self.name)
  def __str__(self): return f"{self.name} bw" if self.backward else self.name
  def __repr__(self): return f"{self} - {self.caller}" if self.caller else str(self)

# Timing: prints how long the block took (in ms); on_exit can append to the line
class Timing(contextlib.ContextDecorator):
  def __init__(self, prefix="", on_exit=None, enabled=True): self.prefix, self.on_exit, self.enabled = prefix, on_exit, enabled
  def __enter__(self): self.st = __import__("time").perf_counter_ns()
  def __exit__(self, *exc):
    self.et = __import__("time").perf_counter_ns() - self.st
    if self.enabled: print(f"{self.prefix}{self.et*1e-6:6.2f} ms" + (self.on_exit(self.et) if self.on_exit else ""))

# fetch: downloads url once into the cache folder (CACHEDB's neighbour) and returns the local path
def fetch(url:str, name=None, subdir:str|None=None, gunzip:bool=False, allow_caching=not os.getenv("DISABLE_HTTP_CACHE")):
  import pathlib, hashlib, urllib.request, gzip, shutil, tempfile
  if url.startswith(("/", ".")): return pathlib.Path(url)
  base = pathlib.Path(os.getenv("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "tinygrad" / "downloads"
  fp = (base / (subdir or "") / (name if name is not None else hashlib.md5(url.encode()).hexdigest() + (".gunzip" if gunzip else "")))
  if not fp.is_file() or not allow_caching:
    fp.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url, timeout=10) as r, tempfile.NamedTemporaryFile(dir=fp.parent, delete=False) as f:
      shutil.copyfileobj(gzip.GzipFile(fileobj=r) if gunzip else r, f)
    pathlib.Path(f.name).rename(fp)
  return fp

# ContextVar and Context: a name among the engine's knobs (src/tg/helpers/knobs.h, read from the environment once)
# reads and sets the engine's value, and Context overrides it in the engine for the scope, on this thread and on the
# engine's compile threads; the process environment is never written. Other names are Python's alone.
_KNOBS = {name: (is_int, default) for name, is_int, default, _, _ in _C.knob_table()}
def _knob_text(k, v): return str(int(v) if isinstance(v, bool) else v)

class ContextVar:
  _cache: ClassVar[dict[str, ContextVar]] = {}
  key: str
  # unsupported: why the engine has no such feature; setting the variable to anything but its default then raises
  # NotImplementedError (reading it, and setting it back to the default, are fine)
  def __init__(self, key, default_value, unsupported:str|None=None):
    if key in ContextVar._cache: raise RuntimeError(f"attempt to recreate ContextVar {key}")
    ContextVar._cache[key] = self
    self.key, self.default, self.unsupported = key, default_value, unsupported
    if key not in _KNOBS: self._value = getenv(key, default_value)
  @property
  def value(self): return _C.knob_value(self.key) if self.key in _KNOBS else self._value
  @value.setter
  def value(self, v):
    self._check(v)
    if self.key in _KNOBS: _C.set_knob(self.key, _knob_text(self.key, v))
    else: self._value = v
  def _check(self, v):
    if self.unsupported is not None and v != self.default:
      raise NotImplementedError(f"{self.key}={v}: {self.unsupported} on tinygrad.cpp")
  def __bool__(self): return bool(self.value)
  def __ge__(self, x): return self.value >= x
  def __gt__(self, x): return self.value > x
  def __lt__(self, x): return self.value < x
  def __le__(self, x): return self.value <= x
  def __repr__(self): return f"ContextVar({self.key!r}, {self.value!r})"

class Context(contextlib.ContextDecorator):
  def __init__(self, **kwargs): self.kwargs = kwargs
  def __enter__(self):
    for k,v in self.kwargs.items():
      if k not in ContextVar._cache and k not in _KNOBS: raise KeyError(k)
      if k in ContextVar._cache: ContextVar._cache[k]._check(v)
    self.engine = _C.KnobContext({k:_knob_text(k, v) for k,v in self.kwargs.items() if k in _KNOBS})
    self.engine.enter()  # first: a bad value raises before anything changed
    self.old_py = {k:ContextVar._cache[k]._value for k in self.kwargs if k not in _KNOBS}
    for k,v in self.kwargs.items():
      if k not in _KNOBS: ContextVar._cache[k]._value = v
  def __exit__(self, *args):
    self.engine.exit()
    for k,v in self.old_py.items(): ContextVar._cache[k]._value = v

DEBUG, BEAM, NOOPT = ContextVar("DEBUG", 0), ContextVar("BEAM", 0), ContextVar("NOOPT", 0)
IMAGE = ContextVar("IMAGE", 0, unsupported="image dtypes (QCOM's textures) are not an engine dtype")
JIT = ContextVar("JIT", 1)
TRACEMETA, TRANSCENDENTAL, DEVECTORIZE = ContextVar("TRACEMETA", 1), ContextVar("TRANSCENDENTAL", 1), ContextVar("DEVECTORIZE", 1)
CACHELEVEL, DISABLE_COMPILER_CACHE, LRU = ContextVar("CACHELEVEL", 2), ContextVar("DISABLE_COMPILER_CACHE", 0), ContextVar("LRU", 1)
SPLIT_REDUCEOP, NO_MEMORY_PLANNER = ContextVar("SPLIT_REDUCEOP", 1), ContextVar("NO_MEMORY_PLANNER", 0)
FUSE_ARANGE, FUSE_CONV_BW = ContextVar("FUSE_ARANGE", 1), ContextVar("FUSE_CONV_BW", 0)
WINO = ContextVar("WINO", 0)
AMX = ContextVar("AMX", 0, unsupported="Apple's AMX tensor cores are not a CPU target of the engine")
RING = ContextVar("RING", 1)

# a small progress bar with tinygrad's tqdm interface (iterate, set_description, update), written to stderr
class tqdm:
  def __init__(self, iterable=None, desc:str='', disable:bool=False, unit:str='it', total:int|None=None):
    self.iterable, self.desc, self.disable, self.unit = iterable, desc, disable, unit
    self.total = total if total is not None else (len(iterable) if hasattr(iterable, "__len__") else None)
    self.n, self.st = 0, __import__("time").perf_counter()
  def __iter__(self):
    for x in self.iterable:
      yield x
      self.update(1)
    self.close()
  def set_description(self, desc:str): self.desc = desc; self._print()
  def update(self, n:int=1): self.n += n; self._print()
  def _print(self):
    if self.disable: return
    import sys, time
    rate = self.n / max(time.perf_counter() - self.st, 1e-9)
    sys.stderr.write(f"\r{self.desc + ': ' if self.desc else ''}{self.n}/{self.total if self.total is not None else '?'} [{rate:.2f} {self.unit}/s]")
    sys.stderr.flush()
  def close(self):
    if not self.disable: __import__("sys").stderr.write("\n")

def trange(n:int, **kwargs) -> tqdm: return tqdm(range(n), total=n, **kwargs)

# Profiling: cProfile over the block; prints the top `frac` of the functions by `sort` (times scaled by 1/ts, in ms)
# and their main caller, or also dumps the stats to fn
class Profiling(contextlib.ContextDecorator):
  def __init__(self, enabled=True, sort='cumtime', frac=0.2, fn=None, ts=1):
    self.enabled, self.sort, self.frac, self.fn, self.ms = enabled, sort, frac, fn, 1e3/ts
  def __enter__(self):
    import cProfile
    self.pr = cProfile.Profile()
    if self.enabled: self.pr.enable()
  def __exit__(self, *exc):
    if not self.enabled: return
    self.pr.disable()
    if self.fn: self.pr.dump_stats(self.fn)
    import pstats
    stats = pstats.Stats(self.pr).strip_dirs().sort_stats(self.sort)
    def where(f): return f"{f[0]}:{f[1]}({f[2]})" if f[0] != "~" else f[2]
    for f in stats.fcn_list[:int(len(stats.fcn_list) * self.frac)]:  # type: ignore[attr-defined]
      _, ncalls, tottime, cumtime, callers = stats.stats[f]  # type: ignore[attr-defined]
      top = max(callers.items(), key=lambda c: c[1][2], default=None)
      caller = colored(f"<- {top[1][2] / tottime * 100:3.0f}% {where(top[0])}", "BLACK") if top and tottime else ""
      print(f"n:{ncalls:8d}  tm:{tottime*self.ms:7.2f}ms  tot:{cumtime*self.ms:7.2f}ms", colored(where(f).ljust(50), "yellow"), caller)

# *** ctypes and memoryviews (the reference's runtimes use them; they work on any buffer here) ***

def mv_address(mv) -> int: return ctypes.addressof(ctypes.c_char.from_buffer(mv))  # a writable buffer's address
def to_mv(ptr, sz:int) -> memoryview:  # sz bytes at ptr: an address, or a ctypes pointer or array
  addr = ptr if isinstance(ptr, int) else ctypes.cast(ptr, ctypes.c_void_p).value
  return memoryview((ctypes.c_uint8 * sz).from_address(addr)).cast("B")
def from_mv(mv, to_type=ctypes.c_char):  # a ctypes array of to_type over the buffer's memory (no copy)
  return (to_type * (mv.nbytes // ctypes.sizeof(to_type))).from_address(mv_address(mv))
def flat_mv(mv:memoryview) -> memoryview: return mv if len(mv) == 0 else mv.cast("B", shape=(mv.nbytes,))
def to_char_p_p(options:list[bytes], to_type=ctypes.c_char):  # a C array of pointers to the NUL-terminated strings
  return (ctypes.POINTER(to_type) * len(options))(*[ctypes.cast(ctypes.create_string_buffer(o), ctypes.POINTER(to_type)) for o in options])
def init_c_struct_t(fields:tuple[tuple[str, Any], ...]):  # a packed ctypes Structure with these fields
  return type("CStruct", (ctypes.Structure,), {"_pack_": 1, "_fields_": list(fields)})
def init_c_var(ctypes_var, creat_cb): return (creat_cb(ctypes_var), ctypes_var)[1]  # fills the var through creat_cb

# *** the disk cache of Python values: sqlite, as the reference's (the engine keeps compiled kernels in its own files) ***

CACHEDB: str = getenv("CACHEDB", os.path.join(os.getenv("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tinygrad.cpp", "cache.db"))
VERSION = 20  # the tables' suffix: a new layout of the cached values gets new tables
_db_connection = None
def db_connection():
  global _db_connection
  if _db_connection is None:
    os.makedirs(os.path.dirname(CACHEDB), exist_ok=True)
    _db_connection = sqlite3.connect(CACHEDB, timeout=60, isolation_level="IMMEDIATE")
    with contextlib.suppress(sqlite3.OperationalError): _db_connection.execute("PRAGMA journal_mode=WAL").fetchone()
  return _db_connection

def diskcache_clear():
  cur = db_connection().cursor()
  for (name,) in cur.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall(): cur.execute(f"DROP TABLE IF EXISTS '{name}'")
  db_connection().commit()
  _db_tables.clear()

def _key_dict(key) -> dict: return key if isinstance(key, dict) else {"key": key}
def diskcache_get(table:str, key) -> Any:
  if CACHELEVEL < 1: return None
  k = _key_dict(key)
  try: row = db_connection().execute(f"SELECT val FROM '{table}_{VERSION}' WHERE {' AND '.join(f'{c}=?' for c in k)}",
                                     tuple(k.values())).fetchone()
  except sqlite3.OperationalError: return None  # no such table yet
  return pickle.loads(row[0]) if row is not None else None

_db_tables: set[str] = set()
def diskcache_put(table:str, key, val, prepickled=False):
  if CACHELEVEL < 1: return val
  k = _key_dict(key)
  sql_type = {str: "text", bool: "integer", int: "integer", float: "numeric", bytes: "blob"}
  if table not in _db_tables:
    cols = ", ".join(f"{c} {sql_type[type(v)]} NOT NULL" for c, v in k.items())
    db_connection().execute(f"CREATE TABLE IF NOT EXISTS '{table}_{VERSION}' ({cols}, val blob, PRIMARY KEY ({', '.join(k)}))")
    _db_tables.add(table)
  db_connection().execute(f"REPLACE INTO '{table}_{VERSION}' ({', '.join(k)}, val) VALUES ({', '.join('?' * (len(k) + 1))})",
                          tuple(k.values()) + (val if prepickled else pickle.dumps(val),))
  db_connection().commit()
  return val

def diskcache(func):
  """Caches func's results on disk, keyed by a hash of its pickled arguments."""
  def wrapper(*args, **kwargs) -> Any:
    key = hashlib.sha256(pickle.dumps((args, kwargs))).hexdigest()
    if (ret := diskcache_get(f"cache_{func.__name__}", key)) is not None: return ret
    return diskcache_put(f"cache_{func.__name__}", key, func(*args, **kwargs))
  return functools.wraps(func)(wrapper)
