// Autograd: the derivative rules (pm_gradient) one by one against central finite differences in float64, the
// tutorial's values bit for bit, backward's accumulation, requires_grad propagation and bad input.
#include <gtest/gtest.h>

#include <cmath>

#include "../tensor/gradcheck.h"
#include "tg/gradient/gradient.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using tg::test::expect_grad_matches;
using Ts = const std::vector<Tensor>&;

namespace {
std::vector<double> seq(int n, double start, double step) {
  std::vector<double> v;
  for (int i = 0; i < n; i++) v.push_back(start + step * i);
  return v;
}
}  // namespace

// *** the tutorial's autograd sections (reference: s08_autodiff.out, s09_chain.out) ***

TEST(Autograd, TutorialPolynomial) {
  Tensor x = Tensor({2.0f}, {.requires_grad = true});
  Tensor y = x.pow(2) + 3 * x + 1;
  Tensor loss = y.sum();
  EXPECT_EQ(y.item<float>(), 11.0f);
  std::vector<Tensor> g = loss.gradient({x});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].item<float>(), 7.0f);
}

TEST(Autograd, TutorialChainRule) {
  Tensor x = Tensor({2.0f}, {.requires_grad = true});
  Tensor z = (x.pow(2) + 1).log();
  Tensor loss = z.sum();
  EXPECT_EQ(static_cast<double>(z.item<float>()), 1.6094378232955933);  // the reference prints this float32
  EXPECT_EQ(static_cast<double>(loss.gradient({x})[0].item<float>()), 0.800000011920929);
}

// *** one rule at a time ***

TEST(GradientRules, Unary) {
  auto x = seq(5, 0.3, 0.4);
  expect_grad_matches([](Ts v) { return v[0].reciprocal(); }, {x}, {{5}});
  expect_grad_matches([](Ts v) { return v[0].sqrt(); }, {x}, {{5}});
  expect_grad_matches([](Ts v) { return v[0].exp2(); }, {x}, {{5}});
  expect_grad_matches([](Ts v) { return v[0].log2(); }, {x}, {{5}});
  expect_grad_matches([](Ts v) { return v[0].sin(); }, {x}, {{5}});
  expect_grad_matches([](Ts v) { return v[0].exp().log() * v[0].cos(); }, {x}, {{5}});
  expect_grad_matches([](Ts v) { return v[0].sigmoid() + v[0].relu(); }, {seq(5, -1.1, 0.5)}, {{5}});
}

TEST(GradientRules, Binary) {
  auto a = seq(6, -1.3, 0.5), b = seq(6, 0.7, -0.3);
  expect_grad_matches([](Ts v) { return v[0] + v[1]; }, {a, b}, {{6}, {6}});
  expect_grad_matches([](Ts v) { return v[0] * v[1]; }, {a, b}, {{6}, {6}});
  expect_grad_matches([](Ts v) { return v[0] - v[1]; }, {a, b}, {{6}, {6}});
  expect_grad_matches([](Ts v) { return v[0] / v[1]; }, {a, b}, {{6}, {6}});
  expect_grad_matches([](Ts v) { return v[0].maximum(v[1]); }, {a, b}, {{6}, {6}});
  expect_grad_matches([](Ts v) { return v[0].minimum(v[1]); }, {a, b}, {{6}, {6}});
  // broadcasting: the gradient of the expanded operand is summed over the broadcast dims
  expect_grad_matches([](Ts v) { return v[0] * v[1]; }, {a, {2.0, -3.0}}, {{3, 2}, {2}});
  expect_grad_matches([](Ts v) { return v[0] + v[1]; }, {a, {2.0, -3.0, 0.5}}, {{3, 2}, {3, 1}});
}

TEST(GradientRules, Pow) {
  expect_grad_matches([](Ts v) { return v[0].pow(v[1]); }, {seq(4, 0.5, 0.5), seq(4, -1.5, 1.0)}, {{4}, {4}});
  expect_grad_matches([](Ts v) { return v[0].pow(3.0); }, {seq(4, -1.5, 1.0)}, {{4}});
  // 0 ** 0: d/dbase is the exponent (0), as the reference
  Tensor b = Tensor({0.0f, 0.0f}, {.requires_grad = true}), e = Tensor({0.0f, 2.0f}, {.requires_grad = true});
  auto g = b.pow(e).sum().gradient({b, e});
  EXPECT_EQ(g[0].tolist<float>(), (std::vector<float>{0.0f, 0.0f}));
}

TEST(GradientRules, WhereAndCompare) {
  auto a = seq(6, -1.3, 0.5), b = seq(6, 0.7, -0.3);
  expect_grad_matches([](Ts v) { return (v[0] > v[1]).where(v[0] * 2, v[1].exp()); }, {a, b}, {{6}, {6}});
  Tensor x = Tensor({1.0f, -2.0f, 3.0f}, {.requires_grad = true});
  EXPECT_EQ((x > 0).where(x, x * 0).sum().gradient({x})[0].tolist<float>(), (std::vector<float>{1, 0, 1}));
}

TEST(GradientRules, Reduce) {
  auto a = seq(12, -2.0, 0.37);
  expect_grad_matches([](Ts v) { return v[0].sum(1); }, {a}, {{3, 4}});
  expect_grad_matches([](Ts v) { return v[0].sum(std::vector<int64_t>{0}, true); }, {a}, {{3, 4}});
  expect_grad_matches([](Ts v) { return v[0].max(1); }, {a}, {{3, 4}});
  expect_grad_matches([](Ts v) { return v[0].min(0); }, {a}, {{3, 4}});
  expect_grad_matches([](Ts v) { return v[0].mean(); }, {a}, {{3, 4}});
  expect_grad_matches([](Ts v) { return v[0].prod(1); }, {seq(6, 0.5, 0.25)}, {{2, 3}});
  expect_grad_matches([](Ts v) { return v[0].softmax(); }, {a}, {{3, 4}});
  expect_grad_matches([](Ts v) { return v[0].log_softmax(0); }, {a}, {{3, 4}});
  expect_grad_matches([](Ts v) { return v[0].matmul(v[1]); }, {a, seq(8, 1.0, -0.3)}, {{3, 4}, {4, 2}});
}

TEST(GradientRules, MaxTiesSplitEvenly) {
  // reduce max: the tied maxima share the gradient; elementwise maximum: each side of a tie gets half
  Tensor x = Tensor({1.0f, 3.0f, 3.0f, 3.0f}, {.requires_grad = true});
  std::vector<float> third = {0.0f, 1.0f / 3, 1.0f / 3, 1.0f / 3};
  EXPECT_EQ(x.max().gradient({x})[0].tolist<float>(), third);
  Tensor a = Tensor({2.0f, 1.0f}, {.requires_grad = true}), b = Tensor({2.0f, 5.0f}, {.requires_grad = true});
  auto g = a.maximum(b).sum().gradient({a, b});
  EXPECT_EQ(g[0].tolist<float>(), (std::vector<float>{0.5f, 0.0f}));
  EXPECT_EQ(g[1].tolist<float>(), (std::vector<float>{0.5f, 1.0f}));
}

TEST(GradientRules, Movement) {
  auto a = seq(24, -3.0, 0.25);
  expect_grad_matches([](Ts v) { return v[0].reshape({4, 6}); }, {a}, {{2, 3, 4}});
  expect_grad_matches([](Ts v) { return v[0].permute({2, 0, 1}); }, {a}, {{2, 3, 4}});
  expect_grad_matches([](Ts v) { return v[0].pad({{1, 0}, {0, 2}, {1, 1}}); }, {a}, {{2, 3, 4}});
  expect_grad_matches([](Ts v) { return v[0].shrink({{0, 1}, {1, 3}, {2, 4}}); }, {a}, {{2, 3, 4}});
  expect_grad_matches([](Ts v) { return v[0].flip({0, 2}); }, {a}, {{2, 3, 4}});
  expect_grad_matches([](Ts v) { return v[0].reshape({2, 1, 12}).expand({2, 5, 12}); }, {a}, {{2, 3, 4}});
  expect_grad_matches([](Ts v) { return v[0].cat({v[1]}, 1); }, {a, seq(8, 1, 1)}, {{2, 3, 4}, {2, 1, 4}});
  expect_grad_matches([](Ts v) { return v[0].contiguous().transpose(0, 2); }, {a}, {{2, 3, 4}});
}

TEST(GradientRules, Cast) {
  Tensor x = Tensor({1.5f, -2.0f}, {.requires_grad = true});
  auto g = (x.cast(dtypes::float64) * 3).sum().gradient({x});
  EXPECT_EQ(g[0].dtype(), dtypes::float32);
  EXPECT_EQ(g[0].tolist<float>(), (std::vector<float>{3, 3}));
}

TEST(GradientRules, DetachStopsTheGradient) {
  Tensor x = Tensor({1.0f, 2.0f}, {.requires_grad = true});
  auto g = (x * x.detach()).sum().gradient({x});
  EXPECT_EQ(g[0].tolist<float>(), (std::vector<float>{1, 2}));
}

TEST(GradientRules, EveryOpHasARuleOrIsALeaf) {
  // the rules cover the ops a tensor graph differentiates through; comparisons and bitcasts give no gradient
  const auto& pm = pm_gradient();
  EXPECT_GE(pm.rules().size(), 20u);
}

// *** backward, .grad and requires_grad ***

TEST(Backward, AccumulatesIntoGrad) {
  Tensor x = Tensor({1.0f, 2.0f, 3.0f}, {.requires_grad = true});
  Tensor w = Tensor({0.5f, 0.5f, 0.5f});  // requires_grad None: no grad
  Tensor loss = (x * x * w).sum();
  loss.backward();
  ASSERT_TRUE(x.grad().has_value());
  EXPECT_FALSE(w.grad().has_value());
  EXPECT_EQ(x.grad()->tolist<float>(), (std::vector<float>{1, 2, 3}));
  loss.backward();  // a second backward adds
  EXPECT_EQ(x.grad()->tolist<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(Backward, SeedGradientForNonScalar) {
  Tensor x = Tensor({1.0f, 2.0f}, {.requires_grad = true});
  Tensor y = x * 3;
  y.backward(Tensor({1.0f, 10.0f}));
  EXPECT_EQ(x.grad()->tolist<float>(), (std::vector<float>{3, 30}));
}

TEST(Backward, TensorBehindDetachGetsZeros) {  // it is in the graph, so it gets a (zero) grad, as the reference
  Tensor x = Tensor({1.0f, 2.0f}, {.requires_grad = true}), y = Tensor({5.0f}, {.requires_grad = true});
  Tensor loss = (x * 2).sum() + (y * 0).detach().sum();
  loss.backward();
  ASSERT_TRUE(y.grad().has_value());
  EXPECT_EQ(y.grad()->tolist<float>(), (std::vector<float>{0}));
  EXPECT_EQ(x.grad()->tolist<float>(), (std::vector<float>{2, 2}));
}

TEST(RequiresGrad, Propagation) {
  Tensor a = Tensor({1.0f}, {.requires_grad = true}), b = Tensor({1.0f}), c = Tensor({1.0f}, {.requires_grad = false});
  EXPECT_EQ((a + b).requires_grad(), std::optional<bool>(true));
  EXPECT_EQ((b + c).requires_grad(), std::nullopt);
  EXPECT_EQ((c * 2).requires_grad(), std::optional<bool>(false));
  EXPECT_EQ(a.detach().requires_grad(), std::optional<bool>(false));
  {
    Tensor::NoGrad g;
    EXPECT_EQ((a + b).requires_grad(), std::optional<bool>(false));
  }
  EXPECT_EQ((a + b).requires_grad(), std::optional<bool>(true));
}

TEST(Training, ScopeRestores) {
  EXPECT_FALSE(Tensor::training);
  {
    Tensor::train t;
    EXPECT_TRUE(Tensor::training);
    {
      Tensor::train off(false);
      EXPECT_FALSE(Tensor::training);
    }
    EXPECT_TRUE(Tensor::training);
  }
  EXPECT_FALSE(Tensor::training);
}

// *** bad input ***

TEST(GradientErrors, NonScalarWithoutSeed) {
  Tensor x = Tensor({1.0f, 2.0f}, {.requires_grad = true});
  try {
    (x * 2).gradient({x});
    FAIL() << "expected tg::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scalar"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(2,)"), std::string::npos) << e.what();
  }
}

TEST(GradientErrors, TargetNotInGraph) {
  Tensor x = Tensor({1.0f, 2.0f}, {.requires_grad = true}), y = Tensor({3.0f}, {.requires_grad = true});
  EXPECT_THROW((x * 2).sum().gradient({y}), Error);
}

TEST(GradientErrors, IntegerTensors) {
  Tensor x = Tensor({1, 2});
  EXPECT_THROW(x.sum().gradient({x}), Error);
}

TEST(GradientErrors, SeedShapeMismatch) {
  Tensor x = Tensor({1.0f, 2.0f}, {.requires_grad = true});
  EXPECT_THROW((x * 2).gradient({x}, Tensor({1.0f, 2.0f, 3.0f})), Error);
}
