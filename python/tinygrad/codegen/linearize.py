# tinygrad.codegen.linearize: the linearizer is the engine's (src/tg/codegen/linearize.h); full_rewrite returns its output
from tinygrad._unsupported import unsupported_function
block_reorder = unsupported_function("tinygrad.codegen.linearize.block_reorder", "the linearizer is C++ "
                                     "(src/tg/codegen/linearize.h); full_rewrite returns the linearized uops")
