// Backward through the [math] group's compositions (tensor_math.cpp) against central finite differences in float64.
// Points stay off the kinks (relu6 at 0 and 6, hardtanh at +-1, ...), where a one-sided slope is all there is.
#include <gtest/gtest.h>

#include <functional>

#include "../tensor/gradcheck.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using tg::test::expect_grad_matches;
using Ts = const std::vector<Tensor>&;

namespace {

const std::vector<double> kWide{-2.7, -1.3, -0.4, 0.35, 1.1, 2.9};  // no kink of any function below is here
const std::vector<double> kUnit{-0.8, -0.45, -0.1, 0.2, 0.55, 0.85};

struct Case {
  const char* name;
  std::function<Tensor(const Tensor&)> f;
  std::vector<double> xs;
};

}  // namespace

TEST(MathGradient, UnaryAndActivations) {
  const std::vector<Case> cases{
      {"tan", [](const Tensor& x) { return x.tan(); }, kUnit},
      {"asin", [](const Tensor& x) { return x.asin(); }, kUnit},
      {"acos", [](const Tensor& x) { return x.acos(); }, kUnit},
      {"atan", [](const Tensor& x) { return x.atan(); }, kWide},
      {"hardsigmoid", [](const Tensor& x) { return x.hardsigmoid(); }, kWide},
      {"elu", [](const Tensor& x) { return x.elu(0.7); }, kWide},
      {"celu", [](const Tensor& x) { return x.celu(1.5); }, kWide},
      {"selu", [](const Tensor& x) { return x.selu(); }, kWide},
      {"swish", [](const Tensor& x) { return x.swish(); }, kWide},
      {"silu", [](const Tensor& x) { return x.silu(); }, kWide},
      {"relu6", [](const Tensor& x) { return (x * 3).relu6(); }, kWide},
      {"hardswish", [](const Tensor& x) { return x.hardswish(); }, kWide},
      {"tanh", [](const Tensor& x) { return x.tanh(); }, kWide},
      {"sinh", [](const Tensor& x) { return x.sinh(); }, kWide},
      {"cosh", [](const Tensor& x) { return x.cosh(); }, kWide},
      {"atanh", [](const Tensor& x) { return x.atanh(); }, kUnit},
      {"asinh", [](const Tensor& x) { return x.asinh(); }, kWide},
      {"acosh", [](const Tensor& x) { return (x.abs() + 1.2).acosh(); }, kWide},
      {"hardtanh", [](const Tensor& x) { return x.hardtanh(-2, 2); }, kWide},
      {"erf", [](const Tensor& x) { return x.erf(); }, kWide},
      {"gelu", [](const Tensor& x) { return x.gelu(); }, kWide},
      {"quick_gelu", [](const Tensor& x) { return x.quick_gelu(); }, kWide},
      {"leaky_relu", [](const Tensor& x) { return x.leaky_relu(0.1); }, kWide},
      {"mish", [](const Tensor& x) { return x.mish(); }, kWide},
      {"softplus", [](const Tensor& x) { return x.softplus(2.0); }, kWide},
      {"softsign", [](const Tensor& x) { return x.softsign(); }, kWide},
      {"logsigmoid", [](const Tensor& x) { return x.logsigmoid(); }, kWide},
      {"clamp", [](const Tensor& x) { return x.clamp(-1.0, 1.5); }, kWide},
      {"clip(min)", [](const Tensor& x) { return x.clip(0.0, std::nullopt); }, kWide},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expect_grad_matches([&c](Ts x) { return c.f(x[0]); }, {c.xs}, {{2, 3}});
  }
}

TEST(MathGradient, Binary) {
  const std::vector<double> a{-2.5, -1.0, 0.5, 1.5, 2.0, 3.0}, b{0.7, -1.3, 2.2, -0.4, 1.9, -2.6};
  // true division through the rounding-mode overload, both operands, with broadcasting
  expect_grad_matches([](Ts x) { return x[0].div(x[1], false, std::nullopt); }, {a, {1.5, -2.5, 0.8}}, {{2, 3}, {3}});
  expect_grad_matches([](Ts x) { return x[0].div(x[1], true, std::nullopt); }, {a, {1.5, -2.5, 0.8}}, {{2, 3}, {3}});
  // copysign: the magnitude's gradient carries the sign of other; other only picks the sign
  expect_grad_matches([](Ts x) { return x[0].copysign(x[1]); }, {a, b}, {{2, 3}, {2, 3}});
  expect_grad_matches([](Ts x) { return x[0].copysign(-1.0); }, {a}, {{2, 3}});
  // lerp: self, end and weight
  expect_grad_matches([](Ts x) { return x[0].lerp(x[1], x[2]); }, {a, b, {0.2, 0.5, 0.9}}, {{2, 3}, {2, 3}, {3}});
  expect_grad_matches([](Ts x) { return x[0].lerp(x[1], 0.3); }, {a, b}, {{2, 3}, {2, 3}});
  // masked_fill: the filled places get nothing from self, all of it from value
  expect_grad_matches([](Ts x) { return x[0].masked_fill(x[0] > 1.0, x[1]); }, {a, {4.0, -3.0, 2.0}}, {{2, 3}, {3}});
  expect_grad_matches([](Ts x) { return x[0].masked_fill(x[0] < 0.0, 0.0); }, {a}, {{2, 3}});
}

// trunc/floor/ceil/round cast through int32, and a cast passes the gradient straight through: not the slope of a step
// function, but the reference's numbers, which mod (a - floor(a / b) * b) inherits
TEST(MathGradient, RoundingPassesThroughCastsAsTheReference) {
  TensorOptions o{.dtype = dtypes::float64, .requires_grad = true};
  Tensor a = Tensor(std::vector<double>{-2.3, 0.7, 3.4}, {3}, o),
         b = Tensor(std::vector<double>{1.5, 2.5, -1.1}, {3}, o);
  for (auto f : {&Tensor::trunc, &Tensor::floor, &Tensor::ceil, &Tensor::round})
    EXPECT_EQ(((a.*f)()).sum().gradient({a})[0].tolist<double>(), (std::vector<double>{1, 1, 1}));
  std::vector<Tensor> g = (a % b).sum().gradient({a, b});
  EXPECT_EQ(g[0].tolist<double>(),
            (std::vector<double>{0.33333333333333337, 0.19999999999999996, 0.09090909090909094}));
  EXPECT_EQ(g[1].tolist<double>(), (std::vector<double>{0.977777777777778, 0.22399999999999998, 1.1900826446280994}));
}

TEST(MathGradient, RandomInitializersAreLeaves) {
  // a requires_grad initializer is a leaf whose gradient is the seed, as any created tensor
  Tensor w = Tensor::kaiming_uniform({3, 2}, 0.01, {.dtype = dtypes::float64, .requires_grad = true});
  EXPECT_EQ(w.requires_grad(), std::optional<bool>(true));
  Tensor g = (w * 2).sum().gradient({w})[0];
  EXPECT_EQ(g.tolist<double>(), std::vector<double>(6, 2.0));
}
