#include "tg/llm/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

#include "tg/helpers/helpers.h"

namespace tg::llm {

Sampler::Sampler(SamplingParams p) : p_(p), rng_(p.seed) {
  TG_CHECK_AS(ValueError, p.temperature >= 0 && std::isfinite(p.temperature), "temperature must be >= 0, got ",
              p.temperature);
  TG_CHECK_AS(ValueError, p.top_k >= 0, "top_k must be >= 0, got ", p.top_k);
  TG_CHECK_AS(ValueError, p.top_p > 0 && p.top_p <= 1, "top_p must be in (0, 1], got ", p.top_p);
  TG_CHECK_AS(ValueError, p.min_p >= 0 && p.min_p <= 1, "min_p must be in [0, 1], got ", p.min_p);
  TG_CHECK_AS(ValueError, p.repeat_penalty > 0 && std::isfinite(p.repeat_penalty), "repeat_penalty must be > 0, got ",
              p.repeat_penalty);
  TG_CHECK_AS(ValueError, p.repeat_last_n >= 0, "repeat_last_n must be >= 0, got ", p.repeat_last_n);
}

int64_t Sampler::sample(std::span<const float> logits, std::span<const int64_t> history) {
  const auto n = static_cast<int64_t>(logits.size());
  TG_CHECK_AS(ValueError, n > 0, "sampling from empty logits");
  std::vector<double> l(logits.begin(), logits.end());
  for (int64_t i = 0; i < n; i++)
    TG_CHECK_AS(ValueError, !std::isnan(l[static_cast<size_t>(i)]), "logit ", i, " is NaN");
  if (p_.repeat_penalty != 1.0 && p_.repeat_last_n > 0) {
    std::unordered_set<int64_t> recent;
    size_t from = history.size() > static_cast<size_t>(p_.repeat_last_n)
                      ? history.size() - static_cast<size_t>(p_.repeat_last_n)
                      : 0;
    for (size_t i = from; i < history.size(); i++) recent.insert(history[i]);
    for (int64_t t : recent)
      if (t >= 0 && t < n) {
        double& x = l[static_cast<size_t>(t)];
        x = x > 0 ? x / p_.repeat_penalty : x * p_.repeat_penalty;
      }
  }
  // candidates, likeliest first (ties: the lower id first, so greedy is argmax's first); only as many sorted as
  // are kept (a vocabulary's full sort each token cost 1-2 ms)
  auto likelier = [&](int64_t a, int64_t b) {
    const double x = l[static_cast<size_t>(a)], y = l[static_cast<size_t>(b)];
    return x > y || (x == y && a < b);
  };
  std::vector<int64_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  const int64_t kept = p_.temperature == 0.0 ? 1 : p_.top_k > 0 && p_.top_k < n ? p_.top_k : n;
  std::partial_sort(ids.begin(), ids.begin() + kept, ids.end(), likelier);
  ids.resize(static_cast<size_t>(kept));
  TG_CHECK_AS(ValueError, std::isfinite(l[static_cast<size_t>(ids[0])]), "the likeliest logit is ",
              l[static_cast<size_t>(ids[0])], ": no distribution to sample from");
  if (p_.temperature == 0.0) return ids[0];
  auto probs = [&](double temp) {  // softmax of the candidates' logits at a temperature
    std::vector<double> p(ids.size());
    double mx = l[static_cast<size_t>(ids[0])], sum = 0;
    for (size_t i = 0; i < ids.size(); i++) sum += p[i] = std::exp((l[static_cast<size_t>(ids[i])] - mx) / temp);
    for (double& x : p) x /= sum;
    return p;
  };
  if (p_.top_p < 1.0) {
    std::vector<double> p = probs(1.0);
    double cum = 0;
    size_t keep = 0;
    while (keep < ids.size() && cum < p_.top_p) cum += p[keep++];
    ids.resize(std::max<size_t>(keep, 1));
  }
  if (p_.min_p > 0.0) {
    std::vector<double> p = probs(1.0);
    size_t keep = 0;
    while (keep < ids.size() && p[keep] >= p_.min_p * p[0]) keep++;
    ids.resize(std::max<size_t>(keep, 1));
  }
  std::vector<double> p = probs(p_.temperature);
  std::discrete_distribution<size_t> pick(p.begin(), p.end());
  return ids[pick(rng_)];
}

}  // namespace tg::llm
