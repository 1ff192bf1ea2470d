// runtime: the CPU device's threads. parallel_for (the pool), CPU_THREADS, a program's threaded entry, and kernels
// split across cores: the same bits for every thread count, since each output element is computed by one core in
// the serial order of operations.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "scoped_env.h"
#include "tg/runtime/device.h"
#include "tg/runtime/ops_cpu.h"
#include "tg/runtime/threadpool.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using tg::test::ScopedEnv;

namespace {}  // namespace

// *** the pool ***

TEST(ThreadPool, EachIndexRunsOnce) {
  for (int n : {1, 2, 3, 8}) {
    for (int rep = 0; rep < 200; rep++) {  // many jobs back to back: a worker must neither miss nor repeat one
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallel_for(n, [&](int i) { hits[static_cast<size_t>(i)]++; });
      for (int i = 0; i < n; i++) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n=" << n << " i=" << i;
    }
  }
  parallel_for(0, [](int) { FAIL() << "n=0 runs nothing"; });
}

// index 0 (the caller) waits for index 1 to start: only possible if 1 runs on another thread meanwhile
static bool runs_concurrently() {
  std::atomic<bool> started{false};
  bool saw = false;
  parallel_for(
      2,
      [&](int i) {
        if (i == 1) {
          started = true;
          return;
        }
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!started && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        saw = started;
      },
      2);
  return saw;
}

TEST(ThreadPool, RunsConcurrently) { EXPECT_TRUE(runs_concurrently()); }

TEST(ThreadPool, NestedCallRunsSerially) {
  std::atomic<int> inner{0};
  parallel_for(2, [&](int) { parallel_for(3, [&](int) { inner++; }); });
  EXPECT_EQ(inner.load(), 6);
}

TEST(ThreadPool, CallersFromSeveralThreadsTakeTurns) {
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; t++)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; rep++) parallel_for(2, [&](int) { total++; });
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(total.load(), 3 * 50 * 2);
}

TEST(ThreadPool, BackToBackJobsDoNotSleep) {
  // jobs back to back keep the workers awake: no lock the caller and a worker both take per job, whose loser slept
  // in the kernel (a lockstep of two context switches a job, 10-20x the job's cost, for whole runs of jobs)
  auto switches = [] {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);  // every thread's
    return u.ru_nvcsw;
  };
  const int jobs = 20000;
  for (int n : {2, 4, 8, 16}) {
    std::atomic<int> sum{0};
    const long before = switches();
    for (int j = 0; j < jobs; j++)
      parallel_for(
          n, [&](int i) { sum += i; }, 2);
    EXPECT_EQ(sum.load(), jobs * n * (n - 1) / 2);
    // (a worker sleeps after 100 us without a job: the caller's preemptions by other processes may cost a few)
    EXPECT_LT(switches() - before, jobs / 4) << n << " shares a job";
  }
}

TEST(ThreadPool, WorkersThatSleptRunTheNextJob) {
  for (int rep = 0; rep < 3; rep++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the workers' spin: they sleep
    EXPECT_TRUE(runs_concurrently()) << rep;
  }
}

TEST(ThreadPool, CpuThreadsFromEnv) {
  {
    ScopedEnv e("CPU_THREADS", "3");
    EXPECT_EQ(cpu_threads(), 3);
  }
  {
    ScopedEnv e("CPU_THREADS", nullptr);
    EXPECT_GE(cpu_threads(), 1);  // the CPUs this process may run on
  }
  ScopedEnv e("CPU_THREADS", "0");
  try {
    cpu_threads();
    FAIL() << "CPU_THREADS=0 must throw";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("CPU_THREADS=0"), std::string::npos) << err.what();
  }
}

// *** a program's threaded entry ***

TEST(CPUThreads, ProgramRunsGlobalSizeShares) {
  // each share writes its core id into its slice: [N*core/ncores, N*(core+1)/ncores)
  const std::string src = R"(
void E_10(int* restrict data0, const int tg_core, const int tg_ncores) {
  int lo = (int)(10ll*tg_core/tg_ncores), hi = (int)(10ll*(tg_core+1)/tg_ncores);
  for (int i = lo; i < hi; i++) data0[i] = tg_core*100 + tg_ncores;
}
void tg_entry_E_10(void** bufs, const long long* vars) { (void)vars; E_10((int*)bufs[0], 0, 1); }
void tg_entry_threads_E_10(void** bufs, const long long* vars, int core, int ncores) {
  (void)vars; E_10((int*)bufs[0], core, ncores);
}
)";
  CPUProgram prg("E_10", ClangCompiler().compile(src));
  Buffer out("CPU", 10, dtypes::int32, true);
  std::vector<Opaque> bufs{out.opaque()};
  std::vector<int32_t> res(10);
  int64_t runs = CPUProgram::threaded_runs;
  prg(bufs, {}, true, {3, 1, 1});
  EXPECT_EQ(CPUProgram::threaded_runs - runs, 1);
  out.copyout(res.data(), 40);
  EXPECT_EQ(res, (std::vector<int32_t>{3, 3, 3, 103, 103, 103, 203, 203, 203, 203}));
  prg(bufs, {}, true);  // global size 1: the plain entry, the whole loop
  out.copyout(res.data(), 40);
  EXPECT_EQ(res, std::vector<int32_t>(10, 1));
}

TEST(CPUThreads, ProgramWithoutThreadedEntryRunsOnce) {
  const std::string src = R"(
void r_1(int* restrict data0) { data0[0] += 1; }
void tg_entry_r_1(void** bufs, const long long* vars) { (void)vars; r_1((int*)bufs[0]); }
)";
  CPUProgram prg("r_1", ClangCompiler().compile(src));
  Buffer out("CPU", 1, dtypes::int32, true);
  int32_t zero = 0, r = -1;
  out.copyin(&zero, 4);
  std::vector<Opaque> bufs{out.opaque()};
  prg(bufs, {}, true, {4, 1, 1});
  out.copyout(&r, 4);
  EXPECT_EQ(r, 1);
}

// *** kernels split across cores ***

namespace {

// the realized outputs of make() with CPU_THREADS=threads, as raw bytes; make builds fresh tensors each time
std::vector<std::vector<uint8_t>> run_with_threads(const char* threads,
                                                   const std::function<std::vector<Tensor>()>& make) {
  ScopedEnv e("CPU_THREADS", threads);
  std::vector<Tensor> outs = make();
  Tensor::realize(outs);
  std::vector<std::vector<uint8_t>> ret;
  for (const Tensor& t : outs) ret.push_back(t.data_bytes());
  return ret;
}

// runs make() with 1, 2, 3 and 7 threads: the same bits each time, and some kernel ran split across cores
void expect_same_bits(const std::function<std::vector<Tensor>()>& make) {
  auto one = run_with_threads("1", make);
  int64_t runs = CPUProgram::threaded_runs;
  for (const char* n : {"2", "3", "7"}) EXPECT_EQ(run_with_threads(n, make), one) << "CPU_THREADS=" << n;
  EXPECT_GT(CPUProgram::threaded_runs - runs, 0) << "no kernel was split across cores";
}

std::vector<float> host(int64_t n, uint32_t seed) {  // a fixed pseudo-random pattern in [-1, 1)
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 12345u;
  for (auto& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) / static_cast<float>(1 << 23) - 1.0f;
  }
  return v;
}

// an (M, K) x (K, N) matmul: the same bits on every thread count, and float64 loops' values
void expect_matmul_same_bits_and_correct(int64_t M, int64_t K, int64_t N, uint32_t seed) {
  auto a = host(M * K, seed), b = host(K * N, seed + 1);
  auto make = [&] { return std::vector<Tensor>{Tensor(a, {M, K}).matmul(Tensor(b, {K, N}))}; };
  expect_same_bits(make);
  std::vector<float> got = make()[0].tolist<float>();
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double ref = 0;
      for (int64_t k = 0; k < K; k++) ref += double(a[size_t(i * K + k)]) * double(b[size_t(k * N + j)]);
      ASSERT_NEAR(got[size_t(i * N + j)], ref, 1e-4) << i << "," << j;
    }
}

}  // namespace

TEST(CPUThreads, MatmulSameBitsAndCorrect) { expect_matmul_same_bits_and_correct(67, 96, 130, 1); }

TEST(CPUThreads, ConvForwardBackwardSameBits) {
  auto x = host(6 * 3 * 14 * 14, 3), w = host(8 * 3 * 5 * 5, 4);
  expect_same_bits([&] {
    Tensor xt = Tensor(x, {6, 3, 14, 14}), wt = Tensor(w, {8, 3, 5, 5});
    xt.requires_grad_(), wt.requires_grad_();
    Tensor out = xt.conv2d(wt, std::nullopt, {.padding = {1}}).relu().max_pool2d();
    Tensor loss = out.sum();
    std::vector<Tensor> g = loss.gradient({xt, wt});
    return std::vector<Tensor>{out, g[0], g[1]};
  });
}

TEST(CPUThreads, ReductionsAndElementwiseSameBits) {
  auto x = host(300 * 257, 5);
  expect_same_bits([&] {
    Tensor t = Tensor(x, {300, 257});
    return std::vector<Tensor>{t.sum(1),    t.max(0), (t * 2 + 1).relu().sqrt(), t.pad({{3, 2}, {0, 5}}, 1.5).exp(),
                               t.cumsum(1), t.sum()};
  });
}

TEST(CPUThreads, VectorTileMatmulSplitsAcrossCores) {
  // big enough for the CPU vector tile (codegen/cpu_tiles.h): its kernel must be split across cores too
  expect_matmul_same_bits_and_correct(128, 128, 128, 7);
}

TEST(CPUThreads, VectorTileConvMatchesFloat64) {
  // a conv big enough for the CPU vector tiles, forward and both gradients, against float64 loops
  const int64_t B = 4, C = 32, H = 24, K = 5, O = H - K + 1;
  auto x = host(B * C * H * H, 9), w = host(C * C * K * K, 10), g = host(B * C * O * O, 11);
  Tensor tx = Tensor(x, {B, C, H, H}), tw = Tensor(w, {C, C, K, K});
  tx.requires_grad_(), tw.requires_grad_();
  Tensor out = tx.conv2d(tw);
  std::vector<Tensor> grads = (out * Tensor(g, {B, C, O, O})).sum().gradient({tx, tw});
  Tensor::realize({out, grads[0], grads[1]});
  std::vector<float> o = out.tolist<float>(), gx = grads[0].tolist<float>(), gw = grads[1].tolist<float>();
  std::vector<double> ro(o.size()), rgx(gx.size()), rgw(gw.size());
  auto X = [&](int64_t b, int64_t c, int64_t y, int64_t xx) { return size_t(((b * C + c) * H + y) * H + xx); };
  auto W = [&](int64_t co, int64_t ci, int64_t ky, int64_t kx) { return size_t(((co * C + ci) * K + ky) * K + kx); };
  auto G = [&](int64_t b, int64_t c, int64_t y, int64_t xx) { return size_t(((b * C + c) * O + y) * O + xx); };
  for (int64_t b = 0; b < B; b++)
    for (int64_t co = 0; co < C; co++)
      for (int64_t oy = 0; oy < O; oy++)
        for (int64_t ox = 0; ox < O; ox++)
          for (int64_t ci = 0; ci < C; ci++)
            for (int64_t ky = 0; ky < K; ky++)
              for (int64_t kx = 0; kx < K; kx++) {
                double xv = x[X(b, ci, oy + ky, ox + kx)], wv = w[W(co, ci, ky, kx)], gv = g[G(b, co, oy, ox)];
                ro[G(b, co, oy, ox)] += xv * wv;
                rgx[X(b, ci, oy + ky, ox + kx)] += gv * wv;
                rgw[W(co, ci, ky, kx)] += gv * xv;
              }
  auto check = [](const std::vector<float>& got, const std::vector<double>& ref, double tol, const char* what) {
    for (size_t i = 0; i < ref.size(); i++) ASSERT_NEAR(got[i], ref[i], tol) << what << " at " << i;
  };
  check(o, ro, 1e-4, "out");
  check(gx, rgx, 1e-4, "grad x");
  check(gw, rgw, 1e-3, "grad w");
}
