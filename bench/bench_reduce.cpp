// Reductions and an elementwise chain on 16M floats against this machine's memory bandwidth, measured in the same run
// by a small read-bandwidth probe (vector sums with eight accumulators, 1 and N threads, in a buffer from the CPU
// device's allocator); the sums once more under TinyJit (the kernels alone, as a training loop runs them):
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
#include <vector>

#include "tg/engine/jit.h"
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

// the probe: each thread sums its share of the array as blocks of four 16 KB rows read side by side, two vector
// accumulators a row (no chain waits), with the widest vectors the host has (the kernels are built for the host too),
// run on the CPU device's thread pool. Of the patterns tried (one to eight streams a thread far apart, four rows
// near), four near rows was the fastest here, by 5-15%: the streams share DRAM pages.
typedef float v4 __attribute__((vector_size(16)));
typedef float v8 __attribute__((vector_size(32)));
typedef float v16 __attribute__((vector_size(64)));
template <class vec>
__attribute__((always_inline)) inline float probe_body(const float* p, int64_t n) {
  constexpr int W = sizeof(vec) / sizeof(float);
  constexpr int64_t kRow = 4096;  // floats: 16 KB
  vec a[8] = {};
  for (int64_t b = 0; b + 4 * kRow <= n; b += 4 * kRow)
    for (int64_t i = 0; i < kRow; i += 2 * W)
      for (int j = 0; j < 8; j++) {
        vec x;
        __builtin_memcpy(&x, p + b + (j / 2) * kRow + i + W * (j % 2), sizeof(x));
        a[j] += x;
      }
  vec s = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
  float r = 0;
  for (int i = 0; i < W; i++) r += s[i];
  return r;
}
#if defined(__x86_64__)
__attribute__((target("avx512f"))) float probe_avx512(const float* p, int64_t n) { return probe_body<v16>(p, n); }
__attribute__((target("avx2"))) float probe_avx2(const float* p, int64_t n) { return probe_body<v8>(p, n); }
#endif
float probe_sum(const float* p, int64_t n) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return probe_avx512(p, n);
  if (__builtin_cpu_supports("avx2")) return probe_avx2(p, n);
#endif
  return probe_body<v4>(p, n);
}

double probe_ms(const float* v, int threads, int runs) {
  std::vector<float> out(static_cast<size_t>(threads));
  return fastest_ms(runs, [&] {
    int64_t share = kN / threads;
    parallel_for(threads, [&](int t) { out[static_cast<size_t>(t)] = probe_sum(v + t * share, share); });
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
  // the probe's buffer comes from the CPU device's allocator, as the kernels' do (same alignment, same huge pages)
  auto host_alloc = MallocAllocator::instance();
  float* probe_buf = static_cast<float*>(host_alloc->alloc(kN * sizeof(float), {.nolru = true}));
  std::copy(host.begin(), host.end(), probe_buf);
  double p1 = probe_ms(probe_buf, 1, runs), pn = probe_ms(probe_buf, threads, runs);
  host_alloc->free(probe_buf, kN * sizeof(float), {.nolru = true});
  Tensor a = Tensor(host, {kN}, {.device = "CPU"}).realize(), m = a.reshape({4096, 4096}).contiguous().realize();
  Tensor b = (a + 1).realize(), c = (a * 0.5f).realize();
  double sum = fastest_ms(runs, [&] { a.sum().realize(); });
  double rowsum = fastest_ms(runs, [&] { m.sum(1).realize(); });
  // the same under TinyJit, as a loop that runs them again and again would: the kernels without the scheduling
  TinyJit<Tensor(Tensor)> jit_sum([](const Tensor& x) { return x.sum().realize(); });
  TinyJit<Tensor(Tensor)> jit_rowsum([](const Tensor& x) { return x.sum(1).realize(); });
  for (int i = 0; i < 2; i++) jit_sum(a), jit_rowsum(m);  // captured on the second call
  double sum_jit = fastest_ms(runs, [&] { jit_sum(a); });
  double rowsum_jit = fastest_ms(runs, [&] { jit_rowsum(m); });
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
  row("sum of 16M floats, TinyJit", sum_jit, 4);
  row("row sum (4096, 4096).sum(1), TinyJit", rowsum_jit, 4);
  row("((a*b+c).relu()*2-a), reads 3 writes 1", ew, 16);
  row("same with .exp2()", ew_exp2, 16);
  std::printf("exp2 chain / plain chain: %.2fx\n", ew_exp2 / ew);
  return 0;
}
