// The [math] group of Tensor methods: creation and random, unary math, activations, binary ops with rounding and
// tolerance, casting shorthands. Values are checked against float64 references computed here; special values, output
// dtypes and seeded random numbers against what tinygrad 2025-06-12 (CPU=1) printed, written in below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <set>

#include "dtype_skip.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

class MathTest : public ::testing::Test {
 protected:
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
};

Tensor make(const std::vector<double>& v, DType dt, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<sint>(v.size())};
  return Tensor(v, shape, {.dtype = dt});
}
std::vector<double> values(const Tensor& t) { return t.cast(dtypes::float64).tolist<double>(); }

// NaN matches NaN, infinities match exactly, finite values within atol + rtol * |want|
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double atol, double rtol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]: got " << got[i] << ", want nan";
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
    } else {
      EXPECT_NEAR(got[i], want[i], atol + rtol * std::abs(want[i])) << what << " [" << i << "]";
    }
  }
}

std::vector<double> grid(double lo, double hi, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; i++) v.push_back(lo + (hi - lo) * i / (n - 1));
  return v;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double softplus(double x) { return std::log1p(std::exp(x)); }

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  std::vector<double> xs;  // inside the domain
};

std::vector<UnaryCase> unary_cases() {
  const double pi = std::numbers::pi;
  auto wide = grid(-4, 4, 17), unit = grid(-0.99, 0.99, 13);
  // halves (ties round to even) and plain fractions
  std::vector<double> rounding{-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -2.7, -0.2, 0.2, 1.49, 2.51, 7, -7, 0};
  return {
      {"tan", [](const Tensor& x) { return x.tan(); }, [](double x) { return std::tan(x); }, grid(-1.4, 1.4, 13)},
      {"asin", [](const Tensor& x) { return x.asin(); }, [](double x) { return std::asin(x); }, grid(-1, 1, 17)},
      {"acos", [](const Tensor& x) { return x.acos(); }, [](double x) { return std::acos(x); }, grid(-1, 1, 17)},
      {"atan", [](const Tensor& x) { return x.atan(); }, [](double x) { return std::atan(x); }, grid(-20, 20, 17)},
      {"trunc", [](const Tensor& x) { return x.trunc(); }, [](double x) { return std::trunc(x); }, rounding},
      {"ceil", [](const Tensor& x) { return x.ceil(); }, [](double x) { return std::ceil(x); }, rounding},
      {"floor", [](const Tensor& x) { return x.floor(); }, [](double x) { return std::floor(x); }, rounding},
      {"round", [](const Tensor& x) { return x.round(); }, [](double x) { return std::nearbyint(x); }, rounding},
      {"hardsigmoid", [](const Tensor& x) { return x.hardsigmoid(); },
       [](double x) { return std::clamp(x / 6 + 0.5, 0.0, 1.0); }, wide},
      {"hardsigmoid(0.2,0.4)", [](const Tensor& x) { return x.hardsigmoid(0.2, 0.4); },
       [](double x) { return std::clamp(0.2 * x + 0.4, 0.0, 1.0); }, wide},
      {"elu", [](const Tensor& x) { return x.elu(); }, [](double x) { return x > 0 ? x : std::expm1(x); }, wide},
      {"elu(0.5)", [](const Tensor& x) { return x.elu(0.5); }, [](double x) { return x > 0 ? x : 0.5 * std::expm1(x); },
       wide},
      {"celu(2)", [](const Tensor& x) { return x.celu(2.0); },
       [](double x) { return std::max(x, 0.0) + std::min(0.0, 2 * std::expm1(x / 2)); }, wide},
      {"selu", [](const Tensor& x) { return x.selu(); },
       [](double x) { return 1.0507 * (x >= 0 ? x : 1.67326 * std::expm1(x)); }, wide},
      {"swish", [](const Tensor& x) { return x.swish(); }, [](double x) { return x * sigmoid(x); }, wide},
      {"silu", [](const Tensor& x) { return x.silu(); }, [](double x) { return x * sigmoid(x); }, wide},
      {"relu6", [](const Tensor& x) { return x.relu6(); }, [](double x) { return std::clamp(x, 0.0, 6.0); },
       grid(-3, 9, 13)},
      {"hardswish", [](const Tensor& x) { return x.hardswish(); },
       [](double x) { return x * std::clamp(x + 3, 0.0, 6.0) / 6; }, wide},
      {"tanh", [](const Tensor& x) { return x.tanh(); }, [](double x) { return std::tanh(x); }, wide},
      {"sinh", [](const Tensor& x) { return x.sinh(); }, [](double x) { return std::sinh(x); }, wide},
      {"cosh", [](const Tensor& x) { return x.cosh(); }, [](double x) { return std::cosh(x); }, wide},
      {"atanh", [](const Tensor& x) { return x.atanh(); }, [](double x) { return std::atanh(x); }, unit},
      {"asinh", [](const Tensor& x) { return x.asinh(); }, [](double x) { return std::asinh(x); }, grid(0, 10, 11)},
      {"acosh", [](const Tensor& x) { return x.acosh(); }, [](double x) { return std::acosh(x); }, grid(1, 10, 10)},
      {"hardtanh", [](const Tensor& x) { return x.hardtanh(); }, [](double x) { return std::clamp(x, -1.0, 1.0); },
       wide},
      {"hardtanh(-2,3)", [](const Tensor& x) { return x.hardtanh(-2, 3); },
       [](double x) { return std::clamp(x, -2.0, 3.0); }, wide},
      {"erf", [](const Tensor& x) { return x.erf(); }, [](double x) { return std::erf(x); }, wide},
      {"gelu", [](const Tensor& x) { return x.gelu(); },
       [pi](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x))); }, wide},
      {"quick_gelu", [](const Tensor& x) { return x.quick_gelu(); }, [](double x) { return x * sigmoid(1.702 * x); },
       wide},
      {"leaky_relu", [](const Tensor& x) { return x.leaky_relu(); }, [](double x) { return x < 0 ? 0.01 * x : x; },
       wide},
      {"leaky_relu(0.2)", [](const Tensor& x) { return x.leaky_relu(0.2); },
       [](double x) { return x < 0 ? 0.2 * x : x; }, wide},
      {"mish", [](const Tensor& x) { return x.mish(); }, [](double x) { return x * std::tanh(softplus(x)); }, wide},
      {"softplus", [](const Tensor& x) { return x.softplus(); }, softplus, wide},
      {"softplus(2)", [](const Tensor& x) { return x.softplus(2); }, [](double x) { return softplus(2 * x) / 2; },
       wide},
      {"softsign", [](const Tensor& x) { return x.softsign(); }, [](double x) { return x / (1 + std::abs(x)); }, wide},
      {"logsigmoid", [](const Tensor& x) { return x.logsigmoid(); }, [](double x) { return -softplus(-x); }, wide},
      {"clamp", [](const Tensor& x) { return x.clamp(-1.5, 2.5); }, [](double x) { return std::clamp(x, -1.5, 2.5); },
       wide},
      {"clamp(min)", [](const Tensor& x) { return x.clamp(0.5, std::nullopt); },
       [](double x) { return std::max(x, 0.5); }, wide},
      {"clamp(max)", [](const Tensor& x) { return x.clamp(std::nullopt, 0.5); },
       [](double x) { return std::min(x, 0.5); }, wide},
  };
}

}  // namespace

// *** unary math and activations ***

// the cases' outputs flattened into one tensor, so a whole table is one kernel to compile, not one per case
Tensor cat_flat(const std::vector<Tensor>& ts) {
  std::vector<Tensor> rest;
  for (size_t i = 1; i < ts.size(); i++) rest.push_back(ts[i].flatten());
  return ts[0].flatten().cat(rest);
}

TEST_F(MathTest, UnaryAgainstFloat64) {
  const std::vector<UnaryCase> cases = unary_cases();
  for (DType dt : {dtypes::float32, dtypes::float64}) {
    std::vector<Tensor> outs;
    std::vector<double> want;
    for (const UnaryCase& c : cases) {
      outs.push_back(c.op(make(c.xs, dt)));
      ASSERT_EQ(outs.back().dtype(), dt) << c.name;
      for (double x : c.xs) want.push_back(c.ref(dt == dtypes::float32 ? double(float(x)) : x));
    }
    std::vector<double> got = values(cat_flat(outs));
    ASSERT_EQ(got.size(), want.size());
    // asin/acos/atan and erf are the reference's polynomial approximations (errors ~2e-8 and ~1.5e-7)
    double tol = dt == dtypes::float32 ? 2e-5 : 1e-6;
    size_t at = 0;
    for (const UnaryCase& c : cases) {
      std::vector<double> g(got.begin() + at, got.begin() + at + c.xs.size()),
          w(want.begin() + at, want.begin() + at + c.xs.size());
      expect_close(g, w, tol, tol, tg::cat(c.name, " ", dt));
      at += c.xs.size();
    }
  }
}

TEST_F(MathTest, UnaryHalfAndOddShapes) {
  TG_SKIP_UNLESS_SUPPORTED(dtypes::float16);
  const std::vector<double> xs{-2.5, -0.75, -0.25, 0.0, 0.4, 0.9, 1.5};
  const std::vector<UnaryCase> cases = unary_cases();
  std::vector<Tensor> halves, ones;
  std::vector<std::vector<double>> want;
  for (const UnaryCase& c : cases) {
    std::vector<double> in, w;
    for (double x : xs) in.push_back(std::clamp(x, c.xs.front(), c.xs.back()));
    for (double x : in) w.push_back(c.ref(x));
    want.push_back(w);
    halves.push_back(c.op(make(in, dtypes::float16)));
    ASSERT_EQ(halves.back().dtype(), dtypes::float16) << c.name;
    // 0-size and 1-size dims keep their shape
    Tensor e = c.op(Tensor::zeros({0, 3}));
    EXPECT_EQ(e.shape(), (Shape{0, 3})) << c.name;
    EXPECT_TRUE(e.tolist<float>().empty()) << c.name;
    ones.push_back(c.op(make({in[4]}, dtypes::float32, {1, 1})));
    EXPECT_EQ(ones.back().shape(), (Shape{1, 1})) << c.name;
  }
  std::vector<double> h = values(cat_flat(halves)), o = values(cat_flat(ones));
  for (size_t i = 0; i < cases.size(); i++) {
    std::vector<double> g(h.begin() + static_cast<std::ptrdiff_t>(i * xs.size()),
                          h.begin() + static_cast<std::ptrdiff_t>((i + 1) * xs.size()));
    expect_close(g, want[i], 2e-2, 1e-2, tg::cat(cases[i].name, " half"));
    expect_close({o[i]}, {want[i][4]}, 2e-5, 2e-5, tg::cat(cases[i].name, " (1, 1)"));
  }
}

// inf, -inf, nan, 0, -0, 1, -1 through the reference's compositions (float32); the rounding ones cast through
// int32, which is undefined for non-finite values, so they are not here
TEST_F(MathTest, SpecialValuesAsTheReference) {
  const std::vector<double> xs{kInf, -kInf, kNan, 0.0, -0.0, 1.0, -1.0};
  struct Row {
    const char* name;
    std::function<Tensor(const Tensor&)> op;
    std::vector<double> want;
  };
  const std::vector<Row> rows{
      {"tan",
       [](const Tensor& x) { return x.tan(); },
       {kNan, kNan, kNan, 0, 0, 1.5574076175689697, -1.5574079751968384}},
      {"asin",
       [](const Tensor& x) { return x.asin(); },
       {kNan, kNan, kNan, 0, 0, 1.5707963705062866, -1.5707963705062866}},
      {"acos",
       [](const Tensor& x) { return x.acos(); },
       {kNan, kNan, kNan, 1.5707963705062866, 1.5707963705062866, 0, 3.1415927410125732}},
      {"atan",
       [](const Tensor& x) { return x.atan(); },
       {kNan, kNan, kNan, 0, 0, 0.7853981852531433, -0.7853981852531433}},
      {"isinf", [](const Tensor& x) { return x.isinf(); }, {1, 1, 0, 0, 0, 0, 0}},
      {"isinf(pos)", [](const Tensor& x) { return x.isinf(true, false); }, {1, 0, 0, 0, 0, 0, 0}},
      {"isinf(neg)", [](const Tensor& x) { return x.isinf(false, true); }, {0, 1, 0, 0, 0, 0, 0}},
      {"isinf(none)", [](const Tensor& x) { return x.isinf(false, false); }, {0, 0, 0, 0, 0, 0, 0}},
      {"isnan", [](const Tensor& x) { return x.isnan(); }, {0, 0, 1, 0, 0, 0, 0}},
      {"isfinite", [](const Tensor& x) { return x.isfinite(); }, {0, 0, 0, 1, 1, 1, 1}},
      {"hardsigmoid",
       [](const Tensor& x) { return x.hardsigmoid(); },
       {kNan, 0, 0, 0.5, 0.5, 0.6666666865348816, 0.3333333134651184}},
      {"elu", [](const Tensor& x) { return x.elu(); }, {kInf, -1, 0, 0, 0, 1, -0.6321205496788025}},
      {"celu", [](const Tensor& x) { return x.celu(); }, {kInf, -1, kNan, 0, 0, 1, -0.6321205496788025}},
      {"selu",
       [](const Tensor& x) { return x.selu(); },
       {kInf, -1.7580941915512085, kNan, 0, 0, 1.0506999492645264, -1.1113275289535522}},
      {"swish",
       [](const Tensor& x) { return x.swish(); },
       {kInf, kNan, kNan, 0, 0, 0.7310585975646973, -0.2689414322376251}},
      {"relu6", [](const Tensor& x) { return x.relu6(); }, {kNan, 0, 0, 0, 0, 1, 0}},
      {"hardswish",
       [](const Tensor& x) { return x.hardswish(); },
       {kNan, kNan, kNan, 0, 0, 0.6666666865348816, -0.3333333432674408}},
      {"tanh", [](const Tensor& x) { return x.tanh(); }, {1, -1, kNan, 0, 0, 0.7615940570831299, -0.7615941166877747}},
      {"sinh",
       [](const Tensor& x) { return x.sinh(); },
       {kInf, -kInf, kNan, 0, 0, 1.175201177597046, -1.175201177597046}},
      {"cosh",
       [](const Tensor& x) { return x.cosh(); },
       {kInf, kInf, kNan, 1, 1, 1.5430805683135986, 1.5430805683135986}},
      {"atanh", [](const Tensor& x) { return x.atanh(); }, {kNan, kNan, kNan, 0, 0, kInf, -kInf}},
      {"asinh",
       [](const Tensor& x) { return x.asinh(); },
       {kInf, kNan, kNan, 0, 0, 0.8813736438751221, -0.8813736438751221}},
      {"acosh", [](const Tensor& x) { return x.acosh(); }, {kInf, kNan, kNan, kNan, kNan, 0, kNan}},
      {"hardtanh", [](const Tensor& x) { return x.hardtanh(); }, {1, -1, kNan, 0, 0, 1, -1}},
      {"erf", [](const Tensor& x) { return x.erf(); }, {1, -1, kNan, 0, 0, 0.842700719833374, -0.842700719833374}},
      {"gelu",
       [](const Tensor& x) { return x.gelu(); },
       {kInf, kNan, kNan, 0, 0, 0.8411920070648193, -0.15880799293518066}},
      {"quick_gelu",
       [](const Tensor& x) { return x.quick_gelu(); },
       {kInf, kNan, kNan, 0, 0, 0.845795750617981, -0.15420423448085785}},
      {"leaky_relu",
       [](const Tensor& x) { return x.leaky_relu(); },
       {kInf, -kInf, kNan, 0, 0, 1, -0.009999999776482582}},
      {"mish",
       [](const Tensor& x) { return x.mish(); },
       {kInf, kNan, kNan, 0, 0, 0.8650983572006226, -0.3034013509750366}},
      {"softplus",
       [](const Tensor& x) { return x.softplus(); },
       {kInf, 0, kNan, 0.6931471824645996, 0.6931471824645996, 1.31326162815094, 0.31326162815093994}},
      {"softsign", [](const Tensor& x) { return x.softsign(); }, {kNan, kNan, kNan, 0, 0, 0.5, -0.5}},
  };
  std::vector<Tensor> outs;
  for (const Row& row : rows) outs.push_back(row.op(make(xs, dtypes::float32)));
  std::vector<double> got = values(cat_flat(outs));
  for (size_t i = 0; i < rows.size(); i++) {
    std::vector<double> g(got.begin() + static_cast<std::ptrdiff_t>(i * xs.size()),
                          got.begin() + static_cast<std::ptrdiff_t>((i + 1) * xs.size()));
    expect_close(g, rows[i].want, 1e-6, 1e-6, rows[i].name);
  }
}

// the output dtype for int32, uint8, half and bool inputs, as the reference
TEST_F(MathTest, OutputDtypesAsTheReference) {
  const DType f = dtypes::float32, h = dtypes::float16, i = dtypes::int32, u = dtypes::uint8, b = dtypes::bool_;
  struct Row {
    const char* name;
    std::function<Tensor(const Tensor&)> op;
    std::vector<DType> want;  // for int32, uint8, half, bool
  };
  const std::vector<Row> rows{
      {"tan", [](const Tensor& x) { return x.tan(); }, {f, f, h, f}},
      {"asin", [](const Tensor& x) { return x.asin(); }, {f, f, h, f}},
      {"trunc", [](const Tensor& x) { return x.trunc(); }, {i, u, h, b}},
      {"ceil", [](const Tensor& x) { return x.ceil(); }, {i, u, h, i}},
      {"floor", [](const Tensor& x) { return x.floor(); }, {i, u, h, i}},
      {"round", [](const Tensor& x) { return x.round(); }, {f, f, h, f}},
      {"isinf", [](const Tensor& x) { return x.isinf(); }, {b, b, b, b}},
      {"isnan", [](const Tensor& x) { return x.isnan(); }, {b, b, b, b}},
      {"isfinite", [](const Tensor& x) { return x.isfinite(); }, {b, b, b, b}},
      {"hardsigmoid", [](const Tensor& x) { return x.hardsigmoid(); }, {f, f, h, f}},
      {"elu", [](const Tensor& x) { return x.elu(); }, {f, f, h, f}},
      {"relu6", [](const Tensor& x) { return x.relu6(); }, {i, u, h, i}},
      {"hardswish", [](const Tensor& x) { return x.hardswish(); }, {f, f, h, f}},
      {"tanh", [](const Tensor& x) { return x.tanh(); }, {f, f, h, f}},
      {"hardtanh", [](const Tensor& x) { return x.hardtanh(); }, {i, u, h, i}},
      {"erf", [](const Tensor& x) { return x.erf(); }, {f, f, h, f}},
      {"quick_gelu", [](const Tensor& x) { return x.quick_gelu(); }, {f, f, h, f}},
      {"leaky_relu", [](const Tensor& x) { return x.leaky_relu(); }, {f, f, h, f}},
      {"softplus", [](const Tensor& x) { return x.softplus(); }, {f, f, h, f}},
      {"softsign", [](const Tensor& x) { return x.softsign(); }, {f, f, h, f}},
  };
  const std::vector<Tensor> inputs{make({1, -2, 0}, i), make({1, 2, 0}, u), make({1, -2, 0}, h), make({1, 0}, b)};
  for (const Row& row : rows)
    for (size_t k = 0; k < inputs.size(); k++)
      EXPECT_EQ(row.op(inputs[k]).dtype(), row.want[k]) << row.name << " " << k;
  // gelu cubes with pow, whose base must be float
  EXPECT_THROW(make({1, 2}, i).gelu(), Error);
}

TEST_F(MathTest, IntegerInputs) {
  Tensor x = make({-7, -3, 0, 2, 5, 9}, dtypes::int32);
  EXPECT_EQ(x.trunc().tolist<int>(), (std::vector<int>{-7, -3, 0, 2, 5, 9}));
  EXPECT_EQ(x.floor().tolist<int>(), (std::vector<int>{-7, -3, 0, 2, 5, 9}));
  EXPECT_EQ(x.ceil().tolist<int>(), (std::vector<int>{-7, -3, 0, 2, 5, 9}));
  EXPECT_EQ(x.round().tolist<float>(), (std::vector<float>{-7, -3, 0, 2, 5, 9}));
  EXPECT_EQ(x.relu6().tolist<int>(), (std::vector<int>{0, 0, 0, 2, 5, 6}));
  EXPECT_EQ(x.hardtanh(-2, 3).tolist<int>(), (std::vector<int>{-2, -2, 0, 2, 3, 3}));
  EXPECT_EQ(x.clamp(-1, 4).tolist<int>(), (std::vector<int>{-1, -1, 0, 2, 4, 4}));
  EXPECT_EQ(x.clip(0, 6).tolist<int>(), (std::vector<int>{0, 0, 0, 2, 5, 6}));  // int bounds keep an int tensor
  EXPECT_EQ(x.clip(0.5, 6).tolist<float>(), (std::vector<float>{0.5, 0.5, 0.5, 2, 5, 6}));  // a float bound: float
  EXPECT_EQ(x.isnan().tolist<bool>(), std::vector<bool>(6, false));
  EXPECT_EQ(x.isinf().tolist<bool>(), std::vector<bool>(6, false));
  EXPECT_EQ(x.isfinite().tolist<bool>(), std::vector<bool>(6, true));
  expect_close(values(x.leaky_relu(0.5)), {-3.5, -1.5, 0, 2, 5, 9}, 0, 0, "leaky_relu int");
  // tinygrad rounds an int base raised to a float back to the int dtype
  Tensor p = make({1, 2, 3, 4}, dtypes::int32).pow(0.5);
  EXPECT_EQ(p.dtype(), dtypes::int32);
  EXPECT_EQ(p.tolist<int>(), (std::vector<int>{1, 1, 2, 2}));
  Tensor rp = make({1, 2, 3}, dtypes::int32).pow(make({2}, dtypes::float32), true);  // 2.0 ** x: float
  EXPECT_EQ(rp.dtype(), dtypes::float32);
  EXPECT_EQ(rp.tolist<float>(), (std::vector<float>{2, 4, 8}));
  EXPECT_THROW(x.clamp(std::nullopt, std::nullopt), Error);
  EXPECT_THROW(x.clip(std::nullopt, std::nullopt), Error);
}

TEST_F(MathTest, RoundHalfToEvenInEveryFloat) {
  TG_SKIP_UNLESS_SUPPORTED(dtypes::float16);
  for (DType dt : {dtypes::float16, dtypes::float32, dtypes::float64})
    EXPECT_EQ(values(make({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5}, dt).round()),
              (std::vector<double>{-2, -2, -0.0, 0, 2, 2, 4, 4}))
        << dt;
}

// *** binary ***

TEST_F(MathTest, DivRoundingModesInts) {
  std::vector<double> as, bs{-3, -2, 2, 3};
  for (int a = -7; a <= 7; a++) as.push_back(a);
  for (DType dt : {dtypes::int32, dtypes::int8, dtypes::int64}) {
    Tensor a = make(as, dt, {15, 1}), b = make(bs, dt, {1, 4});
    Tensor tr = a.div(b, false, "trunc"), fl = a.div(b, false, "floor");
    ASSERT_EQ(tr.dtype(), dt);
    ASSERT_EQ(fl.dtype(), dt);
    ASSERT_EQ(fl.shape(), (Shape{15, 4}));
    std::vector<double> want_tr, want_fl;
    for (double x : as)
      for (double y : bs) want_tr.push_back(std::trunc(x / y)), want_fl.push_back(std::floor(x / y));
    EXPECT_EQ(values(tr), want_tr) << dt;
    EXPECT_EQ(values(fl), want_fl) << dt;
    // reversed: b / a over the nonzero a
    Tensor ra = make({-5, -1, 1, 4}, dt);
    EXPECT_EQ(values(ra.div(make({7}, dt), true, "floor")), (std::vector<double>{-2, -7, 7, 1})) << dt;
  }
  // uint8: both modes agree
  EXPECT_EQ(values(make({200, 7, 0}, dtypes::uint8).div(make({3}, dtypes::uint8), false, "floor")),
            (std::vector<double>{66, 2, 0}));
  // python scalars through the operators of the reference: t // 2 is div(2, rounding_mode="floor")
  Tensor t = make({-7, 7}, dtypes::int32);
  EXPECT_EQ(t.div(t.scalar_like(int64_t(2)), false, "floor").tolist<int>(), (std::vector<int>{-4, 3}));
}

TEST_F(MathTest, DivRoundingModesFloats) {
  TG_SKIP_UNLESS_SUPPORTED(dtypes::float16);
  std::vector<double> as{-7.5, -7, -2.25, -0.5, 0, 0.5, 2.25, 7, 7.5}, bs{-2, -0.75, 0.75, 2};
  for (DType dt : {dtypes::float32, dtypes::float64, dtypes::float16}) {
    Tensor a = make(as, dt, {9, 1}), b = make(bs, dt, {4});
    std::vector<double> want_tr, want_fl, want_none;
    for (double x : as)
      for (double y : bs)
        want_tr.push_back(std::trunc(x / y)), want_fl.push_back(std::floor(x / y)), want_none.push_back(x / y);
    EXPECT_EQ(values(a.div(b, false, "trunc")), want_tr) << dt;
    EXPECT_EQ(values(a.div(b, false, "floor")), want_fl) << dt;
    expect_close(values(a.div(b, false, std::nullopt)), want_none, 1e-3, 1e-3, tg::cat("div ", dt));
    EXPECT_EQ(a.div(b, false, "floor").dtype(), dt);
  }
  // an int numerator and a float denominator: float, as the broadcast promotes both
  Tensor m = make({-7, 7}, dtypes::int32).div(make({2}, dtypes::float32), false, "trunc");
  EXPECT_EQ(m.dtype(), dtypes::float32);
  EXPECT_EQ(m.tolist<float>(), (std::vector<float>{-3, 3}));
  // bool / bool is not an int division: float
  EXPECT_EQ(make({1, 0}, dtypes::bool_).div(make({1, 1}, dtypes::bool_), false, "floor").dtype(), dtypes::float32);
  EXPECT_THROW(make({1}, dtypes::float32).div(make({1}, dtypes::float32), false, "round"), Error);
  EXPECT_THROW(make({1, 2}, dtypes::float32).div(make({1, 2, 3}, dtypes::float32), false, "floor"), Error);
}

TEST_F(MathTest, ModIsFloorModulo) {
  expect_close(values(make({-5.5, 2.0, 9.0, 7.25}, dtypes::float32) % make({2.5, -3.0, -2.0, 0.5}, dtypes::float32)),
               {2.0, -1.0, -1.0, 0.25}, 1e-6, 0, "mod float");
  EXPECT_EQ((make({-7, 7, -7, 7}, dtypes::int32) % make({2, -2, 3, -3}, dtypes::int32)).tolist<int>(),
            (std::vector<int>{1, -1, 2, -2}));
}

TEST_F(MathTest, Copysign) {
  Tensor a = make({1, -2, 3, -0.0, 5}, dtypes::float32);
  // -0.0 counts as positive (other < 0 is false), as the reference
  EXPECT_EQ(a.copysign(make({-1, 1, -0.0, -3, kNan}, dtypes::float32)).tolist<float>(),
            (std::vector<float>{-1, 2, 3, -0.0f, 5}));
  Tensor i = make({1, -2, 3}, dtypes::int32);
  EXPECT_EQ(i.copysign(-1).dtype(), dtypes::int32);
  EXPECT_EQ(i.copysign(-1).tolist<int>(), (std::vector<int>{-1, -2, -3}));
  EXPECT_EQ(i.copysign(-1.0).dtype(), dtypes::float32);
  // broadcasting: other (2, 1) against (3,)
  Tensor c = make({1, -2, 3}, dtypes::float32).copysign(make({-1, 1}, dtypes::float32, {2, 1}));
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.tolist<float>(), (std::vector<float>{-1, -2, -3, 1, 2, 3}));
}

TEST_F(MathTest, Isclose) {
  Tensor a = make({1.0, 1.0 + 1e-6, kInf, kInf, kNan, 1.0, 0.0}, dtypes::float32);
  Tensor b = make({1.0, 1.0, kInf, -kInf, kNan, 1.1, 1e-9}, dtypes::float32);
  EXPECT_EQ(a.isclose(b).tolist<bool>(), (std::vector<bool>{true, true, true, false, false, false, true}));
  EXPECT_EQ(a.isclose(b, {.equal_nan = true}).tolist<bool>(),
            (std::vector<bool>{true, true, true, false, true, false, true}));
  EXPECT_EQ(a.isclose(b, {.rtol = 0.2}).tolist<bool>(),
            (std::vector<bool>{true, true, true, false, false, true, true}));
  EXPECT_EQ(make({100, 2}, dtypes::float32).isclose(make({101, 2}, dtypes::float32), {.rtol = 0.01}).tolist<bool>(),
            (std::vector<bool>{true, true}));
  EXPECT_EQ(make({0, 0.5}, dtypes::float32).isclose(make({0.25, 0.25}, dtypes::float32), {.atol = 0.3}).tolist<bool>(),
            (std::vector<bool>{true, true}));
  EXPECT_EQ(make({1, 2}, dtypes::int32).isclose(make({1, 3}, dtypes::int32)).tolist<bool>(),
            (std::vector<bool>{true, false}));
  Tensor bc = make({1, 2}, dtypes::float32, {2, 1}).isclose(make({1, 2, 3}, dtypes::float32));
  EXPECT_EQ(bc.shape(), (Shape{2, 3}));
  EXPECT_EQ(bc.tolist<bool>(), (std::vector<bool>{true, false, false, false, true, false}));
  EXPECT_EQ(Tensor::zeros({0, 2}).isclose(Tensor::zeros({0, 2})).shape(), (Shape{0, 2}));
}

TEST_F(MathTest, MaskedFill) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, dtypes::int32, {2, 3});
  Tensor rows = make({1, 0}, dtypes::bool_, {2, 1}), cols = make({1, 0, 1}, dtypes::bool_);
  Tensor f = x.masked_fill(rows, 0.5);  // a float value promotes, as the reference
  EXPECT_EQ(f.dtype(), dtypes::float32);
  EXPECT_EQ(f.tolist<float>(), (std::vector<float>{0.5, 0.5, 0.5, 4, 5, 6}));
  Tensor g = x.masked_fill(cols, -1);
  EXPECT_EQ(g.dtype(), dtypes::int32);
  EXPECT_EQ(g.tolist<int>(), (std::vector<int>{-1, 2, -1, -1, 5, -1}));
  Tensor h = x.masked_fill(x > 3, make({10, 20, 30}, dtypes::int32));
  EXPECT_EQ(h.tolist<int>(), (std::vector<int>{1, 2, 3, 10, 20, 30}));
  Tensor n = make({1, kNan, 3}, dtypes::float32);
  EXPECT_EQ(n.masked_fill(n.isnan(), 0.0).tolist<float>(), (std::vector<float>{1, 0, 3}));
  EXPECT_THROW(x.masked_fill(make({1, 0}, dtypes::bool_), 0), Error);  // (2,) doesn't broadcast to (2, 3)
}

TEST_F(MathTest, Lerp) {
  Tensor a = make({1, 2, -3}, dtypes::float32), b = make({3, 6, 5}, dtypes::float32);
  EXPECT_EQ(a.lerp(b, 0.5).tolist<float>(), (std::vector<float>{2, 4, 1}));
  Tensor w = make({0, 0.25, 1}, dtypes::float32, {3, 1});  // broadcast: (3, 1) weights against (3,)
  Tensor r = a.lerp(b, w);
  EXPECT_EQ(r.shape(), (Shape{3, 3}));
  EXPECT_EQ(r.tolist<float>(), (std::vector<float>{1, 2, -3, 1.5, 3, -1, 3, 6, 5}));
  EXPECT_EQ(make({1, 2}, dtypes::int32).lerp(make({3, 6}, dtypes::int32), 0.5).dtype(), dtypes::float32);
  // uint8 with a tensor weight: the reference's 7-bit fixed point (its int8 wrap included)
  Tensor u = make({0, 10, 200, 255, 100}, dtypes::uint8), v = make({255, 0, 100, 0, 101}, dtypes::uint8);
  Tensor uw = u.lerp(v, make({0.5, 0.25, 0.3, 1.0, 0.75}, dtypes::float32));
  EXPECT_EQ(uw.dtype(), dtypes::uint8);
  EXPECT_EQ(values(uw), (std::vector<double>{0, 8, 170, 0, 101}));
  Tensor us = u.lerp(v, 0.5);  // a python float weight: plain float math
  EXPECT_EQ(us.dtype(), dtypes::float32);
  // v - u is a uchar SUB: C promotes it to int (CPU, OpenCL C, CUDA C: -10, so 5), the uop wraps at 8 bits (PYTHON as
  // the reference's PYTHON, and LLVM IR's i8 sub: 246, so 133)
  const std::vector<float> c_wants{127.5, 5, 150, 127.5, 100.5}, uop_wants{127.5, 133, 278, 255.5, 100.5};
  const std::string& dev = Device::DEFAULT.str();
  EXPECT_EQ(us.tolist<float>(), dev == "CPU" || dev == "GPU" || dev == "CUDA" ? c_wants : uop_wants);
}

// *** casting shorthands ***

TEST_F(MathTest, CastShorthands) {
  Tensor x = make({-1.5, 0, 2.75}, dtypes::float32);
  EXPECT_EQ(x.half().dtype(), dtypes::float16);
  EXPECT_EQ(x.double_().dtype(), dtypes::float64);
  EXPECT_EQ(x.int_().tolist<int>(), (std::vector<int>{-1, 0, 2}));
  EXPECT_EQ(x.long_().tolist<int64_t>(), (std::vector<int64_t>{-1, 0, 2}));
  EXPECT_EQ(x.bool_().tolist<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(make({1, 2}, dtypes::int32).float_().tolist<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(x.float_().uop(), x.uop());  // same dtype: no cast
}

// *** creation ***

TEST_F(MathTest, Linspace) {
  EXPECT_EQ(Tensor::linspace(0, 10, 5).tolist<float>(), (std::vector<float>{0, 2.5, 5, 7.5, 10}));
  EXPECT_EQ(Tensor::linspace(-1, 1, 5).tolist<float>(), (std::vector<float>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_EQ(Tensor::linspace(0, 1, 7).tolist<float>(),
            (std::vector<float>{0.0f, 0.1666666716337204f, 0.3333333432674408f, 0.5f, 0.6666666865348816f,
                                0.8333333134651184f, 1.0f}));
  Tensor i = Tensor::linspace(0, 10, 5, {.dtype = dtypes::int32});
  EXPECT_EQ(i.dtype(), dtypes::int32);
  EXPECT_EQ(i.tolist<int>(), (std::vector<int>{0, 2, 5, 7, 10}));
  // float64 goes through float32 arithmetic first, as the reference. NOTE: the reference's constant folding rounds
  // the folded float32 lanes (3.3333332538604736); ours folds them in double, so the fully folded small case is
  // only float32-close, while a computed one is float32 exactly
  expect_close(Tensor::linspace(0, 10, 4, {.dtype = dtypes::float64}).tolist<double>(),
               {0.0, 3.3333332538604736, 6.666666507720947, 10.0}, 0, 1e-7, "linspace float64");
  std::vector<double> big = Tensor::linspace(0, 1, 301, {.dtype = dtypes::float64}).tolist<double>();
  EXPECT_EQ(big[100], double(float(100 * float(1.0 / 300))));
  EXPECT_EQ(Tensor::linspace(10, 0, 3).tolist<float>(), (std::vector<float>{10, 5, 0}));
  EXPECT_EQ(Tensor::linspace(3, 10, 1).tolist<float>(), (std::vector<float>{3}));
  Tensor e = Tensor::linspace(3, 10, 0);
  EXPECT_EQ(e.shape(), (Shape{0}));
  EXPECT_EQ(e.dtype(), dtypes::float32);
  EXPECT_THROW(Tensor::linspace(0, 1, -1), Error);
  EXPECT_THROW(Tensor::linspace(0, 1, 3, {.dtype = dtypes::bool_}), Error);
}

TEST_F(MathTest, EmptyLike) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, dtypes::int16, {2, 3});
  Tensor e = x.empty_like();
  EXPECT_EQ(e.shape(), (Shape{2, 3}));
  EXPECT_EQ(e.dtype(), dtypes::int16);
  EXPECT_EQ(e.device(), x.device());
  EXPECT_EQ(x.empty_like({.dtype = dtypes::float64}).dtype(), dtypes::float64);
  EXPECT_EQ(Tensor::zeros({0, 4}).empty_like().shape(), (Shape{0, 4}));
}

// *** random: the reference's numbers for a seed, then ranges and statistics ***

TEST_F(MathTest, RandomMatchesTheReference) {
  TG_SKIP_UNLESS_SUPPORTED(dtypes::float16);
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::randint({2, 3}, 5, 10).tolist<int>(), (std::vector<int>{9, 7, 6, 8, 9, 9}));
  Tensor::manual_seed(42);
  Tensor r64 = Tensor::randint({6}, -1000, 1000, {.dtype = dtypes::int64});
  EXPECT_EQ(r64.tolist<int64_t>(), (std::vector<int64_t>{994, 179, -555, 510, 811, 729}));
  Tensor::manual_seed(42);
  expect_close(values(Tensor::scaled_uniform({2, 3})),
               {0.4058259427547455, 0.07341639697551727, -0.22653861343860626, 0.2082490622997284, 0.3312121629714966,
                0.2979256808757782},
               1e-7, 0, "scaled_uniform");
  Tensor::manual_seed(42);
  expect_close(values(Tensor::glorot_uniform({2, 3})),
               {1.0889452695846558, 0.19699685275554657, -0.6078668832778931, 0.5587908625602722, 0.8887354731559753,
                0.7994185090065002},
               2.5e-7, 0, "glorot_uniform");
  Tensor::manual_seed(42);
  expect_close(values(Tensor::kaiming_uniform({2, 3})),
               {1.4057519435882568, 0.25430911779403687, -0.7847135066986084, 0.7213598489761353, 1.1472951173782349,
                1.0319932699203491},
               2.5e-7, 0, "kaiming_uniform");  // an ulp: without FMA (CPU_ARCH=x86-64-v2) a*b+c rounds twice
  // the normal ones go through cos/log/sqrt: equal to a few ulp
  Tensor::manual_seed(42);
  expect_close(values(Tensor::normal({2, 3}, 10, 2)),
               {11.955713272094727, 10.935577392578125, 11.105269432067871, 9.3423490524292, 8.288971900939941,
                10.550528526306152},
               1e-5, 1e-6, "normal");
  Tensor::manual_seed(42);
  expect_close(values(Tensor::kaiming_normal({2, 3})),
               {0.7983766198158264, 0.38192859292030334, 0.45120176672935486, -0.268471360206604, -0.6984894871711731,
                0.224741131067276},
               1e-5, 1e-6, "kaiming_normal");
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::randperm(6).tolist<int>(), (std::vector<int>{2, 1, 3, 5, 4, 0}));
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::randperm(10).tolist<int>(), (std::vector<int>{9, 4, 1, 0, 8, 7, 6, 5, 2, 3}));
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor({1, 2, 3, 4}).multinomial(20, true).tolist<int>(),
            (std::vector<int>{2, 1, 3, 2, 3, 1, 2, 2, 3, 3, 3, 3, 3, 3, 2, 3, 2, 3, 3, 3}));
  // reference: 8 kernels for 20 samples of a realized (4,) weight, 9 for 5 samples of (3, 600) (a two-stage cumsum)
  Tensor w4 = Tensor({1.0f, 2.0f, 3.0f, 4.0f}).realize(), w600 = Tensor::rand({3, 600}).realize();
  int64_t before = GlobalCounters::kernel_count;
  w4.multinomial(20, true).realize();
  EXPECT_EQ(GlobalCounters::kernel_count - before, 8);
  before = GlobalCounters::kernel_count;
  w600.multinomial(5, true).realize();
  EXPECT_EQ(GlobalCounters::kernel_count - before, 9);
  Tensor::manual_seed(42);
  Tensor m2 = make({1, 0, 3, 0, 0, 1}, dtypes::float32, {2, 3}).multinomial(1);
  EXPECT_EQ(m2.shape(), (Shape{2, 1}));
  EXPECT_EQ(m2.tolist<int>(), (std::vector<int>{0, 2}));
  Tensor::manual_seed(42);
  EXPECT_EQ(values(Tensor::uniform({4}, -1, 1, {.dtype = dtypes::float16})),
            (std::vector<double>{-0.27099609375, 0.701171875, 0.8212890625, 0.7626953125}));
}

TEST_F(MathTest, RandintRangeAndDtype) {
  Tensor::manual_seed(1);
  Tensor r = Tensor::randint({2000}, -3, 4);
  EXPECT_EQ(r.dtype(), dtypes::int32);
  std::vector<int> v = r.tolist<int>();
  std::vector<int> count(7, 0);
  double mean = 0;
  for (int x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 4);
    count[static_cast<size_t>(x + 3)]++;
    mean += x / 2000.0;
  }
  for (int c : count) EXPECT_GT(c, 200);  // each of the 7 values ~286 times
  EXPECT_NEAR(mean, 0.0, 0.2);
  EXPECT_EQ(Tensor::randint({3}, 0, 10, {.dtype = dtypes::uint8}).dtype(), dtypes::uint8);
  EXPECT_EQ(Tensor::randint({0, 2}).shape(), (Shape{0, 2}));
  EXPECT_THROW(Tensor::randint({3}, 0, 10, {.dtype = dtypes::float32}), Error);
  EXPECT_THROW(Tensor::randint({3}, 5, 5), Error);
}

TEST_F(MathTest, NormalAndInitializersStatistics) {
  Tensor::manual_seed(3);
  std::vector<double> n = values(Tensor::normal({4000}, 3.0, 2.0));
  double m = 0, var = 0;
  for (double x : n) m += x / n.size();
  for (double x : n) var += (x - m) * (x - m) / n.size();
  EXPECT_NEAR(m, 3.0, 0.15);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.15);
  // kaiming_uniform: bound sqrt(3) * sqrt(2 / (1 + a^2)) / sqrt(fan_in), fan_in = prod(shape[1:])
  double bound = std::sqrt(3.0) * std::sqrt(2.0 / (1 + 0.25)) / std::sqrt(50.0);
  std::vector<double> k = values(Tensor::kaiming_uniform({40, 5, 10}, 0.5));
  double kmax = 0;
  for (double x : k) kmax = std::max(kmax, std::abs(x));
  EXPECT_LE(kmax, bound);
  EXPECT_GT(kmax, 0.9 * bound);
  std::vector<double> g = values(Tensor::glorot_uniform({30, 20}));
  double gbound = std::sqrt(6.0 / 50), gmax = 0;
  for (double x : g) gmax = std::max(gmax, std::abs(x));
  EXPECT_LE(gmax, gbound);
  EXPECT_GT(gmax, 0.9 * gbound);
  std::vector<double> s = values(Tensor::scaled_uniform({16, 25}));
  for (double x : s) EXPECT_LE(std::abs(x), 1 / 20.0);
  std::vector<double> kn = values(Tensor::kaiming_normal({500, 8}));
  double kv = 0;
  for (double x : kn) kv += x * x / kn.size();
  EXPECT_NEAR(std::sqrt(kv), std::sqrt(2.0 / (1 + 1e-4)) / std::sqrt(8.0), 0.05);
  // dtype and requires_grad pass through
  Tensor h = Tensor::normal({3}, 0, 1, {.dtype = dtypes::float16, .requires_grad = true});
  EXPECT_EQ(h.dtype(), dtypes::float16);
  EXPECT_EQ(h.requires_grad(), std::optional<bool>(true));
  EXPECT_EQ(Tensor::kaiming_uniform({4, 2}, 0.01, {.dtype = dtypes::float64}).dtype(), dtypes::float64);
  EXPECT_THROW(Tensor::glorot_uniform({}), Error);
}

TEST_F(MathTest, RandpermIsAPermutation) {
  Tensor::manual_seed(5);
  Tensor p = Tensor::randperm(100);
  EXPECT_EQ(p.dtype(), dtypes::int32);
  std::vector<int> v = p.tolist<int>();
  std::set<int> seen(v.begin(), v.end());
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 99);
  std::vector<int> sorted(v);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(v, sorted);
  EXPECT_EQ(Tensor::randperm(7, {.dtype = dtypes::int64}).dtype(), dtypes::int64);
  EXPECT_EQ(Tensor::randperm(1).tolist<int>(), (std::vector<int>{0}));
  EXPECT_EQ(Tensor::randperm(0).shape(), (Shape{0}));
  EXPECT_THROW(Tensor::randperm(-1), Error);
}

TEST_F(MathTest, MultinomialFrequencies) {
  Tensor::manual_seed(9);
  Tensor w = make({1, 0, 3}, dtypes::float32);
  std::vector<int> s = w.multinomial(4000, true).tolist<int>();
  std::vector<int> count(3, 0);
  for (int x : s) count[static_cast<size_t>(x)]++;
  EXPECT_EQ(count[1], 0);  // zero weight: never drawn
  EXPECT_NEAR(count[0] / 4000.0, 0.25, 0.03);
  EXPECT_NEAR(count[2] / 4000.0, 0.75, 0.03);
  Tensor two = make({0, 0, 5, 1, 0, 0}, dtypes::int32, {2, 3}).multinomial(6, true);
  EXPECT_EQ(two.shape(), (Shape{2, 6}));
  EXPECT_EQ(two.dtype(), dtypes::int32);
  EXPECT_EQ(two.tolist<int>(), (std::vector<int>{2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(make({1, 1}, dtypes::float32).multinomial().shape(), (Shape{1}));
  EXPECT_THROW(w.multinomial(2, false), Error);  // without replacement only one sample
  EXPECT_THROW(w.multinomial(0, true), Error);
  EXPECT_THROW(Tensor::ones({2, 2, 2}).multinomial(), Error);
  EXPECT_THROW(Tensor(1.0f).multinomial(), Error);
}
