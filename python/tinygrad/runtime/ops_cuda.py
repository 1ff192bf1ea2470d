# tinygrad.runtime.ops_cuda: the CUDA device is the engine's (src/tg/runtime/ops_cuda.cpp): CUDA C compiled by NVRTC;
# CUDACompiler() is its compiler. It has no PTX renderer.
from tinygrad.runtime import compiler_class
from tinygrad._unsupported import unsupported_class
_WHY = "the CUDA device renders CUDA C and compiles it with NVRTC; there is no PTX path"
PTXCompiler = unsupported_class("tinygrad.runtime.ops_cuda.PTXCompiler", _WHY)
PTXRenderer = unsupported_class("tinygrad.runtime.ops_cuda.PTXRenderer", _WHY)
CUDADevice = unsupported_class("tinygrad.runtime.ops_cuda.CUDADevice", _WHY)
CUDAProgram = unsupported_class("tinygrad.runtime.ops_cuda.CUDAProgram", _WHY)
CUDACompiler = compiler_class("CUDACompiler", "CUDA")
