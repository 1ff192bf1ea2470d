// Tensors whose shapes hold bound Variables (tinygrad's symbolic shapes, the KV cache's `start_pos`): the kernels
// take the Variable as an argument (DEFINE_VAR) and are compiled once for every value; the schedule carries the
// values; a bad binding is an error naming the Variable and its values.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>

#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/engine/realize.h"
#include "tg/runtime/device.h"
#include "tg/tensor/jit.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

struct SymbolicShapes : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
};

UOp var_i(int64_t v) { return UOp::variable("i", 1, 10).bind(v); }

std::vector<float> counting(int64_t n, float start = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t k = 0; k < v.size(); k++) v[k] = start + static_cast<float>(k);
  return v;
}

}  // namespace

TEST_F(SymbolicShapes, ReshapeToAVariableThenElementwise) {
  for (int64_t i = 1; i <= 4; i++) {
    Tensor a(counting(3 * i), Shape{3, i});
    Tensor s = (a.reshape({3, sint(var_i(i))}) + 1).realize();
    EXPECT_EQ(s.shape()[1].str(), "i");
    std::vector<float> want = counting(3 * i, 1);
    EXPECT_EQ(s.reshape({3, i}).tolist<float>(), want) << "i=" << i;
  }
}

TEST_F(SymbolicShapes, ReductionsOverASymbolicAxis) {
  for (int64_t i = 1; i <= 4; i++) {
    Tensor a(counting(2 * i), Shape{2, i});
    Tensor s = a.reshape({2, sint(var_i(i))});
    std::vector<float> sums, means, maxes;
    for (int64_t r = 0; r < 2; r++) {
      float sum = 0;
      for (int64_t c = 0; c < i; c++) sum += static_cast<float>(r * i + c);
      sums.push_back(sum), means.push_back(sum / static_cast<float>(i)),
          maxes.push_back(static_cast<float>(r * i + i - 1));
    }
    EXPECT_EQ(s.sum(std::vector<int64_t>{1}).tolist<float>(), sums) << "i=" << i;
    EXPECT_EQ(s.mean(std::vector<int64_t>{1}).tolist<float>(), means) << "i=" << i;
    EXPECT_EQ(s.max(std::vector<int64_t>{1}).tolist<float>(), maxes) << "i=" << i;
  }
}

TEST_F(SymbolicShapes, MatmulWithASymbolicInnerDim) {
  for (int64_t i = 1; i <= 4; i++) {
    Tensor a(counting(2 * i), Shape{2, i}), b = Tensor::ones({i, 3});
    Tensor s = a.reshape({2, sint(var_i(i))}).matmul(b.reshape({sint(var_i(i)), 3}));
    EXPECT_EQ(s.shape(), (Shape{2, 3}));
    EXPECT_EQ(s.tolist<float>(), a.matmul(b).tolist<float>()) << "i=" << i;
  }
}

TEST_F(SymbolicShapes, ShrinkByAVariableReadsTheBoundWindow) {
  Tensor a(counting(10), Shape{10});
  for (int64_t i = 1; i <= 4; i++) {
    Tensor s = a.shrink({{sint(var_i(i)), sint(var_i(i)) + 2}}) * 2;
    EXPECT_EQ(s.reshape({2}).tolist<float>(), (std::vector<float>{2.0f * i, 2.0f * (i + 1)})) << "i=" << i;
  }
}

TEST_F(SymbolicShapes, PadByAnUndecidedAmountIsAPad) {
  // a KV cache's window padded back to the cache's length: 7 - i is negative only for i past the cache, so the bounds
  // don't decide its sign, and the reference (resolve(p >= 0), default True) pads
  Tensor a(counting(8), Shape{8});
  for (int64_t i = 1; i <= 4; i++) {
    sint v(var_i(i));
    Tensor w = a.shrink({{sint(0), v}}).pad({{sint(0), sint(7) - v}}, 0.0) + 1;
    ASSERT_EQ(w.shape().size(), 1u);
    std::vector<float> want(7, 1.0f);
    for (int64_t k = 0; k < i; k++) want[static_cast<size_t>(k)] = static_cast<float>(k) + 1;
    EXPECT_EQ(w.reshape({7}).tolist<float>(), want) << "i=" << i;
  }
}

TEST_F(SymbolicShapes, KvCacheWindowCatPadAssign) {
  // the reference's test_assign_kv_cache_multi on one device: the cache's first start_pos rows, the new row after
  // them, padded back to the cache's length and assigned (an intermediate of symbolic size start_pos+1)
  Tensor cache = Tensor::ones({2, 3, 1, 1}).pad({{0, 0}, {0, 5}, {0, 0}, {0, 0}}).contiguous().realize();
  for (int64_t i = 3; i <= 5; i++) {
    sint sp(UOp::variable("start_pos", 1, 8).bind(i));
    Tensor keys = cache.shrink({{0, 2}, {0, sp}, {0, 1}, {0, 1}}).cat({Tensor::ones({2, 1, 1, 1})}, 1).contiguous();
    cache.assign(keys.pad({{0, 0}, {0, sint(7) - sp}, {0, 0}, {0, 0}}).contiguous()).realize();
  }
  std::vector<float> row{1, 1, 1, 1, 1, 1, 0, 0}, want = row;
  want.insert(want.end(), row.begin(), row.end());
  EXPECT_EQ(cache.flatten().tolist<float>(), want);
}

TEST_F(SymbolicShapes, OneCompiledKernelForEveryValue) {
  Tensor a(counting(10), Shape{10});
  a.realize();
  std::set<const CompiledRunner*> runners;
  for (int64_t i = 1; i <= 10; i++) {  // every value of i in [1, 10]
    Tensor s = a.shrink({{0, sint(var_i(i))}}) + 1;
    auto [sched, vars] = Tensor::schedule_with_vars({s});
    ASSERT_EQ(sched.size(), 1u);
    EXPECT_EQ(vars, (VarVals{{"i", i}}));  // the schedule carries the value
    runners.insert(get_runner(Device::DEFAULT.str(), sched[0].ast).get());
    run_schedule(sched, vars);
    EXPECT_EQ(s.reshape({i}).tolist<float>(), counting(i, 1)) << "i=" << i;
  }
  EXPECT_EQ(runners.size(), 1u);  // the method cache keys on the unbound kernel
}

TEST_F(SymbolicShapes, ArangeToABoundVariable) {
  for (int64_t i = 1; i <= 4; i++) {
    Tensor a = Tensor::arange(sint(2), sint(var_i(i)) + 2);
    std::vector<int> want;
    for (int k = 0; k < i; k++) want.push_back(2 + k);
    EXPECT_EQ(a.reshape({i}).tolist<int>(), want) << "i=" << i;
  }
  EXPECT_THROW(Tensor::arange(sint(var_i(3)), sint(5)), ValueError);  // empty for i >= 5: not a symbolic length
}

TEST_F(SymbolicShapes, SizeScalarIsTheBoundValue) {
  Tensor t = Tensor::full({}, ConstValue(int64_t(3)));
  EXPECT_EQ((t * t.size_scalar(sint(var_i(4)) * 2 + 1)).item<int>(), 27);
  EXPECT_EQ(Tensor::from_bind(var_i(7)).item<int>(), 7);
}

TEST_F(SymbolicShapes, TinyJitReplaysForEachNewValue) {
  JitFunction jit;
  for (int64_t i = 1; i <= 5; i++) {
    Tensor a(counting(3 * i), Shape{3, i});
    Tensor in = a.reshape({3, sint(var_i(i))});
    JitArgs args;
    args.add("a", in);
    std::vector<Tensor> out = jit.call(args, [&] { return std::vector<Tensor>{(in * 2).realize()}; });
    std::vector<float> want = counting(3 * i);
    for (float& x : want) x *= 2;
    EXPECT_EQ(out.at(0).reshape({3, i}).tolist<float>(), want) << "i=" << i;
  }
  EXPECT_EQ(jit.jit_cache().size(), 1u);
}

// *** bad input ***

TEST_F(SymbolicShapes, BindOutsideTheRangeNamesIt) {
  try {
    UOp::variable("i", 1, 10).bind(11);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("11"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[1, 10]"), std::string::npos) << e.what();
  }
}

TEST_F(SymbolicShapes, OneVariableWithTwoValuesInOneScheduleIsAnError) {
  Tensor a = Tensor::ones({3}), b = Tensor::ones({4});
  Tensor x = a.reshape({sint(var_i(3))}).sum() + b.reshape({sint(var_i(4))}).sum();
  try {
    x.realize();
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Variable i is bound to both"), std::string::npos) << e.what();
  }
}

TEST_F(SymbolicShapes, ReshapeToAVariableOfAnotherValueIsAnError) {
  Tensor a = Tensor::ones({3, 4});
  EXPECT_THROW(a.reshape({3, sint(var_i(5))}), ValueError);
}

TEST_F(SymbolicShapes, SymbolicSizeWhereAnIntIsNeededNamesTheVariable) {
  Tensor s = Tensor::ones({3}).reshape({sint(var_i(3))});
  try {
    (void)Tensor::rand({sint(var_i(3))});
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.tolist<float>(), Error);  // the shape needs concrete sizes: reshape to the bound value first
}

namespace {
// a decode step's attention over the first start_pos+1 rows of a KV cache (32 heads sharing 4 cached ones, 64 wide)
Tensor cached_attention(const Tensor& q, const Tensor& cache, const sint& n) {
  Tensor kv = cache.shrink({{0, n}, {0, 4}, {0, 64}}).reshape({n, 4, 1, 64}).expand({n, 4, 8, 64}).reshape({n, 32, 64});
  kv = kv.transpose(0, 1);                                        // (32, n, 64)
  Tensor p = (q.matmul(kv.transpose(1, 2)) * 0.125).softmax(-1);  // (32, 1, n)
  return p.matmul(kv);                                            // (32, 1, 64)
}
}  // namespace

TEST_F(SymbolicShapes, AttentionOverACacheGetsTheHeuristicsOpts) {
  // kernels of a symbolic size get the reference's hand-coded opts (upcasts, unrolls) where they used to run as plain
  // loops: on the CPU, the scores r_8_n_16_4_4 and the softmax's exp E_8_n_4 as the reference names them, and the
  // weighted sum of the values r_32_16_n_4 (the reference upcasts the heads there, r_8_64_n_4, an order of its
  // sort of expressions; the rows of 4 values are the faster here); the values equal the attention at a concrete size
  Tensor q = Tensor::randn({32, 1, 64}).realize(), cache = Tensor::randn({40, 4, 64}).realize();
  for (int64_t i : {5, 17, 33}) {
    sint n(UOp::variable("n", 1, 40).bind(i));
    Tensor got = cached_attention(q, cache, n), want = cached_attention(q, cache, i);
    auto [sched, vars] = Tensor::schedule_with_vars({got});
    std::vector<std::string> names;
    for (const ScheduleItem& si : sched) {
      if (si.ast.op() != Ops::SINK) continue;
      Kernel k(si.ast, *Device::get(Device::DEFAULT.str()).renderer);
      apply_default_opts(k);
      std::string name = std::regex_replace(k.base_name(), std::regex("\x1b\\[[0-9;]*m"), "");
      if (std::any_of(k.full_shape().begin(), k.full_shape().end(), [](const sint& d) { return d.is_sym(); }))
        names.push_back(name);
    }
    if (Device::DEFAULT.str() == "CPU") {
      std::string all = join(names, " ");
      for (const char* want : {"r_8_n_16_4_4", "E_8_n_4", "r_32_16_n_4"})
        EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want << " in " << all;
    }
    run_schedule(sched, vars);
    std::vector<float> g = got.tolist<float>(), w = want.tolist<float>();
    ASSERT_EQ(g.size(), w.size());
    for (size_t j = 0; j < g.size(); j++) ASSERT_NEAR(g[j], w[j], 1e-4) << "start_pos+1=" << i << " at " << j;
  }
}
