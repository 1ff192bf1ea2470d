# tinygrad.codegen: the codegen pipeline is the engine's (src/tg/codegen/pipeline.cpp, a table of steps, each with the
# condition it runs under); full_rewrite_to_sink and full_rewrite run the whole of it, with the options of a device's
# renderer (Device["CPU"].renderer, PythonRenderer(), or the class itself as the reference's tests pass it) or of the
# generic Renderer (None). Its steps are not Python objects.
from tinygrad import _C
from tinygrad._unsupported import UnsupportedValue, unsupported_class, unsupported_function

def _opts(opts):
  # a renderer class of ours (PythonRenderer, ClangRenderer ...) stands for its device's renderer
  return opts() if isinstance(opts, type) and hasattr(opts, "opens") else opts

def full_rewrite_to_sink(sink, opts=None, linearizer:bool=False):
  """The kernel AST `sink` through the codegen pipeline: the rewritten SINK (linearizer=True: ready to linearize)."""
  return _C.full_rewrite_to_sink(sink, _opts(opts), linearizer)
def full_rewrite(sink, opts=None):
  """The kernel AST `sink` through the codegen pipeline and the linearizer: the program's uops, in order."""
  return _C.full_rewrite(sink, _opts(opts))

_WHY = "the codegen pipeline's steps are a C++ table (src/tg/codegen/pipeline.cpp), run whole by full_rewrite"
RewriteStep = unsupported_class("tinygrad.codegen.RewriteStep", _WHY)
apply_rewrites = unsupported_function("tinygrad.codegen.apply_rewrites", _WHY)
get_rewrites_for_renderer = unsupported_function("tinygrad.codegen.get_rewrites_for_renderer", _WHY)
rewrites_for_linearizer = UnsupportedValue("tinygrad.codegen.rewrites_for_linearizer", _WHY)
