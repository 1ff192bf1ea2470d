#pragma once
// llm: choosing the next token from the logits (llama.cpp's default sampler chain, in its order): a repetition
// penalty on the last tokens, top-k, top-p, min-p, then temperature and a draw from the distribution that is left.
// A temperature of 0 is greedy (the likeliest token). Deterministic for a seed.
//
//   llm::Sampler s({.temperature = 0.8, .top_k = 40, .top_p = 0.95, .seed = 42});
//   int64_t next = s.sample(logits.tolist<float>(), history);
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace tg::llm {

struct SamplingParams {
  double temperature = 0.0;     // 0: greedy
  int64_t top_k = 0;            // 0: all tokens
  double top_p = 1.0;           // the smallest set of likeliest tokens whose probabilities sum to at least top_p
  double min_p = 0.0;           // tokens at least min_p times as likely as the likeliest
  double repeat_penalty = 1.0;  // a logit of a recent token: divided by it when positive, multiplied when negative
  int64_t repeat_last_n = 64;   // how many of the last tokens count as recent
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(SamplingParams p = {});
  // the next token id; history: the tokens so far (for the repetition penalty). Bad parameters or empty or non-finite
  // logits are a ValueError.
  int64_t sample(std::span<const float> logits, std::span<const int64_t> history = {});
  const SamplingParams& params() const { return p_; }

 private:
  SamplingParams p_;
  std::mt19937_64 rng_;
};

}  // namespace tg::llm
