// bindings of the nn layers (src/tg/nn/nn.h) in tinygrad._C.nn
#include "common.h"

namespace tgpy {

void bind_nn_layers(py::module_& nn) { (void)nn; }

}  // namespace tgpy
