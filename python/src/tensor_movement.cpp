// bindings of the Tensor's [movement] methods (src/tg/tensor/tensor_movement.cpp)
#include "common.h"
#include "tg/tensor/tensor.h"

namespace tgpy {
using tg::Tensor;

void bind_tensor_movement(py::class_<Tensor>& cls) { (void)cls; }

}  // namespace tgpy
