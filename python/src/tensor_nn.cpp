// bindings of the Tensor's [nn] methods (src/tg/tensor/tensor_nn.cpp)
#include "common.h"
#include "tg/tensor/tensor.h"

namespace tgpy {
using tg::Tensor;

void bind_tensor_nn(py::class_<Tensor>& cls) { (void)cls; }

}  // namespace tgpy
