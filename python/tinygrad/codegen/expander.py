# tinygrad.codegen.expander: the expander's rules (UNROLL/CONTRACT), the engine's (src/tg/codegen/expander.h)
from tinygrad import _C
expander = _C.expander()
