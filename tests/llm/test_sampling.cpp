// The Sampler (llm/sampling.h): greedy at temperature 0, the filters of llama.cpp's chain (repetition penalty, top-k,
// top-p, min-p), draws that follow the distribution and repeat for a seed, and bad parameters as ValueErrors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "tg/helpers/helpers.h"
#include "tg/llm/sampling.h"

using namespace tg;
using llm::Sampler;

namespace {
std::map<int64_t, int> draws(llm::SamplingParams p, const std::vector<float>& logits, int n,
                             const std::vector<int64_t>& history = {}) {
  Sampler s(p);
  std::map<int64_t, int> count;
  for (int i = 0; i < n; i++) count[s.sample(logits, history)]++;
  return count;
}
}  // namespace

TEST(Sampling, TemperatureZeroIsGreedy) {
  Sampler s;
  EXPECT_EQ(s.sample(std::vector<float>{0.1f, 2.0f, -1.0f, 2.0f}), 1);  // the first of a tie, as argmax
}

TEST(Sampling, DrawsFollowTheDistributionAndRepeatForASeed) {
  std::vector<float> logits{std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  auto c = draws({.temperature = 1.0, .seed = 7}, logits, 20000);
  EXPECT_NEAR(c[0] / 20000.0, 0.5, 0.02);
  EXPECT_NEAR(c[1] / 20000.0, 0.3, 0.02);
  EXPECT_NEAR(c[2] / 20000.0, 0.2, 0.02);
  EXPECT_EQ(draws({.temperature = 1.0, .seed = 7}, logits, 200), draws({.temperature = 1.0, .seed = 7}, logits, 200));
  EXPECT_NE(draws({.temperature = 1.0, .seed = 7}, logits, 200), draws({.temperature = 1.0, .seed = 8}, logits, 200));
  // a low temperature sharpens: the likeliest token almost always
  EXPECT_GT(draws({.temperature = 0.05, .seed = 1}, logits, 1000)[0], 990);
}

TEST(Sampling, FiltersKeepOnlyTheirTokens) {
  std::vector<float> logits{std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)};
  auto k = draws({.temperature = 1.0, .top_k = 2, .seed = 3}, logits, 2000);
  EXPECT_EQ(k.size(), 2u);
  EXPECT_TRUE(k.count(0) && k.count(1));
  auto p = draws({.temperature = 1.0, .top_p = 0.65, .seed = 3}, logits, 2000);  // 0.4 + 0.3 >= 0.65
  EXPECT_EQ(p.size(), 2u);
  auto m = draws({.temperature = 1.0, .min_p = 0.6, .seed = 3}, logits, 2000);  // p >= 0.24: tokens 0 and 1
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(draws({.temperature = 1.0, .top_k = 1, .seed = 3}, logits, 100), (std::map<int64_t, int>{{0, 100}}));
}

TEST(Sampling, RepetitionPenaltyOnRecentTokens) {
  std::vector<float> logits{2.0f, 1.9f, -1.0f};
  Sampler s({.repeat_penalty = 1.5});
  EXPECT_EQ(s.sample(logits, std::vector<int64_t>{0}), 1);     // 2.0 / 1.5 < 1.9
  EXPECT_EQ(s.sample(logits, std::vector<int64_t>{5, 7}), 0);  // out-of-range ids are ignored
  Sampler last1({.repeat_penalty = 1.5, .repeat_last_n = 1});
  EXPECT_EQ(last1.sample(logits, std::vector<int64_t>{0, 2}), 0);  // only token 2 counts as recent
}

TEST(Sampling, BadInputIsAValueError) {
  EXPECT_THROW(Sampler({.temperature = -1}), ValueError);
  EXPECT_THROW(Sampler({.top_p = 0}), ValueError);
  EXPECT_THROW(Sampler({.min_p = 2}), ValueError);
  EXPECT_THROW(Sampler({.repeat_penalty = 0}), ValueError);
  Sampler s({.temperature = 1.0});
  EXPECT_THROW(s.sample(std::vector<float>{}), ValueError);
  EXPECT_THROW(s.sample(std::vector<float>{1.0f, std::nanf("")}), ValueError);
  float ninf = -std::numeric_limits<float>::infinity();
  EXPECT_THROW(s.sample(std::vector<float>{ninf, ninf}), ValueError);
}
