// Reductions and an elementwise chain on 16M floats against this machine's memory bandwidth, measured in the same run
// by a small read-bandwidth probe (vector sums with independent accumulators, 1 and 2 threads):
//
//   ./build/bench/bench_reduce [--runs 30]
//
// Each figure is the fastest of the runs (the least disturbed by other work), in GB/s of input read; the ratios are
// against the probe with as many threads as the CPU device uses (CPU_THREADS). The ISA line is the CPU device's
// target (CPU_ARCH).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tg/runtime/device.h"
#include "tg/runtime/ops_cpu.h"
#include "tg/runtime/threadpool.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

constexpr int64_t kN = int64_t(1) << 24;  // 16M floats, 64 MB: far beyond the caches

double fastest_ms(int runs, const std::function<void()>& f) {
  f();  // warm up: compile, allocate
  double best = 1e30;
  for (int i = 0; i < runs; i++) {
    auto st = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - st).count());
  }
  return best;
}

typedef float v8 __attribute__((vector_size(32)));

// the probe: each thread sums its share of the array with four vector accumulators (no dependency chain waits)
float probe_sum(const float* p, int64_t n) {
  v8 a0{}, a1{}, a2{}, a3{};
  for (int64_t i = 0; i + 32 <= n; i += 32) {
    v8 x0, x1, x2, x3;
    __builtin_memcpy(&x0, p + i, 32);
    __builtin_memcpy(&x1, p + i + 8, 32);
    __builtin_memcpy(&x2, p + i + 16, 32);
    __builtin_memcpy(&x3, p + i + 24, 32);
    a0 += x0, a1 += x1, a2 += x2, a3 += x3;
  }
  v8 s = a0 + a1 + a2 + a3;
  float r = 0;
  for (int i = 0; i < 8; i++) r += s[i];
  return r;
}

double probe_ms(const std::vector<float>& v, int threads, int runs) {
  std::vector<float> out(static_cast<size_t>(threads));
  return fastest_ms(runs, [&] {
    std::vector<std::thread> ts;
    int64_t share = kN / threads;
    for (int t = 0; t < threads; t++)
      ts.emplace_back([&, t] { out[static_cast<size_t>(t)] = probe_sum(v.data() + t * share, share); });
    for (auto& t : ts) t.join();
  });
}

double gbs(double ms) { return static_cast<double>(kN) * 4 / (ms * 1e6); }

}  // namespace

int main(int argc, char** argv) {
  int runs = 30;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--runs") runs = std::atoi(argv[i + 1]);
  const int threads = cpu_threads();
  std::vector<float> host(static_cast<size_t>(kN));
  for (size_t i = 0; i < host.size(); i++) host[i] = static_cast<float>(i % 1000) * 1e-3f;

  double p1 = probe_ms(host, 1, runs), pn = probe_ms(host, threads, runs);
  Tensor a = Tensor(host, {kN}, {.device = "CPU"}).realize(), m = a.reshape({4096, 4096}).contiguous().realize();
  Tensor b = (a + 1).realize(), c = (a * 0.5f).realize();
  double sum = fastest_ms(runs, [&] { a.sum().realize(); });
  double rowsum = fastest_ms(runs, [&] { m.sum(1).realize(); });
  auto chain = [&] { return ((a * b + c).relu() * 2 - a); };
  double ew = fastest_ms(runs, [&] { chain().realize(); });
  double ew_exp2 = fastest_ms(runs, [&] { chain().exp2().realize(); });

  const CpuTarget& t = cpu_target();
  std::printf("CPU target %s (%s, %d-byte vectors x %d registers), %d threads; 16M floats, fastest of %d runs\n",
              t.arch.c_str(), t.isa.c_str(), t.vector_bytes, t.registers, threads, runs);
  std::printf("| workload | ms | GB/s | vs probe (%d threads) |\n|---|---:|---:|---:|\n", threads);
  auto row = [&](const char* name, double ms, double bytes_per_elem) {
    double g = gbs(ms) * bytes_per_elem / 4;
    std::printf("| %s | %.2f | %.1f | %.2f |\n", name, ms, g, g / gbs(pn));
  };
  row("bandwidth probe, 1 thread", p1, 4);
  row(("bandwidth probe, " + std::to_string(threads) + " threads").c_str(), pn, 4);
  row("sum of 16M floats", sum, 4);
  row("row sum (4096, 4096).sum(1)", rowsum, 4);
  row("((a*b+c).relu()*2-a), reads 3 writes 1", ew, 16);
  row("same with .exp2()", ew_exp2, 16);
  std::printf("exp2 chain / plain chain: %.2fx\n", ew_exp2 / ew);
  return 0;
}
