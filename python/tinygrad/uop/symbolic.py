# the C++ engine's symbolic rule sets, as Python PatternMatchers (they combine with Python rules by +)
from tinygrad import _C
symbolic_simple, symbolic, symbolic_flat, sym = _C.symbolic_simple(), _C.symbolic(), _C.symbolic_flat(), _C.sym()
from tinygrad._unsupported import unsupported_function
simplify_valid = unsupported_function("tinygrad.uop.symbolic.simplify_valid", "simplify_valid is C++ "
                                      "(src/tg/codegen/devectorizer.h) and not bound to Python")
