# tinygrad.engine.realize: running a schedule (src/tg/engine/realize.h). The engine lowers and runs each
# ScheduleItem itself; lower_schedule hands out one ExecItem per item, whose run() runs that item.
from __future__ import annotations
from typing import Iterator
from tinygrad import _C
from tinygrad.engine.schedule import ScheduleItem

def run_schedule(schedule:list[ScheduleItem], var_vals:dict[str, int]|None=None, do_update_stats=True):
  """Runs the kernels of a schedule (Tensor.schedule_with_vars) in order, with the bound Variables' values."""
  _C.run_schedule(list(schedule), {k if isinstance(k, str) else k.arg[0]: v for k,v in (var_vals or {}).items()}, do_update_stats)

class ExecItem:
  """One ScheduleItem, lowered and run by the engine when run() is called."""
  def __init__(self, si:ScheduleItem): self.si, self.bufs, self.metadata = si, si.bufs, si.metadata
  def run(self, var_vals:dict[str, int]|None=None, wait=False, jit=False, do_update_stats=True):
    run_schedule([self.si], var_vals, do_update_stats)

def lower_schedule(schedule:list[ScheduleItem]) -> Iterator[ExecItem]:
  while len(schedule): yield ExecItem(schedule.pop(0))

class CompiledRunner:
  def __init__(self, *args, **kwargs):
    raise NotImplementedError("CompiledRunner: the C++ engine compiles and runs kernels itself (src/tg/engine/realize.h); "
                              "use Tensor.schedule + run_schedule")

def get_kernel(*args, **kwargs):
  raise NotImplementedError("get_kernel: the engine picks each kernel's opts itself (hand-coded, BEAM=, NOOPT=)")
