// Allreduce speed, two ways (issue: many devices and many machines).
//
//   mpirun -np 2 ./build/bench/bench_allreduce ranks [--max-mb 256]
//     Across MPI ranks: tg::distributed's allreduce against MPI's own MPI_Allreduce on the same buffers, float32 sums
//     of 1 KB to 256 MB. Two figures of ours: the allreduce step as a TinyJit replay runs it (its ExecItem: the
//     runner, its size check, the poll for completion), and a whole TinyJit call of a function that is only the
//     allreduce (input checks and output tensor included). Rank 0 prints medians of timed blocks, alternated with
//     MPI's; the ratio is MPI's time over ours (>1: ours is faster).
//
//   ./build/bench/bench_allreduce devices
//     Across devices in one process: the ALLREDUCE a sum over a sharded axis becomes, naive (RING=0) and ring
//     (RING=2), on CPU:0..3, each as a TinyJit replay.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tg/distributed/distributed.h"
#include "tg/engine/realize.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/buffers.h"
#include "tg/tensor/jit.h"
#include "tg/tensor/tensor.h"

#ifdef TG_HAVE_MPI
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

using namespace tg;

namespace {

using clk = std::chrono::steady_clock;

// the median over `blocks` of the per-call time of `reps` calls, in microseconds; `before` runs before each block
double median_us(int blocks, int64_t reps, const std::function<void()>& call, const std::function<void()>& before) {
  std::vector<double> us;
  for (int b = 0; b < blocks; b++) {
    before();
    auto st = clk::now();
    for (int64_t r = 0; r < reps; r++) call();
    us.push_back(std::chrono::duration<double, std::micro>(clk::now() - st).count() / static_cast<double>(reps));
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

std::string size_str(int64_t bytes) {
  char b[32];
  if (bytes >= (1 << 20))
    std::snprintf(b, sizeof(b), "%lld MB", static_cast<long long>(bytes >> 20));
  else
    std::snprintf(b, sizeof(b), "%lld KB", static_cast<long long>(bytes >> 10));
  return b;
}

int ranks(int64_t max_mb) {
#ifdef TG_HAVE_MPI
  const distributed::World& w = distributed::world();
  if (w.size < 2) {
    std::fprintf(stderr, "bench_allreduce ranks: start it with mpirun -np 2 (or more)\n");
    return 2;
  }
  if (w.rank == 0)
    std::printf(
        "allreduce over %d MPI ranks (%s), float32 sum; medians in us; ratio = MPI / ours\n%10s %12s %12s %12s "
        "%8s %8s\n",
        w.size, distributed::mpi_library_version().c_str(), "size", "MPI", "ours:step", "ours:jit", "r:step", "r:jit");
  for (int64_t bytes = 1024; bytes <= max_mb << 20; bytes *= 4) {
    const int64_t n = bytes / 4;
    Tensor x = Tensor::randn({n}).realize();
    TinyJit f([](Tensor t) { return distributed::allreduce(t); });
    Tensor out = f(x);
    for (int i = 0; i < 2; i++) out = f(x);  // run, capture, replay
    Buffer src = uop_buffer(uop_base(x.uop())), dst = uop_buffer(uop_base(out.uop()));
    ExecItem step{f.jit_cache().at(0).prg, {dst, src}, {}, {}};
    // about 50 ms a block
    const int64_t reps = std::max<int64_t>(2, std::min<int64_t>(20'000, (50'000'000 / 4) / std::max<int64_t>(n, 1)));
    auto barrier = [] { MPI_Barrier(MPI_COMM_WORLD); };
    std::vector<double> m, s, j;
    for (int round = 0; round < 5; round++) {  // alternated, so drift hits all three alike
      m.push_back(median_us(
          1, reps,
          [&] {
            MPI_Allreduce(src.host_ptr(), dst.host_ptr(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
          },
          barrier));
      s.push_back(median_us(
          1, reps, [&] { step.run(); }, barrier));
      j.push_back(median_us(
          1, reps, [&] { out = f(x); }, barrier));
    }
    auto med = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double mpi = med(m), ours_step = med(s), ours_jit = med(j);
    if (w.rank == 0)
      std::printf("%10s %12.2f %12.2f %12.2f %8.2f %8.2f\n", size_str(bytes).c_str(), mpi, ours_step, ours_jit,
                  mpi / ours_step, mpi / ours_jit);
    std::fflush(stdout);
  }
  return 0;
#else
  (void)max_mb;
  std::fprintf(stderr, "bench_allreduce ranks: built without MPI (%s)\n", distributed::mpi_library_version().c_str());
  return 2;
#endif
}

int devices() {
  const std::vector<std::string> four{"CPU", "CPU:1", "CPU:2", "CPU:3"};
  std::printf(
      "ALLREDUCE over CPU:0..3 (a sum over the sharded axis), float32, TinyJit replays; medians in us\n"
      "%10s %12s %12s %8s\n",
      "size", "naive", "ring", "naive/ring");
  for (int64_t bytes = 1 << 20; bytes <= (64 << 20); bytes *= 4) {
    const int64_t n = bytes / 4;
    Tensor x = Tensor::randn({4, n}).shard(four, 0).realize();
    auto time_ring = [&](int64_t ring) {
      Context ctx{{"RING", ring}};
      TinyJit f([](Tensor t) { return t.sum(0).realize(); });
      for (int i = 0; i < 3; i++) f(x);
      const int64_t reps = std::max<int64_t>(2, 20'000'000 / bytes);
      return median_us(
          5, reps, [&] { f(x); }, [] {});
    };
    double naive = time_ring(0), ring = time_ring(2);
    std::printf("%10s %12.1f %12.1f %8.2f\n", size_str(bytes).c_str(), naive, ring, naive / ring);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  int64_t max_mb = 256;
  for (int i = 2; i + 1 < argc; i += 2)
    if (std::strcmp(argv[i], "--max-mb") == 0) max_mb = std::atoll(argv[i + 1]);
  try {
    if (mode == "ranks") return ranks(max_mb);
    if (mode == "devices") return devices();
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_allreduce: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: mpirun -np 2 bench_allreduce ranks [--max-mb 256] | bench_allreduce devices\n");
  return 2;
}
