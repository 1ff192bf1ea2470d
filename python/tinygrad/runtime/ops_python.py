# tinygrad.runtime.ops_python: the PYTHON device (the uop interpreter) is the engine's (src/tg/runtime/ops_python.cpp);
# PythonRenderer() and PythonCompiler() are its renderer and compiler, and isinstance(r, PythonRenderer) asks a renderer
from tinygrad.renderer import renderer_class
from tinygrad.runtime import compiler_class
from tinygrad._unsupported import unsupported_class

PythonRenderer = renderer_class("PythonRenderer", ("PYTHON",), "PYTHON")
PythonCompiler = compiler_class("PythonCompiler", "PYTHON")
PythonProgram = unsupported_class("tinygrad.runtime.ops_python.PythonProgram", "the PYTHON device's programs are run by "
                                  "the engine (src/tg/runtime/ops_python.cpp); realize a Tensor on it (device=\"PYTHON\")")
