#pragma once
// the median time of a training step, shared by bench/bench_mnist_step.cpp and bench/bench_gpt_step.cpp: `step` runs
// steps + 3 times (the first 3, a TinyJit's run, capture and first replay, are warm-up) and returns the loss; each
// step's time and loss go to stderr
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

namespace tg::bench {

inline double median_step_ms(int64_t steps, const std::function<float()>& step) {
  std::vector<double> ms;
  for (int64_t i = 0; i < steps + 3; i++) {
    auto st = std::chrono::steady_clock::now();
    float loss = step();
    double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - st).count();
    if (i >= 3) ms.push_back(t);
    std::fprintf(stderr, "step %lld: %.1f ms (loss %.3f)\n", static_cast<long long>(i), t, static_cast<double>(loss));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace tg::bench
