// ms per training step of tinygrad's beautiful_mnist model (examples/beautiful_mnist.h): forward, backward and an
// Adam step under TinyJit, on a fixed batch of synthetic digits. bench/bench_mnist_step.py times the same model,
// batch and step in PyTorch's CPU eager mode and prints both side by side with the ratio.
//
//   ./bench_mnist_step [--bs 512] [--steps 10] [--devices N] [--json out.json]
// --devices N: then the same step with the model on CPU:0..N-1 and the batch sharded across them (tinygrad's
// beautiful_mnist_multigpu), and its ratio to one device's.
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

namespace {

// ms per step of a fresh model on `devices` (one name: plain; several: the model replicated on each, the batch
// sharded across them on axis 0, tinygrad's beautiful_mnist_multigpu)
double step_ms(const std::vector<std::string>& devices, int64_t bs, int64_t steps) {
  Tensor::manual_seed(0);
  Model model;
  if (devices.size() > 1)
    for (auto& [name, t] : nn::state::get_state_dict(model)) t.shard_(devices);
  auto opt = nn::optim::Adam(nn::state::get_parameters(model));
  TinyJit train_step([&](Tensor x, Tensor y) { return train_step_body(model, opt, x, y); });
  std::vector<uint8_t> xs(static_cast<size_t>(bs * 784)), ys(static_cast<size_t>(bs));
  for (size_t i = 0; i < xs.size(); i++) xs[i] = static_cast<uint8_t>((i * 2654435761u) >> 24);
  for (size_t i = 0; i < ys.size(); i++) ys[i] = static_cast<uint8_t>(i % 10);
  return bench::median_step_ms(steps, [&] {
    Tensor x = Tensor(xs, {bs, 1, 28, 28}), y = Tensor(ys, {bs});
    if (devices.size() > 1) x = x.shard(devices, 0), y = y.shard(devices, 0);
    return train_step(x, y).item<float>();
  });
}

}  // namespace

int main(int argc, char** argv) {
  int64_t bs = 512, steps = 10, ndev = 1;
  std::string json;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--bs") bs = std::atoll(argv[i + 1]);
    if (a == "--steps") steps = std::atoll(argv[i + 1]);
    if (a == "--devices") ndev = std::atoll(argv[i + 1]);
    if (a == "--json") json = argv[i + 1];
  }
  const double median = step_ms({"CPU"}, bs, steps);
  std::printf("tinygrad.cpp: %.1f ms per step (batch %lld, median of %lld)\n", median, static_cast<long long>(bs),
              static_cast<long long>(steps));
  if (ndev > 1) {  // the same step data parallel over CPU:0..N-1, after the one-device figure of the same run
    std::vector<std::string> devices{"CPU"};
    for (int64_t d = 1; d < ndev; d++) devices.push_back("CPU:" + std::to_string(d));
    const double multi = step_ms(devices, bs, steps);
    std::printf("tinygrad.cpp on %lld devices (CPU:0..%lld, the batch sharded): %.1f ms per step, %.2fx one device's\n",
                static_cast<long long>(ndev), static_cast<long long>(ndev - 1), multi, median / multi);
  }
  if (!json.empty()) std::ofstream(json) << "{\"bs\": " << bs << ", \"ms_per_step\": " << median << "}\n";
  return 0;
}
