// The [nn] group: reductions (var, argmax, cumsum ...), processing (conv2d, pools, interpolate, einsum) and the nn
// functional methods and losses, each against a plain float64 loop written here. Kernel counts are compared with
// what the reference tinygrad (2025-06-12, CPU=1) schedules for the same graph: len(t.schedule()) with every input
// realized first, as noted at each test.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

struct NN : ::testing::Test {
  void SetUp() override { Device::DEFAULT = "CPU"; }
};

// deterministic distinct values in [-1, 1]: no ties for max/argmax
std::vector<float> values(int64_t n, double seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(std::sin(static_cast<double>(i) * 1.7 + seed));
  return v;
}
std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }
std::vector<double> got(const Tensor& t) { return widen(t.cast(dtypes::float32).tolist<float>()); }

void expect_close(const std::vector<double>& g, const std::vector<double>& want, double tol = 1e-4) {
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); i++) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << "at " << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(g[i], want[i]) << "at " << i;
    } else {
      EXPECT_NEAR(g[i], want[i], tol * (1 + std::abs(want[i]))) << "at " << i;
    }
  }
}

// calls f on every multi-index of shape s, row-major
void for_each_index(const Shape& s, const std::function<void(const std::vector<int64_t>&)>& f) {
  if (prod(s) == 0) return;
  std::vector<int64_t> idx(s.size(), 0);
  while (true) {
    f(idx);
    size_t d = s.size();
    while (d > 0 && ++idx[d - 1] == s[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}
int64_t flat(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t r = 0;
  for (size_t i = 0; i < s.size(); i++) r = r * s[i] + idx[i];
  return r;
}

int64_t kernels_run_by(const std::function<void()>& f) {
  int64_t before = GlobalCounters::kernel_count;
  f();
  return GlobalCounters::kernel_count - before;
}

// *** direct convolution: x (bs, groups*cin, *in), w (cout, cin, *k), pads (before, after) per spatial dim ***
struct ConvArgs {
  int64_t groups = 1;
  std::vector<int64_t> stride, dilation;
  std::vector<std::pair<int64_t, int64_t>> pads;
};
std::vector<double> conv_ref(const std::vector<double>& x, const Shape& xs, const std::vector<double>& w,
                             const Shape& ws, const std::vector<double>* bias, const ConvArgs& a, Shape& out_shape) {
  size_t nd = xs.size() - 2;
  int64_t bs = xs[0], cout = ws[0], cin = ws[1], rcout = cout / a.groups;
  out_shape = {bs, cout};
  for (size_t d = 0; d < nd; d++)
    out_shape.push_back(
        (xs[2 + d] + a.pads[d].first + a.pads[d].second - a.dilation[d] * (ws[2 + d] - 1) - 1) / a.stride[d] + 1);
  Shape ks(ws.begin() + 2, ws.end());
  std::vector<double> out;
  for_each_index(out_shape, [&](const std::vector<int64_t>& o) {
    int64_t n = o[0], co = o[1], g = co / rcout;
    double acc = bias ? (*bias)[static_cast<size_t>(co)] : 0.0;
    for (int64_t ci = 0; ci < cin; ci++)
      for_each_index(ks, [&](const std::vector<int64_t>& k) {
        std::vector<int64_t> xi{n, g * cin + ci};
        for (size_t d = 0; d < nd; d++) {
          int64_t p = o[2 + d] * a.stride[d] + k[d] * a.dilation[d] - a.pads[d].first;
          if (p < 0 || p >= xs[2 + d]) return;
          xi.push_back(p);
        }
        std::vector<int64_t> wi{co, ci};
        wi.insert(wi.end(), k.begin(), k.end());
        acc += x[static_cast<size_t>(flat(xi, xs))] * w[static_cast<size_t>(flat(wi, ws))];
      });
    out.push_back(acc);
  });
  return out;
}

void check_conv(const Shape& xs, const Shape& ws, bool with_bias, const Conv2dOptions& opts, const ConvArgs& a) {
  std::vector<float> xv = values(prod(xs), 0.3), wv = values(prod(ws), 1.1), bv = values(ws[0], 2.9);
  Tensor x(xv, xs), w(wv, ws), b(bv, {ws[0]});
  Tensor out = x.conv2d(w, with_bias ? std::optional<Tensor>(b) : std::nullopt, opts);
  Shape want_shape;
  std::vector<double> bd = widen(bv);
  std::vector<double> want = conv_ref(widen(xv), xs, widen(wv), ws, with_bias ? &bd : nullptr, a, want_shape);
  ASSERT_EQ(out.shape(), want_shape);
  expect_close(got(out), want);
}

}  // namespace

// *** conv2d ***

TEST_F(NN, Conv2dPlainAndWithBias) {
  check_conv({2, 3, 5, 6}, {4, 3, 3, 2}, false, {}, {1, {1, 1}, {1, 1}, {{0, 0}, {0, 0}}});
  check_conv({2, 3, 5, 6}, {4, 3, 3, 2}, true, {}, {1, {1, 1}, {1, 1}, {{0, 0}, {0, 0}}});
}

TEST_F(NN, Conv2dStrideDilationPadding) {
  // one padding value for all sides; stride and dilation per dim
  check_conv({1, 2, 7, 8}, {3, 2, 3, 3}, true, {.stride = {2, 1}, .dilation = {1, 2}, .padding = {1}},
             {1, {2, 1}, {1, 2}, {{1, 1}, {1, 1}}});
  // one padding value per dim: (pad_h, pad_w)
  check_conv({1, 2, 6, 5}, {2, 2, 2, 3}, false, {.stride = {3}, .padding = {2, 1}},
             {1, {3, 3}, {1, 1}, {{2, 2}, {1, 1}}});
  // a pair per side, torch order: (left, right, top, bottom)
  check_conv({1, 1, 5, 5}, {2, 1, 3, 2}, true, {.padding = {0, 2, 1, 3}}, {1, {1, 1}, {1, 1}, {{1, 3}, {0, 2}}});
  // kernel as large as the padded input, stride past the end
  check_conv({1, 1, 3, 3}, {1, 1, 3, 3}, false, {.stride = {5}}, {1, {5, 5}, {1, 1}, {{0, 0}, {0, 0}}});
}

TEST_F(NN, Conv2dGroups) {
  check_conv({2, 4, 5, 5}, {6, 2, 3, 3}, true, {.groups = 2}, {2, {1, 1}, {1, 1}, {{0, 0}, {0, 0}}});
  // depthwise, strided and padded
  check_conv({1, 3, 6, 6}, {3, 1, 3, 3}, false, {.groups = 3, .stride = {2}, .padding = {1}},
             {3, {2, 2}, {1, 1}, {{1, 1}, {1, 1}}});
}

TEST_F(NN, Conv1dAndConv3d) {
  check_conv({2, 3, 9}, {2, 3, 3}, true, {.stride = {2}, .dilation = {2}, .padding = {1}}, {1, {2}, {2}, {{1, 1}}});
  check_conv({1, 2, 4, 5, 3}, {2, 2, 2, 3, 2}, true, {.padding = {1, 0, 0}},
             {1, {1, 1, 1}, {1, 1, 1}, {{1, 1}, {0, 0}, {0, 0}}});
}

TEST_F(NN, Conv2dZeroBatch) {
  Tensor x = Tensor::ones({0, 2, 4, 4}), w = Tensor::ones({3, 2, 3, 3});
  Tensor out = x.conv2d(w);
  EXPECT_EQ(out.shape(), (Shape{0, 3, 2, 2}));
  EXPECT_TRUE(got(out).empty());
}

TEST_F(NN, Conv2dBadInput) {
  Tensor x = Tensor::ones({1, 4, 5, 5});
  try {  // channels don't match groups * weight's cin: the message names both shapes
    x.conv2d(Tensor::ones({2, 3, 3, 3}));
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("(1, 4, 5, 5)"), std::string::npos) << m;
    EXPECT_NE(m.find("(2, 3, 3, 3)"), std::string::npos) << m;
  }
  EXPECT_THROW(x.conv2d(Tensor::ones({2, 2, 3, 3})), Error);                     // groups=1 needs cin 4
  EXPECT_THROW(x.conv2d(Tensor::ones({3, 2, 3, 3}), {}, {.groups = 2}), Error);  // 3 outputs don't split in 2
  EXPECT_THROW(x.conv2d(Tensor::ones({2, 4, 3})), Error);                        // rank mismatch
  EXPECT_THROW(x.conv2d(Tensor::ones({2, 4, 6, 6})), Error);                     // kernel larger than the input
  EXPECT_THROW(x.conv2d(Tensor::ones({2, 4, 3, 3}), {}, {.padding = {1, 2, 3}}), Error);  // 3 pads for 2 dims
  EXPECT_THROW(x.conv2d(Tensor::ones({2, 4, 3, 3}), {}, {.stride = {1, 1, 1}}), Error);
}

// reference: x=Tensor.rand(2,3,7,7), w=Tensor.rand(4,3,3,3), b=Tensor.rand(4) realized;
// len(x.conv2d(w,b).schedule()) == 1, with stride=2, padding=1 also 1, and .relu().max_pool2d() after it 2
TEST_F(NN, Conv2dKernelCount) {
  Tensor x = Tensor(values(2 * 3 * 7 * 7, 0.1), {2, 3, 7, 7}).realize();
  Tensor w = Tensor(values(4 * 3 * 3 * 3, 0.2), {4, 3, 3, 3}).realize();
  Tensor b = Tensor(values(4, 0.3), {4}).realize();
  EXPECT_EQ(kernels_run_by([&] { x.conv2d(w, b).realize(); }), 1);
  EXPECT_EQ(kernels_run_by([&] { x.conv2d(w, b, {.stride = {2}, .padding = {1}}).realize(); }), 1);
  EXPECT_EQ(kernels_run_by([&] { x.conv2d(w, b).relu().max_pool2d().realize(); }), 2);
}

// *** pools: a window loop over the trailing dims of (lead..., *in) ***

namespace {
struct PoolArgs {
  Shape k;
  std::vector<int64_t> stride, dilation;
  std::vector<std::pair<int64_t, int64_t>> pads;
  bool ceil_mode = false;
};
enum class PoolKind { Max, ArgMax, AvgWithPad, AvgNoPad };
std::vector<double> pool_ref(const std::vector<double>& x, const Shape& xs, const PoolArgs& a, PoolKind kind,
                             Shape& out_shape) {
  size_t nd = a.k.size(), nl = xs.size() - nd;
  out_shape = Shape(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(nl));
  Shape in(xs.begin() + static_cast<std::ptrdiff_t>(nl), xs.end());
  for (size_t d = 0; d < nd; d++) {
    int64_t span = in[d] + a.pads[d].first + a.pads[d].second - a.dilation[d] * (a.k[d] - 1) - 1;
    int64_t o = a.ceil_mode ? (span + a.stride[d] - 1) / a.stride[d] + 1 : span / a.stride[d] + 1;
    if (a.ceil_mode && (o - 1) * a.stride[d] >= in[d] + a.pads[d].first) o--;  // no window starts in the padding
    out_shape.push_back(o);
  }
  std::vector<double> out;
  for_each_index(out_shape, [&](const std::vector<int64_t>& o) {
    double best = -std::numeric_limits<double>::infinity(), sum = 0;
    int64_t best_i = -1, in_pad = 0, in_input = 0;
    for_each_index(a.k, [&](const std::vector<int64_t>& k) {
      std::vector<int64_t> xi(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(nl)), sp;
      bool inside = true, padded = true;
      for (size_t d = 0; d < nd; d++) {
        int64_t p = o[nl + d] * a.stride[d] + k[d] * a.dilation[d] - a.pads[d].first;
        inside &= p >= 0 && p < in[d];
        padded &= p >= -a.pads[d].first && p < in[d] + a.pads[d].second;
        sp.push_back(p);
      }
      in_pad += padded;
      if (!inside) return;
      in_input++;
      xi.insert(xi.end(), sp.begin(), sp.end());
      double v = x[static_cast<size_t>(flat(xi, xs))];
      sum += v;
      if (v > best) best = v, best_i = flat(sp, in);
    });
    out.push_back(kind == PoolKind::Max          ? best
                  : kind == PoolKind::ArgMax     ? static_cast<double>(best_i)
                  : kind == PoolKind::AvgWithPad ? sum / static_cast<double>(in_pad)
                                                 : sum / static_cast<double>(in_input));
  });
  return out;
}
std::vector<std::pair<int64_t, int64_t>> same_pads(size_t nd, int64_t p) { return {nd, {p, p}}; }

void check_max_pool(const Shape& xs, const MaxPool2dOptions& opts, const PoolArgs& a) {
  std::vector<float> xv = values(prod(xs), 0.7);
  Tensor x(xv, xs);
  Shape want_shape, idx_shape;
  std::vector<double> want = pool_ref(widen(xv), xs, a, PoolKind::Max, want_shape);
  std::vector<double> want_idx = pool_ref(widen(xv), xs, a, PoolKind::ArgMax, idx_shape);
  Tensor out = x.max_pool2d(opts);
  ASSERT_EQ(out.shape(), want_shape);
  expect_close(got(out), want);
  auto [vals, idx] = x.max_pool2d_with_indices(opts);
  EXPECT_EQ(idx.dtype(), dtypes::int32);
  expect_close(got(vals), want);
  expect_close(got(idx), want_idx);
}
void check_avg_pool(const Shape& xs, const AvgPool2dOptions& opts, const PoolArgs& a) {
  std::vector<float> xv = values(prod(xs), 0.9);
  Shape want_shape;
  std::vector<double> want =
      pool_ref(widen(xv), xs, a, opts.count_include_pad ? PoolKind::AvgWithPad : PoolKind::AvgNoPad, want_shape);
  Tensor out = Tensor(xv, xs).avg_pool2d(opts);
  ASSERT_EQ(out.shape(), want_shape);
  expect_close(got(out), want);
}
}  // namespace

TEST_F(NN, MaxPool2d) {
  check_max_pool({2, 3, 6, 7}, {}, {{2, 2}, {2, 2}, {1, 1}, same_pads(2, 0)});  // the last odd column is dropped
  check_max_pool({1, 2, 7, 7}, {.kernel_size = {3, 3}, .stride = {2}, .padding = {1}},
                 {{3, 3}, {2, 2}, {1, 1}, same_pads(2, 1)});
  check_max_pool({1, 1, 8, 9}, {.kernel_size = {2, 3}, .stride = {1, 2}, .dilation = {2, 1}},
                 {{2, 3}, {1, 2}, {2, 1}, same_pads(2, 0)});
  check_max_pool({1, 1, 5, 6}, {.kernel_size = {2, 2}, .padding = {1, 0, 0, 1}},  // (left, right, top, bottom)
                 {{2, 2}, {2, 2}, {1, 1}, {{0, 1}, {1, 0}}});
}

TEST_F(NN, MaxPool2dCeilMode) {
  check_max_pool({1, 2, 6, 7}, {.kernel_size = {3, 3}, .stride = {2}, .ceil_mode = true},
                 {{3, 3}, {2, 2}, {1, 1}, same_pads(2, 0), true});
  check_max_pool({1, 1, 5, 5}, {.kernel_size = {2, 2}, .ceil_mode = true},
                 {{2, 2}, {2, 2}, {1, 1}, same_pads(2, 0), true});
  // with padding: a window that would start in the padding after the input is not kept
  check_max_pool({1, 1, 6, 6}, {.kernel_size = {3, 3}, .stride = {3}, .padding = {1}, .ceil_mode = true},
                 {{3, 3}, {3, 3}, {1, 1}, same_pads(2, 1), true});
}

TEST_F(NN, MaxPool1dAnd3d) {
  check_max_pool({2, 3, 9}, {.kernel_size = {3}, .stride = {2}, .padding = {1}}, {{3}, {2}, {1}, same_pads(1, 1)});
  check_max_pool({1, 1, 4, 4, 5}, {.kernel_size = {2, 2, 2}}, {{2, 2, 2}, {2, 2, 2}, {1, 1, 1}, same_pads(3, 0)});
}

TEST_F(NN, MaxPoolKeepsIntDtypesAndPadsWithTheMin) {
  Tensor x = Tensor(std::vector<int>{-5, -6, -7, -8, -1, -2, -3, -4, -9}, {1, 1, 3, 3});
  Tensor out = x.max_pool2d({.kernel_size = {2, 2}, .stride = {1}, .padding = {1}});
  EXPECT_EQ(out.dtype(), dtypes::int32);
  EXPECT_EQ(out.tolist<int>(), (std::vector<int>{-5, -5, -6, -7, -5, -1, -1, -2, -3, -1, -1, -2, -3, -3, -4, -9}));
  Tensor b = Tensor({true, false, false, false}).reshape({1, 1, 2, 2}).max_pool2d();
  EXPECT_EQ(b.dtype(), dtypes::bool_);
}

TEST_F(NN, MaxUnpool2dUndoesMaxPool) {
  Shape xs{2, 2, 4, 6};
  std::vector<float> xv = values(prod(xs), 1.3);
  auto [vals, idx] = Tensor(xv, xs).max_pool2d_with_indices();
  Tensor un = vals.max_unpool2d(idx);
  ASSERT_EQ(un.shape(), xs);
  // every pooled max goes back where it came from, the rest is 0
  std::vector<double> want(xv.size(), 0.0), v = got(vals), ix = got(idx);
  for (size_t i = 0; i < v.size(); i++) {
    size_t plane = i / 6;  // 2x3 outputs per (n, c)
    want[plane * 24 + static_cast<size_t>(ix[i])] = v[i];
  }
  expect_close(got(un), want);
  // output_size: the trailing dims are used
  EXPECT_EQ(vals.max_unpool2d(idx, {.output_size = {2, 2, 5, 7}}).shape(), (Shape{2, 2, 5, 7}));
  EXPECT_THROW(vals.max_unpool2d(idx.reshape({2, 2, 6})), Error);
}

TEST_F(NN, AvgPool2d) {
  check_avg_pool({2, 2, 6, 7}, {}, {{2, 2}, {2, 2}, {1, 1}, same_pads(2, 0)});
  check_avg_pool({1, 2, 5, 5}, {.kernel_size = {3, 3}, .stride = {2}, .padding = {1}},
                 {{3, 3}, {2, 2}, {1, 1}, same_pads(2, 1)});
  check_avg_pool({1, 2, 5, 5}, {.kernel_size = {3, 3}, .stride = {2}, .padding = {1}, .count_include_pad = false},
                 {{3, 3}, {2, 2}, {1, 1}, same_pads(2, 1)});
  check_avg_pool({1, 1, 7, 6}, {.kernel_size = {3, 2}, .stride = {2, 2}, .dilation = {2, 1}},
                 {{3, 2}, {2, 2}, {2, 1}, same_pads(2, 0)});
  check_avg_pool({2, 5, 8}, {.kernel_size = {3}, .stride = {2}}, {{3}, {2}, {1}, same_pads(1, 0)});
}

TEST_F(NN, AvgPool2dCeilMode) {
  check_avg_pool({1, 1, 5, 5}, {.kernel_size = {2, 2}, .ceil_mode = true},
                 {{2, 2}, {2, 2}, {1, 1}, same_pads(2, 0), true});
  check_avg_pool({1, 2, 6, 7}, {.kernel_size = {3, 3}, .stride = {2}, .padding = {1}, .ceil_mode = true},
                 {{3, 3}, {2, 2}, {1, 1}, same_pads(2, 1), true});
  check_avg_pool({1, 2, 6, 7},
                 {.kernel_size = {3, 3}, .stride = {2}, .padding = {1}, .ceil_mode = true, .count_include_pad = false},
                 {{3, 3}, {2, 2}, {1, 1}, same_pads(2, 1), true});
}

TEST_F(NN, PoolBadInput) {
  Tensor x = Tensor::ones({1, 1, 4, 4});
  EXPECT_THROW(x.max_pool2d({.kernel_size = {5, 5}}), Error);
  EXPECT_THROW(x.avg_pool2d({.kernel_size = {2, 2}, .stride = {1, 1, 1}}), Error);
  EXPECT_THROW(x.max_pool2d({.kernel_size = {2, 2, 2, 2, 2}}), Error);
  EXPECT_THROW(x.avg_pool2d({.kernel_size = {2, 2}, .padding = {1, 1, 1}}), Error);
}

// *** batchnorm, layernorm, losses ***

TEST_F(NN, Batchnorm) {
  Shape xs{2, 3, 2, 2};
  std::vector<float> xv = values(prod(xs), 0.4), w = values(3, 1.0), b = values(3, 2.0), m = values(3, 3.0);
  std::vector<float> inv{0.5f, 2.0f, 1.5f};
  Tensor x(xv, xs), W(w, {3}), B(b, {3}), M(m, {3}), I(inv, {3});
  std::vector<double> want, plain;
  for_each_index(xs, [&](const std::vector<int64_t>& i) {
    size_t c = static_cast<size_t>(i[1]);
    double v = xv[static_cast<size_t>(flat(i, xs))];
    want.push_back((v - m[c]) * w[c] * inv[c] + b[c]);
    plain.push_back((v - m[c]) * inv[c]);
  });
  expect_close(got(x.batchnorm(W, B, M, I)), want);
  expect_close(got(x.batchnorm(std::nullopt, std::nullopt, M, I)), plain);
  // an invstd without the stats' rank broadcasts as it is
  expect_close(got(x.batchnorm(std::nullopt, std::nullopt, M, Tensor(2.0f))), [&] {
    std::vector<double> r;
    for_each_index(xs, [&](const std::vector<int64_t>& i) {
      r.push_back((xv[static_cast<size_t>(flat(i, xs))] - m[static_cast<size_t>(i[1])]) * 2.0);
    });
    return r;
  }());
  // the stats along the last axis
  Tensor y(values(6, 0.5), {2, 3});
  EXPECT_EQ(y.batchnorm(std::nullopt, std::nullopt, M, I, {-1}).shape(), (Shape{2, 3}));
  EXPECT_THROW(x.batchnorm(std::nullopt, std::nullopt, Tensor::ones({4}), I), Error);
}

TEST_F(NN, Layernorm) {
  Shape xs{3, 4};
  std::vector<float> xv = values(12, 0.8);
  std::vector<double> want;
  for (int r = 0; r < 3; r++) {
    double mean = 0, var = 0;
    for (int c = 0; c < 4; c++) mean += xv[r * 4 + c] / 4.0;
    for (int c = 0; c < 4; c++) var += (xv[r * 4 + c] - mean) * (xv[r * 4 + c] - mean) / 4.0;
    for (int c = 0; c < 4; c++) want.push_back((xv[r * 4 + c] - mean) / std::sqrt(var + 1e-5));
  }
  expect_close(got(Tensor(xv, xs).layernorm()), want);
  // over both axes
  double mean = 0, var = 0;
  for (float v : xv) mean += v / 12.0;
  for (float v : xv) var += (v - mean) * (v - mean) / 12.0;
  std::vector<double> all;
  for (float v : xv) all.push_back((v - mean) / std::sqrt(var + 0.1));
  expect_close(got(Tensor(xv, xs).layernorm({0, 1}, 0.1)), all);
}

namespace {
// -log_softmax(logits)[n, y[n]] with label smoothing, the mean over the labels that aren't ignored
double sce_ref(const std::vector<float>& logits, int64_t n, int64_t c, const std::vector<int>& y, double smoothing,
               int ignore, const std::string& reduction, std::vector<double>* per_sample = nullptr) {
  double total = 0;
  int64_t counted = 0;
  for (int64_t i = 0; i < n; i++) {
    double mx = -1e300, se = 0, mean_lp = 0;
    for (int64_t j = 0; j < c; j++) mx = std::max(mx, double(logits[i * c + j]));
    for (int64_t j = 0; j < c; j++) se += std::exp(logits[i * c + j] - mx);
    for (int64_t j = 0; j < c; j++) mean_lp += (logits[i * c + j] - mx - std::log(se)) / double(c);
    bool keep = ignore == -1 || y[i] != ignore;
    double lp = keep ? logits[i * c + y[i]] - mx - std::log(se) : 0.0;
    double loss = keep ? -((1 - smoothing) * lp + smoothing * mean_lp) : 0.0;
    if (per_sample) per_sample->push_back(loss);
    total += loss, counted += keep;
  }
  return reduction == "mean" ? total / double(counted) : total;
}
}  // namespace

TEST_F(NN, SparseCategoricalCrossentropy) {
  std::vector<float> logits = values(5 * 4, 0.6);
  for (float& v : logits) v *= 3;
  std::vector<int> y{0, 3, 1, 3, 2};
  Tensor X(logits, {5, 4}), Y(y, {5});
  EXPECT_NEAR(X.sparse_categorical_crossentropy(Y).item<float>(), sce_ref(logits, 5, 4, y, 0, -1, "mean"), 1e-5);
  EXPECT_NEAR(X.sparse_categorical_crossentropy(Y, {.reduction = "sum"}).item<float>(),
              sce_ref(logits, 5, 4, y, 0, -1, "sum"), 1e-5);
  std::vector<double> per;
  sce_ref(logits, 5, 4, y, 0.2, 3, "none", &per);
  Tensor none = X.sparse_categorical_crossentropy(Y, {.ignore_index = 3, .label_smoothing = 0.2, .reduction = "none"});
  EXPECT_EQ(none.shape(), (Shape{5}));
  expect_close(got(none), per);
  EXPECT_NEAR(X.sparse_categorical_crossentropy(Y, {.ignore_index = 3, .label_smoothing = 0.2}).item<float>(),
              sce_ref(logits, 5, 4, y, 0.2, 3, "mean"), 1e-5);
  // labels with batch dims: (2, 3, C) logits and (2, 3) labels
  Tensor X3 = Tensor(values(2 * 3 * 4, 0.1), {2, 3, 4});
  Tensor Y3 = Tensor(std::vector<int>{1, 0, 3, 2, 2, 1}, {2, 3});
  EXPECT_NEAR(X3.sparse_categorical_crossentropy(Y3).item<float>(),
              X3.reshape({6, 4}).sparse_categorical_crossentropy(Y3.reshape({6})).item<float>(), 1e-6);
  EXPECT_THROW(X.sparse_categorical_crossentropy(Y, {.label_smoothing = 1.5}), Error);
  EXPECT_THROW(X.sparse_categorical_crossentropy(Y, {.reduction = "max"}), Error);
  EXPECT_THROW(X.sparse_categorical_crossentropy(Tensor(std::vector<int>{1, 2}, {2})), Error);
  EXPECT_THROW(X.sparse_categorical_crossentropy(Tensor(std::vector<float>(5, 1.0f), {5})), Error);
}
