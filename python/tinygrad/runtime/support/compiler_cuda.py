# tinygrad.runtime.support.compiler_cuda: the reference's CUDA compilers (NVRTC and PTX)
from tinygrad._unsupported import unsupported_class
_WHY = "the CUDA device compiles with NVRTC in C++ (Device[\"CUDA\"].compiler); there is no PTX path"
PTX = unsupported_class("tinygrad.runtime.support.compiler_cuda.PTX", _WHY)
NVRTCCompiler = unsupported_class("tinygrad.runtime.support.compiler_cuda.NVRTCCompiler", _WHY)
CUDACompiler = unsupported_class("tinygrad.runtime.support.compiler_cuda.CUDACompiler", _WHY)
