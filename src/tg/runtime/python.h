#pragma once
// runtime: the PYTHON device. In tinygrad it is the pure-Python UOp interpreter and also where Tensor(list) data
// lives before it is copied to a device. Here it is host memory (shared with CPU); the interpreter lives in a
// higher layer and replaces this device's programs through Device::register_device("PYTHON", ...).
#include <memory>
#include <string>

#include "tg/runtime/device.h"

namespace tg {

std::unique_ptr<Compiled> open_python_device(const std::string& device);

}  // namespace tg
