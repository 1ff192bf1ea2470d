# tinygrad.runtime.ops_python: the PYTHON device (the uop interpreter) is the engine's (src/tg/runtime/ops_python.cpp);
# PythonRenderer() and PythonCompiler() are its renderer and compiler, and isinstance(r, PythonRenderer) asks a renderer.
# The renderer writes the program as text (one uop a line), the compiler gives its bytes, and PythonProgram(name, lib)
# runs it on the engine's interpreter over memoryviews, which PythonAllocator allocates in the engine's host memory.
from tinygrad.renderer import renderer_class
from tinygrad.runtime import compiler_class
from tinygrad._C import PythonProgram, python_host_alloc  # noqa: F401

PythonRenderer = renderer_class("PythonRenderer", ("PYTHON",), "PYTHON")
PythonCompiler = compiler_class("PythonCompiler", "PYTHON")

class PythonAllocator:
  """Device["PYTHON"].allocator: buffers are memoryviews (format 'B') over zeroed host memory of the engine's PYTHON
  device, freed with their last view; _copyin/_copyout copy whole buffers, as memoryview slice assignment does."""
  def alloc(self, size:int, options=None):
    assert size > 0, f"alloc size must be positive, getting {size}"
    return self._alloc(size, options)
  def free(self, opaque, size:int, options=None): self._free(opaque, options)
  def _alloc(self, size:int, options) -> memoryview: return python_host_alloc(size)
  def _free(self, opaque, options): pass  # the memory goes back to the engine with its last view
  def _copyin(self, dest:memoryview, src:memoryview): dest[:] = src
  def _copyout(self, dest:memoryview, src:memoryview): dest[:] = src

_allocator = PythonAllocator()
