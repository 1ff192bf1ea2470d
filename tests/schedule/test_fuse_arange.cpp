// FUSE_ARANGE: indexing by a tensor (x[idx], gather, Embedding, the labels of a loss) is one gated load per output,
// not a one-hot sum over every row; FUSE_ARANGE=0 gives the reference's default (the arange realized, the sum kept).
#include <gtest/gtest.h>

#include <algorithm>

#include "kernel_count.h"
#include "scoped_env.h"
#include "tg/engine/realize.h"
#include "tg/nn/nn.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using test::kernels_run_by;
using test::ScopedEnv;

namespace {

constexpr int64_t kRows = 60, kCols = 7;

Tensor table() {  // row r holds r*7 .. r*7+6
  std::vector<float> v(kRows * kCols);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i);
  return Tensor(v, {kRows, kCols}).realize();
}

std::vector<float> rows_of(const std::vector<int>& idx) {  // what x[idx] holds: out-of-range rows are zeros
  std::vector<float> out;
  for (int i : idx) {
    int r = i < 0 ? i + static_cast<int>(kRows) : i;
    for (int64_t c = 0; c < kCols; c++) out.push_back(r >= 0 && r < kRows ? static_cast<float>(r * kCols + c) : 0.0f);
  }
  return out;
}

// the uops of the schedule's last kernel (the gather), as the default device compiles it. Scheduling t takes its
// kernels: give a tensor built the same way as the one realized
std::vector<UOp> last_kernel_uops(const Tensor& t) {
  auto [schedule, vars] = Tensor::schedule_with_vars({t});
  const ScheduleItem* last = nullptr;
  for (const ScheduleItem& si : schedule)
    if (si.ast.op() == Ops::SINK) last = &si;
  if (last == nullptr) throw Error("no kernel in the schedule");
  return get_runner(last->bufs[0].device(), last->ast)->p.uops;
}
int64_t count_op(const std::vector<UOp>& uops, Ops op) {
  return std::count_if(uops.begin(), uops.end(), [&](const UOp& u) { return u.op() == op; });
}

Tensor ints(const std::vector<int>& v) { return Tensor(v, {static_cast<sint>(v.size())}); }

}  // namespace

TEST(FuseArange, RowsPickedByATensorAreOneGatedLoad) {
  Tensor x = table();
  std::vector<int> idx{3, 5, 59, 0, 3};
  Tensor i = ints(idx).realize();
  Tensor g = x.index({i});
  EXPECT_EQ(kernels_run_by([&] { g.realize(); }), 2);  // the index's wrap of negatives (E_5) and the gather
  EXPECT_EQ(g.tolist<float>(), rows_of(idx));
  // no arange kernel, and no loop over the 60 rows: one load per picked row and column
  std::vector<UOp> uops = last_kernel_uops(x.index({i}));
  EXPECT_EQ(count_op(uops, Ops::DEFINE_ACC), 0);
  EXPECT_EQ(count_op(uops, Ops::RANGE), 2);
}

TEST(FuseArange, OutOfRangeIndicesSelectZeros) {
  Tensor x = table();
  std::vector<int> idx{60, -1, -60, -61, 1000, -1000};  // -1 and -60 wrap; the rest are outside and give 0
  EXPECT_EQ(x.index({ints(idx)}).tolist<float>(), rows_of(idx));
}

TEST(FuseArange, OffByDefaultWithFuseArange0) {
  ScopedEnv off("FUSE_ARANGE", "0");
  Tensor x = table(), i = ints({3, 5, 59, 0}).realize();
  Tensor g = x.index({i});
  EXPECT_EQ(kernels_run_by([&] { g.realize(); }), 3);  // the reference's: wrap, arange, sum
  EXPECT_EQ(g.tolist<float>(), rows_of({3, 5, 59, 0}));
  EXPECT_EQ(count_op(last_kernel_uops(x.index({i})), Ops::DEFINE_ACC), 1);  // the one-hot sum over the rows
}

TEST(FuseArange, GatherAndEmbeddingAreOneKernel) {
  Tensor x = table();
  std::vector<int> iv;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < kCols; c++) iv.push_back((r * 11 + c * 7) % static_cast<int>(kRows));
  Tensor gi = Tensor(iv, {3, kCols}).realize(), g = x.gather(0, gi);
  std::vector<float> want;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < kCols; c++) want.push_back(static_cast<float>(iv[r * kCols + c] * kCols + c));
  EXPECT_EQ(kernels_run_by([&] { g.realize(); }), 1);
  EXPECT_EQ(g.tolist<float>(), want);
  EXPECT_EQ(count_op(last_kernel_uops(x.gather(0, gi)), Ops::DEFINE_ACC), 0);

  nn::Embedding emb(kRows, kCols);
  emb.weight = x;
  Tensor ids = Tensor(std::vector<int>{3, 5, 59, 0}, {2, 2}).realize();
  Tensor e = emb(ids);
  EXPECT_EQ(kernels_run_by([&] { e.realize(); }), 1);
  EXPECT_EQ(e.tolist<float>(), rows_of({3, 5, 59, 0}));
}

TEST(FuseArange, TheGradientOfAGatherIsAScatterAdd) {
  Tensor x = table();
  x.requires_grad_(true);
  std::vector<int> idx{3, 5, 3, 59};  // row 3 twice: its gradient is the sum of both
  Tensor w = Tensor::arange(4 * kCols).reshape({4, kCols}).cast(dtypes::float32);
  (x.index({ints(idx)}) * w).sum().backward();
  std::vector<float> want(kRows * kCols, 0.0f);
  for (size_t k = 0; k < idx.size(); k++)
    for (int64_t c = 0; c < kCols; c++) want[idx[k] * kCols + c] += static_cast<float>(k * kCols + c);
  EXPECT_EQ(x.grad()->tolist<float>(), want);
}

TEST(FuseArange, InterpolateAndItsBackwardStayCorrect) {
  // interpolate indexes with tensors computed from aranges: nothing of it fuses, as the reference's FUSE_ARANGE=1
  // breaks on its backward (two reduces meet on one axis); the results are those without fusion
  Tensor x = Tensor(std::vector<float>{0, 1, 2, 3, 4, 5}, {1, 1, 2, 3});
  x.requires_grad_(true);
  Tensor y = x.interpolate({4, 6});
  Tensor loss = y.sum();
  loss.backward();
  Tensor::realize({loss, *x.grad()});
  ScopedEnv off("FUSE_ARANGE", "0");
  Tensor x0 = Tensor(std::vector<float>{0, 1, 2, 3, 4, 5}, {1, 1, 2, 3});
  x0.requires_grad_(true);
  Tensor loss0 = x0.interpolate({4, 6}).sum();
  loss0.backward();
  EXPECT_EQ(loss.item<float>(), loss0.item<float>());
  EXPECT_EQ(x.grad()->tolist<float>(), x0.grad()->tolist<float>());
}
