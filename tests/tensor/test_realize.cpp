// Realizing tensors end to end on the CPU: the tutorial's facts, dedup without aliasing, assign, kernel counts.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "kernel_count.h"
#include "scoped_env.h"
#include "tg/codegen/kernel.h"
#include "tg/engine/realize.h"
#include "tg/helpers/helpers.h"
#include "tg/runtime/device.h"
#include "tg/schedule/schedule.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using tg::test::kernels_run_by;

struct Realize : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
};

TEST_F(Realize, TutorialArithmetic) {
  Tensor t({1, 2, 3, 4});
  EXPECT_EQ((t * 2).tolist<int>(), (std::vector<int>{2, 4, 6, 8}));
  EXPECT_EQ((t + 3 + 4).tolist<int>(), (std::vector<int>{8, 9, 10, 11}));  // the tutorial's comment says 8, 10, ...
  Tensor m(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(m.sum(1).tolist<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(m.sum().item<float>(), 21.0f);
  EXPECT_EQ(m.reshape({3, 2}).permute({1, 0}).tolist<float>(), (std::vector<float>{1, 3, 5, 2, 4, 6}));
}

TEST_F(Realize, DedupedTensorsShareTheRealization) {  // realizing A realizes B: B.tolist() runs no kernel
  Tensor t({1, 2, 3, 4});
  Tensor a = t * 4, b = t * 4;
  ASSERT_EQ(a.uop(), b.uop());
  a.realize();
  EXPECT_EQ(a.uop(), b.uop());
  EXPECT_EQ(b.uop().op(), Ops::BUFFER);
  std::vector<int> got;
  EXPECT_EQ(kernels_run_by([&] { got = b.tolist<int>(); }), 0);
  EXPECT_EQ(got, (std::vector<int>{4, 8, 12, 16}));
}

TEST_F(Realize, DedupNeverAliasesState) {
  // the reference gets this wrong: identical zero buffers are one buffer, and assigning to one changes the other
  Tensor a = Tensor::zeros({4}).contiguous(), b = Tensor::zeros({4}).contiguous();
  a.realize();
  b.realize();
  a.assign(a + 1).realize();
  EXPECT_EQ(a.tolist<float>(), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(b.tolist<float>(), (std::vector<float>{0, 0, 0, 0}));
  b.assign(b + 2).realize();
  EXPECT_EQ(a.tolist<float>(), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(b.tolist<float>(), (std::vector<float>{2, 2, 2, 2}));
}

TEST_F(Realize, DedupNeverAliasesStateWithMoreDims) {  // a realized (2, 3) tensor is a RESHAPE of its buffer
  Tensor a = Tensor::zeros({2, 3}).contiguous(), b = Tensor::zeros({2, 3}).contiguous();
  a.realize();
  b.realize();
  a.assign(a + 1).realize();
  EXPECT_EQ(a.tolist<float>(), std::vector<float>(6, 1));
  EXPECT_EQ(b.tolist<float>(), std::vector<float>(6, 0));
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
}

TEST_F(Realize, AssignInPlace) {
  Tensor a = Tensor(std::vector<float>{1, 2, 3}, {3}).contiguous().realize();
  a.assign(a * 3).realize();
  EXPECT_EQ(a.tolist<float>(), (std::vector<float>{3, 6, 9}));
  EXPECT_THROW(a.assign(Tensor::ones({4})), Error);
}

// a kernel that reads a buffer's old value runs before the kernel that assigns the buffer in the same schedule,
// wherever the toposort puts it: here it waits for a reduce, and the reference's BFS ran the assign first (r = 88..)
TEST_F(Realize, ReadersOfTheOldValueRunBeforeTheAssign) {
  Tensor b = Tensor(std::vector<float>{1, 2, 3, 4}, {4}).contiguous().realize();
  Tensor x = Tensor::ones({4}).contiguous().realize();
  Tensor r = b * (x * 2).sum();
  b.assign(b + 10);
  Tensor::realize({r, b});
  EXPECT_EQ(r.tolist<float>(), (std::vector<float>{8, 16, 24, 32}));
  EXPECT_EQ(b.tolist<float>(), (std::vector<float>{11, 12, 13, 14}));
}

TEST_F(Realize, FusionContract) {
  Tensor x(std::vector<float>{1, 2, 3, 4}, {4});
  x.realize();
  // an elementwise chain is one kernel
  EXPECT_EQ(kernels_run_by([&] { ((x + 1) * 2 - 3).relu().sqrt().exp2().realize(); }), 1);
  // a reduce with elementwise input and epilogue is one kernel
  EXPECT_EQ(kernels_run_by([&] { ((x * 2).sum() + 1).realize(); }), 1);
  // softmax over the last axis takes at most 3
  Tensor y = Tensor(std::vector<float>(64, 0.5f), {4, 16}).realize();
  EXPECT_LE(kernels_run_by([&] {
              Tensor e = (y - y.max(-1, true)).exp();
              (e / e.sum(-1, true)).realize();
            }),
            3);
}

TEST_F(Realize, IntegerDivisionByZeroIsDefined) {  // C would raise SIGFPE; cdiv/cmod give 0, INT_MIN/-1 wraps
  Tensor a({7, -7, 5, -2147483647 - 1, 9}), b({0, 2, -1, -1, 3});
  EXPECT_EQ(a.idiv(b).tolist<int>(), (std::vector<int>{0, -3, -5, -2147483647 - 1, 3}));
}

TEST_F(Realize, TranscendentalsAndNanPropagate) {
  Tensor x(std::vector<float>{1, 0, -1}, {3});
  std::vector<float> l = x.log().tolist<float>();
  EXPECT_FLOAT_EQ(l[0], 0.0f);
  EXPECT_TRUE(std::isinf(l[1]) && l[1] < 0);
  EXPECT_TRUE(std::isnan(l[2]));
  std::vector<float> r = x.reciprocal().tolist<float>();
  EXPECT_TRUE(std::isinf(r[1]));
}

TEST_F(Realize, ScheduleWithVarsThenRunSchedule) {  // tinygrad's Tensor.schedule_with_vars + run_schedule
  Tensor a = Tensor::arange(6).reshape({2, 3}) * 2, b = (a + 1).sum();
  auto [schedule, vars] = Tensor::schedule_with_vars({a, b});
  EXPECT_TRUE(vars.empty());
  ASSERT_EQ(schedule.size(), 2u);  // a, then b's sum reading it
  for (const ScheduleItem& si : schedule) EXPECT_EQ(si.ast.op(), Ops::SINK);
  int64_t before = GlobalCounters::kernel_count;
  run_schedule(std::move(schedule));
  EXPECT_EQ(GlobalCounters::kernel_count - before, 2);
  EXPECT_EQ(a.tolist<int>(), (std::vector<int>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(b.item<int>(), 36);
  EXPECT_EQ(GlobalCounters::kernel_count - before, 2);  // reading them back runs nothing: they are their buffers
  EXPECT_TRUE(Tensor::schedule_with_vars({a, b}).first.empty());
}

TEST_F(Realize, ScheduleCompilesInParallelNamedInOrder) {
  // compile_schedule builds every new kernel of a schedule on COMPILE_THREADS threads before the run; the run then
  // compiles nothing (ASSERT_COMPILE), and kernels are named as a serial compile names them, in schedule order
  test::ScopedEnv threads("COMPILE_THREADS", "2");
  reset_kernel_cnt();
  Tensor a = Tensor::arange(37 * 3).reshape({37, 3}).cast(dtypes::float32).realize();
  Tensor x = (a + 1).sum(1), y = (a * 2).sum(1), z = (a * a).max(1), w = (a * 0.01f).exp().sum();
  auto [schedule, vars] = Tensor::schedule_with_vars({x, y, z, w});
  compile_schedule(schedule);
  std::vector<std::string> names;
  {
    test::ScopedEnv no_compile("ASSERT_COMPILE", "1");
    for (const ScheduleItem& si : schedule) names.push_back(ansistrip(lower_schedule_item(si).prg->display_name));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"r_37_3", "r_37_3n1", "r_37_3n2", "r_111"}));
  run_schedule(std::move(schedule));
  EXPECT_FLOAT_EQ(x.tolist<float>()[36], 108 + 109 + 110 + 3);
  EXPECT_FLOAT_EQ(y.tolist<float>()[1], 2 * (3 + 4 + 5));
  EXPECT_FLOAT_EQ(z.tolist<float>()[2], 8 * 8);
  EXPECT_NEAR(w.item<float>(), (std::exp(1.11) - 1) / (std::exp(0.01) - 1), 1e-3);
}

// the kernelize cache keeps no Buffer alive: a realized graph's inputs and outputs are freed with their tensors, on
// the first run of a graph (a miss) and on every repeat (a hit) alike (a BERT step held 0.61 GB for 0.22 GB of tensors)
TEST_F(Realize, KernelizeCacheHoldsNoBuffers) {
  const int64_t before = GlobalCounters::mem_used;
  for (int i = 0; i < 3; i++) {
    Tensor a(std::vector<float>(1000, 1.0f), Shape{1000});
    Tensor c = (a * 2 + Tensor::rand({1000})).sum().realize();
    Tensor d = (a.reshape({10, 100}) * 3).realize();
    EXPECT_GT(GlobalCounters::mem_used - before, 0);
  }
  Tensor::realize({});
  // only the RNG's own state (its seed and counter buffers, kept as the reference keeps them) outlives the loop
  EXPECT_LE(GlobalCounters::mem_used - before, 64);
}
