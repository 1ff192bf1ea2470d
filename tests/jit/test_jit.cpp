// TinyJit: call 1 runs the function, call 2 captures its kernels, calls 3+ replay them with the new inputs' buffers.
// Replays must give what running the function would give (checked against plain loops), run exactly the captured
// kernels, keep state written by assign correct, and every misuse must be a tg::Error, never a wrong answer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "scoped_env.h"
#include "tg/runtime/buffers.h"
#include "tg/shape/uop_shape.h"
#include "tg/tensor/jit.h"

using namespace tg;
using tg::test::ScopedEnv;

namespace {

struct Jit : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
};

std::vector<float> iota(size_t n, float start, float step = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = start + step * static_cast<float>(i);
  return v;
}
Tensor vec(const std::vector<float>& v, const Shape& s) { return Tensor(v, s).realize(); }

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "at " << i;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// ((x @ w).relu() + b).sum(1) over 6 calls with changing inputs: the same as computing it in float64
TEST_F(Jit, ReplayMatchesThePlainComputation) {
  int ran = 0;
  TinyJit f([&](Tensor x, Tensor w, Tensor b) {
    ran++;
    Tensor h = x.dot(w).relu().realize();  // a realize inside: two kernels captured
    return (h + b).sum(1);
  });
  for (int call = 0; call < 6; call++) {
    std::vector<float> xv = iota(6, -1.0f + call, 0.5f), wv = iota(4, 0.25f * call - 0.5f, 0.3f), bv = {1.f * call, -2};
    Tensor out = f(vec(xv, {3, 2}), vec(wv, {2, 2}), vec(bv, {2}));
    std::vector<double> want(3);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) {
        double acc = 0;
        for (int k = 0; k < 2; k++) acc += double(xv[i * 2 + k]) * wv[k * 2 + j];
        want[i] += std::max(acc, 0.0) + bv[j];
      }
    expect_near(out.tolist<float>(), want);
    EXPECT_EQ(out.shape(), (Shape{3}));
  }
  EXPECT_EQ(ran, 2);  // calls 3..6 replay without running the function
  EXPECT_EQ(f.cnt(), 6);
  EXPECT_EQ(f.jit_cache().size(), 2u);
}

TEST_F(Jit, AReplayRunsExactlyTheCapturedKernels) {
  TinyJit f([](Tensor x) {
    Tensor a = (x * 2).contiguous().realize();
    return std::make_pair((a + 1).realize(), (a.sum() * x.max()).realize());
  });
  for (int call = 0; call < 5; call++) {
    Tensor x = vec(iota(8, float(call)), {8});
    int64_t before = GlobalCounters::kernel_count;
    auto [p, q] = f(x);
    int64_t ran = GlobalCounters::kernel_count - before;
    if (call >= 2) {
      EXPECT_EQ(ran, static_cast<int64_t>(f.jit_cache().size()));
    }
    std::vector<double> want_p(8);
    double s = 0, mx = call + 7;
    for (int i = 0; i < 8; i++) want_p[i] = 2.0 * (call + i) + 1, s += 2.0 * (call + i);
    expect_near(p.tolist<float>(), want_p);
    expect_near(q.tolist<float>(), {s * mx});
  }
  EXPECT_GE(f.jit_cache().size(), 3u);
  size_t input_slots = 0;  // cleared between calls: the JIT doesn't keep a call's inputs alive
  for (const ExecItem& ei : f.jit_cache())
    for (const Buffer& b : ei.bufs) input_slots += !b;
  EXPECT_GE(input_slots, 2u);
}

TEST_F(Jit, KernelsOfWeightsAloneRunOnceUntilAWeightChanges) {
  // the copy of w transposed reads only w (from outside the function, written by no kernel of it): the first replay
  // runs it, later replays skip it, until w is written (an assign, a copyin) and a replay runs it again; each result
  // is the plain computation's with the w of that moment. JIT_HOIST=0 runs every kernel every time
  for (const char* hoist : {"1", "0"}) {
    ScopedEnv env("JIT_HOIST", hoist);
    const bool on = std::string(hoist) == "1";
    std::vector<float> wv = iota(12, 1.0f);
    Tensor w = vec(wv, {3, 4});
    TinyJit f([&](Tensor x) { return (x + w.T().contiguous().reshape({12})).realize(); });
    auto want = [&](int call) {
      std::vector<double> r(12);
      for (int i = 0; i < 12; i++) r[i] = call + i + wv[static_cast<size_t>((i % 3) * 4 + i / 3)];
      return r;
    };
    std::vector<int64_t> ran;
    for (int call = 0; call < 8; call++) {
      if (call == 5) {  // a kernel writes w
        for (float& v : wv) v *= 2;
        w.assign(Tensor(wv, {3, 4})).realize();
      }
      if (call == 7) {  // a copy into w's buffer
        for (float& v : wv) v += 1;
        std::optional<Buffer> b = uop_realized(uop_base(w.uop()));
        ASSERT_TRUE(b.has_value());
        b->copyin(wv.data(), wv.size() * sizeof(float));
      }
      Tensor x = vec(iota(12, float(call)), {12});
      int64_t before = GlobalCounters::kernel_count;
      Tensor out = f(x);
      ran.push_back(GlobalCounters::kernel_count - before);
      expect_near(out.tolist<float>(), want(call));
    }
    ASSERT_EQ(f.jit_cache().size(), 2u);
    // calls 0-1 run the function, 2 is the first replay; 5 and 7 follow a write to w
    EXPECT_EQ(ran, on ? (std::vector<int64_t>{2, 2, 2, 1, 1, 2, 1, 2}) : (std::vector<int64_t>(8, 2))) << hoist;
  }
}

TEST_F(Jit, AWeightsKernelIsHoistedWhereTheSchedulesPlannerReusedItsBytes) {
  // in one realize, w's transposed copy dies after its first reader and the schedule's memory planner gives its
  // bytes to the next intermediate (b): the capture plans the whole graph itself (the planner's arena views stand
  // for the buffers the kernels made), so the copy is still hoisted and b gets bytes of its own. Each replay's
  // result is the plain computation's
  std::vector<float> wv = iota(12, 1.0f);
  Tensor w = vec(wv, {3, 4});
  TinyJit f([&](Tensor x) {
    // w's copy: no Tensor holds it (or the planner would leave it alone); it reads w alone: hoisted
    Tensor a = (x + w.T().contiguous().reshape({12})).contiguous();
    Tensor out = (a * 2).contiguous() + a;  // no Tensor holds a * 2: the schedule's planner puts it where the copy was
    return out.realize();
  });
  std::vector<int64_t> ran;
  for (int call = 0; call < 5; call++) {
    Tensor x = vec(iota(12, float(call)), {12});
    int64_t before = GlobalCounters::kernel_count;
    Tensor out = f(x);
    ran.push_back(GlobalCounters::kernel_count - before);
    std::vector<double> want(12);
    for (int i = 0; i < 12; i++) want[i] = 3.0 * (call + i + wv[static_cast<size_t>((i % 3) * 4 + i / 3)]);
    expect_near(out.tolist<float>(), want);
  }
  ASSERT_EQ(f.jit_cache().size(), 4u);
  EXPECT_EQ(ran, (std::vector<int64_t>{4, 4, 4, 3, 3}));
}

TEST_F(Jit, KernelsRunWithCapturingOffAreNotCaptured) {  // tinygrad's Context(CAPTURING=0)
  for (int64_t capturing : {1, 0}) {
    TinyJit f([&](Tensor x) {
      {
        Context c{{"CAPTURING", capturing}};
        Tensor::zeros({4, 4}).contiguous().realize();  // a kernel of no input
      }
      return (x + 1).realize();
    });
    for (int call = 0; call < 4; call++) EXPECT_EQ(f(vec({float(call)}, {1})).tolist<float>()[0], call + 1.0f);
    EXPECT_EQ(f.jit_cache().size(), capturing ? 2u : 1u) << "CAPTURING=" << capturing;
  }
}

TEST_F(Jit, OutputsOfAllShapes) {
  TinyJit<std::vector<Tensor>(const Tensor&, const Tensor&)> v([](const Tensor& a, const Tensor& b) {
    return std::vector<Tensor>{a + b, a - b, a * b};  // not realized inside: one kernel for the three
  });
  TinyJit<std::tuple<Tensor, Tensor>(Tensor)> t([](Tensor a) { return std::tuple<Tensor, Tensor>{a + 1, a.sum()}; });
  TinyJit<std::array<Tensor, 2>(Tensor)> arr([](Tensor a) { return std::array<Tensor, 2>{a.neg(), a.exp2()}; });
  for (int call = 0; call < 5; call++) {
    Tensor a = vec({1.f + call, 2, 3}, {3}), b = vec({4, 5.f * call, 6}, {3});
    std::vector<Tensor> r = v(a, b);
    ASSERT_EQ(r.size(), 3u);
    expect_near(r[0].tolist<float>(), {5.0 + call, 2 + 5.0 * call, 9});
    expect_near(r[1].tolist<float>(), {call - 3.0, 2 - 5.0 * call, -3});
    expect_near(r[2].tolist<float>(), {4.0 + 4 * call, 10.0 * call, 18});
    auto [p, s] = t(a);
    expect_near(p.tolist<float>(), {2.0 + call, 3, 4});
    expect_near(s.tolist<float>(), {6.0 + call});
    auto [n, e] = arr(a);
    expect_near(n.tolist<float>(), {-1.0 - call, -2, -3});
    expect_near(e.tolist<float>(), {std::exp2(1.0 + call), 4, 8});
  }
}

TEST_F(Jit, TheOutputBufferIsReusedByTheNextReplay) {  // as in tinygrad: copy an output you want to keep
  TinyJit f([](Tensor x) { return x.sum().realize(); });
  Tensor r1 = f(vec({1, 1}, {2})), r2 = f(vec({2, 2}, {2})), r3 = f(vec({3, 3}, {2}));
  EXPECT_EQ(r1.item<float>(), 2);  // call 1 ran normally: its own buffer
  EXPECT_EQ(r2.item<float>(), 6);  // the captured output buffer, which call 3 overwrote
  EXPECT_EQ(r3.item<float>(), 6);
  EXPECT_EQ(r2.uop(), r3.uop());
}

// the allocator's cache is given back at the capture (call 2) and at the first replay (call 3): after call 1 it holds
// call 1's intermediates, after call 2 the capture's, and the buffers of the next call (sized otherwise: the capture's
// own, then the memory plan's) would be added to them (a training step's peak memory twice over:
// bench/bench_gpt_step's 3.4 GB -> 1.4 GB). A freed 8 MB buffer stands for what the cache holds before each call.
TEST_F(Jit, TheCachesOfEarlierCallsAreGivenBack) {
  auto* lru = dynamic_cast<LRUAllocator*>(Device::get().allocator.get());
  if (lru == nullptr || !LRU) GTEST_SKIP() << "the device's allocator keeps no cache";
  const int64_t big = 8 << 20;
  TinyJit f([](Tensor x) { return ((x.reshape({1, 256}).expand({64, 256}) * 2).contiguous() + 1).sum().realize(); });
  for (int call = 1; call <= 4; call++) {
    { Buffer(Device::canonicalize(), big, dtypes::uint8, true); }  // allocated, freed: into the cache
    ASSERT_GE(lru->cached_bytes(), size_t(big));
    EXPECT_EQ(f(Tensor::full({256}, 1.0).contiguous().realize()).item<float>(), 3 * 256 * 64);
    if (call == 2 || call == 3)
      EXPECT_LT(lru->cached_bytes(), size_t(big)) << "call " << call;
    else
      EXPECT_GE(lru->cached_bytes(), size_t(big)) << "call " << call;  // call 1 runs, call 4 replays: nothing freed
  }
}

// the training-step pattern: forward, an update of the state by assign, the loss returned. Here the gradient of the
// mean squared error of a linear model is written out by hand, so the jitted steps can be compared with plain ones.
TEST_F(Jit, TrainingStepWithAssignedState) {
  auto init = [] { return vec({0.5f, -0.25f, 0.125f, 1.0f, -1.0f, 0.75f}, {3, 2}); };
  Tensor w_jit = init(), w_plain = init();
  auto step = [](Tensor& w, const Tensor& x, const Tensor& y) {
    Tensor err = x.dot(w) - y;  // (4, 2)
    Tensor loss = err.square().mean();
    Tensor grad = x.T().dot(err) * (2.0f / 8.0f);  // d loss / d w
    w.assign(w - grad * 0.1f);
    return loss;
  };
  TinyJit jstep([&](Tensor x, Tensor y) { return step(w_jit, x, y).realize(); });
  for (int call = 0; call < 7; call++) {
    std::vector<float> xv = iota(12, -0.5f + 0.1f * call, 0.15f), yv = iota(8, 0.3f * call, -0.2f);
    Tensor lj = jstep(vec(xv, {4, 3}), vec(yv, {4, 2}));
    Tensor lp = step(w_plain, vec(xv, {4, 3}), vec(yv, {4, 2})).realize();
    w_plain.realize();
    EXPECT_NEAR(lj.item<float>(), lp.item<float>(), 1e-5) << "call " << call;
    std::vector<float> a = w_jit.tolist<float>(), b = w_plain.tolist<float>();
    for (size_t i = 0; i < a.size(); i++) EXPECT_NEAR(a[i], b[i], 1e-5) << "call " << call << " w[" << i << "]";
  }
  EXPECT_EQ(jstep.cnt(), 7);
}

TEST_F(Jit, StateAssignedButNotReturnedIsCaptured) {  // the function's pending assigns are realized with its outputs
  Tensor w = Tensor::zeros({3}).contiguous().realize();
  TinyJit f([&](Tensor x) {
    w.assign(w - x.sum());
    return (x * 2).realize();
  });
  double want = 0;
  for (int call = 0; call < 5; call++) {
    Tensor x = vec({1.f * call, 1, 2}, {3});
    Tensor y = f(x);
    want -= call + 3;
    expect_near(y.tolist<float>(), {2.0 * call, 2, 4});
    expect_near(w.tolist<float>(), {want, want, want});
  }
}

TEST_F(Jit, StateReturnedAndChangedBetweenCalls) {  // the returned state is the state tensor itself
  Tensor w = Tensor::zeros({2}).contiguous().realize();
  TinyJit f([&](Tensor x) {
    w.assign(w + x);
    return w;
  });
  double want = 0;
  for (int call = 0; call < 6; call++) {
    if (call == 4) {  // new weights, left pending: the replay must read them
      w.assign(Tensor::full({2}, 100.0));
      want = 100;
      Tensor gone = Tensor::zeros({2}).contiguous().realize();
      gone.assign(Tensor::full({2}, 7.0));  // pending, then dropped: nothing to realize
    }
    Tensor out = f(vec({1.f * call, 1.f * call}, {2}));
    want += call;
    EXPECT_EQ(out.uop(), w.uop());
    expect_near(w.tolist<float>(), {want, want});
  }
}

TEST_F(Jit, AssignToAnInput) {
  TinyJit<void(Tensor)> add1([](Tensor a) { a.assign(a + 1).realize(); });
  Tensor a = Tensor::zeros({1}).contiguous().realize();
  for (int i = 0; i < 5; i++) add1(a);
  EXPECT_EQ(a.item<float>(), 5);
  Tensor b = Tensor::full({1}, 10.0).contiguous().realize();  // a new input: the replay writes b, not a
  add1(b);
  EXPECT_EQ(b.item<float>(), 11);
  EXPECT_EQ(a.item<float>(), 5);
}

TEST_F(Jit, ConstantInputsBecomeBuffers) {  // the reference bakes a constant input into the kernel
  TinyJit f([](Tensor x, Tensor y, Tensor z) { return (x + y + z).realize(); });
  for (int i = 0; i < 5; i++) {
    Tensor out =
        f(Tensor(std::vector<int>(3, i), {3}), Tensor::full({3}, i * 2), Tensor::zeros({3}, {.dtype = dtypes::int32}));
    EXPECT_EQ(out.tolist<int>(), std::vector<int>(3, 3 * i));
  }
}

TEST_F(Jit, AnOutputThatIsAnInputFollowsTheInput) {
  TinyJit f([](Tensor x) { return std::make_pair(x.reshape({2, 2}), (x * 3).realize()); });
  for (int call = 0; call < 5; call++) {
    auto [view, times3] = f(vec(iota(4, float(call)), {4}));
    expect_near(view.tolist<float>(), {0.0 + call, 1.0 + call, 2.0 + call, 3.0 + call});
    EXPECT_EQ(view.shape(), (Shape{2, 2}));
    expect_near(times3.tolist<float>(), {3.0 * call, 3.0 * call + 3, 3.0 * call + 6, 3.0 * call + 9});
  }
}

TEST_F(Jit, AnOutputFedBackAsInputIsReadFromACopy) {  // h = f(h): the replay writes the buffer it reads
  Tensor m = vec({0.5f, 1, -1, 0.25f, 2, 0, 1, -0.5f, 0.75f}, {3, 3});
  TinyJit f([&](Tensor h) { return h.dot(m).realize(); });
  std::vector<double> want = {1, 2, 3};
  Tensor h = vec({1, 2, 3}, {1, 3});
  for (int call = 0; call < 6; call++) {
    h = f(h);
    std::vector<double> nw(3, 0.0);
    std::vector<float> mv = m.tolist<float>();
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 3; k++) nw[j] += want[k] * mv[k * 3 + j];
    want = nw;
    expect_near(h.tolist<float>(), want);
  }
}

// a chain of realized intermediates: the JIT's planner lets the ones with disjoint lifetimes share storage
TEST_F(Jit, IntermediatesShareStorage) {
  for (bool realize_inside : {false, true}) {
    TinyJit f([&](Tensor x) {  // no tensor holds the intermediates (a tensor's buffer is never planned)
      Tensor out = ((((x + 1).contiguous() * 2).contiguous() + 3).contiguous() * 4).contiguous() - 5;
      return realize_inside ? out.realize() : out;
    });
    for (int call = 0; call < 4; call++) {
      Tensor out = f(vec(iota(16, float(call)), {16}));
      std::vector<double> want(16);
      for (int i = 0; i < 16; i++) want[i] = (((call + i) + 1.0) * 2 + 3) * 4 - 5;
      expect_near(out.tolist<float>(), want);
    }
    ASSERT_EQ(f.jit_cache().size(), 5u);
    // the 4 intermediates: the 1st and 3rd (2nd and 4th) live in disjoint kernel ranges, so they share memory
    std::set<std::pair<const void*, int64_t>> storage;
    for (size_t j = 0; j + 1 < f.jit_cache().size(); j++) {
      const Buffer& out = f.jit_cache()[j].bufs[0];
      storage.insert({out.base().id(), out.offset()});
    }
    EXPECT_EQ(storage.size(), 2u);
    // never the input or the output
    const Buffer& last = f.jit_cache().back().bufs[0];
    EXPECT_FALSE(last.is_view());
    EXPECT_EQ(storage.count({last.base().id(), last.offset()}), 0u);
  }
}

TEST_F(Jit, ValueArgumentsAreCapturedByValue) {
  TinyJit f([](Tensor x, int k, std::string mode) { return mode == "add" ? (x + k).realize() : (x * k).realize(); });
  for (int call = 0; call < 4; call++) expect_near(f(vec({1.f * call}, {1}), 3, "add").tolist<float>(), {call + 3.0});
  std::string e = error_of([&] { f(vec({1}, {1}), 4, "add"); });
  EXPECT_NE(e.find("argument 1 is 4, the captured call had 3"), std::string::npos) << e;
  e = error_of([&] { f(vec({1}, {1}), 3, "mul"); });
  EXPECT_NE(e.find("argument 2 is mul, the captured call had add"), std::string::npos) << e;
}

TEST_F(Jit, ChangedInputsFailLoudly) {
  TinyJit f([](Tensor a, Tensor b) { return (a + b).realize(); });
  for (int i = 0; i < 3; i++)
    f(Tensor::ones({2, 2}).contiguous().realize(), Tensor::ones({2, 2}).contiguous().realize() * 1);
  Tensor ok = Tensor::ones({2, 2}).contiguous().realize();
  std::string e = error_of([&] { f(ok, Tensor::ones({3, 3}).contiguous()); });
  EXPECT_NE(e.find("input 1 has shape (3, 3), the captured call had (2, 2)"), std::string::npos) << e;
  e = error_of([&] { f(Tensor::ones({2, 2}, {.dtype = dtypes::int32}).contiguous(), ok * 2); });
  EXPECT_NE(e.find("input 0 has dtype dtypes.int, the captured call had dtypes.float"), std::string::npos) << e;
  Tensor big = Tensor::ones({2, 4}).contiguous().realize();  // the same shape through a view with other strides
  e = error_of([&] { f(big.shrink({{0, 2}, {1, 3}}), ok * 2); });
  EXPECT_NE(e.find("input 0 is the view"), std::string::npos) << e;
  e = error_of([&] { f(ok.T(), ok * 2); });
  EXPECT_NE(e.find("input 0 is the view"), std::string::npos) << e;
}

TEST_F(Jit, ADifferentNumberOfTensorsFails) {
  TinyJit f([](std::vector<Tensor> xs) {
    Tensor s = xs[0];
    for (size_t i = 1; i < xs.size(); i++) s = s + xs[i];
    return s.realize();
  });
  auto three = [] { return std::vector<Tensor>{vec({1}, {1}), vec({2}, {1}), vec({3}, {1})}; };
  for (int i = 0; i < 3; i++) EXPECT_EQ(f(three()).item<float>(), 6);
  std::string e = error_of([&] { f({vec({1}, {1}), vec({2}, {1})}); });
  EXPECT_NE(e.find("the captured call had tensor inputs [0[0], 0[1], 0[2]], this call has [0[0], 0[1]]"),
            std::string::npos)
      << e;
}

TEST_F(Jit, TheSameBufferTwiceFails) {
  TinyJit f([](Tensor a, Tensor b) { return (a + b).realize(); });
  Tensor a = vec({1, 2}, {2});
  std::string e = error_of([&] { f(a, a); });
  EXPECT_NE(e.find("duplicate inputs to TinyJit: inputs 0 and 1 are the same buffer"), std::string::npos) << e;
}

TEST_F(Jit, AnOutputFedBackToAFunctionThatAssignsToItFails) {  // it would be read from a copy but written in place
  TinyJit f([](Tensor a) {
    a.assign(a + 1);
    return (a * 2).realize();
  });
  Tensor a = vec({1}, {1});
  for (int i = 0; i < 3; i++) f(a);
  EXPECT_EQ(a.item<float>(), 4);
  Tensor out = f(a);
  EXPECT_EQ(out.item<float>(), 10);
  std::string e = error_of([&] { f(out); });
  EXPECT_NE(e.find("input 0 is a buffer this JIT writes"), std::string::npos) << e;
}

TEST_F(Jit, AnInputMovedToANewBufferWhileCapturingFails) {  // assign's copy-on-write when another tensor shares it
  TinyJit<void(Tensor)> f([](Tensor a) { a.assign(a + 1).realize(); });
  Tensor x = vec({1, 2}, {2});
  f(x);
  Tensor alias(x.uop());  // shares x's buffer: x.assign writes a new buffer, so alias keeps its values
  std::string e = error_of([&] { f(x); });
  EXPECT_NE(e.find("input 0 got a new buffer inside the function"), std::string::npos) << e;
  EXPECT_EQ(alias.tolist<float>(), (std::vector<float>{2, 3}));
}

TEST_F(Jit, NothingToCaptureFails) {
  TinyJit<void(Tensor)> f([](Tensor) {});
  f(vec({1}, {1}));
  std::string e = error_of([&] { f(vec({1}, {1})); });
  EXPECT_NE(e.find("nothing to capture"), std::string::npos) << e;
  TinyJit g([](Tensor x) { return x; });  // an input returned as it is: no kernel either
  g(vec({1}, {1}));
  EXPECT_THROW(g(vec({1}, {1})), Error);
}

TEST_F(Jit, AJitInsideAJitFails) {
  TinyJit inner([](Tensor t) { return (t + 1).realize(); });
  TinyJit outer([&](Tensor t) { return (inner(t) * 3).realize(); });
  EXPECT_EQ(outer(vec({1}, {1})).item<float>(), 6);  // call 1 runs both normally
  std::string e = error_of([&] { outer(vec({1}, {1})); });
  EXPECT_NE(e.find("having TinyJit inside another TinyJit is not supported"), std::string::npos) << e;
  inner.reset();
  outer.reset();
  EXPECT_EQ(capturing, nullptr);  // the failed capture left nothing behind
}

TEST_F(Jit, JitZeroRunsTheFunctionEveryTime) {
  ScopedEnv jit0("JIT", "0");
  int ran = 0;
  TinyJit f([&](Tensor a) {
    ran++;
    return (a * 2).realize();
  });
  for (int i = 0; i < 5; i++) EXPECT_EQ(f(vec({float(i)}, {1})).item<float>(), 2 * i);
  EXPECT_EQ(ran, 5);
  EXPECT_TRUE(f.jit_cache().empty());
}

TEST_F(Jit, ResetCapturesAgain) {
  int ran = 0;
  TinyJit f([&](Tensor a) {
    ran++;
    return (a + a).realize();
  });
  for (int i = 0; i < 4; i++) EXPECT_EQ(f(vec({float(i), 1}, {2})).tolist<float>(), (std::vector<float>{2.f * i, 2}));
  EXPECT_EQ(ran, 2);
  EXPECT_THROW(f(vec({1, 2, 3}, {3})), Error);
  f.reset();
  EXPECT_TRUE(f.jit_cache().empty());
  for (int i = 0; i < 4; i++)
    EXPECT_EQ(f(vec({1, 2, float(i)}, {3})).tolist<float>(), (std::vector<float>{2, 4, 2.f * i}));
  EXPECT_EQ(ran, 4);
  EXPECT_EQ(f.jit_cache().size(), 1u);
}

TEST_F(Jit, UnrealizedInputsAreRealizedFirst) {
  TinyJit f([](Tensor x) { return (x * x).realize(); });
  Tensor base = vec({1, 2, 3}, {3});
  for (int i = 0; i < 5; i++) {
    Tensor x = base + float(i);  // a graph, not a buffer
    expect_near(f(x).tolist<float>(), {(1.0 + i) * (1 + i), (2.0 + i) * (2 + i), (3.0 + i) * (3 + i)});
    EXPECT_EQ(x.uop().op(), Ops::BUFFER);
  }
}
