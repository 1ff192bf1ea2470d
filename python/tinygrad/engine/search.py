# tinygrad.engine.search: BEAM search runs inside the engine (src/tg/engine/search.h), chosen with BEAM=<width>
def beam_search(*args, **kwargs):
  raise NotImplementedError("beam_search: set BEAM=<width> and the engine searches each kernel's opts itself")
