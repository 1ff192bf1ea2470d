// The cold compile of every kernel of one MNIST train step (tinygrad's beautiful_mnist model, batch 512, Adam):
// each kernel gets its opts and is rendered once per device, then built from source with no cache (Compiled::build:
// compile and load), by the CPU device (one clang process per kernel) and by LLVM (in this process), one kernel at a
// time and then on every core. Prints ms per kernel and the total, side by side.
//
//   ./bench_compile [--threads N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mnist_step.h"
#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/codegen/pipeline.h"
#include "tg/engine/realize.h"
#include "tg/helpers/knobs.h"
#include "tg/nn/state.h"
#include "tg/runtime/device.h"
#include "tg/runtime/threadpool.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

// the kernels of one train step, rendered for a device
std::vector<ProgramSpec> programs_for(const std::vector<ScheduleItem>& schedule, const std::string& device) {
  std::vector<ProgramSpec> out;
  Renderer& r = *Device::get(device).renderer;
  for (const ScheduleItem& si : schedule) {
    if (si.ast.op() != Ops::SINK) continue;
    Kernel k(si.ast, r);
    apply_default_opts(k);
    out.push_back(compile_kernel(k, r, true, device)->p);  // rendered (and built once more, untimed)
  }
  return out;
}

// seconds to build every program, `threads` at a time (DISABLE_COMPILER_CACHE=1: from source every time)
double build_all(const std::vector<ProgramSpec>& specs, const std::string& device, int threads) {
  Compiled& dev = Device::get(device);
  auto st = std::chrono::steady_clock::now();
  parallel_each(specs.size(), threads, [&](size_t i) { (void)dev.build(specs[i]); });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count();
}

}  // namespace

int main(int argc, char** argv) {
  set_knob("DISABLE_COMPILER_CACHE", 1);
  int threads = cpu_threads();
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--threads") threads = std::atoi(argv[i + 1]);
  Tensor::manual_seed(0);
  Model model;
  auto opt = nn::optim::Adam(nn::state::get_parameters(model));
  auto [x, y] = synthetic_mnist_batch();
  std::vector<ScheduleItem> schedule = train_step_schedule(model, opt, x, y);
  std::printf("one MNIST train step: %zu schedule items\n", schedule.size());
  std::printf("%-6s %8s %14s %14s %16s\n", "device", "kernels", "1 thread", "ms/kernel",
              cat(threads, " threads").c_str());
  std::vector<double> serial;
  for (const char* device : {"CPU", "LLVM"}) {
    std::vector<ProgramSpec> specs;
    try {
      specs = programs_for(schedule, device);
    } catch (const std::exception& e) {
      std::printf("%-6s unavailable: %s\n", device, e.what());
      continue;
    }
    double t1 = build_all(specs, device, 1), tn = build_all(specs, device, threads);
    serial.push_back(t1);
    std::printf("%-6s %8zu %12.2f s %12.1f ms %14.2f s\n", device, specs.size(), t1, t1 * 1e3 / double(specs.size()),
                tn);
  }
  if (serial.size() == 2) std::printf("LLVM compiles %.1fx faster than clang processes\n", serial[0] / serial[1]);
  return 0;
}
