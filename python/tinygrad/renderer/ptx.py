# tinygrad.renderer.ptx: the engine's CUDA device renders CUDA C and compiles it with NVRTC; it has no PTX renderer
from tinygrad._unsupported import unsupported_class
PTXRenderer = unsupported_class("tinygrad.renderer.ptx.PTXRenderer", "there is no PTX renderer (CUDA kernels are CUDA C, "
                                "compiled by NVRTC)")
