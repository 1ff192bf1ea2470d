// optimizers against plain float64 loops of their update rules, a few steps each, with gradients from backward()
// (or set by hand)
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tg/runtime/device.h"
#include "tinygrad/tinygrad.h"

using namespace tg;
namespace optim = tg::nn::optim;

namespace {

using Vec = std::vector<double>;
double norm(const Vec& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

// two params, (3, 4) and (3,), and a gradient for each at every step
struct Problem {
  std::vector<Vec> init = {{}, {0.1, -0.2, 0.3}};
  std::vector<Shape> shapes = {{3, 4}, {3}};
  Problem() {
    for (int i = 0; i < 12; i++) init[0].push_back(i / 10.0 - 0.5);
  }
  Vec grad(size_t p, int step) const {
    Vec g;
    for (size_t i = 0; i < init[p].size(); i++)
      g.push_back(std::sin(0.7 * double(step + 1) + double(i) + 3.0 * double(p)));
    return g;
  }
  static Tensor tensor(const Vec& v, const Shape& s) {
    std::vector<float> f(v.begin(), v.end());
    return Tensor(f, s);
  }
  std::vector<Tensor> params() const {
    std::vector<Tensor> out;
    for (size_t p = 0; p < init.size(); p++) out.push_back(tensor(init[p], shapes[p]).requires_grad_(true).realize());
    return out;
  }
  // the grads of step `step`, through backward: loss = sum over params of p * G, so d(loss)/dp = G exactly
  void set_grads(std::vector<Tensor>& ps, int step) const {
    std::optional<Tensor> loss;
    for (size_t p = 0; p < ps.size(); p++) {
      ps[p].set_grad(std::nullopt);
      Tensor term = (ps[p] * tensor(grad(p, step), shapes[p])).sum();
      loss = loss ? *loss + term : term;
    }
    loss->backward();
  }
};

void expect_near(const Tensor& t, const Vec& want, const std::string& what) {
  std::vector<float> got = t.tolist<float>();
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); i++)
    EXPECT_NEAR(got[i], want[i], 2e-5 + 2e-5 * std::abs(want[i])) << what << " [" << i << "]";
}

// SGD/LARS as plain loops: the reference rule, per param
struct LarsRef {
  optim::LARSOptions o;
  std::vector<Vec> b = {};
  void step(std::vector<Vec>& ts, const std::vector<Vec>& gs) {
    if (b.empty())
      for (auto& t : ts) b.push_back(Vec(t.size(), 0.0));
    for (size_t p = 0; p < ts.size(); p++) {
      Vec& t = ts[p];
      Vec g = gs[p];
      double r = 1.0;
      if (o.tcoef != 0) {
        double r1 = norm(t), r2 = norm(g);
        r = r1 > 0 ? (r2 > 0 ? o.tcoef * r1 / (r2 + o.weight_decay * r1) : 1.0) : 1.0;
      }
      for (size_t i = 0; i < t.size(); i++) {
        double gi = g[i] + o.weight_decay * t[i];
        if (o.classic) gi = gi * r * o.lr;
        if (o.momentum != 0) {
          b[p][i] = o.momentum * b[p][i] + gi;
          gi = o.nesterov ? gi + o.momentum * b[p][i] : b[p][i];
        }
        if (!o.classic) gi = gi * r * o.lr;
        t[i] -= gi;
      }
    }
  }
};

struct LambRef {
  optim::LAMBOptions o;
  std::vector<Vec> m = {}, v = {};
  double b1_t = 1, b2_t = 1;
  void step(std::vector<Vec>& ts, const std::vector<Vec>& gs) {
    if (m.empty())
      for (auto& t : ts) m.push_back(Vec(t.size(), 0.0)), v.push_back(Vec(t.size(), 0.0));
    b1_t *= o.b1, b2_t *= o.b2;
    for (size_t p = 0; p < ts.size(); p++) {
      Vec& t = ts[p];
      Vec up(t.size());
      for (size_t i = 0; i < t.size(); i++) {
        double g = gs[p][i];
        m[p][i] = o.b1 * m[p][i] + (1 - o.b1) * g;
        v[p][i] = o.b2 * v[p][i] + (1 - o.b2) * g * g;
        double mh = m[p][i] / (1 - b1_t), vh = v[p][i] / (1 - b2_t);
        up[i] = mh / (std::sqrt(vh) + o.eps) + o.weight_decay * t[i];
      }
      double r = 1.0;
      if (!o.adam) {
        double r1 = norm(t), r2 = norm(up);
        r = r1 > 0 ? (r2 > 0 ? r1 / r2 : 1.0) : 1.0;
      }
      for (size_t i = 0; i < t.size(); i++) t[i] -= o.lr * r * up[i];
    }
  }
};

// runs `steps` steps of the optimizer and of the float64 loop, checking the params after each
template <class Ref>
void check_against(const std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>&)>& make, Ref ref,
                   int steps = 3) {
  Problem pb;
  std::vector<Tensor> ps = pb.params();
  auto opt = make(ps);
  std::vector<Vec> want = pb.init;
  Tensor::train tr;
  for (int s = 0; s < steps; s++) {
    pb.set_grads(ps, s);
    opt->step();
    ref.step(want, {pb.grad(0, s), pb.grad(1, s)});
    for (size_t p = 0; p < ps.size(); p++) expect_near(ps[p], want[p], cat("step ", s, " param ", p));
  }
}

template <class T>
std::unique_ptr<optim::Optimizer> boxed(T opt) {
  return std::make_unique<T>(std::move(opt));
}

}  // namespace

// *** SGD and LARS ***

TEST(Optim, SGDPlain) {
  check_against([](auto& ps) { return boxed(optim::SGD(ps, {.lr = 0.1})); },
                LarsRef{{.lr = 0.1, .momentum = 0, .weight_decay = 0, .classic = false, .tcoef = 0}});
}
TEST(Optim, SGDMomentum) {
  check_against([](auto& ps) { return boxed(optim::SGD(ps, {.lr = 0.05, .momentum = 0.9})); },
                LarsRef{{.lr = 0.05, .momentum = 0.9, .weight_decay = 0, .classic = false, .tcoef = 0}});
}
TEST(Optim, SGDNesterovWeightDecay) {
  check_against(
      [](auto& ps) {
        return boxed(optim::SGD(ps, {.lr = 0.05, .momentum = 0.8, .weight_decay = 0.1, .nesterov = true}));
      },
      LarsRef{{.lr = 0.05, .momentum = 0.8, .weight_decay = 0.1, .nesterov = true, .classic = false, .tcoef = 0}});
}
TEST(Optim, SGDClassicMomentum) {
  check_against([](auto& ps) { return boxed(optim::SGD(ps, {.lr = 0.05, .momentum = 0.9, .classic = true})); },
                LarsRef{{.lr = 0.05, .momentum = 0.9, .weight_decay = 0, .classic = true, .tcoef = 0}});
}
TEST(Optim, LARSDefaults) {
  check_against([](auto& ps) { return boxed(optim::LARS(ps, {.lr = 0.5})); }, LarsRef{{.lr = 0.5}});
}
TEST(Optim, LARSPopularMomentum) {
  check_against([](auto& ps) { return boxed(optim::LARS(ps, {.lr = 0.5, .weight_decay = 0.01, .classic = false})); },
                LarsRef{{.lr = 0.5, .weight_decay = 0.01, .classic = false}});
}

// *** Adam, AdamW, LAMB ***

TEST(Optim, Adam) {
  check_against([](auto& ps) { return boxed(optim::Adam(ps, {.lr = 0.01})); },
                LambRef{{.lr = 0.01, .eps = 1e-8, .adam = true}}, 4);
}
TEST(Optim, AdamW) {
  check_against([](auto& ps) { return boxed(optim::AdamW(ps, {.lr = 0.01, .weight_decay = 0.1})); },
                LambRef{{.lr = 0.01, .eps = 1e-8, .weight_decay = 0.1, .adam = true}});
}
TEST(Optim, LAMB) {
  check_against([](auto& ps) { return boxed(optim::LAMB(ps, {.lr = 0.01, .weight_decay = 0.01})); },
                LambRef{{.lr = 0.01, .weight_decay = 0.01}});
}

// *** fused: one concatenated buffer per state, same numbers ***

TEST(Optim, FusedMatchesUnfused) {
  check_against([](auto& ps) { return boxed(optim::Adam(ps, {.lr = 0.01, .fused = true})); },
                LambRef{{.lr = 0.01, .eps = 1e-8, .adam = true}});
  check_against(
      [](auto& ps) { return boxed(optim::SGD(ps, {.lr = 0.05, .momentum = 0.9, .nesterov = true, .fused = true})); },
      LarsRef{{.lr = 0.05, .momentum = 0.9, .weight_decay = 0, .nesterov = true, .classic = false, .tcoef = 0}});
  Problem pb;
  std::vector<Tensor> ps = pb.params();
  auto opt = optim::Adam(ps, {.fused = true});
  ASSERT_EQ(opt.m.size(), 1u);
  EXPECT_EQ(opt.m[0].shape(), (Shape{15}));
}

// *** the optimizer's contract ***

TEST(Optim, StepRefusesOutsideTraining) {
  Problem pb;
  std::vector<Tensor> ps = pb.params();
  auto opt = optim::SGD(ps);
  pb.set_grads(ps, 0);
  Tensor::train off(false);
  try {
    opt.step();
    FAIL() << "step outside training";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor::training"), std::string::npos) << e.what();
  }
  EXPECT_THROW(opt.schedule_step(), Error);
}

TEST(Optim, StepNeedsGrads) {
  Problem pb;
  std::vector<Tensor> ps = pb.params();
  auto opt = optim::SGD(ps);
  Tensor::train tr;
  EXPECT_THROW(opt.step(), Error);  // no grads set
  pb.set_grads(ps, 0);
  opt.zero_grad();
  EXPECT_FALSE(ps[0].grad().has_value());
  EXPECT_THROW(opt.step(), Error);
}

TEST(Optim, ParamsAndBuffers) {
  Tensor a = Tensor::ones({2}), b = Tensor::ones({3}, {.requires_grad = false}), c = Tensor::zeros({2});
  c.requires_grad_(true);
  auto opt = optim::SGD({a, b, c, a});  // a twice: one param
  EXPECT_EQ(opt.params.size(), 2u);
  EXPECT_EQ(opt.buffers.size(), 1u);
  EXPECT_EQ(a.requires_grad(), std::optional<bool>(true));  // unset requires_grad becomes true
  EXPECT_EQ(opt.lr.shape(), (Shape{1}));
  EXPECT_EQ(opt.lr.dtype(), dtypes::float32);
  EXPECT_THROW(optim::SGD({b}), Error);  // no param that requires grad
  // two tensors made alike are two params (the second has a buffer of its own: ParamsMadeAlikeStayApart)
  Tensor z1 = Tensor::zeros({4}, {.requires_grad = true}), z2 = Tensor::zeros({4}, {.requires_grad = true});
  ASSERT_NE(z1.uop(), z2.uop());
  EXPECT_EQ(optim::Adam({z1, z2}).params.size(), 2u);
}

TEST(Optim, LearningRateIsATensor) {
  Tensor w = Tensor(std::vector<float>{1, 2}, {2}).requires_grad_(true).realize();
  auto opt = optim::SGD({w}, {.lr = 0.5});
  Tensor::train tr;
  w.set_grad(Tensor(std::vector<float>{1, 1}, {2}));
  opt.step();
  expect_near(w, {0.5, 1.5}, "lr 0.5");
  opt.lr.assign(Tensor(std::vector<float>{0.25f}, {1})).realize();
  w.set_grad(Tensor(std::vector<float>{1, 1}, {2}));
  opt.step();
  expect_near(w, {0.25, 1.25}, "lr 0.25");
}

TEST(Optim, Group) {
  Tensor a = Tensor(std::vector<float>{1, 2}, {2}).requires_grad_(true).realize();
  Tensor b = Tensor(std::vector<float>{3, 4, 5}, {3}).requires_grad_(true).realize();
  auto sgd = optim::SGD({a}, {.lr = 0.5});
  auto adam = optim::Adam({b}, {.lr = 0.1});
  optim::OptimizerGroup g({&sgd, &adam});
  EXPECT_EQ(g.params.size(), 2u);
  EXPECT_EQ(&g[1], &adam);
  Tensor::train tr;
  a.set_grad(Tensor(std::vector<float>{1, -1}, {2}));
  b.set_grad(Tensor(std::vector<float>{1, -2, 0.5f}, {3}));
  g.step();
  expect_near(a, {0.5, 2.5}, "sgd in the group");
  expect_near(b, {2.9, 4.1, 4.9}, "adam in the group: its first step moves each param by lr");
  g.zero_grad();
  EXPECT_FALSE(a.grad().has_value());
  EXPECT_FALSE(b.grad().has_value());
}

// the moment buffers start as one deduplicated graph (zeros); realized before the first step they must still be
// two buffers, else v would be written with m's values and the update would go wrong (or NaN)
TEST(Optim, AdamWithRealizedStateStillTrains) {
  Problem pb;
  std::vector<Tensor> ps = pb.params();
  auto opt = optim::Adam(ps, {.lr = 0.01});
  ASSERT_EQ(opt.m[0].uop(), opt.v[0].uop());
  std::vector<Tensor> state = {opt.b1_t, opt.b2_t, opt.lr};
  for (auto* s : {&opt.m, &opt.v}) state.insert(state.end(), s->begin(), s->end());
  Tensor::realize(state);
  LambRef ref{{.lr = 0.01, .eps = 1e-8, .adam = true}};
  std::vector<Vec> want = pb.init;
  Tensor::train tr;
  for (int s = 0; s < 3; s++) {
    pb.set_grads(ps, s);
    opt.step();
    ref.step(want, {pb.grad(0, s), pb.grad(1, s)});
    for (size_t p = 0; p < ps.size(); p++) {
      expect_near(ps[p], want[p], cat("step ", s, " param ", p));
      expect_near(opt.m[p], ref.m[p], cat("m, step ", s));
      expect_near(opt.v[p], ref.v[p], cat("v, step ", s));
    }
  }
}

// kernels per step, against the reference (tinygrad 2025-06, CPU=1, params (3,4) and (3,) with realized grads:
// steps 1, 2, 3 ran sgd 3,2,2; momentum 7,4,4; lars 11,8,8; adam 14,10,10; lamb 18,14,14; fused adam 11,8,8;
// fused momentum 5,3,3 kernels). The first step also makes the state buffers; from the second on it is the update.
TEST(Optim, KernelsPerStep) {
  struct Case {
    const char* name;
    std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>&)> make;
    int64_t ref_first, ref_steady;
  };
  std::vector<Case> cases = {
      {"sgd", [](auto& ps) { return boxed(optim::SGD(ps, {.lr = 0.1})); }, 3, 2},
      {"momentum", [](auto& ps) { return boxed(optim::SGD(ps, {.lr = 0.1, .momentum = 0.9})); }, 7, 4},
      {"lars", [](auto& ps) { return boxed(optim::LARS(ps, {.lr = 0.1})); }, 11, 8},
      {"adam", [](auto& ps) { return boxed(optim::Adam(ps, {.lr = 0.1})); }, 14, 10},
      {"lamb", [](auto& ps) { return boxed(optim::LAMB(ps, {.lr = 0.1})); }, 18, 14},
      {"fused adam", [](auto& ps) { return boxed(optim::Adam(ps, {.lr = 0.1, .fused = true})); }, 11, 8},
      {"fused momentum", [](auto& ps) { return boxed(optim::SGD(ps, {.lr = 0.1, .momentum = 0.9, .fused = true})); }, 5,
       3},
  };
  Tensor::train tr;
  for (auto& c : cases) {
    Problem pb;
    std::vector<Tensor> ps = pb.params();
    auto opt = c.make(ps);
    std::vector<int64_t> counts;
    for (int s = 0; s < 3; s++) {
      pb.set_grads(ps, s);
      for (Tensor& p : ps) p.grad()->realize();
      int64_t before = GlobalCounters::kernel_count;
      opt->step();
      counts.push_back(GlobalCounters::kernel_count - before);
    }
    EXPECT_LE(counts[0], c.ref_first) << c.name;
    EXPECT_EQ(counts[1], c.ref_steady) << c.name;
    EXPECT_EQ(counts[2], c.ref_steady) << c.name;
  }
}

// end to end: backward and step fit a least-squares problem
TEST(Optim, FitsALeastSquaresProblem) {
  std::vector<float> xs, ys;
  for (int i = 0; i < 16; i++) {
    float a = std::sin(0.5f * float(i)), b = std::cos(0.3f * float(i));
    xs.push_back(a), xs.push_back(b), ys.push_back(2 * a - 3 * b + 0.5f);
  }
  Tensor X(xs, {16, 2}), Y(ys, {16});
  for (bool adam : {false, true}) {
    Tensor w = Tensor::zeros({2}).contiguous().requires_grad_(true),
           b = Tensor::zeros({1}).contiguous().requires_grad_(true);
    std::unique_ptr<optim::Optimizer> opt =
        adam ? boxed(optim::Adam({w, b}, {.lr = 0.1})) : boxed(optim::SGD({w, b}, {.lr = 0.2, .momentum = 0.5}));
    Tensor::train tr;
    auto loss = [&] { return ((X * w).sum(1) + b - Y).square().mean(); };
    float first = loss().item<float>(), last = first;
    for (int s = 0; s < 60; s++) {
      opt->zero_grad();
      Tensor l = loss();
      l.backward();
      opt->step();
      last = l.item<float>();
    }
    EXPECT_LT(last, first / 100) << (adam ? "adam" : "sgd");
    std::vector<float> got = w.tolist<float>();
    EXPECT_NEAR(got[0], 2, 0.2);
    EXPECT_NEAR(got[1], -3, 0.2);
  }
}

// two parameters made alike (Tensor::ones twice, two LayerNorms' weights) are one graph node until they are given
// their own buffers: each gets its own gradient and its own updates
TEST(Optim, ParamsMadeAlikeStayApart) {
  Tensor::train tr;
  Tensor ca(std::vector<float>{1.f, 2.f, 3.f}, {3}), cb(std::vector<float>{-5.f, 0.f, 5.f}, {3});
  {  // requires_grad at creation
    Tensor w1 = Tensor::ones({3}, {.requires_grad = true}), w2 = Tensor::ones({3}, {.requires_grad = true});
    EXPECT_NE(w1.uop(), w2.uop());
    (w1 * ca + w2 * cb).sum().backward();
    EXPECT_EQ(w1.grad()->tolist<float>(), (std::vector<float>{1, 2, 3}));
    EXPECT_EQ(w2.grad()->tolist<float>(), (std::vector<float>{-5, 0, 5}));
    EXPECT_EQ(w1.tolist<float>(), (std::vector<float>{1, 1, 1}));
  }
  {  // requires_grad set by the optimizer (a LayerNorm's weight is Tensor::ones)
    Tensor w1 = Tensor::ones({3}), w2 = Tensor::ones({3});
    auto opt = optim::SGD({w1, w2}, {.lr = 0.1});
    for (int step = 0; step < 2; step++) {
      opt.zero_grad();
      (w1 * ca + w2 * cb).sum().backward();
      opt.step();
    }
    std::vector<float> g1 = w1.tolist<float>(), g2 = w2.tolist<float>();
    std::vector<float> want1{0.8f, 0.6f, 0.4f}, want2{2.f, 1.f, 0.f};
    for (size_t i = 0; i < 3; i++) {
      EXPECT_NEAR(g1[i], want1[i], 1e-6);
      EXPECT_NEAR(g2[i], want2[i], 1e-6);
    }
  }
  {  // one tensor alone keeps its graph; a tensor reading a buffer is left as it is (its gradient flows on)
    Tensor w = Tensor::ones({3});
    UOp before = w.uop();
    w.requires_grad_(true);
    EXPECT_EQ(w.uop(), before);
    Tensor x = Tensor(std::vector<float>{1.f, 2.f, 3.f}, {3}).realize();
    Tensor y(x.uop(), TensorOptions{});
    y.requires_grad_(true);
    EXPECT_EQ(y.uop(), x.uop());
  }
}
