# tinygrad.codegen: the codegen pipeline is the engine's (src/tg/codegen/pipeline.cpp, a table of steps, each with the
# condition it runs under); full_rewrite_to_sink and full_rewrite run the whole of it. Its steps are not Python objects.
from tinygrad._C import full_rewrite_to_sink, full_rewrite  # noqa: F401
from tinygrad._unsupported import UnsupportedValue, unsupported_class, unsupported_function

_WHY = "the codegen pipeline's steps are a C++ table (src/tg/codegen/pipeline.cpp), run whole by full_rewrite"
RewriteStep = unsupported_class("tinygrad.codegen.RewriteStep", _WHY)
apply_rewrites = unsupported_function("tinygrad.codegen.apply_rewrites", _WHY)
get_rewrites_for_renderer = unsupported_function("tinygrad.codegen.get_rewrites_for_renderer", _WHY)
rewrites_for_linearizer = UnsupportedValue("tinygrad.codegen.rewrites_for_linearizer", _WHY)
