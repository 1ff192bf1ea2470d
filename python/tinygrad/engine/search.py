# tinygrad.engine.search: BEAM search runs inside the engine (src/tg/engine/search.h), chosen with BEAM=<width>;
# `actions` lists the opts it tries (a copy of the engine's table), get_test_global_size is its launch-size shrinking
from tinygrad import _C
from tinygrad.helpers import prod
from tinygrad.renderer import Opt, OptOps
from tinygrad.uop.ops import sym_infer
from tinygrad._unsupported import unsupported_function

def _knob(name:str) -> int: return _C.knob_value(name)
actions = [Opt(OptOps.UPCAST, axis, amt) for amt in [0, 2, 3, 4, 5, 7] for axis in range(6)]
actions += [Opt(OptOps.UNROLL, axis, amt) for amt in [0, 4, 7] for axis in range(5)]
actions += [Opt(OptOps.LOCAL, axis, amt) for amt in [2, 3, 4, 8, 13, 16, 29] for axis in range(6)]
actions += [Opt(OptOps.GROUPTOP, axis, amt) for amt in [13, 16, 28, 29, 32, 49, 64, 256] for axis in range(3)]
actions += [Opt(OptOps.GROUP, axis, amt) for amt in [0, 4, 8, 16] for axis in range(3)]
if _knob("BEAM_PADTO"): actions += [Opt(OptOps.PADTO, axis, 32) for axis in range(7)]
actions += [Opt(OptOps.LOCAL, 0, 32), Opt(OptOps.LOCAL, 6, 2), Opt(OptOps.TC, 0, (-1, 0, _knob("TC")))]
actions += [Opt(OptOps.TC, axis, (-1, _knob("TC_OPT") or 2, _knob("TC"))) for axis in range(9)]  # resnet: 3 global x 3 reduce
actions += [Opt(OptOps.SWAP, a0, a1) for a0 in range(5) for a1 in range(a0 + 1, 5)]

def get_test_global_size(global_size, max_global_size:int, var_vals):
  """The launch size BEAM times a kernel at (the last dim over 16 halved until it fits), and how much smaller it is."""
  test = [sym_infer(sz, var_vals) for sz in global_size]
  full = prod(test)
  while prod(test) > max_global_size:
    j = max((j for j in range(len(test)) if test[j] > 16), default=None)
    if j is None: break
    test[j] //= 2
  return test, full / prod(test)

def _ensure_buffer_alloc(bufs): return [b.ensure_allocated() if b is not None else b for b in bufs]

_BEAM_WHY = "BEAM search runs inside the engine (src/tg/engine/search.h) over its own Kernels; set BEAM=<width>"
beam_search = unsupported_function("tinygrad.engine.search.beam_search", _BEAM_WHY)
bufs_from_lin = unsupported_function("tinygrad.engine.search.bufs_from_lin", _BEAM_WHY)
get_kernel_actions = unsupported_function("tinygrad.engine.search.get_kernel_actions", _BEAM_WHY)
_time_program = unsupported_function("tinygrad.engine.search._time_program", _BEAM_WHY)
