// What VIZ recording costs: one MNIST train step (tinygrad's beautiful_mnist model, batch 512, Adam) scheduled and
// every kernel optimized and rendered (the step's "compile" without the C compiler), in a fresh process each time,
// without VIZ and with VIZ=-1 (the trace written to a temporary file), alternately. Prints the medians and the ratio
// (the target: at most 3x), and the trace's size.
//
//   ./bench_viz [--runs N]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "mnist_step.h"
#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/codegen/program.h"
#include "tg/nn/state.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

// the child: schedule one train step and render its kernels; prints the seconds that took
int child() {
  Tensor::manual_seed(0);
  Model model;
  auto opt = nn::optim::Adam(nn::state::get_parameters(model));
  auto [x, y] = synthetic_mnist_batch();
  auto st = std::chrono::steady_clock::now();
  std::vector<ScheduleItem> schedule = train_step_schedule(model, opt, x, y);
  Renderer& r = *Device::get("CPU").renderer;
  size_t kernels = 0;
  for (const ScheduleItem& si : schedule) {
    if (si.ast.op() != Ops::SINK) continue;
    Kernel k(si.ast, r);
    apply_default_opts(k);
    (void)to_program(k, r, true, "CPU");
    kernels++;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count();
  std::printf("%zu %.6f\n", kernels, s);
  return 0;
}

// one child run: (kernels, seconds)
std::pair<size_t, double> run_child(const char* self, bool viz, const std::string& trace) {
  std::string cmd = viz ? "VIZ=-1 VIZ_TRACE=" + trace + " " : "env -u VIZ ";
  cmd += std::string(self) + " --child 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  size_t kernels = 0;
  double s = -1;
  if (p == nullptr || std::fscanf(p, "%zu %lf", &kernels, &s) != 2) std::fprintf(stderr, "bench_viz: a child failed\n");
  if (p != nullptr) ::pclose(p);
  return {kernels, s};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--child") return child();
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--runs") runs = std::atoi(argv[i + 1]);
  const std::string trace = (std::filesystem::temp_directory_path() / "bench_viz.trace").string();
  std::vector<double> off, on;
  size_t kernels = 0;
  for (int i = 0; i < runs; i++) {
    auto [k, a] = run_child(argv[0], false, trace);
    auto [k2, b] = run_child(argv[0], true, trace);
    kernels = k, off.push_back(a), on.push_back(b);
  }
  double m_off = median(off), m_on = median(on);
  std::printf("one MNIST train step, %zu kernels scheduled and rendered, median of %d runs each:\n", kernels, runs);
  std::printf("  VIZ off   %8.1f ms\n  VIZ=-1    %8.1f ms   (%.2fx; trace %.1f MB)\n", m_off * 1e3, m_on * 1e3,
              m_on / m_off, static_cast<double>(std::filesystem::file_size(trace)) / 1e6);
  std::filesystem::remove(trace);
  return 0;
}
