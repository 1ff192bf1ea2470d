// bindings of the Tensor's [math] methods (src/tg/tensor/tensor_math.cpp)
#include "common.h"
#include "tg/tensor/tensor.h"

namespace tgpy {
using tg::Tensor;

void bind_tensor_math(py::class_<Tensor>& cls) { (void)cls; }

}  // namespace tgpy
