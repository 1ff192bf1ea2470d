// exp2, log2 and sin as polynomials (uop/transcendental.h), forced with TRANSCENDENTAL=2 on the device under test
// (LLVM runs them by default): within a few ulps of the correctly rounded answer over normal, huge, tiny, denormal
// and negative inputs, IEEE's answers at nan, +-inf and +-0, for float16, float32 and float64, and the functions
// built on them (exp, log, cos, tan, pow). In the spirit of tinygrad's test/test_transcendental.py.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "scoped_env.h"
#include "tg/engine/realize.h"
#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/device.h"
#include "tg/schedule/schedule.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

struct Transcendental : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }
  test::ScopedEnv force{"TRANSCENDENTAL", "2"};
};

int mantissa_bits(DType d) { return d == dtypes::float64 ? 52 : d == dtypes::float32 ? 23 : 10; }
int min_exponent(DType d) { return d == dtypes::float64 ? -1022 : d == dtypes::float32 ? -126 : -14; }
double round_to(double v, DType d) {  // v rounded to d (float16: to nearest even in 11 bits, denormals included)
  if (d == dtypes::float64 || !std::isfinite(v) || v == 0) return v;
  if (d == dtypes::float32) return static_cast<float>(v);
  int e = std::max(std::ilogb(v), min_exponent(d));
  double q = std::ldexp(1.0, e - mantissa_bits(d));
  double r = std::nearbyint(v / q) * q;
  return std::fabs(r) > 65504 ? std::copysign(kInf, v) : r;
}
// the distance of got from want in units of want's last place (denormals: the smallest one)
double ulps(double got, double want, DType d) {
  int e = std::max(std::ilogb(want == 0 ? std::ldexp(1.0, min_exponent(d)) : want), min_exponent(d));
  return std::fabs(got - want) / std::ldexp(1.0, e - mantissa_bits(d));
}

// op on the device in dtype d, read back as doubles (float16 through float32, exactly)
std::vector<double> run(const std::vector<double>& xs, DType d, const std::function<Tensor(const Tensor&)>& op) {
  Tensor x = Tensor(xs, {static_cast<int64_t>(xs.size())}).cast(d).realize();
  Tensor y = op(x);
  return (d == dtypes::float64 ? y : y.cast(dtypes::float32)).cast(dtypes::float64).tolist<double>();
}

// each input's answer is within max_ulps of ref's rounded to d, or is exactly its nan / inf / 0
void expect_close(const std::string& what, DType d, const std::vector<double>& xs,
                  const std::function<Tensor(const Tensor&)>& op, const std::function<long double(long double)>& ref,
                  double max_ulps, bool ulps_of_one = false) {
  if (!is_dtype_supported(d)) return;  // half on an OpenCL device without cl_khr_fp16 (PoCL)
  std::vector<double> in;
  for (double x : xs) in.push_back(round_to(x, d));  // what the device holds
  std::vector<double> got = run(in, d, op);
  ASSERT_EQ(got.size(), in.size());
  double worst = 0;
  for (size_t i = 0; i < in.size(); i++) {
    double want = round_to(static_cast<double>(ref(in[i])), d);
    if (std::isnan(want) || std::isinf(want) || !std::isfinite(got[i])) {
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got[i])) << what << " " << d << "(" << in[i] << ") = " << got[i] << ", want nan";
      else
        EXPECT_EQ(got[i], want) << what << " " << d << "(" << in[i] << ")";
      continue;
    }
    // ulps_of_one: the error in units of 1.0's last place (trig near its zeros, as the reference's atol=ulp)
    double u = ulps_of_one ? std::fabs(got[i] - want) / std::ldexp(1.0, -mantissa_bits(d)) : ulps(got[i], want, d);
    worst = std::max(worst, u);
    EXPECT_LE(u, max_ulps) << what << " " << d << "(" << in[i] << ") = " << got[i] << ", want " << want;
  }
  ::testing::Test::RecordProperty(what + "_" + d.name() + "_worst_ulps", std::to_string(worst));
  if (tg::getenv("TRANSCENDENTAL_ULPS")) std::cout << what << " " << d << ": worst " << worst << " ulps\n";
}

std::vector<double> exp_inputs(DType d) {  // around 0, the whole finite range and past it, tiny, specials
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-8, -1e-8, 3.14159, -2.71828, kInf, -kInf, kNan};
  double hi = d == dtypes::float64 ? 1100 : d == dtypes::float32 ? 140 : 18;
  for (int i = 0; i <= 200; i++) v.push_back(-hi + 2 * hi * i / 200.0 + 0.01 * i);
  // at and around where the answer becomes inf or 0 (exp2 clamps its input there), and far past
  std::vector<double> edges =
      d == dtypes::float64 ? std::vector<double>{1023.9, 1024,    1024.5,  1e300, -1074,   -1074.5,
                                                 -1075,  -1075.5, -1999.5, -2000, -2000.5, -1e300}
      : d == dtypes::float32
          ? std::vector<double>{127.99, 128, 128.5, 129, 1e30, -149, -149.5, -149.9, -150, -150.1, -151, -1e30}
          : std::vector<double>{15.99, 16, 22.9, 23, 24, 1000, -14, -21.9, -22, -60000};
  v.insert(v.end(), edges.begin(), edges.end());
  return v;
}
std::vector<double> log_inputs(DType d) {  // every binade, denormals, 0s, negatives, specials
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, -5.0, 0.75, 1.5, 2.0, kInf, -kInf, kNan};
  int lo = min_exponent(d) - mantissa_bits(d), hi = d == dtypes::float64 ? 1023 : d == dtypes::float32 ? 127 : 15;
  for (int e = lo; e <= hi; e += (d == dtypes::float64 ? 7 : 1))
    for (double m : {1.0, 1.2345, 1.75}) v.push_back(std::ldexp(m, e));
  return v;
}
// sin below the switch to Payne-Hanek (30): Cody-Waite, about 1 ulp of 1.0 near the zeros
std::vector<double> sin_small_inputs() {
  std::vector<double> v = {0.0, -0.0, 1e-7, -1e-7, 25.0, -25.0, 1.5707963, 3.1415927, 6.2831853, kInf, -kInf, kNan};
  for (int i = 1; i <= 120; i++) v.push_back(29.9 * i / 120.0 * (i % 2 ? 1 : -1));
  for (int k = 1; k <= 19; k++) v.push_back(k * 1.5707963267948966);
  return v;
}
// above it, up to 1e7: the reference's 96-bit Payne-Hanek
std::vector<double> sin_large_inputs(DType d) {
  std::vector<double> v = {30.0, 35.0, -35.0};
  double hi = d == dtypes::float16 ? 60000 : 1e7;
  for (int i = 1; i <= 120; i++) v.push_back(30 * std::pow(hi / 30, i / 120.0) * (i % 2 ? 1 : -1));
  for (int k = 20; k <= 60; k++) v.push_back(k * 1.5707963267948966);
  return v;
}

const std::vector<DType> kFloats = {dtypes::float32, dtypes::float64, dtypes::float16};

}  // namespace

TEST_F(Transcendental, Exp2) {
  for (DType d : kFloats)
    expect_close(
        "exp2", d, exp_inputs(d), [](const Tensor& x) { return x.exp2(); }, [](long double x) { return std::exp2(x); },
        1.5);
}

TEST_F(Transcendental, Log2) {
  for (DType d : kFloats)
    expect_close(
        "log2", d, log_inputs(d), [](const Tensor& x) { return x.log2(); }, [](long double x) { return std::log2(x); },
        1.5);
}

TEST_F(Transcendental, Sin) {
  auto sin = [](const Tensor& x) { return x.sin(); };
  auto ref = [](long double x) { return std::sin(x); };
  for (DType d : kFloats) expect_close("sin", d, sin_small_inputs(), sin, ref, 1.5, true);
  expect_close("sin_large", dtypes::float32, sin_large_inputs(dtypes::float32), sin, ref, 1.5, true);
  expect_close("sin_large", dtypes::float16, sin_large_inputs(dtypes::float16), sin, ref, 1.5, true);
  // float64 above 30: the reference's Payne-Hanek takes 32 bits of the mantissa, so the error grows as |x|*2**-32
  // (2e-3 at 1e7). Bounded as the reference's own test bounds it (atol 3e-2); the answers are exactly the reference's
  expect_close("sin_large", dtypes::float64, sin_large_inputs(dtypes::float64), sin, ref, 3e-2 * 4503599627370496.0,
               true);
}

TEST_F(Transcendental, FunctionsBuiltOnThem) {  // exp = exp2(x/ln2), log, cos = sin(pi/2 - x), tan, pow: a few ulps
  for (DType d : {dtypes::float32, dtypes::float64}) {
    std::vector<double> xs;
    for (int i = 1; i <= 60; i++) xs.push_back(i * 0.37 - 11);
    std::vector<double> pos;
    for (double x : xs) pos.push_back(std::fabs(x) + 0.01);
    expect_close(
        "exp", d, xs, [](const Tensor& x) { return x.exp(); }, [](long double x) { return std::exp(x); }, 8);
    expect_close(
        "log", d, pos, [](const Tensor& x) { return x.log(); }, [](long double x) { return std::log(x); }, 4);
    // cos and tan lose a few ulps near their zeros (pi/2 - x rounds): compared far from them
    std::vector<double> trig = {0.1, 0.3, 0.5, -0.7, 1.0, 2.0, -2.5, 3.0, 4.0, -5.0};
    expect_close(
        "cos", d, trig, [](const Tensor& x) { return x.cos(); }, [](long double x) { return std::cos(x); }, 8);
    expect_close(
        "tan", d, trig, [](const Tensor& x) { return x.tan(); }, [](long double x) { return std::tan(x); }, 16);
    expect_close(
        "pow", d, pos, [](const Tensor& x) { return x.pow(1.7); }, [](long double x) { return std::pow(x, 1.7L); }, 64);
  }
}

TEST_F(Transcendental, ExpNearItsOverflow) {  // reordered math must not overflow early (the reference's test)
  for (auto [d, x] : std::vector<std::pair<DType, double>>{
           {dtypes::float64, 709.5}, {dtypes::float32, 88.7}, {dtypes::float16, 11}}) {
    if (!is_dtype_supported(d)) continue;
    double got = run({x}, d, [](const Tensor& t) { return t.exp(); })[0];
    double want = round_to(std::exp(round_to(x, d)), d);
    EXPECT_NEAR(got / want, 1.0, 5e-3) << d;
  }
}

TEST_F(Transcendental, Exp2BelowItsRangeUnderflowsNowhere) {
  // exp2 of an input whose answer rounds to 0 (-inf: a causal softmax's masked scores) selects its 0: computing it,
  // the last multiply underflowed, and an Intel core takes a microcode assist for every such lane (the masked half of
  // a softmax at 15x the time of the rest). The CPU's underflow flag tells: a denormal answer (exact) raises it, the
  // zeros don't. The kernel runs on this thread (8 lanes: no worker), compiled by a first run
  const std::string dev = Device::DEFAULT.str();
  if (dev != "CPU" && dev != "LLVM") GTEST_SKIP() << "a CPU device's floating-point flags";
  test::ScopedEnv one("CPU_THREADS", "1");
  auto underflows = [](const std::vector<float>& v, DType d) {
    Tensor x = Tensor(v, {static_cast<int64_t>(v.size())}).cast(d).realize();
    x.exp2().realize();  // compiled, and run once
    std::feclearexcept(FE_ALL_EXCEPT);
    Tensor y = x.exp2().realize();
    const bool raised = std::fetestexcept(FE_UNDERFLOW) != 0;
    for (double r : y.cast(dtypes::float64).tolist<double>()) EXPECT_GE(r, 0.0);
    return raised;
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (DType d : {dtypes::float32, dtypes::float64}) {
    EXPECT_FALSE(underflows({-inf, -1e30f, -2000.0f, -1100.0f, -151.0f, 0.0f, -3.5f, 10.0f}, d)) << d;
    if (d == dtypes::float32) {
      EXPECT_TRUE(underflows({-140.3f, 0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, d)) << d;
    }
  }
}

TEST_F(Transcendental, FuseIntoOneKernel) {  // the polynomials are ALUs: sin(sin(a) + sin(b)) is one kernel
  Tensor a = Tensor::empty({10}), b = Tensor::empty({10});
  EXPECT_EQ(Tensor::schedule_with_vars({(a.sin() + b.sin()).sin()}).first.size(), 1u);
  EXPECT_EQ(Tensor::schedule_with_vars({(a.log2() + b.log2()).log2()}).first.size(), 1u);
}

TEST_F(Transcendental, NoLibmCallInTheKernel) {  // forced, the compiled devices' kernels call no exp2/log2/sin
  const std::string dev = Device::DEFAULT.str();
  if (dev != "CPU" && dev != "LLVM") GTEST_SKIP() << "a compiled CPU device";
  Tensor x = Tensor::arange(64).cast(dtypes::float32);
  for (auto op : {&Tensor::exp2, &Tensor::log2, &Tensor::sin}) {
    auto [schedule, vars] = Tensor::schedule_with_vars({(x.*op)()});
    ASSERT_EQ(schedule.size(), 1u);
    auto runner = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(schedule[0]).prg);
    ASSERT_NE(runner, nullptr);
    for (const char* f : {"exp2", "log2", "sin("}) EXPECT_EQ(runner->p.src.find(f), std::string::npos) << runner->p.src;
  }
}
