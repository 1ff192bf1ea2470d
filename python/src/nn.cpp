// bindings of tinygrad.nn (layers, optim, state, datasets)
#include "common.h"

namespace tgpy {

void bind_nn(py::module_& m) { (void)m; }

}  // namespace tgpy
