// The distributed cases, each run under mpirun by tests/distributed/run_mpi.sh, which checks what they print:
//   mpi_cases allreduce   sums, products and maxes across the ranks, eager and replayed by TinyJit; rank_slice
//   mpi_cases train       a data-parallel MLP's losses, one line a step from rank 0 (the script compares the loss
//                         curve of 2 ranks with 1 process on the same global batch)
//   mpi_cases mismatch    rank r allreduces r+4 elements: every rank raises, naming both sizes
//   mpi_cases hang        rank 1 sleeps instead of joining the allreduce: rank 0 raises within MPI_TIMEOUT, naming it
//   mpi_cases die         rank 1 exits before the allreduce: the job stops (mpirun names the rank)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tg/distributed/distributed.h"
#include "tg/nn/nn.h"
#include "tg/nn/optim.h"
#include "tg/nn/state.h"
#include "tg/tensor/jit.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

int fails = 0;
void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::printf("rank %d: FAILED: %s\n", distributed::world().rank, what.c_str());
  fails++;
}

void allreduce_cases() {
  const distributed::World& w = distributed::world();
  const float r = static_cast<float>(w.rank), n = static_cast<float>(w.size);
  // rank r holds r+1, r+2, ...: the sum over ranks of (r + k) is n*k + n(n-1)/2
  Tensor t = Tensor::arange(6, {.dtype = dtypes::float32}).reshape({2, 3}) + (r + 1);
  std::vector<float> sum = distributed::allreduce(t).tolist<float>();
  for (size_t k = 0; k < sum.size(); k++)
    expect(sum[k] == n * (static_cast<float>(k) + 1) + n * (n - 1) / 2, cat("sum[", k, "] = ", sum[k]));
  std::vector<float> mx = distributed::allreduce(t, Ops::MAX).tolist<float>();
  for (size_t k = 0; k < mx.size(); k++) expect(mx[k] == static_cast<float>(k) + n, cat("max[", k, "] = ", mx[k]));
  std::vector<int32_t> prod = distributed::allreduce(Tensor::full({4}, int32_t(2)), Ops::MUL).tolist<int32_t>();
  for (int32_t v : prod) expect(v == (1 << w.size), cat("prod = ", v));
  // under TinyJit the allreduce is captured with the kernels around it and replayed with each call's input
  TinyJit f([](Tensor x) { return (distributed::allreduce(x * 2) + 1).realize(); });
  for (int i = 0; i < 4; i++) {
    Tensor x = Tensor::full({5}, static_cast<float>(i) + r).contiguous().realize();
    float want = 2 * (static_cast<float>(i) * n + n * (n - 1) / 2) + 1;
    for (float v : f(x).tolist<float>()) expect(v == want, cat("jit call ", i, ": ", v, " != ", want));
  }
  // rank_slice: this rank's rows
  std::vector<float> mine =
      distributed::rank_slice(Tensor::arange(4 * w.size, {.dtype = dtypes::float32})).tolist<float>();
  expect(mine.size() == 4 && mine[0] == 4 * r, cat("rank_slice starts at ", mine.empty() ? -1.f : mine[0]));
  try {
    distributed::rank_slice(Tensor::ones({2 * w.size + 1}));
    expect(w.size == 1, "an uneven rank_slice raised nothing");
  } catch (const Error& e) {
    expect(std::strstr(e.what(), "evenly") != nullptr, e.what());
  }
  if (w.rank == 0) std::printf("allreduce cases: %s\n", fails ? "FAILED" : "ok");
}

// an MLP trained data-parallel: each rank takes its slice of the same global batch
struct MLP {
  nn::Linear l1{64, 32}, l2{32, 10};
  TG_PARAMS(l1, l2)
  Tensor operator()(const Tensor& x) { return l2(l1(x).relu()); }
};

void train() {
  const distributed::World& w = distributed::world();
  Tensor::manual_seed(7);
  MLP model;
  std::vector<Tensor> params = nn::state::get_parameters(model);
  auto opt = nn::optim::Adam(params, {.lr = 0.01});
  const int64_t bs = 32, n = 512;
  // labels a linear teacher gives: learnable, so the loss falls
  Tensor X = Tensor::randn({n, 64}).realize(), Y = X.matmul(Tensor::randn({64, 10})).argmax(1).realize();
  TinyJit step([&](Tensor x, Tensor y) {
    Tensor::train t;
    opt.zero_grad();
    Tensor loss = model(x).sparse_categorical_crossentropy(y);
    loss.backward();
    distributed::allreduce_grads(params);
    opt.step();
    return distributed::allreduce(loss) / static_cast<double>(w.size);
  });
  std::mt19937 rng(1);
  for (int i = 0; i < 12; i++) {
    int64_t start = static_cast<int64_t>(rng() % static_cast<uint32_t>(n / bs)) * bs;
    Tensor xb = distributed::rank_slice(X.shrink({{start, start + bs}, {0, 64}})).contiguous();
    Tensor yb = distributed::rank_slice(Y.shrink({{start, start + bs}})).contiguous();
    float loss = step(xb, yb).item<float>();
    if (w.rank == 0) std::printf("step %d loss %.9g\n", i + 1, static_cast<double>(loss));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  try {
    const distributed::World& w = distributed::world();
    std::printf("rank %d of %d\n", w.rank, w.size);
    std::fflush(stdout);
    if (mode == "allreduce") {
      allreduce_cases();
    } else if (mode == "train") {
      train();
    } else if (mode == "mismatch") {
      distributed::allreduce(Tensor::ones({4 + w.rank})).realize();
    } else if (mode == "hang" || mode == "die") {
      distributed::allreduce(Tensor::ones({4})).realize();  // once together
      if (w.rank == 1 && mode == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
      if (w.rank == 1) _exit(3);
      distributed::allreduce(Tensor::ones({4})).realize();
    } else {
      std::fprintf(stderr, "usage: mpi_cases allreduce|train|mismatch|hang|die\n");
      return 2;
    }
  } catch (const Error& e) {
    std::printf("error: %s\n", e.what());
    std::fflush(stdout);
    return 1;
  }
  std::fflush(stdout);
  return fails ? 1 : 0;
}
