// Baseline figures for the whole pipeline (Tensor -> schedule -> codegen -> clang -> run) on the CPU device:
//
//   ew6     GB/s   a fused chain of 6 elementwise ops over 16M floats: ((x*1.5+0.5)*x-2).relu().sqrt()
//                  (bytes: 16M floats read + 16M written)
//   sum     GB/s   x.sum() over 16M floats (bytes: 16M floats read)
//   matmul  GFLOP/s  a 1024x1024 @ 1024x1024 float matmul (2*1024^3 flops)
//   t347_cold  ms  the tutorial's graph on a fresh Tensor, (t+3+4).tolist(), with a kernel shape never seen
//                  before (the method cache misses) and an empty compiler cache (XDG_CACHE_HOME is a fresh temp
//                  dir): schedule + codegen + clang + run
//   t347_warm  ms  the same graph again on a fresh Tensor of a seen shape: schedule + cached runner + run
//
// Each figure is the best (minimum time) of several repeats; every repeat builds the graph on the realized input
// and realizes it, so the per-call scheduling overhead is included (as a user sees it). bench/bench_baseline.py
// measures the same for numpy and for tinygrad (Python), and prints the three side by side with the ratios.
//
//   ./bench_baseline [--json out.json]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

constexpr int64_t kN = 16 * 1024 * 1024;
constexpr int64_t kM = 1024;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
// best of `repeats` runs of fn, in seconds (one untimed warm-up run first when warmup)
double best_of(int repeats, const std::function<void()>& fn, bool warmup = true) {
  if (warmup) fn();
  double best = 1e30;
  for (int i = 0; i < repeats; i++) {
    double st = now_s();
    fn();
    best = std::min(best, now_s() - st);
  }
  return best;
}

std::vector<float> host_data(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) v[static_cast<size_t>(i)] = static_cast<float>(i % 1000) * 0.001f;
  return v;
}

struct Result {
  std::string name, unit;
  double value;
};

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  for (int i = 1; i + 1 < argc; i++)
    if (std::string(argv[i]) == "--json") json_path = argv[i + 1];

  // an empty compiler cache for the cold figure: set before anything compiles
  std::string tmpl = (std::filesystem::temp_directory_path() / "tg_bench_XXXXXX").string();
  std::vector<char> dir(tmpl.begin(), tmpl.end());
  dir.push_back('\0');
  TG_ASSERT(mkdtemp(dir.data()) != nullptr, "mkdtemp failed");
  set_knob("XDG_CACHE_HOME", dir.data());
  if (knob_text("CPU").empty()) Device::DEFAULT = "CPU";

  std::vector<Result> results;

  // *** t+3+4: cold (new shape, empty disk cache) and warm (seen shape) ***
  // the devices open first (as in any process that has run something), so neither figure counts that
  { Tensor(std::vector<int>{1, 2}, {2}).realize(); }
  int64_t cold_n = 5;
  auto t347 = [](int64_t n) {
    std::vector<int> d(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) d[static_cast<size_t>(i)] = static_cast<int>(i + 1);
    Tensor t(d, {n});
    std::vector<int> r = (t + 3 + 4).tolist<int>();
    TG_ASSERT(r[0] == 8, "t+3+4 is wrong");
  };
  double cold = best_of(
      5, [&] { t347(cold_n++); }, /*warmup=*/false);
  double warm = best_of(20, [&] { t347(4); });
  results.push_back({"t347_cold", "ms", cold * 1e3});
  results.push_back({"t347_warm", "ms", warm * 1e3});

  // *** 16M floats: a fused elementwise chain and a sum ***
  Tensor x = Tensor(host_data(kN), {kN}).realize();
  double ew = best_of(5, [&] { ((x * 1.5f + 0.5f) * x - 2.0f).relu().sqrt().realize(); });
  results.push_back({"ew6", "GB/s", 2.0 * kN * 4 / ew / 1e9});
  double sm = best_of(5, [&] { x.sum().realize(); });
  results.push_back({"sum", "GB/s", 1.0 * kN * 4 / sm / 1e9});

  // *** 1024x1024 matmul ***
  Tensor a = Tensor(host_data(kM * kM), {kM, kM}).realize(), b = Tensor(host_data(kM * kM), {kM, kM}).realize();
  double mm = best_of(3, [&] { a.matmul(b).realize(); });
  results.push_back({"matmul", "GFLOP/s", 2.0 * kM * kM * kM / mm / 1e9});

  std::printf("%-10s %12s  %s\n", "benchmark", "tinygrad.cpp", "unit");
  for (const Result& r : results) std::printf("%-10s %12.2f  %s\n", r.name.c_str(), r.value, r.unit.c_str());
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << "{";
    for (size_t i = 0; i < results.size(); i++)
      f << (i ? ", " : "") << "\"" << results[i].name << "\": " << results[i].value;
    f << "}\n";
  }
  std::filesystem::remove_all(dir.data());
  return EXIT_SUCCESS;
}
