#include "tg/runtime/python.h"

namespace tg {

std::unique_ptr<Compiled> open_python_device(const std::string& device) {
  // the "binary" of a PYTHON program is its source (the base Compiler), never disk-cached
  return std::make_unique<Compiled>(device, MallocAllocator::instance(), std::make_shared<Compiler>(),
                                    [](const std::string& name, const std::string&) -> std::unique_ptr<Program> {
                                      throw Error(cat("PYTHON device: no interpreter registered to run ", name));
                                    });
}

}  // namespace tg
