// Tensor::replace (tinygrad's: swap a model's weights for new ones), clone, fuse, contiguous_backward, kernelize of
// several tensors at once, and MetadataScope::set_current (tinygrad's _METADATA.set)
#include <gtest/gtest.h>

#include "error_of.h"
#include "kernel_count.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"
#include "tg/uop/uop.h"

using namespace tg;
using tg::test::error_of;
using tg::test::kernels_run_by;

namespace {

struct TensorApi : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
};

}  // namespace

// *** replace ***

TEST_F(TensorApi, ReplacePointsAtTheOtherGraph) {
  Tensor w({1.0f, 2.0f, 3.0f}), n({4.0f, 5.0f, 6.0f});
  Tensor& r = w.replace(n);
  EXPECT_TRUE(r.is(w));  // returns itself, as the reference's `return self`
  EXPECT_EQ(w.uop(), n.uop());
  EXPECT_EQ(w.tolist<float>(), (std::vector<float>{4, 5, 6}));
}

TEST_F(TensorApi, ReplaceShapeMismatchIsAnAssertionErrorUnlessAllowed) {
  Tensor w = Tensor::ones({2, 3});
  UOp before = w.uop();
  EXPECT_THROW(w.replace(Tensor::ones({3, 2})), AssertionError);
  EXPECT_EQ(error_of([&] { w.replace(Tensor::ones({6})); }), "replace shape mismatch (2, 3) != (6,)");
  EXPECT_EQ(w.uop(), before);  // a failed replace changes nothing
  w.replace(Tensor::full({3, 2}, 7.0f), /*allow_shape_mismatch=*/true);
  EXPECT_EQ(w.shape(), (Shape{3, 2}));
  EXPECT_EQ(w.tolist<float>(), std::vector<float>(6, 7));
  w.replace(Tensor(2.5f), true);  // down to a 0-d tensor
  EXPECT_EQ(w.shape(), Shape{});
  EXPECT_EQ(w.item<float>(), 2.5f);
}

TEST_F(TensorApi, ReplaceTakesTheOthersDtypeAndDevice) {  // unlike assign, which needs both to match
  Tensor w = Tensor::ones({3});
  w.replace(Tensor({1, 2, 3}));
  EXPECT_EQ(w.dtype(), dtypes::int32);
  EXPECT_EQ(w.tolist<int>(), (std::vector<int>{1, 2, 3}));
  Tensor p = Tensor::zeros({3}, {.device = "PYTHON"});
  w.replace(p);
  EXPECT_EQ(w.device(), "PYTHON");
  EXPECT_EQ(w.tolist<float>(), std::vector<float>(3, 0));
}

TEST_F(TensorApi, ReplaceKeepsItsOwnGradAndRequiresGrad) {
  Tensor w = Tensor::ones({2}, {.requires_grad = true});
  (w * 3).sum().backward();
  w.replace(Tensor({5.0f, 6.0f}, {.requires_grad = false}));
  EXPECT_EQ(w.requires_grad(), std::optional<bool>(true));
  ASSERT_TRUE(w.grad());
  EXPECT_EQ(w.grad()->tolist<float>(), (std::vector<float>{3, 3}));
}

TEST_F(TensorApi, AssignAfterReplaceLeavesTheSourceAlone) {  // both point at one buffer: assign copies it first
  Tensor n = Tensor({1.0f, 2.0f}).contiguous().realize();
  Tensor w = Tensor::zeros({2});
  w.replace(n);
  w.assign(w + 10).realize();
  EXPECT_EQ(w.tolist<float>(), (std::vector<float>{11, 12}));
  EXPECT_EQ(n.tolist<float>(), (std::vector<float>{1, 2}));
}

// *** clone, fuse, contiguous_backward ***

TEST_F(TensorApi, CloneIsANewBufferWithTheSameValues) {
  Tensor a = Tensor({1.0f, 2.0f, 3.0f}, {.requires_grad = true});
  (a * a).sum().backward();
  Tensor c = a.clone();
  EXPECT_NE(c.uop(), a.uop());
  EXPECT_EQ(c.dtype(), a.dtype());
  EXPECT_EQ(c.tolist<float>(), (std::vector<float>{1, 2, 3}));
  ASSERT_TRUE(c.grad());  // the grad is cloned too
  EXPECT_EQ(c.grad()->tolist<float>(), (std::vector<float>{2, 4, 6}));
  c.assign(c * 2).realize();  // writing the clone never writes the original
  EXPECT_EQ(c.tolist<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(a.tolist<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(Tensor::arange(6).reshape({2, 3}).clone().tolist<int>(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST_F(TensorApi, FusedSoftmaxIsOneKernelWithTheSameValues) {  // the reference's softmax(_single_kernel=True)
  Tensor x = Tensor({1.0f, 2.0f, 3.0f, -1.0f, 0.0f, 5.0f}).reshape({2, 3}).realize();
  std::vector<float> want = x.softmax(-1).tolist<float>(), got;
  Tensor f = x.contiguous().softmax(-1).fuse();
  EXPECT_EQ(kernels_run_by([&] { f.realize(); }), 1);
  got = f.tolist<float>();
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

TEST_F(TensorApi, ContiguousBackwardChangesNoValue) {
  Tensor x = Tensor({1.0f, -2.0f, 3.0f}, {.requires_grad = true});
  Tensor y = (x * x).contiguous_backward();
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{1, 4, 9}));
  EXPECT_EQ(y.sum().gradient({x})[0].tolist<float>(), (std::vector<float>{2, -4, 6}));
}

// *** kernelize of several ***

TEST_F(TensorApi, KernelizeSeveralInOneGraph) {  // tinygrad's a.kernelize(b): both become their kernels' outputs
  Tensor x = Tensor({1, 2, 3}).realize();
  Tensor a = x + 1, b = x * 2;
  Tensor::kernelize({a, b});
  for (const Tensor* t : {&a, &b}) {
    bool has_kernel = false;
    for (const UOp& u : t->uop().toposort()) has_kernel = has_kernel || u.op() == Ops::KERNEL;
    EXPECT_TRUE(has_kernel) << t->uop();
  }
  EXPECT_EQ(kernels_run_by([&] { Tensor::realize({a, b}); }), 2);
  EXPECT_EQ(a.tolist<int>(), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(b.tolist<int>(), (std::vector<int>{2, 4, 6}));
  Tensor::kernelize({});  // nothing: no error
}

// *** MetadataScope::set_current: tinygrad's _METADATA.set(m) ***

TEST_F(TensorApi, SetMetadataNamesEveryNodeUntilCleared) {
  Tensor x = Tensor({1.0f, -1.0f}).realize();
  ASSERT_EQ(MetadataScope::current(), nullptr);
  const Metadata* custom = intern_metadata("custom", "a caller");
  MetadataScope::set_current(custom);
  Tensor y = x.relu() * 2;
  EXPECT_EQ(y.uop().metadata(), custom);  // the method's own name ("__mul__") gives way, as in the reference
  {
    MetadataScope inner("sum");  // a scope under a set metadata neither names nor clears anything
    EXPECT_EQ(MetadataScope::current(), custom);
  }
  EXPECT_EQ(MetadataScope::current(), custom);
  MetadataScope::set_current(nullptr);
  Tensor z = x.relu() * 3;
  ASSERT_NE(z.uop().metadata(), nullptr);
  EXPECT_EQ(z.uop().metadata()->name, "__mul__");
  EXPECT_EQ(MetadataScope::current(), nullptr);
}
