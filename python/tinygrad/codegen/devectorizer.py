# tinygrad.codegen.devectorizer: the devectorizer's rules are the engine's (src/tg/codegen/devectorizer.h)
from tinygrad.uop.symbolic import sym  # noqa: F401
from tinygrad._unsupported import unsupported_function
fast_idiv = unsupported_function("tinygrad.codegen.devectorizer.fast_idiv", "the devectorizer's rules are C++ "
                                 "(src/tg/codegen/devectorizer.h) and not bound to Python")
