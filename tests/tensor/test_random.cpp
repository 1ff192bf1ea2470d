// Tensor.rand is the reference's counter-based generator (threefry2x32 keyed by sha256 of the device index and the
// seed): the same seed gives the reference's numbers. Expected values: tinygrad 2025-06-12, CPU=1, printed with
// Tensor.manual_seed(42); Tensor.rand(5).tolist(); Tensor.rand(3).tolist(); Tensor.manual_seed(42); Tensor.randn(4).
#include <gtest/gtest.h>

#include <cmath>

#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

TEST(Random, RandMatchesTheReferenceBitForBit) {
  Device::DEFAULT.reset();  // the env's choice (DEV=...): these run on every device
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::rand({5}).tolist<float>(),
            (std::vector<float>{0.9970332384109497f, 0.5899163484573364f, 0.2225480079650879f, 0.7550519704818726f,
                                0.9056503772735596f}));
  // the second call continues the device's counter
  EXPECT_EQ(Tensor::rand({3}).tolist<float>(),
            (std::vector<float>{0.7681974172592163f, 0.49824488162994385f, 0.9452327489852905f}));
}

TEST(Random, RandnMatchesTheReference) {
  Device::DEFAULT.reset();  // the env's choice (DEV=...): these run on every device
  Tensor::manual_seed(42);
  std::vector<float> got = Tensor::randn({4}).tolist<float>();
  // NOTE: cos/log/sqrt come from libm here and from tinygrad's polynomials there: equal to a few ulp
  std::vector<float> want{-0.5143688917160034f, 1.084983229637146f, 0.9088915586471558f, -0.0840964987874031f};
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST(Random, SameSeedSameNumbersAndInRange) {
  Device::DEFAULT.reset();  // the env's choice (DEV=...): these run on every device
  Tensor::manual_seed(7);
  std::vector<float> a = Tensor::rand({1000}).tolist<float>();
  Tensor::manual_seed(7);
  std::vector<float> b = Tensor::rand({1000}).tolist<float>();
  EXPECT_EQ(a, b);
  double mean = 0;
  for (float v : a) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
    mean += v / a.size();
  }
  EXPECT_NEAR(mean, 0.5, 0.05);
  std::vector<float> n = Tensor::randn({2000}).tolist<float>();
  double m = 0, var = 0;
  for (float v : n) m += v / n.size();
  for (float v : n) var += (v - m) * (v - m) / n.size();
  EXPECT_NEAR(m, 0.0, 0.1);
  EXPECT_NEAR(var, 1.0, 0.15);
}

TEST(Random, BadInput) {
  EXPECT_THROW(Tensor::rand({2}, {.dtype = dtypes::int32}), Error);
  EXPECT_THROW(Tensor::rand({-1}), Error);
}

TEST(Random, RequiresGradIsUnsetUnlessAsked) {  // as the reference: None, so an optimizer can take them as params
  EXPECT_FALSE(Tensor::rand({3}).requires_grad().has_value());
  EXPECT_FALSE(Tensor::uniform({3}, -1, 1).requires_grad().has_value());
  EXPECT_FALSE(Tensor::randn({3}).requires_grad().has_value());
  EXPECT_EQ(Tensor::rand({3}, {.requires_grad = true}).requires_grad(), std::optional<bool>(true));
  EXPECT_EQ(Tensor::uniform({3}, -1, 1, {.requires_grad = false}).requires_grad(), std::optional<bool>(false));
}

TEST(Random, ThreefryRandomBitsMatchJax) {  // jax's threefry_2x32 of key (0, 1337) over 0..19, the reference's check
  Tensor counts = Tensor::arange(0, 20, 1, {.dtype = dtypes::uint32});
  Tensor bits = Tensor::threefry_random_bits(Tensor(std::vector<int64_t>{0, 1337}, {2}, {.dtype = dtypes::uint32}),
                                             counts.shrink({{0, 10}}), counts.shrink({{10, 20}}));
  std::vector<uint32_t> r = bits.tolist<uint32_t>();
  ASSERT_EQ(r.size(), 20u);
  EXPECT_EQ(r[0], 2221762175u);
  EXPECT_EQ(r[1], 1752107825u);
  EXPECT_EQ(r[19], 1692360114u);
}

TEST(Random, TheGeneratorsStateIsPerDeviceAndResetBySeeding) {
  Tensor::manual_seed(0);
  EXPECT_TRUE(Tensor::device_seeds().empty() && Tensor::device_rng_counters().empty());
  Tensor::rand({3}).realize();
  ASSERT_EQ(Tensor::device_rng_counters().size(), 1u);
  EXPECT_EQ(Tensor::device_rng_counters().begin()->second.tolist<uint32_t>(), std::vector<uint32_t>{3});
}
