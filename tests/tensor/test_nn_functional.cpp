// The [nn] group: reductions (var, argmax, cumsum ...), processing (conv2d, pools, interpolate, einsum) and the nn
// functional methods and losses, each against a plain float64 loop written here. Kernel counts are compared with
// what the reference tinygrad (2025-06-12, CPU=1) schedules for the same graph: len(t.schedule()) with every input
// realized first, as noted at each test.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "kernel_count.h"
#include "scoped_env.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;
using tg::test::kernels_run_by;

namespace {

struct NN : ::testing::Test {
  void SetUp() override { Device::DEFAULT.reset(); }  // the env's choice (DEV=...): these run on every device
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
  // labels broadcast with the logits' batch shape, as the reference multiplies them: one row of logits, two labels
  Tensor row = X[0], two(std::vector<int>{1, 3}, {2});
  EXPECT_NEAR(
      row.sparse_categorical_crossentropy(two, {.label_smoothing = 0.1}).item<float>(),
      row.reshape({1, 4}).expand({2, 4}).sparse_categorical_crossentropy(two, {.label_smoothing = 0.1}).item<float>(),
      1e-6);
  EXPECT_THROW(X.sparse_categorical_crossentropy(Y, {.label_smoothing = 1.5}), Error);
  EXPECT_THROW(X.sparse_categorical_crossentropy(Y, {.reduction = "max"}), Error);
  EXPECT_THROW(X.sparse_categorical_crossentropy(Tensor(std::vector<int>{1, 2}, {2})), Error);
  EXPECT_THROW(X.sparse_categorical_crossentropy(Tensor(std::vector<float>(5, 1.0f), {5})), Error);
}

// *** reductions ***

TEST_F(NN, AnyAll) {
  Tensor b = Tensor({true, false, false, true, true, true}).reshape({2, 3});
  EXPECT_EQ(b.any().item<bool>(), true);
  EXPECT_EQ(b.all().item<bool>(), false);
  EXPECT_EQ(b.any({0}).tolist<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(b.all({1}, true).tolist<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(b.all({1}, true).shape(), (Shape{2, 1}));
  Tensor f = Tensor(std::vector<float>{0, 2, 0, 0}, {2, 2});  // nonzero is true
  EXPECT_EQ(f.any({1}).tolist<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(Tensor::ones({0}).any().item<bool>(), false);  // over nothing: any is false, all is true
  EXPECT_EQ(Tensor::ones({0}).all().item<bool>(), true);
}

TEST_F(NN, VarStdAndTheirMeans) {
  std::vector<float> xv = values(12, 0.2);
  Tensor x(xv, {3, 4});
  auto ref = [&](int axis, double correction) {  // per row (axis 1) or per column (axis 0)
    std::vector<double> out;
    int outer = axis == 1 ? 3 : 4, inner = axis == 1 ? 4 : 3;
    for (int o = 0; o < outer; o++) {
      double m = 0, ss = 0;
      auto at = [&](int i) { return double(axis == 1 ? xv[o * 4 + i] : xv[i * 4 + o]); };
      for (int i = 0; i < inner; i++) m += at(i) / inner;
      for (int i = 0; i < inner; i++) ss += (at(i) - m) * (at(i) - m);
      out.push_back(ss / std::max(0.0, inner - correction));
    }
    return out;
  };
  expect_close(got(x.var({1})), ref(1, 1));
  expect_close(got(x.var({0}, false, 0)), ref(0, 0));
  std::vector<double> s = ref(1, 2);
  for (double& v : s) v = std::sqrt(v);
  expect_close(got(x.std({-1}, true, 2)), s);
  EXPECT_EQ(x.std({-1}, true, 2).shape(), (Shape{3, 1}));
  auto [var, mean] = x.var_mean({1});
  expect_close(got(var), ref(1, 1));
  expect_close(got(mean), got(x.mean(1)));
  auto [sd, mean2] = x.std_mean();
  EXPECT_EQ(sd.shape(), Shape{});
  EXPECT_EQ(mean2.shape(), Shape{});
  // a correction as large as the count divides by 0 (inf), as the reference
  EXPECT_TRUE(std::isinf(Tensor({1.0f, 2.0f}).var({}, false, 5).item<float>()));
  EXPECT_EQ(Tensor({1, 2, 3, 4}).var().dtype(), dtypes::float32);  // ints give floats
}

TEST_F(NN, ArgmaxArgmin) {
  Tensor t = Tensor(std::vector<float>{1, 5, 5, 0, 7, 2, 7, -1, 3}, {3, 3});
  EXPECT_EQ(t.argmax().item<int>(), 4);  // the first of the ties in the flattened tensor
  EXPECT_EQ(t.argmax().dtype(), dtypes::int32);
  EXPECT_EQ(t.argmax(1).tolist<int>(), (std::vector<int>{1, 1, 0}));
  EXPECT_EQ(t.argmax(0, true).tolist<int>(), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(t.argmax(0, true).shape(), (Shape{1, 3}));
  EXPECT_EQ(t.argmin(-1).tolist<int>(), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(t.argmin().item<int>(), 7);
  EXPECT_EQ(Tensor({3, -2, 9, 9}).argmax().item<int>(), 2);  // ints
  EXPECT_EQ(Tensor({true, false}).argmin().item<int>(), 1);  // bools
  EXPECT_THROW(t.argmax(2), Error);
}

TEST_F(NN, Logsumexp) {
  std::vector<float> xv = values(6, 0.5);
  for (float& v : xv) v *= 50;  // large enough that a naive sum of exp would overflow float32
  Tensor x(xv, {2, 3});
  std::vector<double> rows;
  for (int r = 0; r < 2; r++) {
    double m = std::max({xv[r * 3], xv[r * 3 + 1], xv[r * 3 + 2]}), s = 0;
    for (int c = 0; c < 3; c++) s += std::exp(xv[r * 3 + c] - m);
    rows.push_back(std::log(s) + m);
  }
  expect_close(got(x.logsumexp({1})), rows);
  EXPECT_EQ(x.logsumexp({1}, true).shape(), (Shape{2, 1}));  // NOTE: the reference gives (2, 2) here
  expect_close(got(x.logsumexp({1}, true)), rows);
  double m = *std::max_element(xv.begin(), xv.end()), s = 0;
  for (float v : xv) s += std::exp(v - m);
  expect_close(got(x.logsumexp()), {std::log(s) + m});
}

namespace {
// the running op along axis of a (rows, cols) matrix
std::vector<double> running(const std::vector<double>& x, int64_t rows, int64_t cols, int axis,
                            const std::function<double(double, double)>& f) {
  std::vector<double> out(x);
  if (axis == 1)
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = 1; c < cols; c++) out[r * cols + c] = f(out[r * cols + c - 1], x[r * cols + c]);
  else
    for (int64_t r = 1; r < rows; r++)
      for (int64_t c = 0; c < cols; c++) out[r * cols + c] = f(out[(r - 1) * cols + c], x[r * cols + c]);
  return out;
}
}  // namespace

TEST_F(NN, CumsumCumprodCummax) {
  std::vector<float> xv = values(12, 0.9);
  Tensor x(xv, {3, 4});
  std::vector<double> xd = widen(xv);
  auto add = [](double a, double b) { return a + b; };
  auto mul = [](double a, double b) { return a * b; };
  auto mx = [](double a, double b) { return std::max(a, b); };
  expect_close(got(x.cumsum()), running(xd, 3, 4, 0, add));
  expect_close(got(x.cumsum(1)), running(xd, 3, 4, 1, add));
  expect_close(got(x.cumprod(-1)), running(xd, 3, 4, 1, mul));
  expect_close(got(x.cumprod(0)), running(xd, 3, 4, 0, mul));
  expect_close(got(x.cummax(1)), running(xd, 3, 4, 1, mx));
  expect_close(got(x.cummax()), running(xd, 3, 4, 0, mx));
  // ints: the sum accumulates in int, max pads with the dtype's min
  Tensor i = Tensor(std::vector<int>{-3, -9, -1, -7}, {4});
  EXPECT_EQ(i.cumsum().tolist<int>(), (std::vector<int>{-3, -12, -13, -20}));
  EXPECT_EQ(i.cummax().tolist<int>(), (std::vector<int>{-3, -3, -1, -1}));
  EXPECT_EQ(Tensor({true, true, false}).cumsum().tolist<int>(), (std::vector<int>{1, 2, 2}));
  // 0-size and 0-d tensors come back as they are
  EXPECT_EQ(Tensor::ones({2, 0}).cumsum(1).shape(), (Shape{2, 0}));
  EXPECT_EQ(Tensor(3.0f).cumsum().item<float>(), 3.0f);
}

TEST_F(NN, CumsumOfALongAxisGoesInTwoStages) {  // > 512 elements: blocks of 256, then the blocks' totals
  std::vector<float> xv(2 * 600);
  for (size_t i = 0; i < xv.size(); i++) xv[i] = static_cast<float>(i % 7) - 3.0f;
  Tensor x(xv, {2, 600});
  expect_close(got(x.cumsum(1)), running(widen(xv), 2, 600, 1, [](double a, double b) { return a + b; }));
  expect_close(got(x.cummax(1)), running(widen(xv), 2, 600, 1, [](double a, double b) { return std::max(a, b); }));
  // along axis 0 of the (600, 2) transpose: the same numbers, transposed back
  expect_close(got(x.T().cumsum(0).T().contiguous()),
               running(widen(xv), 2, 600, 1, [](double a, double b) { return a + b; }));
}

TEST_F(NN, Logcumsumexp) {
  std::vector<float> xv = values(8, 0.3);
  Tensor x(xv, {2, 4});
  auto lse = [](double a, double b) { return std::max(a, b) + std::log1p(std::exp(-std::abs(a - b))); };
  expect_close(got(x.logcumsumexp(1)), running(widen(xv), 2, 4, 1, lse));
  expect_close(got(x.logcumsumexp()), running(widen(xv), 2, 4, 0, lse));
  EXPECT_EQ(Tensor(2.0f).logcumsumexp().item<float>(), 2.0f);
}

TEST_F(NN, SumProdSoftmaxTakeADtype) {
  Tensor h = Tensor(std::vector<float>{1, 2, 3}, {3}, {.dtype = dtypes::float16});
  EXPECT_EQ(h.sum().dtype(), dtypes::float16);
  EXPECT_EQ(h.sum({}, false, dtypes::float32).dtype(), dtypes::float32);
  EXPECT_EQ(Tensor({1, 2, 3}).sum().dtype(), dtypes::int32);
  Tensor i8 = Tensor(std::vector<int>{100, 100, 100}, {3}, {.dtype = dtypes::int8});
  EXPECT_EQ(i8.sum().item<int>(), 300);  // accumulates in int32
  EXPECT_EQ(i8.sum({}, false, dtypes::int16).dtype(), dtypes::int16);
  EXPECT_EQ(i8.prod({}, false, dtypes::int32).item<int>(), 1000000);
  Tensor x = Tensor(values(6, 0.1), {2, 3});
  EXPECT_EQ(x.softmax(-1, dtypes::float64).dtype(), dtypes::float64);
  EXPECT_EQ(x.log_softmax(-1, dtypes::float16).dtype(), dtypes::float16);
  EXPECT_EQ(x.matmul(Tensor(values(3, 0.2), {3}), dtypes::float64).dtype(), dtypes::float64);
}

// *** conv_transpose2d: every input pixel scatters its kernel-weighted copy into the output ***

namespace {
std::vector<double> conv_transpose_ref(const std::vector<double>& x, const Shape& xs, const std::vector<double>& w,
                                       const Shape& ws, int64_t groups, const std::vector<int64_t>& stride,
                                       const std::vector<int64_t>& dilation,
                                       const std::vector<std::pair<int64_t, int64_t>>& pads,
                                       const std::vector<int64_t>& out_pad, Shape& out_shape) {
  size_t nd = xs.size() - 2;
  int64_t cin_g = ws[0] / groups, rcout = ws[1];
  out_shape = {xs[0], rcout * groups};
  for (size_t d = 0; d < nd; d++)
    out_shape.push_back((xs[2 + d] - 1) * stride[d] - pads[d].first - pads[d].second + dilation[d] * (ws[2 + d] - 1) +
                        out_pad[d] + 1);
  std::vector<double> out(static_cast<size_t>(prod(out_shape)), 0.0);
  Shape ks(ws.begin() + 2, ws.end());
  for_each_index(xs, [&](const std::vector<int64_t>& xi) {
    int64_t ci = xi[1], g = ci / cin_g;
    for (int64_t co = 0; co < rcout; co++)
      for_each_index(ks, [&](const std::vector<int64_t>& k) {
        std::vector<int64_t> oi{xi[0], g * rcout + co};
        for (size_t d = 0; d < nd; d++) {
          int64_t p = xi[2 + d] * stride[d] + k[d] * dilation[d] - pads[d].first;
          if (p < 0 || p >= out_shape[2 + d]) return;
          oi.push_back(p);
        }
        std::vector<int64_t> wi{ci, co};
        wi.insert(wi.end(), k.begin(), k.end());
        out[static_cast<size_t>(flat(oi, out_shape))] +=
            x[static_cast<size_t>(flat(xi, xs))] * w[static_cast<size_t>(flat(wi, ws))];
      });
  });
  return out;
}
void check_conv_transpose(const Shape& xs, const Shape& ws, const ConvTranspose2dOptions& o,
                          const std::vector<std::pair<int64_t, int64_t>>& pads) {
  size_t nd = xs.size() - 2;
  std::vector<float> xv = values(prod(xs), 0.4), wv = values(prod(ws), 1.9);
  auto full = [&](const std::vector<int64_t>& v) { return v.size() == 1 ? std::vector<int64_t>(nd, v[0]) : v; };
  Shape want_shape;
  std::vector<double> want = conv_transpose_ref(widen(xv), xs, widen(wv), ws, o.groups, full(o.stride),
                                                full(o.dilation), pads, full(o.output_padding), want_shape);
  Tensor out = Tensor(xv, xs).conv_transpose2d(Tensor(wv, ws), std::nullopt, o);
  ASSERT_EQ(out.shape(), want_shape);
  expect_close(got(out), want);
}
}  // namespace

TEST_F(NN, ConvTranspose2d) {
  check_conv_transpose({2, 3, 4, 5}, {3, 2, 3, 3}, {}, {{0, 0}, {0, 0}});
  check_conv_transpose({1, 2, 3, 4}, {2, 3, 3, 2}, {.stride = {2}, .padding = {1}}, {{1, 1}, {1, 1}});
  check_conv_transpose({1, 2, 3, 3}, {2, 1, 2, 3},
                       {.stride = {2, 3}, .dilation = {2, 1}, .padding = {0, 1}, .output_padding = {1}},
                       {{0, 0}, {1, 1}});
  check_conv_transpose({1, 4, 3, 3}, {4, 1, 3, 3}, {.groups = 2, .stride = {2}}, {{0, 0}, {0, 0}});
  check_conv_transpose({2, 2, 5}, {2, 3, 4}, {.stride = {3}, .padding = {2}}, {{2, 2}});  // 1d
  // bias: once per output channel
  Tensor x = Tensor::ones({1, 1, 2, 2}), w = Tensor::ones({1, 2, 1, 1});
  EXPECT_EQ(x.conv_transpose2d(w, Tensor({1.0f, -1.0f})).tolist<float>(), (std::vector<float>{2, 2, 2, 2, 0, 0, 0, 0}));
  EXPECT_THROW(x.conv_transpose2d(Tensor::ones({3, 2, 1, 1})), Error);
}

// *** interpolate: each trailing dim resampled on its own, the last dim first ***

namespace {
std::vector<double> resample(const std::vector<double>& x, const Shape& xs, size_t dim, int64_t out,
                             const std::string& mode, bool align_corners, Shape& os) {
  os = xs;
  os[dim] = out;
  int64_t in = xs[dim], ac = align_corners;
  double scale = double(in - ac) / double(out - ac);
  std::vector<double> r;
  for_each_index(os, [&](const std::vector<int64_t>& i) {
    auto at = [&](int64_t p) {
      std::vector<int64_t> j = i;
      j[dim] = p;
      return x[static_cast<size_t>(flat(j, xs))];
    };
    double o = double(i[dim]);
    if (mode == "linear") {
      double src = std::clamp(align_corners ? scale * o : scale * (o + 0.5) - 0.5, 0.0, double(in - 1));
      double lo = std::floor(src), hi = std::ceil(src);
      r.push_back(at(int64_t(lo)) + (at(int64_t(hi)) - at(int64_t(lo))) * (src - lo));
    } else {
      r.push_back(at(int64_t(mode == "nearest" ? scale * o : scale * (o + 0.5))));
    }
  });
  return r;
}
void check_interpolate(const Shape& xs, const Shape& size, const std::string& mode, bool align_corners = false) {
  std::vector<float> xv = values(prod(xs), 0.2);
  std::vector<double> want = widen(xv);
  Shape s = xs;
  for (size_t k = 1; k <= size.size(); k++) {
    Shape os;
    want = resample(want, s, s.size() - k, size[size.size() - k], mode, align_corners, os);
    s = os;
  }
  Tensor out = Tensor(xv, xs).interpolate(size, mode, align_corners);
  ASSERT_EQ(out.shape(), s);
  expect_close(got(out), want);
}
}  // namespace

TEST_F(NN, Interpolate) {
  check_interpolate({1, 2, 3, 4}, {5, 7}, "linear");  // bilinear, up
  check_interpolate({2, 3, 4}, {7, 2}, "linear", true);
  check_interpolate({1, 2, 3, 4}, {6, 3}, "nearest");
  check_interpolate({1, 2, 5, 3}, {2, 7}, "nearest-exact");
  check_interpolate({1, 2, 3, 2}, {3, 2, 3}, "linear");  // trilinear, and down in one dim
  check_interpolate({7}, {3}, "nearest");                // no batch dims
  // an int image stays int: uint8 goes through the reference's 7-bit fixed point
  Tensor u = Tensor(std::vector<int>{0, 100, 200, 250}, {1, 4}, {.dtype = dtypes::uint8});
  Tensor up = u.interpolate({1, 7});
  EXPECT_EQ(up.dtype(), dtypes::uint8);
  Shape us;
  std::vector<double> want = resample({0, 100, 200, 250}, {1, 4}, 1, 7, "linear", false, us);
  std::vector<double> g = got(up);
  for (size_t i = 0; i < g.size(); i++) EXPECT_NEAR(g[i], want[i], 1.0) << i;
  EXPECT_THROW(u.interpolate({1, 2, 3}), Error);
  EXPECT_THROW(u.interpolate({4}, "cubic"), Error);
  EXPECT_THROW(u.interpolate({4}, "nearest", true), Error);
}

// *** einsum ***

TEST_F(NN, Einsum) {
  std::vector<float> av = values(6, 0.1), bv = values(12, 0.2), cv = values(8, 0.3);
  Tensor a(av, {2, 3}), b(bv, {3, 4}), c(cv, {4, 2});
  auto A = [&](int i, int j) { return double(av[i * 3 + j]); };
  auto B = [&](int i, int j) { return double(bv[i * 4 + j]); };
  auto C = [&](int i, int j) { return double(cv[i * 2 + j]); };
  std::vector<double> ab, abc, at;
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) {
      double s = 0;
      for (int j = 0; j < 3; j++) s += A(i, j) * B(j, k);
      ab.push_back(s);
    }
  for (int i = 0; i < 2; i++)
    for (int l = 0; l < 2; l++) {
      double s = 0;
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++) s += A(i, j) * B(j, k) * C(k, l);
      abc.push_back(s);
    }
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < 2; i++) at.push_back(A(i, j));
  expect_close(got(Tensor::einsum("ij,jk->ik", {a, b})), ab);
  expect_close(got(Tensor::einsum("ij, jk", {a, b})), ab);  // implicit output: the letters seen once, sorted
  expect_close(got(Tensor::einsum("ij,jk,kl->il", {a, b, c})), abc);
  expect_close(got(Tensor::einsum("ij->ji", {a})), at);
  double total = 0;
  for (float v : av) total += v;
  expect_close(got(Tensor::einsum("ij->", {a})), {total});
  // a transposed output of a product: "ij,jk->ki"
  std::vector<double> abt;
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 2; i++) abt.push_back(ab[static_cast<size_t>(i * 4 + k)]);
  expect_close(got(Tensor::einsum("ij,jk->ki", {a, b})), abt);
  // ellipsis: batch dims, broadcast from the right
  Tensor ba = Tensor(values(2 * 2 * 3, 0.4), {2, 2, 3});
  Tensor out = Tensor::einsum("...ij,jk->...ik", {ba, b});
  EXPECT_EQ(out.shape(), (Shape{2, 2, 4}));
  expect_close(got(out), got(ba.matmul(b)));
  EXPECT_EQ(Tensor::einsum("...ij,jk", {ba, b}).shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(Tensor::einsum("ij,jk->ik", {Tensor({1, 2}).reshape({1, 2}), Tensor({3, 4}).reshape({2, 1})}).item<int>(),
            11);
  EXPECT_THROW(Tensor::einsum("ij,jk->ik", {a}), Error);     // one operand short
  EXPECT_THROW(Tensor::einsum("ij,jk->ik", {a, a}), Error);  // j is 3 and 2
  EXPECT_THROW(Tensor::einsum("ijk->i", {a}), Error);        // three letters for two dims
  EXPECT_THROW(Tensor::einsum("ij->iz", {a}), Error);        // z is no input letter
}

TEST_F(NN, Sequential) {
  Tensor x({1, 2, 3});
  Tensor y = x.sequential({[](const Tensor& t) { return t * 2; }, [](const Tensor& t) { return t + 1; }});
  EXPECT_EQ(y.tolist<int>(), (std::vector<int>{3, 5, 7}));
  EXPECT_EQ(x.sequential({}).uop(), x.uop());
}

// *** nn functional ***

TEST_F(NN, Linear) {
  std::vector<float> xv = values(6, 0.1), wv = values(12, 0.2), bv = values(4, 0.3);
  Tensor x(xv, {2, 3}), w(wv, {3, 4}), b(bv, {4});
  std::vector<double> want;
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) {
      double s = bv[k];
      for (int j = 0; j < 3; j++) s += double(xv[i * 3 + j]) * wv[j * 4 + k];
      want.push_back(s);
    }
  expect_close(got(x.linear(w, b)), want);
  Tensor l64 = x.linear(w, b, dtypes::float64);
  EXPECT_EQ(l64.dtype(), dtypes::float64);
  expect_close(l64.tolist<double>(), want, 1e-6);
  // a 1-D weight scales elementwise
  expect_close(got(x.linear(Tensor({2.0f, 0.0f, -1.0f}))),
               {2.0 * xv[0], 0.0, -double(xv[2]), 2.0 * xv[3], 0.0, -double(xv[5])});
}

TEST_F(NN, DropoutOnlyWhileTraining) {
  Tensor x = Tensor::ones({64, 64});
  EXPECT_EQ(x.dropout(0.5).uop(), x.uop());  // not training: the same tensor
  Tensor::train t;
  EXPECT_EQ(x.dropout(0.0).uop(), x.uop());
  Tensor::manual_seed(3);
  std::vector<float> d = x.dropout(0.25).tolist<float>();
  int64_t kept = 0;
  for (float v : d) {
    EXPECT_TRUE(v == 0.0f || std::abs(v - 1.0f / 0.75f) < 1e-6) << v;
    kept += v != 0.0f;
  }
  EXPECT_NEAR(double(kept) / double(d.size()), 0.75, 0.03);
}

TEST_F(NN, OneHot) {
  Tensor y({0, 3, 1, 3});
  Tensor h = y.one_hot(5);
  EXPECT_EQ(h.shape(), (Shape{4, 5}));
  EXPECT_EQ(h.dtype(), dtypes::int32);
  EXPECT_EQ(h.tolist<int>(), (std::vector<int>{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(y.one_hot().shape(), (Shape{4, 4}));  // classes: max + 1
  EXPECT_EQ(y.reshape({2, 2}).one_hot(4).shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(Tensor::ones({0}, {.dtype = dtypes::int32}).one_hot(3).shape(), (Shape{0, 3}));
  EXPECT_THROW(Tensor({1.0f}).one_hot(2), Error);
}

namespace {
// softmax(q k^T / sqrt(d) + mask) v for (B, T, D) q and (B, S, D) k, v; mask (T, S) additive
std::vector<double> attention_ref(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                                  int B, int T, int S, int D, const std::vector<double>& mask) {
  std::vector<double> out;
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      std::vector<double> sc(static_cast<size_t>(S));
      double mx = -INFINITY, sum = 0;
      for (int s = 0; s < S; s++) {
        double dot = 0;
        for (int d = 0; d < D; d++) dot += double(q[(b * T + t) * D + d]) * k[(b * S + s) * D + d];
        sc[s] = dot / std::sqrt(double(D)) + mask[t * S + s];
        mx = std::max(mx, sc[s]);
      }
      for (double& x : sc) sum += (x = std::exp(x - mx));
      for (int d = 0; d < D; d++) {
        double acc = 0;
        for (int s = 0; s < S; s++) acc += sc[s] / sum * v[(b * S + s) * D + d];
        out.push_back(acc);
      }
    }
  return out;
}
}  // namespace

TEST_F(NN, ScaledDotProductAttention) {
  int B = 2, T = 3, S = 4, D = 5;
  std::vector<float> q = values(B * T * D, 0.1), k = values(B * S * D, 0.2), v = values(B * S * D, 0.3);
  Tensor Q(q, {B, T, D}), K(k, {B, S, D}), V(v, {B, S, D});
  expect_close(got(Q.scaled_dot_product_attention(K, V)),
               attention_ref(q, k, v, B, T, S, D, std::vector<double>(12, 0)));
  std::vector<float> fm = values(T * S, 0.9);
  expect_close(got(Q.scaled_dot_product_attention(K, V, Tensor(fm, {T, S}))),
               attention_ref(q, k, v, B, T, S, D, widen(fm)));
  // a bool mask keeps where true; causal keeps s <= t
  std::vector<uint8_t> keep{1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1};
  std::vector<double> add, causal;
  for (int t = 0; t < T; t++)
    for (int s = 0; s < S; s++) {
      add.push_back(keep[t * S + s] ? 0.0 : -INFINITY);
      causal.push_back(s <= t ? 0.0 : -INFINITY);
    }
  Tensor bm = Tensor(keep.data(), {T, S}, {.dtype = dtypes::bool_});
  expect_close(got(Q.scaled_dot_product_attention(K, V, bm)), attention_ref(q, k, v, B, T, S, D, add));
  expect_close(got(Q.scaled_dot_product_attention(K, V, std::nullopt, 0.0, true)),
               attention_ref(q, k, v, B, T, S, D, causal));
  EXPECT_THROW(Q.scaled_dot_product_attention(K, V, bm, 0.0, true), Error);
}

TEST_F(NN, BinaryCrossentropy) {
  std::vector<float> p{0.1f, 0.9f, 0.3f, 0.6f}, y{0, 1, 1, 0}, logit{-2.0f, 3.0f, 0.5f, -0.2f};
  std::vector<double> bce, bcel;
  for (size_t i = 0; i < 4; i++) {
    bce.push_back(-(y[i] * std::log(p[i]) + (1 - y[i]) * std::log(1 - p[i])));
    double s = 1 / (1 + std::exp(-double(logit[i])));
    bcel.push_back(-(y[i] * std::log(s) + (1 - y[i]) * std::log(1 - s)));
  }
  Tensor P(p, {4}), Y(y, {4}), L(logit, {4});
  expect_close(got(P.binary_crossentropy(Y, "none")), bce);
  expect_close(got(P.binary_crossentropy(Y)), {(bce[0] + bce[1] + bce[2] + bce[3]) / 4});
  expect_close(got(L.binary_crossentropy_logits(Y, "sum")), {bcel[0] + bcel[1] + bcel[2] + bcel[3]});
  expect_close(got(L.binary_crossentropy_logits(Y, "none")), bcel);
  // large logits stay finite
  EXPECT_NEAR(Tensor({100.0f}).binary_crossentropy_logits(Tensor({0.0f})).item<float>(), 100.0f, 1e-3);
  EXPECT_THROW(P.binary_crossentropy(Y, "avg"), Error);
}

TEST_F(NN, CrossEntropy) {
  int N = 3, C = 4;
  std::vector<float> xv = values(N * C, 0.5);
  std::vector<int> y{2, 0, 3};
  Tensor X(xv, {N, C}), Y(y, {N});
  auto ref = [&](const std::vector<double>& target, double smoothing) {  // target: (N, C) probabilities
    std::vector<double> out;
    for (int n = 0; n < N; n++) {
      double mx = -INFINITY, se = 0, l = 0;
      for (int c = 0; c < C; c++) mx = std::max(mx, double(xv[n * C + c]));
      for (int c = 0; c < C; c++) se += std::exp(xv[n * C + c] - mx);
      for (int c = 0; c < C; c++)
        l -= ((1 - smoothing) * target[n * C + c] + smoothing / C) * (xv[n * C + c] - mx - std::log(se));
      out.push_back(l);
    }
    return out;
  };
  std::vector<double> hot(static_cast<size_t>(N * C), 0.0);
  for (int n = 0; n < N; n++) hot[n * C + y[n]] = 1;
  std::vector<double> none = ref(hot, 0);
  expect_close(got(X.cross_entropy(Y, {.reduction = "none"})), none);
  expect_close(got(X.cross_entropy(Y)), {(none[0] + none[1] + none[2]) / 3});
  std::vector<double> sm = ref(hot, 0.1);
  expect_close(got(X.cross_entropy(Y, {.reduction = "sum", .label_smoothing = 0.1})), {sm[0] + sm[1] + sm[2]});
  // probabilities as targets
  std::vector<float> pv{0.5f, 0.5f, 0, 0, 0, 0.25f, 0.25f, 0.5f, 1, 0, 0, 0};
  expect_close(got(X.cross_entropy(Tensor(pv, {N, C}), {.reduction = "none"})), ref(widen(pv), 0));
  EXPECT_THROW(X.cross_entropy(Y, {.label_smoothing = -0.1}), Error);
}

TEST_F(NN, NllLoss) {
  int N = 4, C = 3;
  std::vector<float> lp = values(N * C, 0.7);
  std::vector<int> y{2, 0, 1, 2};
  std::vector<float> w{0.5f, 2.0f, 1.5f};
  Tensor X(lp, {N, C}), Y(y, {N}), W(w, {C});
  auto ref = [&](bool weighted, int ignore, const std::string& reduction) {
    std::vector<double> per;
    double num = 0, den = 0;
    for (int n = 0; n < N; n++) {
      double wt = (weighted ? w[y[n]] : 1.0) * (y[n] == ignore ? 0.0 : 1.0);
      per.push_back(-lp[n * C + y[n]] * wt);
      num += per.back(), den += wt;
    }
    if (reduction == "none") return per;
    return std::vector<double>{reduction == "sum" ? num : num / den};
  };
  expect_close(got(X.nll_loss(Y)), ref(false, -100, "mean"));
  expect_close(got(X.nll_loss(Y, W)), ref(true, -100, "mean"));
  expect_close(got(X.nll_loss(Y, W, {.ignore_index = 2, .reduction = "none"})), ref(true, 2, "none"));
  expect_close(got(X.nll_loss(Y, std::nullopt, {.ignore_index = 0, .reduction = "sum"})), ref(false, 0, "sum"));
  expect_close(got(X.nll_loss(Y, W, {.ignore_index = 1})), ref(true, 1, "mean"));
  EXPECT_THROW(X.nll_loss(Y, std::nullopt, {.reduction = "all"}), Error);
}

// reference: x (2,3,7,7) realized, len(t.schedule()) of: max_pool2d 1, max_pool2d(kernel_size=(3,3), stride=2,
// padding=1) 2, max_pool2d(return_indices=True)[1] 3, avg_pool2d 1, avg_pool2d((3,3), 2, padding=1, ceil_mode) 1,
// conv_transpose2d(w (3,4,3,3), stride=2, padding=1) 1, batchnorm(None, None, mean, invstd) 1,
// interpolate((5,9)) 13; m (4,16): cumsum(1) 1, argmax(1) 3, logsumexp(1) 2, layernorm() 3, var(1) 2,
// logcumsumexp(1) 4; v (600,): cumsum() 3; einsum("ij,jk->ik", m, (16,5)) 1; one_hot(10) of 8 labels 2;
// (2,4,8) causal attention 5; (8,10) logits with 8 labels: sparse_categorical_crossentropy 5, cross_entropy 5,
// log_softmax().nll_loss 5. With FUSE_ARANGE=0: our default fuses the arange of a label/index compare into its
// reduce (NN.KernelCountsWithFusedGathers)
TEST_F(NN, KernelCountsMatchTheReference) {
  test::ScopedEnv no_fuse("FUSE_ARANGE", "0");
  Tensor x = Tensor(values(2 * 3 * 7 * 7, 0.1), {2, 3, 7, 7}).realize();
  Tensor m = Tensor(values(4 * 16, 0.2), {4, 16}).realize(), v = Tensor(values(600, 0.3), {600}).realize();
  Tensor w = Tensor(values(3 * 4 * 3 * 3, 0.4), {3, 4, 3, 3}).realize(), c3 = Tensor(values(3, 0.5), {3}).realize();
  Tensor m2 = Tensor(values(16 * 5, 0.6), {16, 5}).realize(), logits = Tensor(values(80, 0.7), {8, 10}).realize();
  Tensor y = Tensor({1, 2, 3, 4, 5, 6, 7, 8}).realize();
  Tensor q = Tensor(values(64, 0.8), {2, 4, 8}).realize();
  auto count = [](const std::function<Tensor()>& f) { return kernels_run_by([&] { f().realize(); }); };
  EXPECT_EQ(count([&] { return x.max_pool2d(); }), 1);
  EXPECT_EQ(count([&] { return x.max_pool2d({.kernel_size = {3, 3}, .stride = {2}, .padding = {1}}); }), 2);
  EXPECT_EQ(count([&] { return x.max_pool2d_with_indices().second; }), 3);
  EXPECT_EQ(count([&] { return x.avg_pool2d(); }), 1);
  EXPECT_EQ(count([&] {
              return x.avg_pool2d({.kernel_size = {3, 3}, .stride = {2}, .padding = {1}, .ceil_mode = true});
            }),
            1);
  EXPECT_EQ(count([&] { return x.conv_transpose2d(w, std::nullopt, {.stride = {2}, .padding = {1}}); }), 1);
  EXPECT_EQ(count([&] { return x.batchnorm(std::nullopt, std::nullopt, c3, c3); }), 1);
  EXPECT_EQ(count([&] { return m.cumsum(1); }), 1);
  EXPECT_EQ(count([&] { return v.cumsum(); }), 3);
  EXPECT_EQ(count([&] { return m.argmax(1); }), 3);
  EXPECT_EQ(count([&] { return m.logsumexp({1}); }), 2);
  EXPECT_EQ(count([&] { return m.layernorm(); }), 3);
  EXPECT_EQ(count([&] { return m.var({1}); }), 2);
  EXPECT_EQ(count([&] { return m.logcumsumexp(1); }), 4);
  EXPECT_EQ(count([&] { return Tensor::einsum("ij,jk->ik", {m, m2}); }), 1);
  EXPECT_EQ(count([&] { return y.one_hot(10); }), 2);
  EXPECT_EQ(count([&] { return q.scaled_dot_product_attention(q, q, std::nullopt, 0.0, true); }), 5);
  EXPECT_EQ(count([&] { return logits.sparse_categorical_crossentropy(y); }), 5);
  EXPECT_EQ(count([&] { return logits.cross_entropy(y); }), 5);
  EXPECT_EQ(count([&] { return logits.log_softmax().nll_loss(y); }), 5);
  EXPECT_EQ(count([&] { return x.interpolate({5, 9}); }), 13);
}

// the same with the default FUSE_ARANGE: the labels' one-hot (y == arange) is computed in the loss's reduce, which
// becomes a gated load; the reference's FUSE_ARANGE=1 gives these counts too (4, 4, 4). max_pool2d's indices and
// argmax stay at 3, where the reference's broader fusion gives 2; one_hot (2), attention (5), interpolate (13) keep
// theirs
TEST_F(NN, KernelCountsWithFusedGathers) {
  Tensor logits = Tensor(values(80, 0.7), {8, 10}).realize(), y = Tensor({1, 2, 3, 4, 5, 6, 7, 8}).realize();
  Tensor x = Tensor(values(2 * 3 * 7 * 7, 0.1), {2, 3, 7, 7}).realize(),
         m = Tensor(values(4 * 16, 0.2), {4, 16}).realize();
  auto count = [](const std::function<Tensor()>& f) { return kernels_run_by([&] { f().realize(); }); };
  EXPECT_EQ(count([&] { return logits.sparse_categorical_crossentropy(y); }), 4);
  EXPECT_EQ(count([&] { return logits.cross_entropy(y); }), 4);
  EXPECT_EQ(count([&] { return logits.log_softmax().nll_loss(y); }), 4);
  EXPECT_EQ(count([&] { return x.max_pool2d_with_indices().second; }), 3);
  EXPECT_EQ(count([&] { return m.argmax(1); }), 3);
  EXPECT_EQ(count([&] { return y.one_hot(10); }), 2);
  EXPECT_EQ(count([&] { return x.interpolate({5, 9}); }), 13);
}

// reference: Tensor.manual_seed(0), x = (64, 64) realized, Tensor.rand(3) realized (the seed buffers exist); under
// Tensor.train(): len(x.dropout(0.5).schedule()) == 6, and a (2,4,8) self-attention with dropout_p=0.1 schedules 10
TEST_F(NN, DropoutKernelCount) {
  Tensor::manual_seed(0);
  Tensor x = Tensor::ones({64, 64}).contiguous().realize(), q = Tensor(values(64, 0.1), {2, 4, 8}).realize();
  Tensor::rand({3}).realize();
  Tensor::train t;
  EXPECT_EQ(kernels_run_by([&] { x.dropout(0.5).realize(); }), 6);
  EXPECT_EQ(kernels_run_by([&] { q.scaled_dot_product_attention(q, q, std::nullopt, 0.1).realize(); }), 10);
}

TEST_F(NN, ZeroAndOneSizedDims) {
  Tensor empty_batch = Tensor::ones({0, 2, 4, 4});
  EXPECT_EQ(empty_batch.max_pool2d().shape(), (Shape{0, 2, 2, 2}));
  EXPECT_EQ(empty_batch.avg_pool2d({.kernel_size = {3, 3}, .padding = {1}}).shape(), (Shape{0, 2, 2, 2}));
  EXPECT_EQ(empty_batch.conv_transpose2d(Tensor::ones({2, 3, 2, 2})).shape(), (Shape{0, 3, 5, 5}));
  EXPECT_EQ(empty_batch.interpolate({2, 3}).shape(), (Shape{0, 2, 2, 3}));
  EXPECT_TRUE(got(empty_batch.max_pool2d()).empty());
  // a contraction over an empty dim is all zeros
  Tensor a = Tensor::ones({2, 0}), b = Tensor::ones({0, 3});
  EXPECT_EQ(got(Tensor::einsum("ij,jk->ik", {a, b})), std::vector<double>(6, 0.0));
  // one element: the variance with correction 1 is 0/0, the mean and argmax are that element
  Tensor one = Tensor(std::vector<float>{4.0f}, {1, 1});
  EXPECT_TRUE(std::isnan(one.var().item<float>()));
  EXPECT_EQ(one.var({}, false, 0).item<float>(), 0.0f);
  EXPECT_EQ(one.argmax().item<int>(), 0);
  EXPECT_EQ(one.max_pool2d({.kernel_size = {1, 1}}).item<float>(), 4.0f);
  EXPECT_EQ(one.reshape({1, 1, 1, 1}).conv2d(Tensor(std::vector<float>{2.0f}, {1, 1, 1, 1})).item<float>(), 8.0f);
  EXPECT_EQ(one.cumsum(1).item<float>(), 4.0f);
  EXPECT_EQ(one.logsumexp().item<float>(), 4.0f);
  // no samples: the mean loss is 0/0
  Tensor no_logits = Tensor::ones({0, 3});
  EXPECT_TRUE(
      std::isnan(no_logits.sparse_categorical_crossentropy(Tensor::ones({0}, {.dtype = dtypes::int32})).item<float>()));
}
