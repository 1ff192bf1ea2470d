# tinygrad.engine.memory: the engine's memory planner (src/tg/schedule/memory.h) runs inside Tensor.schedule_with_vars
from tinygrad._unsupported import unsupported_function

def memory_planner(schedule): return schedule  # NOTE: Tensor.schedule_with_vars' schedule is already planned
_internal_memory_planner = unsupported_function("tinygrad.engine.memory._internal_memory_planner", "the memory planner "
                                                "runs over the engine's buffers (src/tg/schedule/memory.h), not Python's")
