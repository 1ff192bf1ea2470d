# tinygrad.renderer.cstyle: the C-style renderers are the engine's (src/tg/renderer/cstyle); ClangRenderer() is the CPU
# device's renderer, OpenCLRenderer() the GPU device's, and isinstance tells which language a device's renderer writes
from tinygrad.renderer import Renderer, renderer_class  # noqa: F401

CStyleLanguage = renderer_class("CStyleLanguage", ("CPU", "GPU", "CL", "CUDA", "NULL"), None)
ClangRenderer = renderer_class("ClangRenderer", ("CPU", "NULL"), "CPU")
OpenCLRenderer = renderer_class("OpenCLRenderer", ("GPU", "CL"), "GPU")
CUDARenderer = renderer_class("CUDARenderer", ("CUDA",), "CUDA")
