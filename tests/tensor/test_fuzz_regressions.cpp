// Regressions found by tests/fuzz/fuzz_api.cpp: each is the smallest call sequence of a finding, with the error kind
// tinygrad raises for it (or the value it returns).
#include <gtest/gtest.h>

#include <cmath>

#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {
struct FuzzRegression : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
};
}  // namespace

// a 0-d tensor has no dim 0 to concatenate along (tinygrad: IndexError from t.shape[dim])
TEST_F(FuzzRegression, CatOfTwoZeroDimTensorsIsAnIndexError) {
  EXPECT_THROW(Tensor(3.14).cat({Tensor(3.14)}), IndexError);
  EXPECT_THROW(Tensor(3.14).cat({Tensor(3.14)}, -1), IndexError);
  EXPECT_THROW(Tensor::stack({Tensor(1), Tensor(2)}, 0).cat({Tensor(1)}), Error);  // ndim mismatch
}

// transposing a 0-d tensor swaps two dims it doesn't have (tinygrad: IndexError from order[dim0])
TEST_F(FuzzRegression, TransposeOfZeroDimTensorIsAnIndexError) {
  EXPECT_THROW(Tensor(7).transpose(0, -1), IndexError);
  EXPECT_THROW(Tensor(7).transpose(), IndexError);
}

// flip of a 0-d tensor along dim 0 or -1 returns it (as tinygrad); a repeated dim is still an error
TEST_F(FuzzRegression, FlipOfZeroDimTensorIsItself) {
  EXPECT_EQ(Tensor(5).flip({-1}).item<int>(), 5);
  EXPECT_EQ(Tensor(5).flip({0}).item<int>(), 5);
  EXPECT_THROW(Tensor(5).flip({0, -1}), Error);
  EXPECT_THROW(Tensor(5).flip({1}), IndexError);
}

// flatten of a 0-d tensor from dim -1 is (1,) (python slices of an empty shape)
TEST_F(FuzzRegression, FlattenOfZeroDimTensorFromNegativeDimIsOneElement) {
  EXPECT_EQ(Tensor(5).flatten(-1, 0).shape(), Shape{1});
  EXPECT_EQ(Tensor(5).flatten(-1, -1).shape(), Shape{1});
  EXPECT_EQ(Tensor(5).flatten(0, -1).shape(), Shape{1});
}

// mean over dim 0 or -1 of a 0-d tensor is the tensor (tinygrad divides by 1)
TEST_F(FuzzRegression, MeanOfZeroDimTensorOverAnAxis) {
  EXPECT_EQ(Tensor(2.5f).mean(-1).item<float>(), 2.5f);
  EXPECT_EQ(Tensor(2.5f).mean(0, true).item<float>(), 2.5f);
  EXPECT_EQ(Tensor(2.5f).var({0}, false, 0).item<float>(), 0.0f);
}

// argmax of a 0-d tensor along an axis has no dim to index (tinygrad: IndexError from self.shape[axis])
TEST_F(FuzzRegression, ArgmaxOfZeroDimTensorAlongAnAxisIsAnIndexError) {
  EXPECT_THROW(Tensor(2.5f).argmax(0), IndexError);
  EXPECT_THROW(Tensor(2.5f).argmin(-1), IndexError);
  EXPECT_EQ(Tensor(2.5f).argmax().item<int>(), 0);
}

// a pool's stride defaults to its kernel size: a kernel size of 0 is a stride of 0, which ceil_mode divided by
TEST_F(FuzzRegression, PoolWithZeroStrideIsAnErrorNotADivisionByZero) {
  Tensor t = Tensor::ones({1, 1, 1, 8});
  EXPECT_THROW(t.avg_pool2d({.kernel_size = {0, 3}, .ceil_mode = true}), Error);
  EXPECT_THROW(t.avg_pool2d({.kernel_size = {1, 3}, .stride = {0}}), Error);
  EXPECT_THROW(t.max_pool2d({.kernel_size = {1, 3}, .stride = {0}, .ceil_mode = true}), Error);
}

// minimum of unsigned ints is ~max(~x, ~y); ~ of a const was the out-of-range const -1 ^ c, and MAX(x, c) with c below
// x's range folded to x: uint8 [1, 5, 20, 255].minimum(3) gave the input back
TEST_F(FuzzRegression, MinimumOfUnsignedWithAConstIsTheMinimum) {
  Tensor t = Tensor(std::vector<double>{1, 5, 20, 255}, {4}, {.dtype = dtypes::uint8});
  EXPECT_EQ(t.minimum(Tensor(3, {.dtype = dtypes::uint8})).cast(dtypes::int32).tolist<int>(),
            (std::vector<int>{1, 3, 3, 3}));
  EXPECT_EQ(t.minimum(Tensor::zeros({4}, {.dtype = dtypes::uint8})).cast(dtypes::int32).tolist<int>(),
            (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(t.cast(dtypes::uint32).minimum(Tensor(7, {.dtype = dtypes::uint32})).cast(dtypes::int64).tolist<int64_t>(),
            (std::vector<int64_t>{1, 5, 7, 7}));
  EXPECT_EQ(Tensor(0, {.dtype = dtypes::uint8}).bitwise_not().cast(dtypes::int32).item<int>(), 255);
}

// eye(2^40) is (2^40, 2^40): 2^80 elements wrapped to 0 in an int64 product, and realized as 0 bytes
TEST_F(FuzzRegression, ShapeWithMoreElementsThanInt64IsAValueError) {
  EXPECT_THROW(Tensor::eye(int64_t(1) << 40).realize(), ValueError);
  EXPECT_THROW(Tensor::zeros({int64_t(1) << 40, int64_t(1) << 40}).numel(), ValueError);
  EXPECT_EQ(Tensor::zeros({int64_t(1) << 40, int64_t(1) << 40, 0}).numel(), 0);
}

// 8 TB of int64 is more than the machine has: realizing and reading it back is a tg::Error, not std::bad_alloc
TEST_F(FuzzRegression, HugeBufferIsAnErrorNotABadAlloc) {
  Tensor t = Tensor::empty({int64_t(1) << 40}, {.dtype = dtypes::int64});
  EXPECT_THROW(t.realize().data_bytes(), Error);
  EXPECT_THROW(Tensor::ones({int64_t(1) << 40}, {.dtype = dtypes::int64}).contiguous().realize(), Error);
}

// software bf16 (an unsigned short on the Clang renderer): inf and nan consts were rendered as casts of a float to
// unsigned short, so Tensor::full({}, inf, bfloat16) held 7, not inf
TEST_F(FuzzRegression, Bfloat16InfAndNanConstsKeepTheirBits) {
  auto bits = [](double v) {  // the realized bfloat16 bits of a filled tensor (little-endian)
    std::vector<uint8_t> b = Tensor::full({2}, ConstValue(v), {.dtype = dtypes::bfloat16}).data_bytes();
    return static_cast<int>(b[1] << 8 | b[0]);
  };
  EXPECT_EQ(bits(INFINITY), 0x7f80);
  EXPECT_EQ(bits(-INFINITY), 0xff80);
  EXPECT_EQ(bits(NAN), 0x7fc0);
  EXPECT_EQ(bits(3.0), 0x4040);
}

// eye(n, m) flattens an (n, n + 1) tensor: for n = 2^40 its element count overflowed an int64 (UB, UBSan's report)
TEST_F(FuzzRegression, EyeOfHugeSizeIsAValueErrorNotAnOverflow) {
  EXPECT_THROW(Tensor::eye(int64_t(1) << 40, 4), ValueError);
  EXPECT_THROW(Tensor::ones({int64_t(1) << 40, int64_t(1) << 40}).flatten(), ValueError);
}

// arange(n) builds (n + 1) * 2n windows: arange(2^40) overflowed an int64 (UB), arange(nan) cast NaN to an int64
TEST_F(FuzzRegression, ArangeOfHugeOrNanLengthIsAValueError) {
  EXPECT_THROW(Tensor::arange(int64_t(1) << 40), ValueError);
  EXPECT_THROW(Tensor::arange(INT64_MAX), ValueError);
  EXPECT_THROW(Tensor::arange(0, NAN, 1), ValueError);
  EXPECT_EQ(Tensor::arange(-3).numel(), 0);
  EXPECT_EQ(Tensor::arange(3).tolist<int>(), (std::vector<int>{0, 1, 2}));
}

// a slice step of INT64_MIN overflowed step * (stop - start) and std::abs (UB); python picks the one element
TEST_F(FuzzRegression, SliceWithExtremeStepPicksOneElement) {
  Tensor t = Tensor({1, 2, 3, 4});
  EXPECT_EQ(t.index({Slice{.step = INT64_MIN}}).tolist<int>(), (std::vector<int>{4}));
  EXPECT_EQ(t.index({Slice{.step = INT64_MAX}}).tolist<int>(), (std::vector<int>{1}));
  EXPECT_EQ(t.index({Slice{.start = 1, .step = -INT64_MAX}}).tolist<int>(), (std::vector<int>{2}));
}

// a kernel of 0 fits a 0-size dim, and dilated windows then divided by the dim's size (SIGFPE)
TEST_F(FuzzRegression, DilatedPoolOfZeroSizeDimIsAnErrorNotADivisionByZero) {
  Tensor t = Tensor::ones({1, 1, 0, 3});
  EXPECT_THROW(t.max_pool2d({.kernel_size = {0, 1}, .stride = {2}, .dilation = {2}}), Error);
  EXPECT_THROW(t.avg_pool2d({.kernel_size = {0, 1}, .stride = {2}, .dilation = {2}, .ceil_mode = true}), Error);
}

// batchnorm's axis of a 0-d tensor indexed its empty shape at 0 or -1 (tinygrad: IndexError from shape_mask[ax])
TEST_F(FuzzRegression, BatchnormOfZeroDimTensorIsAnIndexError) {
  Tensor x = Tensor(1.5f), stat = Tensor(2.0f);
  EXPECT_THROW(x.batchnorm(std::nullopt, std::nullopt, stat, stat, {0}), IndexError);
  EXPECT_THROW(x.batchnorm(std::nullopt, std::nullopt, stat, stat, {-1}), IndexError);
}

// overlapping pool windows repeat the input k * (i + d) / i times: for a 2^32 dim and kernel that overflowed an int64
TEST_F(FuzzRegression, PoolOfHugeDimIsAValueErrorNotAnOverflow) {
  EXPECT_THROW(Tensor::zeros({1, int64_t(1) << 32}).avg_pool2d({.kernel_size = {int64_t(1) << 32}, .stride = {1}}),
               ValueError);
}

// x ** 1e30: past 2^52 a double has no halves, so v - 0.5 == v and simplify_pow's "x ** (n + 0.5)" rule rewrote the
// power into itself times a sqrt forever (the fuzzer's hang, seed 1 session 592); it is an integer power now
TEST_F(FuzzRegression, PowerOfAHugeConstantTerminates) {
  Tensor x = Tensor(std::vector<float>{0.5f, 1.0f, 2.0f}, {3});
  std::vector<float> y = x.pow(Tensor(1e30)).tolist<float>();
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_TRUE(std::isinf(y[2]));
}
