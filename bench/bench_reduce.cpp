// Reductions and an elementwise chain on 16M floats against this machine's memory bandwidth, measured in the same run
// by a small read-bandwidth probe (vector sums with eight accumulators, 1 and N threads, in a buffer from the CPU
// device's allocator); the sums once more under TinyJit (the kernels alone, as a training loop runs them):
//
//   ./build/bench/bench_reduce [--runs 30]
//
// Each figure is the fastest of the runs (the least disturbed by other work), in GB/s of input read, each workload run
// in turns with the probe on as many threads as the CPU device uses (CPU_THREADS), its ratio against that probe. The
// ISA line is the CPU device's target (CPU_ARCH).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tg/runtime/device.h"
#include "tg/runtime/ops_cpu.h"
#include "tg/runtime/threadpool.h"
#include "tg/tensor/jit.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

constexpr int64_t kN = int64_t(1) << 24;  // 16M floats, 64 MB: far beyond the caches

// the probe: each thread sums its share of the array as blocks of four rows read side by side, two vector
// accumulators a row (no chain waits), with the widest vectors of the kernels' target,
// run on the CPU device's thread pool. The rows are 16 KB, 256 KB or a quarter of the share apart, whichever is
// fastest on this machine (chosen at the start: which one wins differs from one machine, and one minute, to another).
typedef float v4 __attribute__((vector_size(16)));
typedef float v8 __attribute__((vector_size(32)));
typedef float v16 __attribute__((vector_size(64)));
template <class vec>
__attribute__((always_inline)) inline float probe_body(const float* p, int64_t n, int64_t row) {
  constexpr int W = sizeof(vec) / sizeof(float);
  vec a[8] = {};
  for (int64_t b = 0; b + 4 * row <= n; b += 4 * row)
    for (int64_t i = 0; i < row; i += 2 * W)
      for (int j = 0; j < 8; j++) {
        vec x;
        __builtin_memcpy(&x, p + b + (j / 2) * row + i + W * (j % 2), sizeof(x));
        a[j] += x;
      }
  vec s = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
  float r = 0;
  for (int i = 0; i < W; i++) r += s[i];
  return r;
}
#if defined(__x86_64__)
__attribute__((target("avx512f"))) float probe_avx512(const float* p, int64_t n, int64_t row) {
  return probe_body<v16>(p, n, row);
}
__attribute__((target("avx2"))) float probe_avx2(const float* p, int64_t n, int64_t row) {
  return probe_body<v8>(p, n, row);
}
#endif
// the widest vectors both the host and the kernels' target (CPU_ARCH) have: with CPU_ARCH=x86-64-v3 on an AVX-512
// machine the probe reads with AVX2, as it would on an AVX2 machine
float probe_sum(const float* p, int64_t n, int64_t row) {
#if defined(__x86_64__)
  static const int bytes = cpu_target().vector_bytes;
  if (bytes >= 64 && __builtin_cpu_supports("avx512f")) return probe_avx512(p, n, row);
  if (bytes >= 32 && __builtin_cpu_supports("avx2")) return probe_avx2(p, n, row);
#endif
  return probe_body<v4>(p, n, row);
}

// the fastest of `runs` runs of f and of g, taken in turns: this VM's memory speed drifts by 2x within a minute, so
// a ratio means something only between runs of the same minutes
std::pair<double, double> fastest_pair(int runs, const std::function<void()>& f, const std::function<void()>& g) {
  f(), g();  // warm up: compile, allocate
  double bf = 1e30, bg = 1e30;
  auto ms = [](const std::function<void()>& h) {
    auto st = std::chrono::steady_clock::now();
    h();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - st).count();
  };
  for (int i = 0; i < runs; i++) bf = std::min(bf, ms(f)), bg = std::min(bg, ms(g));
  return {bf, bg};
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
  // the probe's buffer comes from the CPU device's allocator, as the kernels' do (same alignment, same huge pages)
  auto host_alloc = MallocAllocator::instance();
  float* probe_buf = static_cast<float*>(host_alloc->alloc(kN * sizeof(float), {.nolru = true}));
  std::copy(host.begin(), host.end(), probe_buf);
  int64_t row = 0;  // floats; 0: a quarter of the share
  auto probe = [&](int n) {
    return [&, n] {
      // four shares a thread, as the kernels run
      int64_t share = kN / (4 * n);
      float out[4096];
      parallel_for(
          4 * n, [&](int t) { out[t] = probe_sum(probe_buf + t * share, share, row ? row : share / 4); }, n);
    };
  };
  int64_t best_row = 0;
  double best = 1e30;
  for (int64_t r : {int64_t(4096), int64_t(65536), int64_t(0)}) {
    row = r;
    if (double ms = fastest_pair(runs / 2, probe(threads), [] {}).first; ms < best) best = ms, best_row = r;
  }
  row = best_row;
  Tensor a = Tensor(host, {kN}, {.device = "CPU"}).realize(), m = a.reshape({4096, 4096}).contiguous().realize();
  Tensor b = (a + 1).realize(), c = (a * 0.5f).realize();
  // the same sums under TinyJit, as a loop that runs them again and again would: the kernels without the scheduling
  TinyJit<Tensor(Tensor)> jit_sum([](const Tensor& x) { return x.sum().realize(); });
  TinyJit<Tensor(Tensor)> jit_rowsum([](const Tensor& x) { return x.sum(1).realize(); });
  auto chain = [&] { return ((a * b + c).relu() * 2 - a); };

  const CpuTarget& t = cpu_target();
  std::printf(
      "CPU target %s (%s, %d-byte vectors x %d registers), %d threads; 16M floats, fastest of %d runs; the probe's"
      " rows %s apart\n",
      t.arch.c_str(), t.isa.c_str(), t.vector_bytes, t.registers, threads, runs,
      row == 4096    ? "16 KB"
      : row == 65536 ? "256 KB"
                     : "a quarter share");
  std::printf(
      "| workload | ms | GB/s | probe GB/s, same minutes | vs probe (%d threads) |\n|---|---:|---:|---:|---:|\n",
      threads);
  // each workload in turns with the probe on `threads` threads
  auto report = [&](const char* name, const std::function<void()>& f, double bytes_per_elem) {
    auto [ms, probe_ms] = fastest_pair(runs, f, probe(threads));
    double g = gbs(ms) * bytes_per_elem / 4;
    std::printf("| %s | %.2f | %.1f | %.1f | %.2f |\n", name, ms, g, gbs(probe_ms), g / gbs(probe_ms));
  };
  report("bandwidth probe, 1 thread", probe(1), 4);
  report(("bandwidth probe, " + std::to_string(threads) + " threads").c_str(), probe(threads), 4);
  report(
      "sum of 16M floats", [&] { a.sum().realize(); }, 4);
  report(
      "row sum (4096, 4096).sum(1)", [&] { m.sum(1).realize(); }, 4);
  report(
      "sum of 16M floats, TinyJit", [&] { jit_sum(a); }, 4);
  report(
      "row sum (4096, 4096).sum(1), TinyJit", [&] { jit_rowsum(m); }, 4);
  report(
      "((a*b+c).relu()*2-a), reads 3 writes 1", [&] { chain().realize(); }, 16);
  report(
      "same with .exp2()", [&] { chain().exp2().realize(); }, 16);
  auto [ew_exp2, ew] = fastest_pair(
      runs, [&] { chain().exp2().realize(); }, [&] { chain().realize(); });
  std::printf("exp2 chain / plain chain, in turns: %.2fx\n", ew_exp2 / ew);
  host_alloc->free(probe_buf, kN * sizeof(float), {.nolru = true});
  return 0;
}
