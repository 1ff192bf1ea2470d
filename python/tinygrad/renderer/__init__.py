# tinygrad.renderer: each device's renderer is the engine's (src/tg/renderer/), read as Device[...].renderer; beside it
# the reference's records of kernel opts (Opt, OptOps), of a program (ProgramSpec) and of its cost (Estimates)
from __future__ import annotations
import functools, dataclasses
from enum import Enum, auto
from dataclasses import dataclass, field
from typing import Optional
from tinygrad._C import Renderer, TensorCore  # noqa: F401
from tinygrad.helpers import to_function_name, dedup, prod
from tinygrad.uop.ops import Ops, UOp, GroupOp, sint, ssimplify, sym_infer

class OptOps(Enum):
  TC = auto(); UPCAST = auto(); UNROLL = auto(); LOCAL = auto()  # noqa: E702
  GROUP = auto(); GROUPTOP = auto(); NOLOCALS = auto(); PADTO = auto(); SWAP = auto()  # noqa: E702
  def __lt__(self, x:OptOps): return self.value < x.value

@dataclass(frozen=True, order=True)
class Opt:
  op: OptOps
  axis: Optional[int] = None
  arg: Optional[int | tuple] = None
  def __repr__(self): return f"Opt(op={self.op}, axis={self.axis}, arg={self.arg})"

@dataclass(frozen=True)
class Estimates:
  ops: sint = 0  # FLOPs
  lds: sint = 0  # bytes loaded and stored
  mem: sint = 0  # bytes of memory touched, each byte once
  def __add__(self, o:Estimates): return Estimates(self.ops + o.ops, self.lds + o.lds, self.mem + o.mem)
  def simplify(self): return Estimates(ssimplify(self.ops), ssimplify(self.lds), ssimplify(self.mem))
  @staticmethod
  def from_uops(uops:list[UOp], ignore_indexing=False) -> Estimates:
    """FLOPs and bytes of a linearized program: each op counted once per iteration of the loops around it."""
    skip: set[UOp] = set()  # the index math of loads, stores and ifs, when ignored
    if ignore_indexing:
      for u in uops:
        if u.op in {Ops.LOAD, Ops.STORE, Ops.IF}: skip.update(u.src[0].toposort())
        if u.op in {Ops.LOAD, Ops.STORE} and len(u.src) > 2: skip.update(u.src[2].toposort())
    flops: sint = 0
    lds: sint = 0
    mult: sint = 1
    outer: list[sint] = []
    for u in uops:
      if u.op is Ops.RANGE:
        outer.append(mult)
        mult = ssimplify(mult * ssimplify(u.src[0]))
        if isinstance(mult, UOp): mult = mult.substitute({x: x.const_like(0) for x in mult.toposort() if x.op is Ops.SPECIAL})
      elif u.op is Ops.ENDRANGE: mult = outer.pop()
      elif u.op is Ops.SPECIAL: mult = mult * u.arg[1]  # a launch dimension: it has no end
      elif u.op is Ops.LOAD: lds = lds + u.dtype.itemsize * mult
      elif u.op is Ops.STORE: lds = lds + u.src[1].dtype.itemsize * mult
      elif u.op in GroupOp.ALU and u not in skip: flops = flops + mult * (2 if u.op is Ops.MULACC else 1) * u.dtype.count
      elif u.op is Ops.WMMA and u not in skip: flops = flops + 2 * prod(u.arg[1]) // u.arg[5] * mult
    return Estimates(flops, lds, lds)  # NOTE: mem is lds, an upper bound

@dataclass
class ProgramSpec:
  """A rendered kernel: its source, the AST it came from and, when given its uops, what it reads, writes and launches."""
  name: str
  src: str
  device: str
  ast: UOp
  uops: Optional[list[UOp]] = None
  applied_opts: Optional[list[Opt]] = None
  mem_estimate: sint = 0
  global_size: Optional[list[int]] = None
  local_size: Optional[list[int]] = None
  vars: list[UOp] = field(default_factory=list)
  globals: list[int] = field(default_factory=list)
  outs: list[int] = field(default_factory=list)
  ins: list[int] = field(default_factory=list)
  _ran_post_init: bool = False  # dataclasses.replace copies the fields filled in below
  def __post_init__(self):
    if self._ran_post_init or self.uops is None: return
    for u in self.uops:
      if u.op is Ops.DEFINE_VAR: self.vars.append(u)
      elif u.op is Ops.DEFINE_GLOBAL: self.globals.append(u.arg)
      elif u.op in {Ops.STORE, Ops.LOAD}:
        (self.outs if u.op is Ops.STORE else self.ins).extend(x.arg for x in u.src[0].toposort() if x.op is Ops.DEFINE_GLOBAL)
      elif u.op is Ops.SPECIAL:  # gidx/lidx fill global_size/local_size (set them to [1,1,1] first); idx means no locals
        if u.arg[0][0] == "i": self.local_size = None
        if (sizes := self.local_size if u.arg[0][0] == "l" else self.global_size) is not None: sizes[int(u.arg[0][-1])] = u.arg[1]
    self.vars, self.outs, self.ins = sorted(self.vars, key=lambda v: v.arg), sorted(dedup(self.outs)), sorted(dedup(self.ins))
    self._ran_post_init = True
  @functools.cached_property
  def estimates(self) -> Estimates:
    est = Estimates() if self.uops is None else Estimates.from_uops(self.uops, ignore_indexing=True)
    return dataclasses.replace(est, mem=self.mem_estimate)
  @functools.cached_property
  def function_name(self) -> str: return to_function_name(self.name)
  def launch_dims(self, var_vals:dict[UOp, int]):
    return tuple(None if sz is None else [sym_infer(s, var_vals) for s in sz] for sz in (self.global_size, self.local_size))

# *** the reference's renderer classes, as views of the engine's renderers ***

class _DeviceRendererMeta(type):
  # isinstance(r, OpenCLRenderer) asks which device the engine's renderer r renders for
  def __instancecheck__(cls, x) -> bool: return isinstance(x, Renderer) and x.device.split(":")[0] in cls.devices
  def __call__(cls, *args, **kwargs):
    if cls.opens is None: raise NotImplementedError(f"{cls.__name__}: the engine's renderers are read as Device[...].renderer on tinygrad.cpp")
    from tinygrad.device import Device
    return Device[cls.opens].renderer
def renderer_class(name:str, devices:tuple[str, ...], opens:str|None):
  """A class whose instances are the engine's renderers for these devices; calling it gives the device `opens`' renderer."""
  return _DeviceRendererMeta(name, (), {"devices": devices, "opens": opens, "__doc__": f"the engine's renderer for {', '.join(devices)}"})
