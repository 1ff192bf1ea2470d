#include "tg/nn/nn.h"

#include <cmath>

#include "tg/helpers/helpers.h"

namespace tg::nn {

namespace {
Shape cat_shape(Shape a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
// (1, -1, 1, ...): a per-channel vector against NC... input
Tensor per_channel(const Tensor& v, int64_t ndim) {
  Shape s{1, -1};
  for (int64_t i = 2; i < ndim; i++) s.push_back(1);
  return v.reshape(s);
}
// padding='same': (d*(k-1)//2, d*(k-1) - d*(k-1)//2) per dim, last dim first (Tensor::conv2d's per-side order)
std::vector<int64_t> same_padding(const std::vector<int64_t>& kernel, const std::vector<int64_t>& dilation) {
  std::vector<int64_t> pad;
  for (size_t j = kernel.size(); j-- > 0;) {
    int64_t d = dilation.size() == 1 ? dilation[0] : dilation.at(j), total = d * (kernel[j] - 1);
    pad.push_back(total / 2), pad.push_back(total - total / 2);
  }
  return pad;
}
ConvOptions checked(ConvOptions o, const std::vector<int64_t>& kernel, int64_t in, int64_t out) {
  TG_CHECK(o.groups > 0 && in % o.groups == 0 && out % o.groups == 0, "conv: channels ", in, " -> ", out,
           " don't divide into ", o.groups, " groups");
  if (o.padding_same) {
    for (int64_t s : o.stride)
      TG_CHECK_AS(ValueError, s == 1, "padding='same' is not supported for strided convolutions");
    o.padding = same_padding(kernel, o.dilation);
  }
  return o;
}

double inv_sqrt(int64_t n) { return 1 / std::sqrt(static_cast<double>(n)); }
}  // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool has_bias)
    : weight(Tensor::uniform({out_features, in_features}, -inv_sqrt(in_features), inv_sqrt(in_features))) {
  if (has_bias) bias = Tensor::uniform({out_features}, -inv_sqrt(in_features), inv_sqrt(in_features));
}
Tensor Linear::operator()(const Tensor& x) const { return x.linear(weight.T(), bias); }

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> ks, ConvOptions o)
    : kernel_size(std::move(ks)),
      opts(checked(std::move(o), kernel_size, in_channels, out_channels)),
      weight(Tensor::uniform(cat_shape({out_channels, in_channels / opts.groups}, kernel_size),
                             -inv_sqrt(in_channels * prod(kernel_size)), inv_sqrt(in_channels * prod(kernel_size)))) {
  if (opts.bias)
    bias = Tensor::uniform({out_channels}, -inv_sqrt(in_channels * prod(kernel_size)),
                           inv_sqrt(in_channels * prod(kernel_size)));
}
Tensor Conv2d::operator()(const Tensor& x) const {
  return x.conv2d(weight, bias,
                  {.groups = opts.groups, .stride = opts.stride, .dilation = opts.dilation, .padding = opts.padding});
}
Conv2d Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, ConvOptions opts) {
  return Conv2d(in_channels, out_channels, std::vector<int64_t>{kernel_size}, std::move(opts));
}

// as the reference (a Conv2d's constructor, then its own weight): a conv weight is drawn and dropped, then the bias
ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> ks, ConvOptions o)
    : kernel_size(std::move(ks)),
      opts(checked(std::move(o), kernel_size, in_channels, out_channels)),
      bias(Conv2d(in_channels, out_channels, kernel_size, opts).bias),
      weight(Tensor::uniform(cat_shape({in_channels, out_channels / opts.groups}, kernel_size),
                             -inv_sqrt(in_channels * prod(kernel_size)), inv_sqrt(in_channels * prod(kernel_size)))) {}
Tensor ConvTranspose2d::operator()(const Tensor& x) const {
  return x.conv_transpose2d(weight, bias,
                            {.groups = opts.groups,
                             .stride = opts.stride,
                             .dilation = opts.dilation,
                             .padding = opts.padding,
                             .output_padding = opts.output_padding});
}
ConvTranspose2d ConvTranspose1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, ConvOptions opts) {
  return ConvTranspose2d(in_channels, out_channels, std::vector<int64_t>{kernel_size}, std::move(opts));
}

BatchNorm::BatchNorm(int64_t sz, BatchNormOptions o)
    : num_batches_tracked(Tensor::zeros({1}, {.dtype = dtypes::int64, .requires_grad = false})), opts(o) {
  if (opts.affine) weight = Tensor::ones({sz}), bias = Tensor::zeros({sz});
  if (opts.track_running_stats)
    running_mean = Tensor::zeros({sz}, {.requires_grad = false}),
    running_var = Tensor::ones({sz}, {.requires_grad = false});
}
std::pair<Tensor, Tensor> BatchNorm::calc_stats(const Tensor& x) const {
  Shape mask{1, -1};
  for (int64_t i = 2; i < x.ndim(); i++) mask.push_back(1);
  if (opts.track_running_stats && !Tensor::training)
    return {*running_mean, running_var->reshape(mask).expand(x.shape())};
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < x.ndim(); i++)
    if (i != 1) axes.push_back(i);
  Tensor mean = x.mean(axes), y = x - mean.detach().reshape(mask);  // d(var)/d(mean) = 0
  return {mean, (y * y).mean(axes)};
}
Tensor BatchNorm::operator()(const Tensor& x) {
  TG_CHECK(x.ndim() >= 2, "BatchNorm needs (N, C, ...) input, got ", shape_str(x.shape()));
  auto [mean, var] = calc_stats(x);
  if (opts.track_running_stats && Tensor::training) {
    double m = opts.momentum, n = static_cast<double>(x.numel()), c = static_cast<double>(x.shape()[1]);
    running_mean->assign((1 - m) * *running_mean + m * mean.detach());
    running_var->assign((1 - m) * *running_var + m * n / (n - c) * var.detach());
    num_batches_tracked.assign(num_batches_tracked + 1);
  }
  return x.batchnorm(weight, bias, mean, (var + opts.eps).rsqrt());
}

LayerNorm::LayerNorm(Shape shape, double eps_, bool affine) : normalized_shape(std::move(shape)), eps(eps_) {
  if (affine) weight = Tensor::ones(normalized_shape), bias = Tensor::zeros(normalized_shape);
}
Tensor LayerNorm::operator()(const Tensor& x) const {
  Shape s = x.shape();
  size_t n = normalized_shape.size();
  TG_CHECK(s.size() >= n && Shape(s.end() - static_cast<std::ptrdiff_t>(n), s.end()) == normalized_shape,
           "last dimensions of ", shape_str(s), " must match ", shape_str(normalized_shape));
  std::vector<int64_t> axis;
  for (size_t i = 0; i < n; i++) axis.push_back(-1 - static_cast<int64_t>(i));
  Tensor y = x.layernorm(axis, eps);
  return weight ? y * *weight + *bias : y;
}
Tensor LayerNorm2d::operator()(const Tensor& x) const {
  return LayerNorm::operator()(x.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
}

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps_, bool affine)
    : num_groups(groups), num_channels(channels), eps(eps_) {
  if (affine) weight = Tensor::ones({channels}), bias = Tensor::zeros({channels});
}
Tensor GroupNorm::operator()(const Tensor& x) const {
  TG_CHECK(x.ndim() >= 2 && x.shape()[1] == num_channels, "GroupNorm expects ", num_channels, " channels, got ",
           shape_str(x.shape()));
  Tensor y = x.reshape({x.shape()[0], num_groups, -1}).layernorm({-1}, eps).reshape(x.shape());
  if (!weight) return y;
  return y * per_channel(*weight, x.ndim()) + per_channel(*bias, x.ndim());
}

InstanceNorm::InstanceNorm(int64_t features, double eps_, bool affine) : num_features(features), eps(eps_) {
  if (affine) weight = Tensor::ones({features}), bias = Tensor::zeros({features});
}
Tensor InstanceNorm::operator()(const Tensor& x) const {
  TG_CHECK(x.ndim() >= 2 && x.shape()[1] == num_features, "InstanceNorm expects ", num_features, " channels, got ",
           shape_str(x.shape()));
  Tensor y = x.reshape({x.shape()[0], num_features, -1}).layernorm({-1}, eps).reshape(x.shape());
  if (!weight) return y;
  return y * per_channel(*weight, x.ndim()) + per_channel(*bias, x.ndim());
}

RMSNorm::RMSNorm(int64_t dim, double eps_, bool affine) : eps(eps_) {
  if (affine) weight = Tensor::ones({dim});
}
Tensor RMSNorm::operator()(const Tensor& x) const {
  Tensor f = x.float_();
  Tensor y = (f * (f.square().mean(-1, true) + eps).rsqrt()).cast(x.dtype());
  return weight ? y * *weight : y;
}

Embedding::Embedding(int64_t vocab, int64_t embed)
    : weight(Tensor::glorot_uniform({vocab, embed})), vocab_size(vocab), embed_size(embed) {}
Tensor Embedding::operator()(const Tensor& idx) const {
  Shape big = idx.shape();
  big.push_back(vocab_size), big.push_back(embed_size);
  Shape idx1 = idx.shape();
  idx1.push_back(1), idx1.push_back(1);
  Tensor arange = Tensor::arange(vocab_size, {.device = weight.device(), .requires_grad = false}).unsqueeze(-1);
  Tensor hit = arange.expand(big).eq(idx.reshape(idx1).expand(big));
  return hit.mul(weight.expand(big)).sum(std::vector<int64_t>{-2}, false, weight.dtype());
}

LSTMCell::LSTMCell(int64_t input_size, int64_t hidden_size, bool bias)
    : weight_ih(Tensor::uniform({hidden_size * 4, input_size}, -inv_sqrt(hidden_size), inv_sqrt(hidden_size))),
      weight_hh(Tensor::uniform({hidden_size * 4, hidden_size}, -inv_sqrt(hidden_size), inv_sqrt(hidden_size))) {
  if (bias) bias_ih = Tensor::zeros({hidden_size * 4}), bias_hh = Tensor::zeros({hidden_size * 4});
}
std::pair<Tensor, Tensor> LSTMCell::operator()(const Tensor& x, std::optional<std::pair<Tensor, Tensor>> hc) const {
  int64_t hidden = weight_hh.shape()[1];
  if (!hc) {
    Tensor z = Tensor::zeros({x.shape()[0], hidden}, {.device = x.device(), .dtype = x.dtype()});
    hc = {z, z};
  }
  Tensor gates = x.linear(weight_ih.T(), bias_ih) + hc->first.linear(weight_hh.T(), bias_hh);
  auto gate = [&](int64_t k) { return gates.shrink({{0, gates.shape()[0]}, {k * hidden, (k + 1) * hidden}}); };
  Tensor i = gate(0).sigmoid(), f = gate(1).sigmoid(), g = gate(2).tanh(), o = gate(3).sigmoid();
  Tensor c = f * hc->second + i * g;
  Tensor h = o * c.tanh();
  return {h.contiguous(), c.contiguous()};
}

}  // namespace tg::nn
