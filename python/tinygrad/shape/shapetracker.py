# tinygrad.shape.shapetracker: ShapeTrackers are the engine's (src/tg/shape/shapetracker.h); UOp.st reads one off a
# graph, ShapeTracker.from_shape makes one (shape, size, contiguous are readable)
from __future__ import annotations
from tinygrad import _C

class ShapeTracker:
  @staticmethod
  def from_shape(shape:tuple[int, ...], strides:tuple[int, ...]|None=None): return _C.shapetracker_from_shape(list(shape), strides)
