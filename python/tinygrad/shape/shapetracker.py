# tinygrad.shape.shapetracker: ShapeTrackers are the engine's (src/tg/shape/shapetracker.h); UOp.st reads one off a
# graph, ShapeTracker.from_shape makes one (shape, size, contiguous are readable)
from __future__ import annotations
from tinygrad import _C
from tinygrad.shape.view import View  # noqa: F401
from tinygrad._unsupported import unsupported_function

class ShapeTracker:
  @staticmethod
  def from_shape(shape:tuple[int, ...], strides:tuple[int, ...]|None=None): return _C.shapetracker_from_shape(list(shape), strides)

views_to_indexed_uops = unsupported_function("tinygrad.shape.shapetracker.views_to_indexed_uops", "a ShapeTracker's "
                                             "index expressions are built by the engine's lowerer (src/tg/shape/)")
