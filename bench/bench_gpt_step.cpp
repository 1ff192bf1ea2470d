// ms per training step of the character-level GPT (examples/gpt.h, as examples/train_gpt.cpp trains it): forward,
// backward and the AdamW step under TinyJit, dropout on, on a fixed batch of random tokens. bench/bench_gpt_step.py
// times the same model and step in PyTorch's CPU eager mode and prints both side by side with the ratio.
//
//   ./bench_gpt_step [--bs 16] [--ctx 256] [--layers 6] [--embd 384] [--heads 6] [--steps 5] [--json out.json]
// The first 3 steps (run, capture, first replay) are warm-up; the figure is the median of the others. Peak resident
// memory (ru_maxrss) is reported beside it.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "../examples/gpt.h"
#include "step_timer.h"
#include "tg/tensor/jit.h"

using namespace tg;

int main(int argc, char** argv) {
  int64_t bs = 16, steps = 5;
  gpt::GPTConfig cfg{.vocab_size = 113};  // the fortunes corpus has 113 characters
  std::string json;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    int64_t v = std::atoll(argv[i + 1]);
    if (a == "--bs") bs = v;
    if (a == "--steps") steps = v;
    if (a == "--ctx") cfg.block_size = v;
    if (a == "--layers") cfg.n_layer = v;
    if (a == "--embd") cfg.n_embd = v;
    if (a == "--heads") cfg.n_head = v;
    if (a == "--json") json = argv[i + 1];
  }
  int64_t T = cfg.block_size;
  Tensor::manual_seed(0);
  gpt::GPT model(cfg);
  gpt::GPTOptimizer opt(model, 3e-4, 0.1);
  TinyJit train_step([&](Tensor x, Tensor y) { return gpt::train_step_body(model, opt, x, y); });
  std::vector<int32_t> xs(static_cast<size_t>(bs * T)), ys(xs.size());
  for (size_t i = 0; i < xs.size(); i++) {
    xs[i] = static_cast<int32_t>((i * 2654435761u >> 8) % 113);
    ys[i] = static_cast<int32_t>((i * 40503u >> 4) % 113);
  }
  double median = bench::median_step_ms(steps, [&] {
    Tensor x = Tensor(xs, {bs, T}), y = Tensor(ys, {bs, T});
    return train_step(x, y).item<float>();
  });
  double tok_s = static_cast<double>(bs * T) / (median / 1e3);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double rss_mb = static_cast<double>(ru.ru_maxrss) / 1024;
  std::printf(
      "tinygrad.cpp: %.1f ms per step, %.0f tokens/s (%.2fM params, batch %lld x %lld, median of %lld), "
      "peak RSS %.0f MB\n",
      median, tok_s, static_cast<double>(model.num_params()) / 1e6, static_cast<long long>(bs),
      static_cast<long long>(T), static_cast<long long>(steps), rss_mb);
  if (!json.empty())
    std::ofstream(json) << "{\"bs\": " << bs << ", \"ctx\": " << T << ", \"ms_per_step\": " << median
                        << ", \"tokens_per_s\": " << tok_s << ", \"peak_rss_mb\": " << rss_mb << "}\n";
  return 0;
}
