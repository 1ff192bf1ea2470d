# tinygrad.codegen.heuristic: the opts the engine's heuristic picks for a Kernel (src/tg/codegen/heuristic.h: the
# reference's hand-coded rules, and on CPUs the vector tiles)
from __future__ import annotations
from tinygrad.renderer import Opt

def hand_coded_optimizations(k) -> list[Opt]:
  """The opts the heuristic picks for Kernel k (k is unchanged; apply them with k.apply_opts)."""
  return k.hand_coded_optimizations()
