// ms per training step of tinygrad's beautiful_mnist model (examples/beautiful_mnist.h): forward, backward and an
// Adam step under TinyJit, on a fixed batch of synthetic digits. bench/bench_mnist_step.py times the same model,
// batch and step in PyTorch's CPU eager mode and prints both side by side with the ratio.
//
//   ./bench_mnist_step [--bs 512] [--steps 10] [--json out.json]
// The first 3 steps (run, capture, first replay) are warm-up; the figure is the median of the others.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "../examples/beautiful_mnist.h"
#include "step_timer.h"
#include "tg/nn/optim.h"
#include "tg/tensor/jit.h"

using namespace tg;

int main(int argc, char** argv) {
  int64_t bs = 512, steps = 10;
  std::string json;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--bs") bs = std::atoll(argv[i + 1]);
    if (a == "--steps") steps = std::atoll(argv[i + 1]);
    if (a == "--json") json = argv[i + 1];
  }
  Tensor::manual_seed(0);
  Model model;
  auto opt = nn::optim::Adam(nn::state::get_parameters(model));
  TinyJit train_step([&](Tensor x, Tensor y) { return train_step_body(model, opt, x, y); });
  std::vector<uint8_t> xs(static_cast<size_t>(bs * 784)), ys(static_cast<size_t>(bs));
  for (size_t i = 0; i < xs.size(); i++) xs[i] = static_cast<uint8_t>((i * 2654435761u) >> 24);
  for (size_t i = 0; i < ys.size(); i++) ys[i] = static_cast<uint8_t>(i % 10);
  double median = bench::median_step_ms(steps, [&] {
    Tensor x = Tensor(xs, {bs, 1, 28, 28}), y = Tensor(ys, {bs});
    return train_step(x, y).item<float>();
  });
  std::printf("tinygrad.cpp: %.1f ms per step (batch %lld, median of %lld)\n", median, static_cast<long long>(bs),
              static_cast<long long>(steps));
  if (!json.empty()) std::ofstream(json) << "{\"bs\": " << bs << ", \"ms_per_step\": " << median << "}\n";
  return 0;
}
