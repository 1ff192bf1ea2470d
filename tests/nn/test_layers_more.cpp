// more on the layers: bounds of the initializations, strided/dilated/grouped convolutions and the transposed one
// against float64 loops, the norms with their affine params, LSTMCell against the reference's outputs, models
// declared with TG_PARAMS (their state dicts, and training one)
#include <gtest/gtest.h>

#include <cmath>

#include "tinygrad/tinygrad.h"

using namespace tg;
using Vec = std::vector<double>;

namespace {

Vec vals(const Tensor& t) {
  std::vector<float> f = t.cast(dtypes::float32).tolist<float>();
  return Vec(f.begin(), f.end());
}
void expect_near(const Tensor& t, const Vec& want, const std::string& what, double tol = 1e-5) {
  Vec got = vals(t);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); i++)
    EXPECT_NEAR(got[i], want[i], tol + tol * std::abs(want[i])) << what << " [" << i << "]";
}
// a float32 tensor of the given shape with smooth, distinct values
Tensor input(const Shape& shape, double scale = 1.0, double shift = 0.0) {
  std::vector<float> v(static_cast<size_t>(prod(shape)));
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(scale * std::sin(0.37 * double(i) + 0.1) + shift);
  return Tensor(v, shape);
}
std::vector<std::string> keys(const nn::StateDict& sd) { return sd.keys(); }

}  // namespace

TEST(LayerInit, UniformBounds) {  // +-1/sqrt(fan_in), spread over the whole range
  auto check = [](const Tensor& t, double bound, const std::string& what) {
    Vec v = vals(t);
    double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
    EXPECT_GE(lo, -bound) << what;
    EXPECT_LE(hi, bound) << what;
    EXPECT_LT(lo, -0.8 * bound) << what;
    EXPECT_GT(hi, 0.8 * bound) << what;
  };
  nn::Linear l(50, 40);
  check(l.weight, 1 / std::sqrt(50.0), "linear");
  nn::Conv2d c(4, 16, 3, {.groups = 2});
  EXPECT_EQ(c.weight.shape(), (Shape{16, 2, 3, 3}));
  check(c.weight, 1 / std::sqrt(36.0), "conv (fan in counts all input channels, as the reference)");
  nn::ConvTranspose2d ct(4, 16, std::vector<int64_t>{3, 2}, {.groups = 2});
  EXPECT_EQ(ct.weight.shape(), (Shape{4, 8, 3, 2}));
  check(ct.weight, 1 / std::sqrt(24.0), "conv transpose");
  nn::LSTMCell lstm(3, 25);
  check(lstm.weight_hh, 1 / std::sqrt(25.0), "lstm");
  nn::Embedding e(30, 20);
  check(e.weight, std::sqrt(6.0 / 50.0), "embedding");
}

// out[n, o, y, x] = b[o] + sum over the group's channels and the kernel of in * w (stride, padding, dilation)
Vec conv_ref(const Tensor& x, const nn::Conv2d& c, int64_t pad_h, int64_t pad_w) {
  Shape xs = x.shape(), ws = c.weight.shape();
  Vec X = vals(x), W = vals(c.weight), B = c.bias ? vals(*c.bias) : Vec(ws[0], 0.0), out;
  int64_t N = xs[0], C = xs[1], H = xs[2], Wd = xs[3], O = ws[0], Cg = ws[1], KH = ws[2], KW = ws[3];
  int64_t sh = c.opts.stride[0], sw = c.opts.stride.back(), dh = c.opts.dilation[0], dw = c.opts.dilation.back();
  int64_t OH = (H + 2 * pad_h - dh * (KH - 1) - 1) / sh + 1, OW = (Wd + 2 * pad_w - dw * (KW - 1) - 1) / sw + 1;
  for (int64_t n = 0; n < N; n++)
    for (int64_t o = 0; o < O; o++)
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t ox = 0; ox < OW; ox++) {
          double s = B[o];
          int64_t g = o / (O / c.opts.groups);
          for (int64_t ci = 0; ci < Cg; ci++)
            for (int64_t ky = 0; ky < KH; ky++)
              for (int64_t kx = 0; kx < KW; kx++) {
                int64_t iy = oy * sh - pad_h + ky * dh, ix = ox * sw - pad_w + kx * dw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= Wd) continue;
                s += X[((n * C + g * Cg + ci) * H + iy) * Wd + ix] * W[((o * Cg + ci) * KH + ky) * KW + kx];
              }
          out.push_back(s);
        }
  (void)C;
  return out;
}

TEST(LayerForward, Conv2dStridedDilatedGrouped) {
  Tensor x = input({2, 4, 5, 6});
  nn::Conv2d plain(4, 2, 3);
  expect_near(plain(x), conv_ref(x, plain, 0, 0), "conv2d");
  nn::Conv2d strided(4, 6, std::vector<int64_t>{2, 3},
                     {.stride = {2, 1}, .padding = {1}, .dilation = {1, 2}, .groups = 2});
  EXPECT_EQ(strided(x).shape(), (Shape{2, 6, 3, 4}));
  expect_near(strided(x), conv_ref(x, strided, 1, 1), "conv2d strided, padded, dilated, grouped");
  nn::Conv2d same(4, 3, 3, {.padding_same = true, .bias = false});
  EXPECT_EQ(same.opts.padding, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(same(x).shape(), (Shape{2, 3, 5, 6}));
  expect_near(same(x), conv_ref(x, same, 1, 1), "conv2d same");
  EXPECT_EQ(keys(nn::state::get_state_dict(same)), std::vector<std::string>{"weight"});
}

TEST(LayerForward, Conv1dSame) {
  nn::Conv2d c = nn::Conv1d(2, 3, 3, {.padding_same = true});
  EXPECT_EQ(c.weight.shape(), (Shape{3, 2, 3}));
  EXPECT_EQ(c.opts.padding, (std::vector<int64_t>{1, 1}));
  Tensor x = input({2, 2, 7});
  Tensor y = c(x);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 7}));
  // as a 2d conv over (1, 7) with a (1, 3) kernel
  nn::Conv2d c2 = c;
  c2.weight = c.weight.reshape({3, 2, 1, 3});
  expect_near(y, conv_ref(x.reshape({2, 2, 1, 7}), c2, 0, 1), "conv1d");
}

TEST(LayerForward, ConvTranspose2dWhoseWindowsTileTheOutput) {
  // stride == kernel (a 2x2 stride-2 upsampling): each input pixel's block of the output, one matmul over the input
  // channels (no input spread by the stride, s^2 fewer multiply-adds); the values and the input's gradient are the
  // loops' (small integers: exact)
  const int64_t C = 6, CO = 5, H = 4, W = 3;
  std::vector<float> xv(static_cast<size_t>(2 * C * H * W)), wv(static_cast<size_t>(C * CO * 4)), bv(CO);
  for (size_t i = 0; i < xv.size(); i++) xv[i] = static_cast<float>(static_cast<int64_t>((i * 37) % 7) - 3);
  for (size_t i = 0; i < wv.size(); i++) wv[i] = static_cast<float>(static_cast<int64_t>((i * 53) % 5) - 2);
  for (size_t i = 0; i < bv.size(); i++) bv[i] = static_cast<float>(i);
  Tensor x = Tensor(xv, {2, C, H, W}, {.requires_grad = true}), w = Tensor(wv, {C, CO, 2, 2});
  Tensor y = x.conv_transpose2d(w, Tensor(bv, {CO}), {.stride = {2}});
  ASSERT_EQ(y.shape(), (Shape{2, CO, 2 * H, 2 * W}));
  Tensor dx = (y * y).sum().gradient({x})[0];
  std::vector<double> want(static_cast<size_t>(2 * CO * 4 * H * W));
  auto at = [&](int64_t n, int64_t o, int64_t yy, int64_t xx) {
    return static_cast<size_t>(((n * CO + o) * 2 * H + yy) * 2 * W + xx);
  };
  for (int64_t n = 0; n < 2; n++)
    for (int64_t o = 0; o < CO; o++)
      for (int64_t yy = 0; yy < 2 * H; yy++)
        for (int64_t xx = 0; xx < 2 * W; xx++) {
          double s = bv[static_cast<size_t>(o)];
          for (int64_t c = 0; c < C; c++)
            s += xv[static_cast<size_t>(((n * C + c) * H + yy / 2) * W + xx / 2)] *
                 wv[static_cast<size_t>(((c * CO + o) * 2 + yy % 2) * 2 + xx % 2)];
          want[at(n, o, yy, xx)] = s;
        }
  std::vector<float> got = y.tolist<float>(), gx = dx.tolist<float>();
  for (size_t i = 0; i < want.size(); i++) ASSERT_EQ(got[i], static_cast<float>(want[i])) << i;
  for (int64_t n = 0; n < 2; n++)  // d(sum y^2)/dx = sum over x's block of 2 y w
    for (int64_t c = 0; c < C; c++)
      for (int64_t iy = 0; iy < H; iy++)
        for (int64_t ix = 0; ix < W; ix++) {
          double g = 0;
          for (int64_t o = 0; o < CO; o++)
            for (int64_t a = 0; a < 2; a++)
              for (int64_t b = 0; b < 2; b++)
                g += 2 * want[at(n, o, 2 * iy + a, 2 * ix + b)] *
                     wv[static_cast<size_t>(((c * CO + o) * 2 + a) * 2 + b)];
          ASSERT_EQ(gx[static_cast<size_t>(((n * C + c) * H + iy) * W + ix)], static_cast<float>(g));
        }
}

TEST(LayerForward, ConvTranspose2dGrouped) {
  Tensor::manual_seed(7);
  nn::ConvTranspose2d ct(2, 4, 3, {.stride = {2}, .padding = {1}, .groups = 2, .output_padding = {1}});
  Tensor x = input({1, 2, 3, 2});
  Tensor y = ct(x);
  EXPECT_EQ(y.shape(), (Shape{1, 4, 6, 4}));
  // scatter every input pixel through the kernel: out[o, y*s - p + ky, x*s - p + kx] += in[c, y, x] * w[c, o', ky, kx]
  Vec X = vals(x), W = vals(ct.weight), B = vals(*ct.bias), want(4 * 6 * 4);
  for (int o = 0; o < 4; o++)
    for (int i = 0; i < 24; i++) want[o * 24 + i] = B[o];
  for (int c = 0; c < 2; c++)
    for (int og = 0; og < 2; og++)
      for (int iy = 0; iy < 3; iy++)
        for (int ix = 0; ix < 2; ix++)
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
              int oy = iy * 2 - 1 + ky, ox = ix * 2 - 1 + kx, o = c * 2 + og;  // group c holds output channels 2c, 2c+1
              if (oy < 0 || oy >= 6 || ox < 0 || ox >= 4) continue;
              want[(o * 6 + oy) * 4 + ox] += X[(c * 3 + iy) * 2 + ix] * W[((c * 2 + og) * 3 + ky) * 3 + kx];
            }
  expect_near(y, want, "conv transpose");
  nn::ConvTranspose2d t1 = nn::ConvTranspose1d(2, 3, 2, {.stride = {2}});
  EXPECT_EQ(t1(input({1, 2, 5})).shape(), (Shape{1, 3, 10}));
}

TEST(LayerForward, BatchNormAffineEvalAndNoRunningStats) {
  nn::BatchNorm bn(3);
  EXPECT_EQ(keys(nn::state::get_state_dict(bn)),
            (std::vector<std::string>{"weight", "bias", "num_batches_tracked", "running_mean", "running_var"}));
  EXPECT_EQ(bn.num_batches_tracked.dtype(), dtypes::int64);
  EXPECT_EQ(bn.running_mean->requires_grad(), std::optional<bool>(false));
  bn.weight = input({3}, 0.5, 1.0);
  bn.bias = input({3}, 0.2);
  Tensor x = input({4, 3, 2, 2}, 2.0, 0.5);
  Vec X = vals(x), Wt = vals(*bn.weight), Bs = vals(*bn.bias);
  Vec mean(3, 0.0), var(3, 0.0);
  auto at = [&](int n, int c, int i) { return X[(n * 3 + c) * 4 + i]; };
  for (int c = 0; c < 3; c++) {
    for (int n = 0; n < 4; n++)
      for (int i = 0; i < 4; i++) mean[c] += at(n, c, i) / 16;
    for (int n = 0; n < 4; n++)
      for (int i = 0; i < 4; i++) var[c] += (at(n, c, i) - mean[c]) * (at(n, c, i) - mean[c]) / 16;
  }
  auto normed = [&](const Vec& m, const Vec& v) {
    Vec out;
    for (int n = 0; n < 4; n++)
      for (int c = 0; c < 3; c++)
        for (int i = 0; i < 4; i++) out.push_back((at(n, c, i) - m[c]) / std::sqrt(v[c] + 1e-5) * Wt[c] + Bs[c]);
    return out;
  };
  {
    Tensor::train tr;
    Tensor y = bn(x);
    Tensor::realize({y, *bn.running_mean, *bn.running_var, bn.num_batches_tracked});
    expect_near(y, normed(mean, var), "batchnorm, training");
  }
  // running stats: momentum 0.1; the variance scaled by numel/(numel - channels), as the reference
  Vec rm, rv;
  for (int c = 0; c < 3; c++) rm.push_back(0.1 * mean[c]), rv.push_back(0.9 + 0.1 * 48.0 / 45.0 * var[c]);
  expect_near(*bn.running_mean, rm, "running_mean");
  expect_near(*bn.running_var, rv, "running_var");
  EXPECT_EQ(bn.num_batches_tracked.tolist<int64_t>(), std::vector<int64_t>{1});
  // outside training: the running stats
  expect_near(bn(x), normed(rm, rv), "batchnorm, eval");
  // without running stats it always uses the batch's
  nn::BatchNorm2d plain(3, {.affine = false, .track_running_stats = false});
  EXPECT_EQ(keys(nn::state::get_state_dict(plain)), std::vector<std::string>{"num_batches_tracked"});
  Wt = Vec(3, 1.0), Bs = Vec(3, 0.0);
  expect_near(plain(x), normed(mean, var), "batchnorm without running stats");
}

TEST(LayerForward, BatchNormStateStartsUnaliased) {
  // weight and running_var are both ones (one graph), bias and running_mean both zeros: updating the running
  // stats must not touch the affine params, realized or not
  for (bool realize_first : {false, true}) {
    nn::BatchNorm bn(2);
    if (realize_first) Tensor::realize(nn::state::get_parameters(bn));
    Tensor::train tr;
    bn(input({3, 2, 2}, 1.0, 3.0)).realize();
    Tensor::realize({*bn.running_mean, *bn.running_var});
    expect_near(*bn.weight, {1, 1}, "weight");
    expect_near(*bn.bias, {0, 0}, "bias");
    EXPECT_GT(vals(*bn.running_mean)[0], 0.1);
  }
}

// layernorm over the last `inner` elements of each of `outer` rows
Vec layernorm_ref(const Vec& x, size_t inner, double eps) {
  Vec out;
  for (size_t r = 0; r < x.size() / inner; r++) {
    double m = 0, v = 0;
    for (size_t i = 0; i < inner; i++) m += x[r * inner + i] / double(inner);
    for (size_t i = 0; i < inner; i++) v += (x[r * inner + i] - m) * (x[r * inner + i] - m) / double(inner);
    for (size_t i = 0; i < inner; i++) out.push_back((x[r * inner + i] - m) / std::sqrt(v + eps));
  }
  return out;
}

TEST(LayerForward, LayerNormShapesAndAffine) {
  nn::LayerNorm ln(Shape{2, 3});
  ln.weight = input({2, 3}, 0.5, 1.0);
  ln.bias = input({2, 3}, 0.3);
  Tensor x = input({4, 2, 3}, 2.0, 1.0);
  Vec want = layernorm_ref(vals(x), 6, 1e-5), W = vals(*ln.weight), B = vals(*ln.bias);
  for (size_t i = 0; i < want.size(); i++) want[i] = want[i] * W[i % 6] + B[i % 6];
  expect_near(ln(x), want, "layernorm");
  EXPECT_THROW(ln(input({4, 3, 2})), Error);
  nn::LayerNorm plain(3, 1e-3, false);
  EXPECT_TRUE(keys(nn::state::get_state_dict(plain)).empty());
  expect_near(plain(x), layernorm_ref(vals(x), 3, 1e-3), "layernorm without affine");
  // LayerNorm2d normalizes the channels of each pixel
  nn::LayerNorm2d ln2(3);
  Tensor img = input({2, 3, 2, 2}, 1.5);
  Vec xi = vals(img), want2(xi.size());
  for (int n = 0; n < 2; n++)
    for (int p = 0; p < 4; p++) {
      Vec px;
      for (int c = 0; c < 3; c++) px.push_back(xi[(n * 3 + c) * 4 + p]);
      Vec o = layernorm_ref(px, 3, 1e-5);
      for (int c = 0; c < 3; c++) want2[(n * 3 + c) * 4 + p] = o[c];
    }
  expect_near(ln2(img), want2, "layernorm2d");
}

TEST(LayerForward, GroupAndInstanceNormAffine) {
  Tensor x = input({2, 4, 3}, 2.0, 1.0);
  nn::GroupNorm gn(2, 4);
  gn.weight = input({4}, 0.5, 1.0);
  gn.bias = input({4}, 0.3);
  Vec want = layernorm_ref(vals(x), 6, 1e-5), W = vals(*gn.weight), B = vals(*gn.bias);
  for (size_t i = 0; i < want.size(); i++) want[i] = want[i] * W[(i / 3) % 4] + B[(i / 3) % 4];
  expect_near(gn(x), want, "groupnorm");
  nn::InstanceNorm in(4, 1e-5, false);
  EXPECT_TRUE(keys(nn::state::get_state_dict(in)).empty());
  expect_near(in(x), layernorm_ref(vals(x), 3, 1e-5), "instancenorm");
}

TEST(LayerForward, RMSNormDtypes) {
  nn::RMSNorm rms(4);
  rms.weight = input({4}, 0.5, 1.0);
  Tensor x = input({3, 4}, 2.0);
  Vec X = vals(x), W = vals(*rms.weight), want;
  for (int r = 0; r < 3; r++) {
    double ms = 0;
    for (int i = 0; i < 4; i++) ms += X[r * 4 + i] * X[r * 4 + i] / 4;
    for (int i = 0; i < 4; i++) want.push_back(X[r * 4 + i] / std::sqrt(ms + 1e-6) * W[i]);
  }
  expect_near(rms(x), want, "rmsnorm");
  Tensor h = x.cast(dtypes::float16);
  EXPECT_EQ(rms(h).dtype(), dtypes::float32);  // the half result times the float32 weight
  EXPECT_EQ(nn::RMSNorm(4, 1e-6, false)(h).dtype(), dtypes::float16);
}

TEST(LayerForward, LSTMCellAsTheReference) {
  // the reference: Tensor.manual_seed(42); Linear(3, 2); Conv2d(2, 2, 2); ConvTranspose2d(2, 3, 2, stride=2);
  // Embedding(4, 3); cell = LSTMCell(2, 2), then the cell's outputs for x, and again from its (h, c)
  Tensor::manual_seed(42);
  nn::Linear l(3, 2);
  nn::Conv2d c(2, 2, 2);
  nn::ConvTranspose2d ct(2, 3, 2, {.stride = {2}});
  nn::Embedding e(4, 3);
  nn::LSTMCell lstm(2, 2);
  Tensor x = Tensor(std::vector<float>{0.5f, -1.0f, 2.0f, 0.25f}, {2, 2});
  auto [h, c1] = lstm(x);
  expect_near(h, {-0.1710275411605835, -0.14428387582302094, -0.057319678366184235, -0.10107236355543137}, "h");
  expect_near(c1, {-0.3712145686149597, -0.2233865112066269, -0.20886920392513275, -0.14923571050167084}, "c");
  auto [h2, c2] = lstm(x, std::pair{h, c1});
  expect_near(h2, {-0.21159525215625763, -0.21765509247779846, -0.07791626453399658, -0.13890276849269867}, "h2");
  expect_near(c2, {-0.48210468888282776, -0.33390873670578003, -0.2888834774494171, -0.20475052297115326}, "c2");
  EXPECT_EQ(keys(nn::state::get_state_dict(lstm)),
            (std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"}));
  EXPECT_EQ(keys(nn::state::get_state_dict(nn::LSTMCell(2, 2, false))),
            (std::vector<std::string>{"weight_ih", "weight_hh"}));
}

// a model declared with TG_PARAMS: dotted names through nested layers and vectors of them
namespace {
struct Model {
  nn::Conv2d c1{1, 4, 3};
  nn::BatchNorm bn{4};
  std::vector<nn::Linear> layers;
  Model() { layers.emplace_back(16, 8), layers.emplace_back(8, 2); }
  TG_PARAMS(c1, bn, layers)
  Tensor operator()(const Tensor& x) {
    Tensor y = bn(c1(x)).relu().max_pool2d().flatten(1);
    for (auto& l : layers) y = l(y);
    return y;
  }
};
}  // namespace

TEST(Model, StateDictAndLoad) {
  Model m;
  EXPECT_EQ(keys(nn::state::get_state_dict(m)),
            (std::vector<std::string>{"c1.weight", "c1.bias", "bn.weight", "bn.bias", "bn.num_batches_tracked",
                                      "bn.running_mean", "bn.running_var", "layers.0.weight", "layers.0.bias",
                                      "layers.1.weight", "layers.1.bias"}));
  EXPECT_EQ(m(input({2, 1, 6, 6})).shape(), (Shape{2, 2}));
  Model copy;
  nn::state::load_state_dict(copy, nn::state::get_state_dict(m));
  expect_near(copy.layers[1].weight, vals(m.layers[1].weight), "loaded");
}

// end to end: a conv/batchnorm/linear model learns a toy task (label: is the top half brighter than the bottom)
namespace {
struct Tiny {
  nn::Conv2d conv{1, 2, 3, {.stride = {3}}};
  nn::BatchNorm bn{2};
  nn::Linear head{8, 2};
  TG_PARAMS(conv, bn, head)
  Tensor operator()(const Tensor& x) { return head(bn(conv(x)).relu().flatten(1)); }
};
}  // namespace

TEST(Model, Trains) {
  Tensor::manual_seed(3);
  Tiny m;
  auto opt = nn::optim::Adam(nn::state::get_parameters(m), {.lr = 0.05});
  EXPECT_EQ(opt.params.size(), 6u);  // the running stats and the counter are buffers
  EXPECT_EQ(opt.buffers.size(), 3u);
  std::vector<float> xs;
  std::vector<int> ys;
  for (int n = 0; n < 16; n++) {
    int label = n % 2;
    for (int i = 0; i < 36; i++)
      xs.push_back(std::sin(float(n * 36 + i)) * 0.3f + ((i < 18) == (label == 1) ? 1.0f : 0.0f));
    ys.push_back(label);
  }
  Tensor X(xs, {16, 1, 6, 6}), Y(ys, {16});
  Tensor::train tr;
  float first = 0, last = 0;
  for (int s = 0; s < 12; s++) {
    opt.zero_grad();
    Tensor loss = m(X).sparse_categorical_crossentropy(Y);
    loss.backward();
    opt.step();
    (s == 0 ? first : last) = loss.item<float>();
  }
  EXPECT_LT(last, first / 4);
  EXPECT_EQ(m.bn.num_batches_tracked.tolist<int64_t>(), std::vector<int64_t>{12});
}
