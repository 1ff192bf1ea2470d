// bfloat16 on the CPU device: clang 14 has no __bf16 on x86, so the Clang renderer stores it as unsigned short and
// computes in float (cstyle.cpp software_bf16). Casts round to nearest even as the hardware does, NaN and inf
// survive, ALUs on bf16 round their float result back; all against a host implementation of the same rounding.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

uint16_t to_bf16(float f) {  // round to nearest even; NaN -> the quiet NaN 0x7fc0
  if (std::isnan(f)) return 0x7fc0;
  uint32_t u = std::bit_cast<uint32_t>(f);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
float from_bf16(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

std::vector<uint16_t> bits_of(const Tensor& t) {
  std::vector<uint8_t> raw = t.data_bytes();
  std::vector<uint16_t> out(raw.size() / 2);
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

const std::vector<float> samples{1.0f,
                                 -2.5f,
                                 3.14159f,
                                 1e-3f,
                                 65504.0f,
                                 1.00390625f,
                                 1.01171875f,
                                 -0.0f,
                                 1e-40f,
                                 3.4e38f,
                                 -1.7e-20f,
                                 0.1f,
                                 std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN()};

struct Bfloat16 : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
};

}  // namespace

TEST_F(Bfloat16, CastsRoundToNearestEven) {
  Tensor b = Tensor(samples, {static_cast<int64_t>(samples.size())}).cast(dtypes::bfloat16);
  std::vector<uint16_t> got = bits_of(b);
  for (size_t i = 0; i < samples.size(); i++) EXPECT_EQ(got[i], to_bf16(samples[i])) << samples[i];
  std::vector<float> back = b.cast(dtypes::float32).tolist<float>();
  for (size_t i = 0; i < samples.size(); i++) {
    float want = from_bf16(to_bf16(samples[i]));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(back[i]));
    else
      EXPECT_EQ(back[i], want) << samples[i];
  }
  // other dtypes go through float: an int, a double, a half
  EXPECT_EQ(Tensor({7, -300}).cast(dtypes::bfloat16).cast(dtypes::int32).tolist<int>(), (std::vector<int>{7, -300}));
  EXPECT_EQ(Tensor(std::vector<double>{0.1}, {1}).cast(dtypes::bfloat16).cast(dtypes::float64).tolist<double>()[0],
            static_cast<double>(from_bf16(to_bf16(0.1f))));
}

TEST_F(Bfloat16, ArithmeticRoundsEachResult) {
  std::vector<float> a{1.0f, -2.5f, 3.140625f, 100.0f, 0.5f}, c{0.00390625f, 1.5f, -3.0f, 1.0f, 0.25f};
  Tensor ta = Tensor(a, {5}).cast(dtypes::bfloat16), tc = Tensor(c, {5}).cast(dtypes::bfloat16);
  Tensor sum = ta + tc, prod = ta * tc, scaled = ta * 3, lt = ta < tc;
  EXPECT_EQ(sum.dtype(), dtypes::bfloat16);
  std::vector<uint16_t> s = bits_of(sum), p = bits_of(prod), k = bits_of(scaled);
  std::vector<bool> l = lt.tolist<bool>();
  for (size_t i = 0; i < a.size(); i++) {
    float x = from_bf16(to_bf16(a[i])), y = from_bf16(to_bf16(c[i]));
    EXPECT_EQ(s[i], to_bf16(x + y)) << i;  // 1 + 2**-8 rounds to 1: bf16 has 8 bits of mantissa
    EXPECT_EQ(p[i], to_bf16(x * y)) << i;
    EXPECT_EQ(k[i], to_bf16(x * 3.0f)) << i;
    EXPECT_EQ(l[i], x < y) << i;
  }
  // a reduce of bf16 values: summed in float (the acc dtype), exact here
  EXPECT_EQ(Tensor::arange(20).cast(dtypes::bfloat16).sum().cast(dtypes::float32).item<float>(), 190.0f);
}
