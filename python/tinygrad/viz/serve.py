# tinygrad.viz.serve: VIZ=1's explorer is the engine's (src/tg/viz, served by the tinygrad-viz program), over the trace
# the engine writes; the reference's Python server functions are not here
from tinygrad._unsupported import unsupported_function
_WHY = "VIZ is served by the engine (src/tg/viz, tools/tinygrad_viz.cpp) from its own trace"
get_metadata = unsupported_function("tinygrad.viz.serve.get_metadata", _WHY)
get_details = unsupported_function("tinygrad.viz.serve.get_details", _WHY)
uop_to_json = unsupported_function("tinygrad.viz.serve.uop_to_json", _WHY)
to_perfetto = unsupported_function("tinygrad.viz.serve.to_perfetto", _WHY)
