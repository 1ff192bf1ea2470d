// Assigning into a view of a realized buffer: the kernel writes the view's elements of the buffer in place. A
// contiguous range becomes a BUFFER_VIEW (a Buffer that is a view, base + byte offset, of the original); any other
// view reads the buffer through that view afterwards. Kernel counts are the reference's (tinygrad 2025-06, CPU=1).
#include <gtest/gtest.h>

#include <functional>

#include "kernel_count.h"
#include "tg/runtime/buffers.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"
#include "tg/uop/uop.h"

using namespace tg;
using tg::test::kernels_run_by;

namespace {

struct AssignView : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
};

std::vector<float> rows(std::initializer_list<std::vector<float>> rs) {
  std::vector<float> out;
  for (const auto& r : rs) out.insert(out.end(), r.begin(), r.end());
  return out;
}

}  // namespace

// reference: t = Tensor.zeros(4, 3).contiguous().realize(); t[1].assign(Tensor.ones(3)).realize(): 1 kernel, t
// reads row 1 ones with no kernel; the assign's tensor is a BUFFER_VIEW whose first read is one (view) kernel
TEST_F(AssignView, RowOfABufferIsWrittenInPlace) {
  Tensor t = Tensor::zeros({4, 3}).contiguous().realize();
  Tensor a = t.index({1}).assign(Tensor::ones({3}));
  EXPECT_EQ(kernels_run_by([&] { a.realize(); }), 1);
  std::vector<float> got;
  EXPECT_EQ(kernels_run_by([&] { got = t.tolist<float>(); }), 0);
  EXPECT_EQ(got, rows({{0, 0, 0}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(a.shape(), (Shape{3}));
  EXPECT_EQ(a.uop().op(), Ops::BUFFER_VIEW);
  // NOTE: reading a BUFFER_VIEW makes a Buffer view of t's memory, which OpenCL's cl_mem can't be (as the reference's)
  if (!Device::get().allocator->supports_offset()) GTEST_SKIP() << Device::DEFAULT.str() << " has no buffer views";
  EXPECT_EQ(kernels_run_by([&] { got = a.tolist<float>(); }), 1);
  EXPECT_EQ(got, (std::vector<float>{1, 1, 1}));
  // a's buffer is now a view of t's: base + 3 floats
  Buffer b = uop_buffer(a.uop());
  EXPECT_TRUE(b.is_view());
  EXPECT_EQ(b.offset(), 12);
  EXPECT_EQ(b.base(), uop_buffer(t.uop().src(0)));
  EXPECT_EQ(kernels_run_by([&] { got = (a + 1).tolist<float>(); }), 1);
  EXPECT_EQ(got, (std::vector<float>{2, 2, 2}));
}

// reference: rows 2:4 and row 0 of the same buffer, one kernel each; a flat range of a reshape, one kernel
TEST_F(AssignView, SeveralSlices) {
  Tensor t = Tensor::zeros({4, 3}).contiguous().realize();
  EXPECT_EQ(kernels_run_by([&] { t.index({Slice{2, 4}}).assign(Tensor::full({2, 3}, 5.0)).realize(); }), 1);
  EXPECT_EQ(kernels_run_by([&] { t.index({0}).assign(Tensor::full({3}, 7.0)).realize(); }), 1);
  EXPECT_EQ(t.tolist<float>(), rows({{7, 7, 7}, {0, 0, 0}, {5, 5, 5}, {5, 5, 5}}));
  Tensor c = t.reshape({12}).index({Slice{4, 8}}).assign(Tensor::arange(4).float_());
  EXPECT_EQ(kernels_run_by([&] { c.realize(); }), 1);
  if (Device::get().allocator->supports_offset()) {  // reading c needs a Buffer view (none on OpenCL)
    EXPECT_EQ(c.tolist<float>(), (std::vector<float>{0, 1, 2, 3}));
  }
  EXPECT_EQ(t.tolist<float>(), rows({{7, 7, 7}, {0, 0, 1}, {2, 3, 5}, {5, 5, 5}}));
  // shrink directly, and int tensors
  Tensor i = Tensor::zeros({2, 4}, {.dtype = dtypes::int32}).contiguous().realize();
  i.shrink({{1, 2}, {1, 3}}).assign(Tensor(std::vector<int>{8, 9}, {1, 2})).realize();
  EXPECT_EQ(i.tolist<int>(), (std::vector<int>{0, 0, 0, 0, 0, 8, 9, 0}));
}

// the reference writes these right but its BUFFER_VIEW of (size, offset) reads the wrong elements back: here the
// assign's tensor is the view of the buffer
TEST_F(AssignView, StridedAndPermutedViews) {
  Tensor t = Tensor::zeros({4, 3}).contiguous().realize();
  Tensor col = t.index({Slice{}, 1}).assign(Tensor::full({4}, 9.0));
  EXPECT_EQ(kernels_run_by([&] { col.realize(); }), 1);
  EXPECT_EQ(col.tolist<float>(), (std::vector<float>{9, 9, 9, 9}));
  EXPECT_EQ(t.tolist<float>(), rows({{0, 9, 0}, {0, 9, 0}, {0, 9, 0}, {0, 9, 0}}));
  Tensor tt = t.T().assign(Tensor::arange(12).reshape({3, 4}).float_());
  tt.realize();
  EXPECT_EQ(tt.tolist<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(t.tolist<float>(), rows({{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 11}}));
  Tensor back = t.index({Slice{.step = -2}}).assign(Tensor::full({2, 3}, -1.0));
  back.realize();
  EXPECT_EQ(back.tolist<float>(), std::vector<float>(6, -1));
  EXPECT_EQ(t.tolist<float>(), rows({{0, 4, 8}, {-1, -1, -1}, {2, 6, 10}, {-1, -1, -1}}));
}

// a view that reads each element where the kernel writes it is fine in the same kernel (the reference refuses it);
// another view of the target is not
TEST_F(AssignView, ReadingTheTargetThroughTheSameView) {
  Tensor t = Tensor::arange(12).reshape({4, 3}).float_().contiguous().realize();
  EXPECT_EQ(kernels_run_by([&] { t.index({1}).assign(t.index({1}) + 10).realize(); }), 1);
  t.index({Slice{}, 2}).assign(t.index({Slice{}, 2}) * 2).realize();
  EXPECT_EQ(t.tolist<float>(), rows({{0, 1, 4}, {13, 14, 30}, {6, 7, 16}, {9, 10, 22}}));
  EXPECT_THROW(t.index({1}).assign(t.index({2})).realize(), Error);
  t.index({1}).assign(t.index({2}).contiguous()).realize();
  EXPECT_EQ(t.tolist<float>(), rows({{0, 1, 4}, {6, 7, 16}, {6, 7, 16}, {9, 10, 22}}));
}

// the assign and a tensor that reads it, realized together (the reference fails to schedule this)
TEST_F(AssignView, TheAssignAndAReaderInOneSchedule) {
  Tensor t = Tensor::zeros({4, 3}).contiguous().realize();
  Tensor a = t.index({0}).assign(Tensor::full({3}, -1.0));
  Tensor b = a + 1;
  EXPECT_EQ(kernels_run_by([&] { Tensor::realize({a, b}); }), 2);
  EXPECT_EQ(b.tolist<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(t.tolist<float>(), rows({{-1, -1, -1}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}));
}

// setitem with basic indices writes through the view: one kernel for a value that doesn't read the target (the
// reference makes the value contiguous first: 2)
TEST_F(AssignView, SetitemIsOneKernel) {
  Tensor t = Tensor::zeros({4, 3}).contiguous().realize();
  EXPECT_EQ(kernels_run_by([&] { t.setitem({1}, 3.0); }), 1);
  EXPECT_EQ(kernels_run_by([&] { t.setitem({Slice{2, 4}, Slice{1, std::nullopt}}, 4.0); }), 1);
  EXPECT_EQ(kernels_run_by([&] { t.setitem({0}, t.index({1}) * 2); }), 2);  // reads the target: a copy first
  EXPECT_EQ(t.tolist<float>(), rows({{6, 6, 6}, {3, 3, 3}, {0, 4, 4}, {0, 4, 4}}));
  // a buffer that graph dedup made one for two tensors is copied before the write: the other keeps its values
  Tensor x = Tensor::zeros({4}).contiguous(), y = Tensor::zeros({4}).contiguous();
  Tensor::realize({x, y});
  ASSERT_EQ(x.uop(), y.uop());
  x.setitem({Slice{1, 3}}, 2.0);
  EXPECT_EQ(x.tolist<float>(), (std::vector<float>{0, 2, 2, 0}));
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{0, 0, 0, 0}));
  x.setitem({Ellipsis}, 1.0);
  EXPECT_EQ(x.tolist<float>(), (std::vector<float>{1, 1, 1, 1}));
}
