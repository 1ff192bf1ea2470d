# tinygrad.runtime.ops_gpu: the GPU (OpenCL) device is the engine's (src/tg/runtime/ops_gpu.cpp); CLCompiler() is its compiler
from tinygrad.runtime import compiler_class
from tinygrad._unsupported import unsupported_class
_WHY = "the GPU device's OpenCL objects are C++ (src/tg/runtime/ops_gpu.cpp); use Device[\"GPU\"]"
CLDevice = unsupported_class("tinygrad.runtime.ops_gpu.CLDevice", _WHY)
CLAllocator = unsupported_class("tinygrad.runtime.ops_gpu.CLAllocator", _WHY)
CLProgram = unsupported_class("tinygrad.runtime.ops_gpu.CLProgram", _WHY)
CLCompiler = compiler_class("CLCompiler", "GPU")
