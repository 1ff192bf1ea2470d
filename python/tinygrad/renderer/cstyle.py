# tinygrad.renderer.cstyle: the C renderer the CPU device compiles with is Device["CPU"].renderer
from tinygrad.renderer import Renderer  # noqa: F401
def ClangRenderer():
  from tinygrad.device import Device
  return Device["CPU"].renderer
