#pragma once
// Gradient checks by central finite differences in float64, for any test folder:
//   tg::test::expect_grad_matches([](const std::vector<Tensor>& x) { return x[0].exp() * x[1]; },
//                                 {{1.0, 2.0, 3.0}, {0.5, 0.5, 0.5}}, {{3}, {3}});
// f maps float64 inputs to a tensor of any shape. The checked scalar is sum(f(x) * W) for a fixed pseudo-random W,
// so every output element's gradient counts. Each input element is nudged by +-eps and the difference quotient is
// compared with Tensor::gradient.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "tg/tensor/tensor.h"

namespace tg::test {

using GradFn = std::function<Tensor(const std::vector<Tensor>&)>;

inline std::vector<double> fixed_weights(int64_t n) {  // in [0.5, 1.5): no cancellation between outputs
  std::vector<double> w(static_cast<size_t>(n));
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (auto& x : w) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = 0.5 + static_cast<double>(s >> 11) / 9007199254740992.0;
  }
  return w;
}

inline double weighted_sum(const GradFn& f, const std::vector<std::vector<double>>& values,
                           const std::vector<Shape>& shapes) {
  std::vector<Tensor> xs;
  for (size_t i = 0; i < values.size(); i++) xs.push_back(Tensor(values[i], shapes[i], {.dtype = dtypes::float64}));
  Tensor out = f(xs).cast(dtypes::float64);
  Tensor w = Tensor(fixed_weights(out.numel()), out.shape(), {.dtype = dtypes::float64});
  return (out * w).sum().item<double>();
}

// the analytic gradients of sum(f(x) * W), one flat vector per input
inline std::vector<std::vector<double>> analytic_grads(const GradFn& f, const std::vector<std::vector<double>>& values,
                                                       const std::vector<Shape>& shapes) {
  std::vector<Tensor> xs;
  for (size_t i = 0; i < values.size(); i++)
    xs.push_back(Tensor(values[i], shapes[i], {.dtype = dtypes::float64, .requires_grad = true}));
  Tensor out = f(xs).cast(dtypes::float64);
  Tensor w = Tensor(fixed_weights(out.numel()), out.shape(), {.dtype = dtypes::float64});
  std::vector<Tensor> g = (out * w).sum().gradient(xs);
  std::vector<std::vector<double>> res;
  for (Tensor& t : g) res.push_back(t.cast(dtypes::float64).contiguous().tolist<double>());
  return res;
}

inline void expect_grad_matches(const GradFn& f, const std::vector<std::vector<double>>& values,
                                const std::vector<Shape>& shapes, double eps = 1e-6, double tol = 1e-5) {
  auto got = analytic_grads(f, values, shapes);
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < values.size(); i++) {
    ASSERT_EQ(got[i].size(), values[i].size()) << "input " << i;
    for (size_t j = 0; j < values[i].size(); j++) {
      auto plus = values, minus = values;
      plus[i][j] += eps, minus[i][j] -= eps;
      double numeric = (weighted_sum(f, plus, shapes) - weighted_sum(f, minus, shapes)) / (2 * eps);
      EXPECT_NEAR(got[i][j], numeric, tol * std::max(1.0, std::abs(numeric))) << "input " << i << " element " << j;
    }
  }
}

}  // namespace tg::test
