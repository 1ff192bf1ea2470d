// Backward of the [nn] methods: Tensor::gradient against central finite differences in float64 (gradcheck.h), and
// the kernel counts of forward + backward graphs against the reference tinygrad (2025-06-12, CPU=1): inputs
// realized with requires_grad=True, loss.backward(), then len(Tensor.schedule(loss, *grads)), noted at each test.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "gradcheck.h"
#include "kernel_count.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using tg::test::expect_grad_matches;
using tg::test::kernels_run_by;

namespace {

struct NNBackward : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
};

std::vector<double> vals(int64_t n, double seed, double scale = 1.0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = scale * std::sin(static_cast<double>(i) * 1.7 + seed);
  return v;
}

Tensor param(int64_t n, const Shape& s, double seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(std::sin(static_cast<double>(i) * 1.7 + seed));
  return Tensor(v, s, {.requires_grad = true}).realize();
}
int64_t realize_all(std::vector<Tensor> ts) {
  return kernels_run_by([&] {
    for (Tensor& t : ts) t.realize();
  });
}

}  // namespace

TEST_F(NNBackward, Conv2d) {
  expect_grad_matches([](const std::vector<Tensor>& x) { return x[0].conv2d(x[1], x[2]); },
                      {vals(2 * 2 * 4 * 4, 0.1), vals(3 * 2 * 2 * 2, 0.2), vals(3, 0.3)},
                      {{2, 2, 4, 4}, {3, 2, 2, 2}, {3}});
  expect_grad_matches(
      [](const std::vector<Tensor>& x) {
        return x[0].conv2d(x[1], std::nullopt, {.groups = 2, .stride = {2}, .dilation = {1, 2}, .padding = {1}});
      },
      {vals(1 * 4 * 5 * 5, 0.4), vals(2 * 2 * 2 * 2, 0.5)}, {{1, 4, 5, 5}, {2, 2, 2, 2}});
}

// conv2d's derivatives come from ConvGrad (a transposed conv for the input, a windowed sum for the weight) through
// CUSTOM_GRAD: every layout and remainder case of it against finite differences
TEST_F(NNBackward, ConvGradientCases) {
  // conv1d, a stride that leaves the input's last element out of every window
  expect_grad_matches([](const std::vector<Tensor>& x) { return x[0].conv2d(x[1], std::nullopt, {.stride = {2}}); },
                      {vals(2 * 3 * 8, 0.1), vals(4 * 3 * 3, 0.2)}, {{2, 3, 8}, {4, 3, 3}});
  // conv3d with dilation and asymmetric padding
  expect_grad_matches(
      [](const std::vector<Tensor>& x) {
        return x[0].conv2d(x[1], std::nullopt, {.dilation = {1, 2, 1}, .padding = {1, 0, 0, 1, 2, 0}});
      },
      {vals(1 * 2 * 4 * 5 * 3, 0.3), vals(3 * 2 * 2 * 2 * 2, 0.4)}, {{1, 2, 4, 5, 3}, {3, 2, 2, 2, 2}});
  // 16 input channels and 2-wide output rows: the weight gradient reads a channels-last copy of x; and with groups
  expect_grad_matches([](const std::vector<Tensor>& x) { return x[0].conv2d(x[1]); },
                      {vals(1 * 16 * 4 * 4, 0.5), vals(2 * 16 * 3 * 3, 0.6)}, {{1, 16, 4, 4}, {2, 16, 3, 3}});
  expect_grad_matches([](const std::vector<Tensor>& x) { return x[0].conv2d(x[1], std::nullopt, {.groups = 2}); },
                      {vals(1 * 32 * 3 * 3, 0.7), vals(2 * 16 * 2 * 2, 0.8)}, {{1, 32, 3, 3}, {2, 16, 2, 2}});
}

// convs big enough for the CPU tiles take ConvGrad's copies (the output gradient realized and padded, a channels-last
// input for the weight gradient, the batch summed in chunks, the transposed weight stored output-channels-last),
// with groups too: both gradients against float64 loops. The stride-1 ungrouped cases (the first and third) take the
// input gradient a kernel row at a time (rows_split: each row's sums shifted into place and added)
TEST_F(NNBackward, ConvGradientTiledLayouts) {
  struct Case {
    int64_t bs, cin, size, cout, k, stride, groups = 1;
  };
  for (Case c : {Case{2, 16, 14, 32, 3, 1}, Case{16, 8, 17, 16, 3, 2}, Case{4, 32, 12, 32, 5, 1},
                 Case{4, 32, 12, 32, 3, 1, 2}}) {
    int64_t o = (c.size - c.k) / c.stride + 1, gin = c.cin / c.groups, gout = c.cout / c.groups;
    std::vector<double> xv = vals(c.bs * c.cin * c.size * c.size, 0.1), wv = vals(c.cout * gin * c.k * c.k, 0.2),
                        gv = vals(c.bs * c.cout * o * o, 0.3);
    std::vector<float> xf(xv.begin(), xv.end()), wf(wv.begin(), wv.end()), gf(gv.begin(), gv.end());
    Tensor x = Tensor(xf, {c.bs, c.cin, c.size, c.size}, {.requires_grad = true}).realize();
    Tensor w = Tensor(wf, {c.cout, gin, c.k, c.k}, {.requires_grad = true}).realize();
    Tensor G = Tensor(gf, {c.bs, c.cout, o, o});
    auto grads = (x.conv2d(w, std::nullopt, {.groups = c.groups, .stride = {c.stride}}) * G).sum().gradient({x, w});
    std::vector<float> dx = grads[0].tolist<float>(), dw = grads[1].tolist<float>();
    std::vector<double> ex(xv.size(), 0.0), ew(wv.size(), 0.0);
    for (int64_t n = 0; n < c.bs; n++)
      for (int64_t co = 0; co < c.cout; co++)
        for (int64_t ci = co / gout * gin; ci < (co / gout + 1) * gin; ci++)  // the input channels of its group
          for (int64_t oy = 0; oy < o; oy++)
            for (int64_t ox = 0; ox < o; ox++)
              for (int64_t ky = 0; ky < c.k; ky++)
                for (int64_t kx = 0; kx < c.k; kx++) {
                  auto xi = static_cast<size_t>(((n * c.cin + ci) * c.size + oy * c.stride + ky) * c.size +
                                                ox * c.stride + kx);
                  auto wi = static_cast<size_t>(((co * gin + ci % gin) * c.k + ky) * c.k + kx);
                  double g = gv[static_cast<size_t>(((n * c.cout + co) * o + oy) * o + ox)];
                  ex[xi] += g * wv[wi];
                  ew[wi] += g * xv[xi];
                }
    for (size_t i = 0; i < ex.size(); i++) ASSERT_NEAR(dx[i], ex[i], 1e-3 * (1 + std::abs(ex[i]))) << "dx " << i;
    for (size_t i = 0; i < ew.size(); i++) ASSERT_NEAR(dw[i], ew[i], 1e-3 * (1 + std::abs(ew[i]))) << "dw " << i;
  }
}

// big convs whose output rows are too short for the CPU tiles' row lanes, or with 16 input channels or more, read a
// copy of the weight with its output channels last (grouped too); the forward against float64 loops
TEST_F(NNBackward, ConvForwardChannelLanes) {
  struct Case {
    int64_t bs, cin, size, cout, groups;
  };
  for (Case c : {Case{4, 32, 12, 32, 1}, Case{4, 32, 12, 64, 2}, Case{2, 64, 8, 64, 1}, Case{4, 32, 10, 32, 1}}) {
    int64_t k = 3, o = c.size - k + 1, gin = c.cin / c.groups, gout = c.cout / c.groups;
    std::vector<double> xv = vals(c.bs * c.cin * c.size * c.size, 0.1), wv = vals(c.cout * gin * k * k, 0.2);
    std::vector<float> xf(xv.begin(), xv.end()), wf(wv.begin(), wv.end());
    Tensor x = Tensor(xf, {c.bs, c.cin, c.size, c.size}, {.requires_grad = true});
    Tensor w = Tensor(wf, {c.cout, gin, k, k}, {.requires_grad = true});
    std::vector<float> y = x.conv2d(w, std::nullopt, {.groups = c.groups}).tolist<float>();
    ASSERT_EQ(y.size(), static_cast<size_t>(c.bs * c.cout * o * o));
    for (int64_t n = 0; n < c.bs; n++)
      for (int64_t co = 0; co < c.cout; co++)
        for (int64_t oy = 0; oy < o; oy++)
          for (int64_t ox = 0; ox < o; ox++) {
            double want = 0;
            for (int64_t ci = 0; ci < gin; ci++)
              for (int64_t ky = 0; ky < k; ky++)
                for (int64_t kx = 0; kx < k; kx++)
                  want += xv[static_cast<size_t>(((n * c.cin + co / gout * gin + ci) * c.size + oy + ky) * c.size + ox +
                                                 kx)] *
                          wv[static_cast<size_t>(((co * gin + ci) * k + ky) * k + kx)];
            size_t i = static_cast<size_t>(((n * c.cout + co) * o + oy) * o + ox);
            ASSERT_NEAR(y[i], want, 1e-3 * (1 + std::abs(want))) << i;
          }
  }
}

// the first conv of an MNIST model: uint8 images, a float weight; only the weight has a gradient
TEST_F(NNBackward, ConvWeightGradientOfIntImages) {
  int64_t bs = 8, n = 28, k = 5, cout = 32, o = n - k + 1;
  std::vector<uint8_t> xs(static_cast<size_t>(bs * n * n));
  for (size_t i = 0; i < xs.size(); i++) xs[i] = static_cast<uint8_t>((i * 2654435761u) >> 24);
  std::vector<double> wv = vals(cout * k * k, 0.2), gv = vals(bs * cout * o * o, 0.3);
  Tensor x = Tensor(xs, {bs, 1, n, n}), w = Tensor(std::vector<float>(wv.begin(), wv.end()), {cout, 1, k, k});
  w.requires_grad_(true);
  Tensor G = Tensor(std::vector<float>(gv.begin(), gv.end()), {bs, cout, o, o});
  std::vector<float> dw = (x.conv2d(w) * G).sum().gradient({w})[0].tolist<float>();
  for (int64_t co = 0; co < cout; co++)
    for (int64_t ky = 0; ky < k; ky++)
      for (int64_t kx = 0; kx < k; kx++) {
        double e = 0, mag = 0;  // float32 sums of 4,608 terms: the tolerance scales with their magnitude
        for (int64_t b = 0; b < bs; b++)
          for (int64_t oy = 0; oy < o; oy++)
            for (int64_t ox = 0; ox < o; ox++) {
              double t = gv[static_cast<size_t>(((b * cout + co) * o + oy) * o + ox)] *
                         xs[static_cast<size_t>((b * n + oy + ky) * n + ox + kx)];
              e += t;
              mag += std::abs(t);
            }
        ASSERT_NEAR(dw[static_cast<size_t>((co * k + ky) * k + kx)], e, 1e-6 * mag);
      }
}

// the gradient of a gradient: ConvGrad's graphs are conv2d calls themselves, so they differentiate again
TEST_F(NNBackward, ConvSecondOrder) {
  expect_grad_matches(
      [](const std::vector<Tensor>& x) {
        Tensor y = x[0].conv2d(x[1], std::nullopt, {.stride = {2}, .padding = {1}});
        return (y * y).sum().gradient({x[0]})[0];
      },
      {vals(1 * 2 * 5 * 5, 0.9), vals(3 * 2 * 3 * 3, 1.0)}, {{1, 2, 5, 5}, {3, 2, 3, 3}});
}

// the weight gradient is the input gradient of nothing: a conv of an input that doesn't need one, and an int conv
TEST_F(NNBackward, ConvOnlyWeightOrNoGradient) {
  Tensor x = Tensor(std::vector<float>(2 * 3 * 5 * 5, 0.5f), {2, 3, 5, 5}), w = param(4 * 3 * 3 * 3, {4, 3, 3, 3}, 0.1);
  x.conv2d(w).sum().backward();
  EXPECT_NEAR(w.grad()->sum().item<float>(), 0.5f * 2 * 9 * 4 * 27, 1e-2);
  EXPECT_FALSE(x.grad().has_value());
  // an empty batch: empty gradients, no division by the batch size
  Tensor xe = Tensor::ones({0, 3, 5, 5}), we = param(4 * 3 * 3 * 3, {4, 3, 3, 3}, 0.2);
  xe.requires_grad_(true);
  std::vector<Tensor> ge = xe.conv2d(we).sum().gradient({xe, we});
  EXPECT_EQ(ge[0].shape(), (Shape{0, 3, 5, 5}));
  EXPECT_EQ(ge[1].tolist<float>(), std::vector<float>(4 * 27, 0.0f));
  Tensor xi = Tensor::ones({1, 2, 4, 4}, {.dtype = dtypes::int32}),
         wi = Tensor::ones({1, 2, 3, 3}, {.dtype = dtypes::int32});
  EXPECT_EQ(xi.conv2d(wi).sum().item<int>(), 4 * 18);
}

TEST_F(NNBackward, ConvTranspose2d) {
  expect_grad_matches(
      [](const std::vector<Tensor>& x) {
        return x[0].conv_transpose2d(x[1], std::nullopt, {.stride = {2}, .padding = {1}});
      },
      {vals(1 * 2 * 3 * 3, 0.1), vals(2 * 2 * 3 * 3, 0.2)}, {{1, 2, 3, 3}, {2, 2, 3, 3}});
}

TEST_F(NNBackward, Pools) {
  std::vector<double> x = vals(1 * 2 * 5 * 5, 0.3);
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].max_pool2d(); }, {x}, {{1, 2, 5, 5}});
  expect_grad_matches(
      [](const std::vector<Tensor>& t) {
        return t[0].max_pool2d({.kernel_size = {3, 3}, .stride = {2}, .padding = {1}, .ceil_mode = true});
      },
      {x}, {{1, 2, 5, 5}});
  expect_grad_matches(
      [](const std::vector<Tensor>& t) {
        return t[0].avg_pool2d({.kernel_size = {3, 3}, .stride = {2}, .padding = {1}, .count_include_pad = false});
      },
      {x}, {{1, 2, 5, 5}});
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].avg_pool2d({.ceil_mode = true}); }, {x},
                      {{1, 2, 5, 5}});
}

TEST_F(NNBackward, Norms) {
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].layernorm(); }, {vals(12, 0.1)}, {{3, 4}});
  expect_grad_matches(
      [](const std::vector<Tensor>& t) {
        Tensor mean = t[0].mean({0, 2}), invstd = (t[0].var({0, 2}) + 1e-5).rsqrt();
        return t[0].batchnorm(t[1], t[2], mean, invstd);
      },
      {vals(2 * 3 * 4, 0.2), vals(3, 0.3), vals(3, 0.4)}, {{2, 3, 4}, {3}, {3}});
}

TEST_F(NNBackward, Losses) {
  Tensor y = Tensor(std::vector<int>{2, 0, 1}, {3});
  std::vector<double> logits = vals(3 * 4, 0.5, 2.0);
  expect_grad_matches([&](const std::vector<Tensor>& t) { return t[0].sparse_categorical_crossentropy(y); }, {logits},
                      {{3, 4}});
  expect_grad_matches(
      [&](const std::vector<Tensor>& t) {
        return t[0].sparse_categorical_crossentropy(y, {.ignore_index = 0, .label_smoothing = 0.1});
      },
      {logits}, {{3, 4}});
  expect_grad_matches([&](const std::vector<Tensor>& t) { return t[0].cross_entropy(y, {.label_smoothing = 0.2}); },
                      {logits}, {{3, 4}});
  expect_grad_matches([&](const std::vector<Tensor>& t) { return t[0].log_softmax().nll_loss(y, t[1]); },
                      {logits, {0.5, 2.0, 1.0, 1.5}}, {{3, 4}, {4}});
  std::vector<double> p{0.2, 0.7, 0.4}, target{0, 1, 1};
  expect_grad_matches([&](const std::vector<Tensor>& t) { return t[0].binary_crossentropy(t[1]); }, {p, target},
                      {{3}, {3}});
  expect_grad_matches([&](const std::vector<Tensor>& t) { return t[0].binary_crossentropy_logits(t[1]); },
                      {vals(3, 0.6, 3.0), target}, {{3}, {3}});
}

TEST_F(NNBackward, CumulativeAndReductions) {
  std::vector<double> x = vals(3 * 4, 0.7);
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].cumsum(1); }, {x}, {{3, 4}});
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].cumprod(0); }, {x}, {{3, 4}});
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].cummax(1); }, {x}, {{3, 4}});
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].logcumsumexp(1); }, {x}, {{3, 4}});
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].logsumexp({1}); }, {x}, {{3, 4}});
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].var({0}); }, {x}, {{3, 4}});
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].std({}, false, 0); }, {x}, {{3, 4}});
}

TEST_F(NNBackward, ProcessingAndAttention) {
  expect_grad_matches(
      [](const std::vector<Tensor>& t) {
        return t[0].interpolate({3, 5});
      },
      {vals(2 * 3, 0.1)}, {{2, 3}});
  expect_grad_matches(
      [](const std::vector<Tensor>& t) {
        return Tensor::einsum("ij,jk->ki", {t[0], t[1]});
      },
      {vals(6, 0.2), vals(6, 0.3)}, {{2, 3}, {3, 2}});
  expect_grad_matches([](const std::vector<Tensor>& t) { return t[0].linear(t[1], t[2]); },
                      {vals(6, 0.4), vals(6, 0.5), vals(3, 0.6)}, {{3, 2}, {2, 3}, {3}});
  expect_grad_matches(
      [](const std::vector<Tensor>& t) {
        return t[0].scaled_dot_product_attention(t[1], t[2], std::nullopt, 0.0, true);
      },
      {vals(2 * 3, 0.7), vals(2 * 3, 0.8), vals(2 * 3, 0.9)}, {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}});
}

// reference: x (2,3,7,7), w (4,3,3,3), b (4) with requires_grad; loss = x.conv2d(w, b).sum(); loss.backward();
// len(Tensor.schedule(loss, x.grad, w.grad, b.grad)) == 5, and with .relu().max_pool2d() after a conv2d with
// stride=2, padding=1: 9
TEST_F(NNBackward, Conv2dKernelCount) {
  Tensor x = param(2 * 3 * 7 * 7, {2, 3, 7, 7}, 0.1), w = param(4 * 3 * 3 * 3, {4, 3, 3, 3}, 0.2),
         b = param(4, {4}, 0.3);
  Tensor loss = x.conv2d(w, b).sum();
  loss.backward();
  EXPECT_LE(realize_all({loss, *x.grad(), *w.grad(), *b.grad()}), 5);
  Tensor x2 = param(2 * 3 * 7 * 7, {2, 3, 7, 7}, 0.4), w2 = param(4 * 3 * 3 * 3, {4, 3, 3, 3}, 0.5),
         b2 = param(4, {4}, 0.6);
  Tensor loss2 = x2.conv2d(w2, b2, {.stride = {2}, .padding = {1}}).relu().max_pool2d().sum();
  loss2.backward();
  EXPECT_LE(realize_all({loss2, *x2.grad(), *w2.grad(), *b2.grad()}), 9);
}

// reference: logits (8,10) with requires_grad, labels 1..8: softmax().sum() then backward: 5 kernels for
// (loss, logits.grad); sparse_categorical_crossentropy, cross_entropy and log_softmax().nll_loss: 8 each
TEST_F(NNBackward, SoftmaxAndCrossEntropyKernelCount) {
  Tensor y = Tensor({1, 2, 3, 4, 5, 6, 7, 8}).realize();
  auto count = [&](const std::function<Tensor(const Tensor&)>& f, double seed) {
    Tensor logits = param(80, {8, 10}, seed);
    Tensor loss = f(logits);
    loss.backward();
    return realize_all({loss, *logits.grad()});
  };
  EXPECT_LE(count([](const Tensor& l) { return l.softmax().sum(); }, 0.1), 5);
  EXPECT_LE(count([&](const Tensor& l) { return l.sparse_categorical_crossentropy(y); }, 0.2), 8);
  EXPECT_LE(count([&](const Tensor& l) { return l.cross_entropy(y); }, 0.3), 8);
  EXPECT_LE(count([&](const Tensor& l) { return l.log_softmax().nll_loss(y); }, 0.4), 8);
}

// reference (same params, loss.backward(), kernels of Tensor.realize(loss, x.grad)): x (2,3,4,6)
// interpolate((5,9)).sum(): 20, with mode="nearest": 9; x (3,4) logcumsumexp(1).sum(): 11, cumsum(1): 3, cumprod(1): 6,
// cummax(1): 6; x (2,4,8) scaled_dot_product_attention(x, x, is_causal=True).sum(): 12
TEST_F(NNBackward, GatherTriangleAndCumulativeKernelCounts) {
  auto count = [&](const std::function<Tensor(const Tensor&)>& f, const Shape& s, double seed) {
    Tensor x = param(prod(s), s, seed);
    Tensor loss = f(x).sum();
    loss.backward();
    return kernels_run_by([&] { Tensor::realize({loss, *x.grad()}); });
  };
  EXPECT_EQ(count([](const Tensor& x) { return x.interpolate({5, 9}); }, {2, 3, 4, 6}, 0.1), 20);
  EXPECT_EQ(count([](const Tensor& x) { return x.interpolate({5, 9}, "nearest"); }, {2, 3, 4, 6}, 0.1), 9);
  EXPECT_EQ(count([](const Tensor& x) { return x.logcumsumexp(1); }, {3, 4}, 0.1), 11);
  EXPECT_EQ(count([](const Tensor& x) { return x.cumsum(1); }, {3, 4}, 0.1), 3);
  EXPECT_EQ(count([](const Tensor& x) { return x.cumprod(1); }, {3, 4}, 0.1), 6);
  EXPECT_EQ(count([](const Tensor& x) { return x.cummax(1); }, {3, 4}, 0.1), 6);
  EXPECT_EQ(count([](const Tensor& x) { return x.scaled_dot_product_attention(x, x, std::nullopt, 0.0, true); },
                  {2, 4, 8}, 0.1),
            12);
}

// WINO=1: 3x3 stride-1 convs as Winograd's F(4x4, 3x3): the direct conv's values (padded, grouped, with a bias, output
// sizes that are no multiple of 4, conv1d and conv3d), its derivatives by finite differences, and the reference's
// four kernels for a conv of realized tensors (test_winograd.py's test_four_kernels)
TEST_F(NNBackward, WinogradConv) {
  struct Case {
    Shape x, w;
    Conv2dOptions o;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{1, 4, 9, 9}, {4, 4, 3, 3}, {}, false},
      {{2, 4, 7, 10}, {6, 2, 3, 3}, {.groups = 2, .padding = {1}}, true},
      {{1, 3, 11}, {2, 3, 3}, {.padding = {2, 0}}, true},
      {{1, 2, 5, 6, 4}, {2, 2, 3, 3, 3}, {.padding = {1}}, false},
  };
  for (const Case& c : cases) {
    Tensor x = param(prod(c.x).as_int(), c.x, 0.1), w = param(prod(c.w).as_int(), c.w, 0.2);
    std::optional<Tensor> b;
    if (c.bias) b = param(c.w[0].as_int(), {c.w[0]}, 0.3);
    std::vector<float> direct = x.conv2d(w, b, c.o).tolist<float>(), wino;
    {
      Context ctx{{"WINO", 1}};
      wino = x.conv2d(w, b, c.o).tolist<float>();
    }
    ASSERT_EQ(direct.size(), wino.size()) << shape_str(c.x);
    for (size_t i = 0; i < direct.size(); i++)  // (the transforms' sums round differently: relative 1e-4)
      EXPECT_NEAR(direct[i], wino[i], 1e-4 * (1 + std::abs(direct[i]))) << shape_str(c.x) << " at " << i;
  }
  Context ctx{{"WINO", 1}};
  expect_grad_matches([](const std::vector<Tensor>& x) { return x[0].conv2d(x[1], x[2], {.padding = {1}}); },
                      {vals(1 * 2 * 5 * 6, 0.4), vals(3 * 2 * 3 * 3, 0.5), vals(3, 0.6)},
                      {{1, 2, 5, 6}, {3, 2, 3, 3}, {3}});
  Tensor x = param(4 * 9 * 9, {1, 4, 9, 9}, 0.7), w = param(4 * 4 * 3 * 3, {4, 4, 3, 3}, 0.8);
  EXPECT_EQ(realize_all({x.conv2d(w)}), 4);
}
