// MNIST training, as tinygrad's examples/beautiful_mnist.py: a small convnet, Adam, the train step under TinyJit.
//
//   python3 tools/fetch_mnist.py              # the IDX files into data/mnist/ (once)
//   ./build/examples/beautiful_mnist          # STEPS=70 BS=512 by default; MNIST_DIR=data/mnist
//   FASHION=1 ./build/examples/beautiful_mnist  # Fashion-MNIST, from Debian's dataset-fashion-mnist
//   STEPS=200 TARGET_EVAL_ACC_PCT=97 ./build/examples/beautiful_mnist   # exits non-zero below the target
//
// One change from the Python original: the batch is gathered on the host (a memcpy per sample) and passed to the
// jitted step as an input, where the original indexes X_train with a tensor of random indices (a one-hot gather
// that reads the whole training set every step; its own TODO calls it slow).
#include "beautiful_mnist.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

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
  std::string dir = getenv_str("MNIST_DIR", fashion ? nn::datasets::kFashionMnistDir : nn::datasets::kMnistDir);
  try {
    // (no structured binding: clang 14 can't capture one)
    nn::datasets::MNIST data = nn::datasets::mnist({.fashion = fashion, .dir = dir});
    Tensor X_train = data.X_train, Y_train = data.Y_train, X_test = data.X_test, Y_test = data.Y_test;
    int64_t n_train = X_train.shape()[0];
    std::vector<uint8_t> xs = X_train.tolist<uint8_t>(), ys = Y_train.tolist<uint8_t>();
    std::printf("%s from %s: %lld train, %lld test images; %lld steps of batch %lld\n",
                fashion ? "Fashion-MNIST" : "MNIST", dir.c_str(), static_cast<long long>(n_train),
                static_cast<long long>(X_test.shape()[0]), static_cast<long long>(steps), static_cast<long long>(bs));

    Model model;
    auto opt = nn::optim::Adam(nn::state::get_parameters(model));

    TinyJit train_step([&](Tensor x, Tensor y) { return train_step_body(model, opt, x, y); });
    TinyJit<Tensor()> get_test_acc([&]() -> Tensor { return (model(X_test).argmax(1) == Y_test).mean() * 100; });

    std::mt19937 rng(1337);
    std::uniform_int_distribution<int64_t> pick(0, n_train - 1);
    std::vector<uint8_t> bx(static_cast<size_t>(bs * 784)), by(static_cast<size_t>(bs));
    double test_acc = NAN;
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < steps; i++) {
      for (int64_t b = 0; b < bs; b++) {  // the batch: bs random digits
        int64_t s = pick(rng);
        std::memcpy(&bx[static_cast<size_t>(b * 784)], &xs[static_cast<size_t>(s * 784)], 784);
        by[static_cast<size_t>(b)] = ys[static_cast<size_t>(s)];
      }
      Tensor x = Tensor(bx, {bs, 1, 28, 28}), y = Tensor(by, {bs});
      float loss = train_step(x, y).item<float>();
      if (i % 10 == 9 || i == steps - 1) test_acc = get_test_acc().item<float>();
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("\r%4lld/%lld  loss: %6.2f  test_accuracy: %5.2f%%  %5.2f steps/s", static_cast<long long>(i + 1),
                  static_cast<long long>(steps), loss, test_acc, static_cast<double>(i + 1) / secs);
      std::fflush(stdout);
    }
    std::printf("\ntest accuracy: %.2f%%\n", test_acc);
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
