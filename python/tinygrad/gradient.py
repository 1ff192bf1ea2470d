# tinygrad.gradient: the derivative rules over UOps (src/tg/gradient/gradient.h)
from __future__ import annotations
from tinygrad import _C
from tinygrad.uop.ops import UOp

def compute_gradient(root:UOp, root_grad:UOp, targets:set[UOp]) -> dict[UOp, UOp]:
  """The gradient of root (seeded with root_grad) with respect to every node on a path from root to a target."""
  return _C.compute_gradient(root, root_grad, list(targets))
