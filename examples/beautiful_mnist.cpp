// MNIST training, as tinygrad's examples/beautiful_mnist.py: a small convnet, Adam, the train step under TinyJit.
//
//   python3 tools/fetch_mnist.py              # the IDX files into data/mnist/ (once)
//   ./build/examples/beautiful_mnist          # STEPS=70 BS=512 by default; MNIST_DIR=data/mnist
//   FASHION=1 ./build/examples/beautiful_mnist  # Fashion-MNIST, from Debian's dataset-fashion-mnist
//   STEPS=200 TARGET_EVAL_ACC_PCT=97 ./build/examples/beautiful_mnist   # exits non-zero below the target
//
//   mpirun -np 2 ./build/examples/beautiful_mnist   # data parallel over 2 MPI ranks (DP=0: each runs alone)
//   GPUS=2 ./build/examples/beautiful_mnist          # data parallel over the default device's :0 and :1 (CPU:0,
//                                                    # CPU:1), as tinygrad's beautiful_mnist_multigpu.py
//
// One change from the Python original: the batch is gathered on the host (a memcpy per sample) and passed to the
// jitted step as an input, where the original indexes X_train with a tensor of random indices (a one-hot gather
// that reads the whole training set every step; its own TODO calls it slow).
//
// Started by mpirun, each rank draws the same global batch of BS digits and trains on its slice of it; the gradients
// are averaged over the ranks before Adam's step (tg::distributed), so every rank holds the same weights and the loss
// is the global batch's. BatchNorm normalizes with each rank's own batch statistics, as PyTorch's
// DistributedDataParallel does without SyncBatchNorm. Rank 0 alone prints the progress and the accuracy.
//
// With GPUS=N, as beautiful_mnist_multigpu.py: the model is copied to each of N devices, each batch and the test set
// are sharded across them on axis 0, and the gradients' sum over the shards is the ALLREDUCE of a multi-device
// tensor; BatchNorm normalizes each device's part with its own statistics, as the reference's does.
#include "beautiful_mnist.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tg/distributed/distributed.h"
#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/nn/datasets.h"
#include "tg/nn/optim.h"
#include "tg/nn/state.h"
#include "tg/tensor/jit.h"
#include "tg/tensor/tensor.h"

using namespace tg;

int main() {
  int64_t steps = getenv("STEPS", 70), bs = getenv("BS", 512);
  double target = std::stod(getenv_str("TARGET_EVAL_ACC_PCT", "0"));
  bool fashion = getenv("FASHION", 0) != 0;
  const int64_t gpus = getenv("GPUS", 1);
  std::string dir = getenv_str("MNIST_DIR", fashion ? nn::datasets::kFashionMnistDir : nn::datasets::kMnistDir);
  try {
    const distributed::World& world = distributed::world();
    const bool dp = world.size > 1, lead = world.rank == 0;
    if (world.mpi) std::printf("rank %d of %d\n", world.rank, world.size);
    TG_CHECK(bs % world.size == 0, "BS=", bs, " doesn't split evenly over ", world.size, " ranks");
    const int64_t lbs = bs / world.size, first = lbs * world.rank;  // this rank's part of the global batch
    // (no structured binding: clang 14 can't capture one)
    nn::datasets::MNIST data = nn::datasets::mnist({.fashion = fashion, .dir = dir});
    Tensor X_train = data.X_train, Y_train = data.Y_train, X_test = data.X_test, Y_test = data.Y_test;
    int64_t n_train = X_train.shape()[0];
    std::vector<uint8_t> xs = X_train.tolist<uint8_t>(), ys = Y_train.tolist<uint8_t>();
    if (lead)
      std::printf("%s from %s: %lld train, %lld test images; %lld steps of batch %lld%s\n",
                  fashion ? "Fashion-MNIST" : "MNIST", dir.c_str(), static_cast<long long>(n_train),
                  static_cast<long long>(X_test.shape()[0]), static_cast<long long>(steps), static_cast<long long>(bs),
                  dp ? cat(" (", lbs, " on each of ", world.size, " ranks)").c_str() : "");

    Model model;
    std::vector<std::string> devices;  // GPUS=N: the default device's first N, the model on each
    for (int64_t d = 0; gpus > 1 && d < gpus; d++)
      devices.push_back(d == 0 ? Device::DEFAULT.str() : cat(Device::DEFAULT.str(), ":", d));
    if (!devices.empty()) {
      if (lead) std::printf("data parallel over %s\n", multi_device_name(devices).c_str());
      for (auto& [name, t] : nn::state::get_state_dict(model)) t.shard_(devices);  // a copy on each
      X_test.shard_(devices, 0);
      Y_test.shard_(devices, 0);
    }
    auto opt = nn::optim::Adam(nn::state::get_parameters(model));

    std::vector<Tensor> params = nn::state::get_parameters(model);
    TinyJit train_step([&](Tensor x, Tensor y) {
      if (!dp) return train_step_body(model, opt, x, y);
      Tensor::train t;
      opt.zero_grad();
      Tensor loss = model(x).sparse_categorical_crossentropy(y);
      loss.backward();
      distributed::allreduce_grads(params);  // the global batch's gradient on every rank
      opt.step();
      return distributed::allreduce(loss) / static_cast<double>(world.size);
    });
    TinyJit<Tensor()> get_test_acc([&]() -> Tensor { return (model(X_test).argmax(1) == Y_test).mean() * 100; });

    std::mt19937 rng(1337);
    std::uniform_int_distribution<int64_t> pick(0, n_train - 1);
    std::vector<uint8_t> bx(static_cast<size_t>(lbs * 784)), by(static_cast<size_t>(lbs));
    double test_acc = NAN;
    const bool losses = getenv("PRINT_LOSSES", 0) != 0;  // one line per step, full precision (tests/e2e)
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < steps; i++) {
      for (int64_t b = 0; b < bs; b++) {  // the global batch: bs random digits, of which this rank keeps its slice
        int64_t s = pick(rng), k = b - first;
        if (k < 0 || k >= lbs) continue;
        std::memcpy(&bx[static_cast<size_t>(k * 784)], &xs[static_cast<size_t>(s * 784)], 784);
        by[static_cast<size_t>(k)] = ys[static_cast<size_t>(s)];
      }
      Tensor x = Tensor(bx, {lbs, 1, 28, 28}), y = Tensor(by, {lbs});
      if (!devices.empty()) x = x.shard(devices, 0), y = y.shard(devices, 0);
      float loss = train_step(x, y).item<float>();
      if (i % 10 == 9 || i == steps - 1) test_acc = get_test_acc().item<float>();
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!lead) continue;
      if (losses)
        std::printf("step %lld loss %.9g\n", static_cast<long long>(i + 1), static_cast<double>(loss));
      else
        std::printf("\r%4lld/%lld  loss: %6.2f  test_accuracy: %5.2f%%  %5.2f steps/s", static_cast<long long>(i + 1),
                    static_cast<long long>(steps), loss, test_acc, static_cast<double>(i + 1) / secs);
      std::fflush(stdout);
    }
    if (lead) std::printf("\ntest accuracy: %.2f%%\n", test_acc);
    if (target > 0 && !(test_acc >= target && test_acc != 100.0)) {
      std::fprintf(stderr, "test_acc=%.2f < %.2f\n", test_acc, target);
      return 1;
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "beautiful_mnist: %s\n", e.what());
    return 2;
  }
  return 0;
}
