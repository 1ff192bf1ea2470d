# tinygrad.engine.schedule: ScheduleItem is the engine's (src/tg/schedule/schedule.h): ast, bufs, metadata
from tinygrad._C import ScheduleItem  # noqa: F401

def create_schedule_with_vars(*args, **kwargs):
  raise NotImplementedError("create_schedule_with_vars: use Tensor.schedule_with_vars, which kernelizes and schedules "
                            "in the C++ engine")
