# tinygrad.codegen.expander: the expander's rules (UNROLL/CONTRACT) are the engine's (src/tg/codegen/expander.h)
from tinygrad._unsupported import UnsupportedValue
expander = UnsupportedValue("tinygrad.codegen.expander.expander", "the expander's rules are C++ (src/tg/codegen/expander.h) "
                            "and not bound to Python")
