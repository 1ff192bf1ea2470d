// Tensors on many devices (Tensor::shard, tinygrad's test_multitensor): each op on sharded and replicated tensors
// against the same op on one device; the allreduce (naive and ring) a reduce over the sharded axis becomes; the
// gradient through shards; and the errors the reference raises.
#include <gtest/gtest.h>

#include "tg/engine/realize.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/device.h"
#include "tg/schedule/schedule.h"
#include "tg/shape/uop_multi.h"
#include "tg/tensor/jit.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

// the default device's first n (DEV=GPU: GPU, GPU:1 ...; the device suites rerun these on PYTHON, LLVM and PoCL)
std::vector<std::string> devices(int n) {
  const std::string& d = Device::DEFAULT.str();
  std::vector<std::string> out{d};
  for (int i = 1; i < n; i++) out.push_back(d + ":" + std::to_string(i));
  return out;
}
std::vector<std::string> two() { return devices(2); }
std::vector<std::string> four() { return devices(4); }
std::string two_name() { return multi_device_name(two()); }

std::vector<float> floats(const Tensor& t) { return t.cast(dtypes::float32).tolist<float>(); }
void expect_near(const std::vector<float>& a, const std::vector<float>& b, float tol = 1e-4f) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); i++) EXPECT_NEAR(a[i], b[i], tol * (1 + std::abs(b[i]))) << "at " << i;
}
Tensor iota(const Shape& s) { return Tensor::arange(prod(s), {.dtype = dtypes::float32}).reshape(s); }

TEST(Multi, DeviceTupleIsOneNamePrintedAsATuple) {
  const std::vector<std::string> TWO{"CPU", "CPU:1"};
  EXPECT_EQ(multi_device_name(TWO), "CPU,CPU:1");
  EXPECT_EQ(multi_device_name({"CPU"}), "CPU,");  // a tuple of one, as python's ('CPU',)
  EXPECT_EQ(device_names("CPU,CPU:1"), TWO);
  EXPECT_EQ(device_names("CPU,"), std::vector<std::string>{"CPU"});
  EXPECT_TRUE(is_multi_device("CPU,")) << "a tuple of one is still a tuple";
  Tensor t = iota({4, 2}).shard(TWO, 0);
  EXPECT_EQ(t.device(), "CPU,CPU:1");
  EXPECT_EQ(t.shape(), (Shape{4, 2}));
  EXPECT_EQ(t.uop().op(), Ops::MULTI);
  EXPECT_EQ(uop_axis(t.uop()), 0);
  EXPECT_NE(t.uop().repr().find("arg=('CPU', 'CPU:1')"), std::string::npos) << t.uop().repr();
  // canonicalized: cpu:0 is CPU
  EXPECT_EQ(iota({2}).shard({"cpu:0", "cpu:1"}).device(), "CPU,CPU:1");
}

TEST(Multi, ShardAndReadBack) {
  Tensor t = iota({4, 8});
  for (int64_t axis : {0, 1, -1}) expect_near(floats(t.shard(two(), axis)), floats(t));
  expect_near(floats(t.shard(two())), floats(t));  // replicated
  expect_near(floats(t.to(two_name())), floats(t));
  Tensor r = t.shard(four(), 1).realize();
  EXPECT_EQ(r.uop().op(), Ops::MULTI) << "realized, still one slice per device";
  expect_near(floats(r), floats(t));
}

TEST(Multi, ElementwiseMovementAndReduce) {
  Tensor a = iota({8, 4}), b = iota({8, 4}) * 0.5 - 3;
  Tensor sa = a.shard(two(), 0), sb = b.shard(two(), 0), rb = b.shard(two());
  expect_near(floats(sa + sb), floats(a + b));
  expect_near(floats((sa * rb).relu()), floats((a * b).relu()));  // sharded with replicated
  expect_near(floats(sa.sum(1)), floats(a.sum(1)));               // over another axis: no allreduce
  expect_near(floats(sa.sum(0)), floats(a.sum(0)));               // over the sharded axis: allreduce
  expect_near(floats(sa.max()), floats(a.max()));
  expect_near(floats(sa.reshape({2, 4, 4}).sum(2)), floats(a.reshape({2, 4, 4}).sum(2)));
  expect_near(floats(sa.permute({1, 0})), floats(a.permute({1, 0})));
  expect_near(floats(sa.pad({{0, 0}, {1, 2}})), floats(a.pad({{0, 0}, {1, 2}})));
  expect_near(floats(sa.shrink({{0, 8}, {1, 3}})), floats(a.shrink({{0, 8}, {1, 3}})));
  expect_near(floats(sa.flip({1})), floats(a.flip({1})));
  expect_near(floats(sa.reshape({8, 1, 4}).expand({8, 3, 4})), floats(a.reshape({8, 1, 4}).expand({8, 3, 4})));
  expect_near(floats(sa.shrink({{4, 8}, {0, 4}})), floats(a.shrink({{4, 8}, {0, 4}})));  // one device's part
  // a different axis: gathered, then split the other way
  Tensor sa1 = a.shard(two(), 1);
  expect_near(floats(sa + sa1), floats(a + a));
}

TEST(Multi, MatmulShardedEachWay) {
  Tensor x = Tensor::randn({8, 16}), w = Tensor::randn({16, 4});
  std::vector<float> want = floats(x.matmul(w));
  expect_near(floats(x.shard(two(), 0).matmul(w.shard(two()))), want, 1e-3f);     // data parallel
  expect_near(floats(x.shard(two()).matmul(w.shard(two(), 1))), want, 1e-3f);     // split output columns
  expect_near(floats(x.shard(two(), 1).matmul(w.shard(two(), 0))), want, 1e-3f);  // split the reduce: allreduce
}

TEST(Multi, ConvBigEnoughForTheCpuTiles) {
  // a conv past the CPU tiles' size asks its device's renderer: on a tuple, the first device's (it once asked the
  // registry for "CPU,CPU:1")
  Tensor x = Tensor::randn({8, 1, 28, 28}), w = Tensor::randn({32, 1, 5, 5});
  expect_near(floats(x.shard(two(), 0).conv2d(w.shard(two()))), floats(x.conv2d(w)), 1e-3f);
}

TEST(Multi, KvCacheWindowOnEveryDevice) {
  // the reference's test_assign_kv_cache_multi: a replicated cache's first start_pos rows, a new row, padded back to
  // the cache's length (by 7 - start_pos, whose sign the bounds don't decide) and assigned
  // (a buffer first: the reference's shard of a padded constant fails its own ASSIGN check in kernelize, and ours
  // the same)
  Tensor cache = Tensor::ones({2, 3, 1, 1}).pad({{0, 0}, {0, 5}, {0, 0}, {0, 0}}).contiguous().realize();
  cache = cache.shard(two()).contiguous().realize();
  for (int64_t i = 3; i <= 5; i++) {
    sint sp(UOp::variable("start_pos", 1, 8).bind(i));
    Tensor row = Tensor::ones({2, 1, 1, 1}).shard(two()).contiguous();
    Tensor keys = cache.shrink({{0, 2}, {0, sp}, {0, 1}, {0, 1}}).cat({row}, 1).contiguous();
    cache.assign(keys.pad({{0, 0}, {0, sint(7) - sp}, {0, 0}, {0, 0}}).contiguous()).realize();
  }
  expect_near(floats(cache.flatten()), {1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0});
}

TEST(Multi, AllreduceNaiveAndRingAgree) {
  Tensor t = Tensor::randn({4, 4096});
  std::vector<float> want = floats(t.sum(0));
  for (int64_t ring : {0, 2}) {
    Context ctx{{"RING", ring}};
    expect_near(floats(t.shard(four(), 0).sum(0)), want, 1e-3f);
    expect_near(floats(t.shard(two(), 0).sum(0)), want, 1e-3f);
  }
  // an odd number of elements: the ring's chunks are uneven
  Tensor o = Tensor::randn({3, 37});
  Context ctx{{"RING", 2}};
  expect_near(floats(o.shard(devices(3), 0).sum(0)), floats(o.sum(0)), 1e-3f);
}

TEST(Multi, SchedulingASumOverShardsOpensNoOtherDevice) {
  // the kernelize rules ask the reduce's device for its rules: a tuple of devices has none, and finding that out once
  // built "unknown device ...; available: ..." and so opened every device there is (PoCL's worker threads, alive at
  // exit, now and then crashed LeakSanitizer's exit check)
  int probes = 0;
  Device::register_device("WEBGPU", [&probes](const std::string&) -> std::unique_ptr<Compiled> {
    probes++;
    throw Error("no driver");
  });
  Tensor t = Tensor::randn({4, 64});
  expect_near(floats(t.shard(two(), 0).sum(0)), floats(t.sum(0)), 1e-3f);
  EXPECT_EQ(probes, 0);
  EXPECT_EQ(Device::find("WEBGPU"), nullptr);
  EXPECT_EQ(probes, 1);
  EXPECT_EQ(Device::find(two_name()), nullptr) << "a tuple of devices is no one device";
  EXPECT_EQ(Device::find(Device::DEFAULT.str()), &Device::get());
}

TEST(Multi, ScheduleRunsEachKernelOncePerDevice) {
  Tensor t = (iota({4, 4}).shard(two(), 0).realize() + 1);
  auto [sched, vars] = Tensor::schedule_with_vars({t});
  ASSERT_EQ(sched.size(), 2u) << "one kernel, one item per device";
  EXPECT_EQ(sched[0].bufs[0].device(), two()[0]);
  EXPECT_EQ(sched[1].bufs[0].device(), two()[1]);
  EXPECT_EQ(sched[0].ast, sched[1].ast) << "one AST for both";
}

TEST(Multi, EachDevicesKernelRunsTogether) {
  // the items of one kernel on the devices of a tuple run at once (on the CPU, their shares share the thread pool)
  Tensor src = Tensor::randn({4, 4096}).shard(four(), 0).realize();
  Tensor t = src * 2 + 1;
  auto [sched, vars] = Tensor::schedule_with_vars({t});
  ASSERT_EQ(sched.size(), 4u);
  std::vector<ExecItem> eis;
  for (const ScheduleItem& si : sched) eis.push_back(lower_schedule_item(si));
  const int64_t before = GlobalCounters::kernel_count;
  EXPECT_EQ(run_together(eis, vars), 4u) << "the four devices' kernels, together";
  EXPECT_EQ(GlobalCounters::kernel_count - before, 4) << "each counted as a kernel";
  expect_near(floats(t), floats(src * 2 + 1));  // t stands for the buffers those runs wrote
  // from the second device on, no group starts: an item alone
  EXPECT_EQ(run_together(std::span(eis).subspan(1), vars), 1u);
  // a kernel on one device is alone too
  Tensor one = iota({64}) + 1;
  auto [s1, v1] = Tensor::schedule_with_vars({one});
  std::vector<ExecItem> single;
  for (const ScheduleItem& si : s1) single.push_back(lower_schedule_item(si));
  EXPECT_EQ(run_together(single, v1), 1u);
}

TEST(Multi, GradientThroughShards) {
  Tensor x = Tensor::randn({8, 6}), w = Tensor::randn({6, 3}, {.requires_grad = true});
  Tensor w2 = Tensor(w.tolist<float>(), {6, 3}, {.requires_grad = true});
  Tensor loss = x.matmul(w2).relu().sum();
  loss.backward();
  Tensor ws = w.shard(two());
  ws.requires_grad_(true);
  Tensor ls = x.shard(two(), 0).matmul(ws).relu().sum();
  ls.backward();
  ASSERT_TRUE(ws.grad().has_value());
  EXPECT_EQ(ws.grad()->device(), two_name());
  expect_near(floats(*ws.grad()), floats(*w2.grad()), 1e-3f);
  // a sharded parameter's gradient is sharded the same way
  Tensor p = Tensor::randn({8, 2}).shard(two(), 0);
  p.requires_grad_(true);
  (p * p).sum().backward();
  EXPECT_EQ(uop_axis(p.grad()->uop()), 0);
  expect_near(floats(*p.grad()), floats(p * 2));
}

TEST(Multi, RandLikeIsShardedAsItsTensor) {
  Tensor a = Tensor::ones({4, 4}).shard(four(), 0);
  Tensor r = (a + a).rand_like();
  EXPECT_EQ(r.device(), multi_device_name(four()));
  EXPECT_EQ(uop_axis(r.uop()), 0);
  for (float x : floats(r)) EXPECT_TRUE(x >= 0 && x < 1) << x;
  EXPECT_THROW(a.rand_like({.device = "CPU:2,CPU:3"}), Error) << "a device for a sharded tensor's rand_like";
  EXPECT_THROW(Tensor::rand({4}, {.device = "CPU,CPU:1"}), ValueError) << "rand on a tuple";
}

TEST(Multi, BadShardsAreErrors) {
  EXPECT_THROW(iota({3, 4}).shard(two(), 0), Error) << "3 rows over 2 devices";
  try {
    iota({3, 4}).shard(two(), 0);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("uneven"), std::string::npos) << e.what();
  }
  Tensor s = iota({4, 4}).shard(two(), 0);
  EXPECT_THROW(s.shard(two(), 0), AssertionError) << "already sharded";
  EXPECT_THROW(floats(s.shrink({{1, 3}, {0, 4}})), AssertionError) << "a shrink across the devices' parts";
  expect_near(floats(s.reshape({2, 8})), floats(iota({2, 8})));  // each device's two rows are one row of 8
  EXPECT_THROW(floats(iota({4, 4}).shard(two(), 1).reshape({16})), AssertionError) << "the split axis lost";
  EXPECT_THROW(s.shard({"CPU", "NOPE:1"}), Error);
  EXPECT_THROW(iota({4}).shard({"CPU", "NOPE:1"}), Error) << "a device that doesn't exist";
}

// TinyJit over tensors on many devices: each input's per-device buffers are swapped in on replay
TEST(Multi, JitReplaysOverShardedInputs) {
  TinyJit f([](Tensor x) { return (x + 1).contiguous().sum(); });
  for (int i = 0; i < 5; i++) {
    Tensor t = (Tensor::arange(4, {.dtype = dtypes::float32}) + float(i)).contiguous().realize().shard(two(), 0);
    EXPECT_FLOAT_EQ(f(t).item<float>(), 10.f + 4.f * float(i)) << "call " << i;
  }
  EXPECT_FALSE(f.jit_cache().empty());
  bool both = false;
  for (const ExecItem& ei : f.jit_cache()) both |= !ei.bufs.empty() && ei.bufs[0].device() == two()[1];
  EXPECT_TRUE(both) << "kernels on the second device were captured";
  // a new sharding of the same shape is a different input
  Tensor other = iota({4}).shard({four()[0], four()[2]}, 0);
  EXPECT_THROW(f(other), JitError);
}

TEST(Multi, JitAllreduceNaiveAndRing) {
  for (int64_t ring : {0, 2}) {
    Context ctx{{"RING", ring}};
    TinyJit f([](Tensor t) { return t.shard(four(), 0).sum(0).realize(); });
    for (int i = 0; i < 4; i++) {
      Tensor t = Tensor::rand({8, 64}).realize();
      expect_near(floats(f(t)), floats(t.sum(0)), 1e-4f);
    }
  }
}

TEST(Multi, JitParamShardedInPlace) {
  TinyJit jf([](Tensor a, Tensor b) { return (a + b).realize(); });
  for (int i = 0; i < 5; i++) {
    Tensor a = (Tensor::ones({256}) * float(i)).contiguous().realize(), b = Tensor::ones({256}).contiguous().realize();
    a.shard_(two());
    b.shard_(two());
    Tensor c = jf(a, b);
    EXPECT_EQ(c.device(), two_name());
    for (float x : floats(c)) ASSERT_FLOAT_EQ(x, float(i) + 1.f);
  }
}

TEST(Multi, JitAssignIntoShardedTensorAtAVariableOffset) {
  for (std::optional<int64_t> axis : {std::optional<int64_t>(0), std::optional<int64_t>()}) {
    Tensor out = Tensor::zeros({4, 6}).contiguous().realize();
    out = (axis ? out.shard(two(), *axis) : out.shard(two())).realize();
    Tensor ones = Tensor::ones({4, 1});
    ones = (axis ? ones.shard(two(), *axis) : ones.shard(two())).contiguous().realize();
    TinyJit f([&](Tensor o, UOp vi) {
      o.shrink({{0, 4}, {sint(vi), sint(vi) + 1}}).assign(ones).realize();
      ones.assign(ones + 1).realize();
    });
    UOp v = UOp::variable("i", 0, 5);
    for (int64_t i = 1; i < 5; i++) f(out, v.bind(i));
    std::vector<float> want;
    for (int r = 0; r < 4; r++) want.insert(want.end(), {0, 1, 2, 3, 4, 0});
    expect_near(floats(out), want);
  }
}

}  // namespace
