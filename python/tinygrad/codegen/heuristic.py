# tinygrad.codegen.heuristic: the engine picks each kernel's opts itself (src/tg/codegen/heuristic.h), hand-coded or BEAM=
from tinygrad._unsupported import unsupported_function
hand_coded_optimizations = unsupported_function("tinygrad.codegen.heuristic.hand_coded_optimizations",
                                                "the engine applies its heuristic inside the codegen (src/tg/codegen/heuristic.h)")
