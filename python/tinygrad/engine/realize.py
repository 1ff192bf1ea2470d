# tinygrad.engine.realize: running a schedule (src/tg/engine/realize.h). The engine lowers and runs each
# ScheduleItem itself; lower_schedule hands out one ExecItem per item, whose run() runs that item.
from __future__ import annotations
import time
from typing import Iterator, Optional
from tinygrad import _C
from tinygrad.device import Device, Buffer
from tinygrad.engine.schedule import ScheduleItem
from tinygrad.renderer import Estimates, ProgramSpec  # noqa: F401
from tinygrad.uop.ops import UOp
from tinygrad._unsupported import UnsupportedValue, unsupported_function

def run_schedule(schedule:list[ScheduleItem], var_vals:dict[str, int]|None=None, do_update_stats=True):
  """Runs the kernels of a schedule (Tensor.schedule_with_vars) in order, with the bound Variables' values."""
  _C.run_schedule(list(schedule), {k if isinstance(k, str) else k.arg[0]: v for k,v in (var_vals or {}).items()}, do_update_stats)

class ExecItem:
  """One ScheduleItem, lowered and run by the engine when run() is called."""
  def __init__(self, si:ScheduleItem): self.si, self.bufs, self.metadata = si, si.bufs, si.metadata
  def run(self, var_vals:dict[str, int]|None=None, wait=False, jit=False, do_update_stats=True):
    run_schedule([self.si], var_vals, do_update_stats)

def lower_schedule_item(si:ScheduleItem) -> ExecItem: return ExecItem(si)
def lower_schedule(schedule:list[ScheduleItem]) -> Iterator[tuple[ScheduleItem, ExecItem]]:
  while len(schedule):
    si = schedule.pop(0)
    yield (si, ExecItem(si))

# *** runners: something that runs on Buffers. The engine's own runners (compiled kernels, copies) are C++ ***

class Runner:
  def __init__(self, display_name:str, device:str, estimates=Estimates()):
    self.first_run, self.display_name, self.device, self.estimates = True, display_name, device, estimates
  @property
  def dev(self): return Device[self.device]
  def exec(self, rawbufs:list[Buffer], var_vals:Optional[dict[UOp, int]]=None) -> Optional[float]:
    return self(rawbufs, {} if var_vals is None else var_vals)
  def __call__(self, rawbufs:list[Buffer], var_vals:dict[UOp, int], wait=False) -> Optional[float]:
    raise NotImplementedError("override this")

class BufferCopy(Runner):
  """Copies rawbufs[1] into rawbufs[0] (any two devices, through the host); with wait, returns the seconds it took."""
  def __init__(self, total_sz:int, dest_device:str, src_device:str):
    size = f"{total_sz/1e6:7.2f}M" if total_sz >= 1e6 else f"{total_sz:8d}"
    name = f"{type(self).__name__[6:].lower()} {size}, {dest_device[:7]:>7s} <- {src_device[:7]:7s}"
    super().__init__(name, dest_device, Estimates(lds=total_sz, mem=total_sz))
  def copy(self, dest:Buffer, src:Buffer): dest.ensure_allocated().copyin(src.as_buffer())
  def __call__(self, rawbufs:list[Buffer], var_vals:dict[UOp, int], wait=False):
    dest, src = rawbufs[0:2]
    assert dest.size == src.size and dest.dtype == src.dtype, f"buffer copy mismatch, {dest.size} != {src.size}, {dest.dtype} != {src.dtype}"
    st = time.perf_counter()
    self.copy(dest, src)
    if wait:
      Device[dest.device].synchronize()
      return time.perf_counter() - st
    return None
class CapturedRunner(Runner):
  """What a TinyJit captured (its jit_cache's .prg): a kernel or copy the engine runs itself; its name and device."""
class BufferXfer(BufferCopy): pass  # NOTE: a device-to-device transfer is the engine's choice; from Python it is a copy

_ENGINE_RUNS = "the engine compiles and runs kernels itself (src/tg/engine/realize.h); use Tensor.schedule + run_schedule"
class CompiledRunner(Runner):
  """A ProgramSpec's source compiled by its device's compiler and loaded (the engine's CompiledRunner); called with
  the Buffers its DEFINE_GLOBALs name, in order, and the values of its Variables."""
  def __init__(self, p:ProgramSpec, precompiled:Optional[bytes]=None, prg=None):
    if precompiled is not None or prg is not None:
      raise NotImplementedError("CompiledRunner: a precompiled library or program is not supported on tinygrad.cpp (the "
                                "engine compiles the ProgramSpec's source itself)")
    self.p = p
    self._prg = _C.CompiledProgram(p.function_name, p.src, p.device, p.ast, p.uops or [], p.global_size, p.local_size)
    self.lib = self._prg.lib
    super().__init__(p.name, p.device, p.estimates)
  def __reduce__(self): return self.__class__, (self.p,)
  def __call__(self, rawbufs:list[Buffer], var_vals:Optional[dict[UOp, int]]=None, wait=False) -> Optional[float]:
    vals = {k if isinstance(k, str) else k.arg[0]: v for k,v in (var_vals or {}).items()}
    return self._prg(list(rawbufs), vals, wait)
get_runner = unsupported_function("tinygrad.engine.realize.get_runner", _ENGINE_RUNS)
def get_kernel(renderer, ast:UOp):
  """A Kernel of ast with the engine's default opts (none under NOOPT=1, else the hand-coded ones; BEAM search is the
  engine's own when it runs the kernel)."""
  from tinygrad.codegen.kernel import Kernel
  k = Kernel(ast, opts=renderer)
  k._k.apply_default_opts()
  return k
method_cache = UnsupportedValue("tinygrad.engine.realize.method_cache", "the method cache is the engine's "
                                "(src/tg/engine/realize.h), keyed on the kernel's AST")
capturing = UnsupportedValue("tinygrad.engine.realize.capturing", "TinyJit captures inside the engine (CapturedJit, "
                             "src/tg/engine/jit.h)")
