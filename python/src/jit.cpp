// bindings of tinygrad.engine.jit (TinyJit)
#include "common.h"

namespace tgpy {

void bind_jit(py::module_& m) { (void)m; }

}  // namespace tgpy
