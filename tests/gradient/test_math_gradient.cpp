// Backward through the [math] group's compositions (tensor_math.cpp) against central finite differences in float64.
// Points stay off the kinks (relu6 at 0 and 6, hardtanh at +-1, ...), where a one-sided slope is all there is.
#include <gtest/gtest.h>

#include <cmath>
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
  // the reference's CPU numbers; its PYTHON device gets the last bit of two of them otherwise (as ours)
  std::vector<double> g1 = g[1].tolist<double>(), want{0.977777777777778, 0.22399999999999998, 1.1900826446280994};
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(g1[i], want[i], 4e-16 * std::fabs(want[i])) << i;
}

TEST(MathGradient, RandomInitializersAreLeaves) {
  // a requires_grad initializer is a leaf whose gradient is the seed, as any created tensor
  Tensor w = Tensor::kaiming_uniform({3, 2}, 0.01, {.dtype = dtypes::float64, .requires_grad = true});
  EXPECT_EQ(w.requires_grad(), std::optional<bool>(true));
  Tensor g = (w * 2).sum().gradient({w})[0];
  EXPECT_EQ(g.tolist<double>(), std::vector<double>(6, 2.0));
}

// Activations at the extremes test_ops.py probes (|x| in [300, 400], where exp2 of the input overflows float32):
// forward and gradient finite and equal to float64's. sigmoid is 1/(1+exp2(-x/ln2)) as in the reference; its
// gradient s*s*e (e the overflowing exp2) is kept finite by sym's rules for x*(1/(1+x)), which make it s*(1-s).
TEST(MathGradient, ActivationsAtTheExtremesAreFinite) {
  struct Act {
    const char* name;
    std::function<Tensor(const Tensor&)> f;
    double (*ref)(double);   // float64 forward
    double (*dref)(double);  // float64 derivative
  };
  const std::vector<Act> acts{
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); }, [](double v) { return 1 / (1 + std::exp(-v)); },
       [](double v) {
         double s = 1 / (1 + std::exp(-v));
         return s * (1 - s);
       }},
      {"tanh", [](const Tensor& x) { return x.tanh(); }, [](double v) { return std::tanh(v); },
       [](double v) { return 1 - std::tanh(v) * std::tanh(v); }},
      {"gelu", [](const Tensor& x) { return x.gelu(); }, [](double v) { return v > 0 ? v : 0.0; },
       [](double v) { return v > 0 ? 1.0 : 0.0; }},
      {"quick_gelu", [](const Tensor& x) { return x.quick_gelu(); }, [](double v) { return v > 0 ? v : 0.0; },
       [](double v) { return v > 0 ? 1.0 : 0.0; }},
      {"hardsigmoid", [](const Tensor& x) { return x.hardsigmoid(); }, [](double v) { return v > 0 ? 1.0 : 0.0; },
       [](double) { return 0.0; }},
      {"softplus", [](const Tensor& x) { return x.softplus(); }, [](double v) { return std::log1p(std::exp(v)); },
       [](double v) { return 1 / (1 + std::exp(-v)); }},
  };
  const std::vector<float> xs{-400, -350.5f, -300, -297, 297, 300, 350.5f, 400};
  for (const Act& a : acts)
    for (bool neg : {true, false}) {
      if (std::string(a.name) == "softplus" && !neg) continue;  // the reference overflows there too (no threshold)
      std::vector<float> in;
      for (float v : xs)
        if ((v < 0) == neg) in.push_back(v);
      Tensor x(in.data(), {static_cast<sint>(in.size())});
      std::vector<float> y = a.f(x).tolist<float>();
      std::vector<float> g = a.f(x).sum().gradient({x})[0].tolist<float>();
      for (size_t i = 0; i < in.size(); i++) {
        EXPECT_TRUE(std::isfinite(y[i]) && std::isfinite(g[i]))
            << a.name << "(" << in[i] << ") = " << y[i] << ", d = " << g[i];
        EXPECT_NEAR(y[i], a.ref(in[i]), 1e-6 * std::max(1.0, std::abs(a.ref(in[i])))) << a.name << "(" << in[i] << ")";
        EXPECT_NEAR(g[i], a.dref(in[i]), 1e-6) << a.name << "'(" << in[i] << ")";
      }
    }
}
