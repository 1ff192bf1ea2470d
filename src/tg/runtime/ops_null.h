#pragma once
// runtime: the NULL device (tinygrad's ops_null.py): allocates nothing and runs nothing, so a program's scheduling
// and codegen can be timed alone. Kernels are rendered as for the CPU (C) and never compiled; a "run" takes no time
// and leaves the output as it was (reads give zeros).
#include <memory>
#include <string>

#include "tg/runtime/device.h"

namespace tg {

std::unique_ptr<Compiled> open_null_device(const std::string& device);

}  // namespace tg
