# tinygrad.shape.view: Views live inside the engine's ShapeTrackers (src/tg/shape/view.h)
class View:
  def __init__(self, *args, **kwargs):
    raise NotImplementedError("View: the engine's views are not exposed to Python; use ShapeTracker.from_shape")
  @staticmethod
  def create(*args, **kwargs): View()
