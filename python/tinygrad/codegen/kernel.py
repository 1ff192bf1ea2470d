# tinygrad.codegen.kernel: the Kernel (an AST and the opts applied to it) is the engine's (src/tg/codegen/kernel.h);
# Opt and OptOps are the reference's records of an opt
from tinygrad.renderer import Opt, OptOps  # noqa: F401
from tinygrad._unsupported import unsupported_class

class KernelOptError(Exception): pass  # an opt that can't be applied

Kernel = unsupported_class("tinygrad.codegen.kernel.Kernel", "Kernel and its opts are C++ (src/tg/codegen/kernel.h); the "
                           "engine optimizes each kernel itself (hand-coded, BEAM=, NOOPT=)")
