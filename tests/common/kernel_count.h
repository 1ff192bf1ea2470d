#pragma once
// how many kernels a piece of code runs (GlobalCounters::kernel_count before and after)
#include <cstdint>
#include <functional>

#include "tg/runtime/device.h"

namespace tg::test {

inline int64_t kernels_run_by(const std::function<void()>& f) {
  int64_t before = GlobalCounters::kernel_count;
  f();
  return GlobalCounters::kernel_count - before;
}

}  // namespace tg::test
