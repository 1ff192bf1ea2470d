# tinygrad.runtime.ops_cpu: the CPU device is the engine's (src/tg/runtime/ops_cpu.cpp); ClangJITCompiler() is its compiler
# (NOTE: it makes shared objects, which the device dlopens, not the reference's relocatable objects)
from tinygrad.runtime import compiler_class
from tinygrad._unsupported import unsupported_class
_WHY = "the CPU device's programs are C++ (src/tg/runtime/ops_cpu.cpp)"
CPUProgram = unsupported_class("tinygrad.runtime.ops_cpu.CPUProgram", _WHY)
ClangJITCompiler = compiler_class("ClangJITCompiler", "CPU")
