// The lazy graphs the Tensor frontend builds, as the reference prints them (reference/golden/uop_repr graphs.out
// A1-D3 and repr_cases.out R15, copied to tests/data/tensor). UNIQUE numbers are normalized: they come from one
// counter per process, and the test binary runs many tests in one process.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "tg/runtime/buffers.h"
#include "tg/tensor/tensor.h"

using namespace tg;

static std::string norm(const std::string& s) {
  return std::regex_replace(s, std::regex(R"(Ops.UNIQUE, dtypes.void, arg=\d+)"), "Ops.UNIQUE, dtypes.void, arg=N");
}
static std::map<std::string, std::string> golden() {
  std::ifstream f(std::string(TG_TEST_DATA) + "/tensor/graphs.txt");
  std::map<std::string, std::string> out;
  std::string line, key;
  while (std::getline(f, line)) {
    if (line.rfind("#### ", 0) == 0)
      key = line.substr(5);
    else
      out[key] += (out[key].empty() ? "" : "\n") + line;
  }
  return out;
}

struct TensorGraph : ::testing::Test {
  void SetUp() override { Device::DEFAULT = "CPU"; }
};

TEST_F(TensorGraph, FromListIsCopyOfPythonBuffer) {  // A1, A2
  auto g = golden();
  Tensor t({1, 2, 3, 4});
  EXPECT_EQ(t.repr(), g["A1"]);
  EXPECT_EQ(norm(t.uop().repr()), norm(g["A2"]));
  EXPECT_EQ(t.dtype(), dtypes::int32);
  EXPECT_EQ(t.shape(), Shape{4});
  EXPECT_EQ(t.device(), "CPU");
}

TEST_F(TensorGraph, ScalarOperandsAndDedup) {  // C1, C2: +3+4 with the shared scalar VIEW
  auto g = golden();
  Tensor u({1, 2, 3, 4});
  Tensor s = u + 3 + 4;
  EXPECT_EQ(norm(s.uop().repr()), norm(g["C1"]));
  EXPECT_EQ(s.repr(), g["C2"]);
  Tensor a = u * 4, b = u * 4;
  EXPECT_EQ(a.uop(), b.uop());  // dedup: the same node
}

TEST_F(TensorGraph, PolynomialAndSum) {  // D1, D2, D3
  auto g = golden();
  Tensor x = Tensor({2.0f}, {.requires_grad = true});
  Tensor y = x.pow(x.scalar_like(2.0)) + 3 * x + 1;
  EXPECT_EQ(norm(y.uop().repr()), norm(g["D1"]));
  EXPECT_EQ(y.repr(), g["D2"]);
  EXPECT_EQ(norm(y.sum().uop().repr()), norm(g["D3"]));
  EXPECT_EQ(y.requires_grad(), std::optional<bool>(true));
}

TEST_F(TensorGraph, ReprVariants) {  // R15, the cases that need no realize
  EXPECT_EQ(Tensor(3.5).repr(), "<Tensor <UOp CPU () float (<Ops.CONST: 78>, None)> on CPU with grad None>");
  EXPECT_EQ(Tensor::ones({2, 3}).repr(),
            "<Tensor <UOp CPU (2, 3) float ShapeTracker(views=(View(shape=(2, 3), strides=(0, 0), offset=0, mask=None, "
            "contiguous=False),))> on CPU with grad None>");
  EXPECT_EQ(Tensor({1, 2, 3}, {.dtype = dtypes::uint8}).repr(),
            "<Tensor <UOp CPU (3,) uchar (<Ops.COPY: 7>, None)> on CPU with grad None>");
  EXPECT_EQ(Tensor({true, false}).repr(), "<Tensor <UOp CPU (2,) bool (<Ops.COPY: 7>, None)> on CPU with grad None>");
  EXPECT_EQ(Tensor::empty({2, 2}).repr(),
            "<Tensor <UOp CPU (2, 2) float ShapeTracker(views=(View(shape=(2, 2), strides=(2, 1), offset=0, mask=None, "
            "contiguous=True),))> on CPU with grad None>");
}

TEST_F(TensorGraph, PromotionAndBroadcasting) {
  Tensor i({1, 2, 3});
  EXPECT_EQ((i + 1).dtype(), dtypes::int32);      // an int scalar keeps the int tensor's dtype
  EXPECT_EQ((i + 1.5).dtype(), dtypes::float32);  // a float scalar promotes
  EXPECT_EQ((i / 2).dtype(), dtypes::float32);    // true division of ints is float
  EXPECT_EQ((i < 2).dtype(), dtypes::bool_);
  Tensor i8({1, 2}, {.dtype = dtypes::int8});
  Tensor u8({1, 2}, {.dtype = dtypes::uint8});
  EXPECT_EQ((i8 + u8).dtype(), dtypes::int16);
  Tensor a = Tensor::ones({3, 1}), b = Tensor::ones({1, 4});
  EXPECT_EQ((a + b).shape(), (Shape{3, 4}));
  EXPECT_EQ(Tensor::ones({2, 3, 4}).sum(1).shape(), (Shape{2, 4}));
  EXPECT_EQ(Tensor::ones({2, 3, 4}).sum(-1, true).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(Tensor::ones({2, 3}).matmul(Tensor::ones({3, 5})).shape(), (Shape{2, 5}));
  EXPECT_EQ(Tensor::ones({6}).reshape({2, -1}).shape(), (Shape{2, 3}));
}

TEST_F(TensorGraph, BadInputNamesShapes) {
  Tensor m(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  auto msg = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string r = msg([&] { m.reshape({4, 2}); });
  EXPECT_NE(r.find("(2, 3)"), std::string::npos) << r;
  EXPECT_NE(r.find("(4, 2)"), std::string::npos) << r;
  r = msg([&] { m + Tensor::ones({4}); });
  EXPECT_NE(r.find("(2, 3)"), std::string::npos) << r;
  r = msg([&] { m.sum(2); });
  EXPECT_NE(r.find("dim=2"), std::string::npos) << r;
  r = msg([&] { m.permute({0, 0}); });
  EXPECT_NE(r.find("permutation"), std::string::npos) << r;
  r = msg([&] { m.shrink({{0, 3}, {0, 3}}); });
  EXPECT_NE(r.find("shrink"), std::string::npos) << r;
  r = msg([&] { Tensor({1}, {.device = "FOO"}); });
  EXPECT_NE(r.find("FOO"), std::string::npos) << r;
}

TEST_F(TensorGraph, MalformedUOpsAreErrorsNotCrashes) {
  auto msg = [](const UOp& u) {
    try {
      uop_shape(u);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg(UOp::make(Ops::RESHAPE, dtypes::int32, {}, Tuple{int64_t(2)})).find("RESHAPE needs one source"),
            std::string::npos);
  UOp buf = uop_new_buffer("CPU", 4, dtypes::int32);
  EXPECT_NE(msg(UOp::make(Ops::RESHAPE, dtypes::int32, {buf}, ConstValue(int64_t(2)))).find("needs a tuple arg"),
            std::string::npos);
  EXPECT_NE(msg(UOp::make(Ops::PAD, dtypes::int32, {buf}, Tuple{int64_t(1)})).find("tuple of pairs"),
            std::string::npos);
  EXPECT_NE(msg(UOp::make(Ops::REDUCE_AXIS, dtypes::int32, {buf}, ConstValue(int64_t(0)))).find("(op, axes)"),
            std::string::npos);
}
