// DESIGN.md section 4, "The C++ API, by example", line by line.
#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

#include <cmath>
#include <sstream>

#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

TEST(DesignApi, TheTutorialInCpp) {
  Device::DEFAULT = "CPU";
  Tensor t({1, 2, 3, 4});  // int list -> dtypes::int32, on Device::DEFAULT
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), "<Tensor <UOp CPU (4,) int (<Ops.COPY: 7>, None)> on CPU with grad None>");
  std::vector<int> v = (t * 2).tolist<int>();
  EXPECT_EQ(v, (std::vector<int>{2, 4, 6, 8}));
  Device::DEFAULT = "CPU";
  EXPECT_TRUE(t.dtype() == dtypes::int32 && t.shape() == Shape{4});
  t.realize();
  Tensor A = t * 4, B = t * 4;
  EXPECT_EQ(A.uop(), B.uop());  // dedup: same node
  Tensor x = Tensor({2.0f}, {.requires_grad = true});
  Tensor y = x.pow(2) + 3 * x + 1;
  EXPECT_EQ(y.item<float>(), 11.0f);
  std::vector<Tensor> g = y.sum().gradient({x});  // g[0].item<float>() == 7
  EXPECT_EQ(g[0].item<float>(), 7.0f);
  Tensor s = t + 3 + 4;
  s.kernelize();  // ASSIGN(BUFFER, KERNEL) graph; +3+4 becomes +7 in codegen
  EXPECT_EQ(s.uop().op(), Ops::ASSIGN);
  UOp a = UOp::const_(dtypes::int32, 2), b = UOp::const_(dtypes::int32, 2);
  EXPECT_EQ(a, b);
  PatternMatcher<UOp> fold{{op(Ops::ADD, {op(Ops::CONST).named("c1"), op(Ops::CONST).named("c2")}),
                            [](M m) { return m["c1"].const_like(m["c1"].const_arg() + m["c2"].const_arg()); }}};
  UOp r = graph_rewrite(a + b, fold);
  EXPECT_EQ(r.repr(), "UOp(Ops.CONST, dtypes.int, arg=4, src=())");
}

TEST(DesignApi, BeyondTheTutorial) {
  Device::DEFAULT = "CPU";
  Tensor m = Tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor::manual_seed(42);
  Tensor p = Tensor::rand({64, 32}), q = Tensor::randn({32, 16});
  Tensor c = p.matmul(q).relu().sum(1);
  EXPECT_EQ(c.shape(), Shape{64});
  EXPECT_EQ(p.dot(q).shape(), (Shape{64, 16}));
  EXPECT_EQ(m.sum({0, 1}).item<float>(), 21.0f);
  EXPECT_EQ(m.sum(1, /*keepdim=*/true).shape(), (Shape{2, 1}));
  Tensor w = m.reshape({3, 2}).permute({1, 0}).pad({{1, 1}, {0, 0}}).shrink({{0, 3}, {1, 3}}).flip({0});
  // m.reshape(3,2).T = [[1,3,5],[2,4,6]]; padded rows: [0,0,0],[1,3,5],[2,4,6],[0,0,0]; rows 0..3, cols 1..3; flipped
  EXPECT_EQ(w.tolist<float>(), (std::vector<float>{4, 6, 3, 5, 0, 0}));
  Tensor X = Tensor(std::vector<float>(12, 0.5f), {3, 4}, {.requires_grad = true});
  Tensor img = Tensor::randn({2, 3, 7, 7}), W = Tensor::randn({4, 3, 3, 3});
  Tensor conv = img.conv2d(W);  // (2, 4, 5, 5)
  EXPECT_EQ(conv.shape(), (Shape{2, 4, 5, 5}));
  Tensor loss = conv.flatten(1).sparse_categorical_crossentropy(Tensor(std::vector<int>{0, 1}, {2}));
  EXPECT_EQ(loss.shape(), Shape{});
  EXPECT_TRUE(std::isfinite(loss.item<float>()));
  Tensor sel = (X > 0.5f).where(X.exp(), X.sqrt());
  EXPECT_NEAR(sel.tolist<float>()[0], std::sqrt(0.5f), 1e-6);
  Tensor sm = m.softmax(-1), lsm = m.log_softmax(1);
  std::vector<float> smv = sm.tolist<float>(), lsmv = lsm.tolist<float>();
  EXPECT_NEAR(smv[0] + smv[1] + smv[2], 1.0f, 1e-6);
  EXPECT_NEAR(std::exp(lsmv[3]), smv[3], 1e-6);
  EXPECT_TRUE(least_upper_dtype({dtypes::int8, dtypes::uint8}) == dtypes::int16);  // the reference's lattice
  m.realize();
  size_t before = GlobalCounters::kernel_count;  // kernels run so far in this process
  (m * 2).realize();
  EXPECT_EQ(GlobalCounters::kernel_count - before, 1u);  // one elementwise kernel (m is already a buffer)
  try {
    m.reshape({4, 2});
    FAIL() << "reshape to a different size must throw";
  } catch (const tg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("(2, 3)"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("(4, 2)"), std::string::npos);
  }
}
