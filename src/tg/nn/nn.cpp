// layers (tinygrad's nn/__init__.py)
#include "tg/nn/nn.h"

#include <cmath>

namespace tg::nn {

namespace {

std::vector<int64_t> per_dim(const std::vector<int64_t>& x, size_t n) {
  return x.size() == 1 ? std::vector<int64_t>(n, x[0]) : x;
}
TensorOptions no_grad_opts(std::optional<DType> dt = std::nullopt) { return {std::nullopt, dt, false}; }
// (1, -1, 1, ...): a per-channel vector broadcast against an (N, C, ...) input
Shape channel_shape(int64_t ndim) {
  Shape s(static_cast<size_t>(std::max<int64_t>(ndim, 2)), 1);
  s[1] = -1;
  return s;
}
Shape concat(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
// uniform in +-1/sqrt(fan_in), the reference's default initialization
Tensor uniform_fan_in(const Shape& shape, int64_t fan_in) {
  double bound = 1 / std::sqrt(double(fan_in));
  return Tensor::uniform(shape, -bound, bound);
}
int64_t conv_fan_in(int64_t in_channels, const std::vector<int64_t>& kernel_size) {
  int64_t n = in_channels;
  for (int64_t k : kernel_size) n *= k;
  return n;
}

}  // namespace

// *** Linear ***

Linear::Linear(int64_t in_features, int64_t out_features, bool has_bias)
    : weight(uniform_fan_in({out_features, in_features}, in_features)) {
  if (has_bias) bias = uniform_fan_in({out_features}, in_features);
}
Tensor Linear::operator()(const Tensor& x) const { return x.linear(weight.transpose(), bias); }

// *** convolutions ***

ConvPadding::ConvPadding(std::string_view s, int) : values{}, same(true) {
  TG_CHECK(s == "same" || s == "SAME" || s == "Same", "Invalid padding string '", s, "', only 'same' is supported");
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t k, ConvOptions opts)
    : Conv2d(in_channels, out_channels, std::vector<int64_t>{k, k}, std::move(opts)) {}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> ks, ConvOptions opts)
    : kernel_size(std::move(ks)),
      stride(opts.stride),
      dilation(opts.dilation),
      padding(opts.padding.values),
      groups(opts.groups),
      weight([&] {
        TG_CHECK(!kernel_size.empty(), "Conv2d needs a kernel size");
        TG_CHECK(groups > 0 && in_channels % groups == 0 && out_channels % groups == 0, "Conv2d: groups=", groups,
                 " must divide in_channels=", in_channels, " and out_channels=", out_channels);
        return uniform_fan_in(concat({out_channels, in_channels / groups}, kernel_size),
                              conv_fan_in(in_channels, kernel_size));
      }()) {
  if (opts.padding.same) {
    for (int64_t s : stride) TG_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
    // (before, after) per dim, last dim first, with the odd pixel after; dilations pair with the reversed kernel
    std::vector<int64_t> dil = per_dim(dilation, kernel_size.size());
    padding.clear();
    for (size_t i = 0; i < dil.size() && i < kernel_size.size(); i++) {
      int64_t total = dil[i] * (kernel_size[kernel_size.size() - 1 - i] - 1);
      padding.push_back(total / 2), padding.push_back(total - total / 2);
    }
  }
  if (opts.bias) bias = uniform_fan_in({out_channels}, conv_fan_in(in_channels, kernel_size));
}

Tensor Conv2d::operator()(const Tensor& x) const {
  return x.conv2d(weight, bias, {.groups = groups, .stride = stride, .dilation = dilation, .padding = padding});
}

Conv2d Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, ConvOptions opts) {
  return Conv2d(in_channels, out_channels, std::vector<int64_t>{kernel_size}, std::move(opts));
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t k, ConvTransposeOptions opts)
    : ConvTranspose2d(in_channels, out_channels, std::vector<int64_t>{k, k}, std::move(opts)) {}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> ks,
                                 ConvTransposeOptions opts)
    : Conv2d(in_channels, out_channels, std::move(ks),
             {.stride = opts.stride,
              .padding = opts.padding,
              .dilation = opts.dilation,
              .groups = opts.groups,
              .bias = opts.bias}),
      output_padding(opts.output_padding) {
  weight =
      uniform_fan_in(concat({in_channels, out_channels / groups}, kernel_size), conv_fan_in(in_channels, kernel_size));
}

Tensor ConvTranspose2d::operator()(const Tensor& x) const {
  return x.conv_transpose2d(
      weight, bias,
      {.groups = groups, .stride = stride, .dilation = dilation, .padding = padding, .output_padding = output_padding});
}

ConvTranspose2d ConvTranspose1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                                ConvTransposeOptions opts) {
  return ConvTranspose2d(in_channels, out_channels, std::vector<int64_t>{kernel_size}, std::move(opts));
}

// *** BatchNorm ***

BatchNorm::BatchNorm(int64_t sz, BatchNormOptions opts)
    : eps(opts.eps),
      track_running_stats(opts.track_running_stats),
      momentum(opts.momentum),
      num_batches_tracked(Tensor::zeros({1}, no_grad_opts(dtypes::int64))) {
  if (opts.affine) weight = Tensor::ones({sz}), bias = Tensor::zeros({sz});
  if (track_running_stats)
    running_mean = Tensor::zeros({sz}, no_grad_opts()), running_var = Tensor::ones({sz}, no_grad_opts());
}

std::pair<Tensor, Tensor> BatchNorm::calc_stats(const Tensor& x) const {
  Shape shape_mask = channel_shape(x.ndim());
  if (track_running_stats && !Tensor::training)
    return {*running_mean, running_var->reshape(shape_mask).expand(x.shape())};
  std::vector<int64_t> reduce_axes;
  for (int64_t i = 0; i < x.ndim(); i++)
    if (i != 1) reduce_axes.push_back(i);
  Tensor batch_mean = x.mean(reduce_axes);
  Tensor y = x - batch_mean.detach().reshape(shape_mask);  // d(var)/d(mean) = 0
  Tensor batch_var = (y * y).mean(reduce_axes);
  return {batch_mean, batch_var};
}

Tensor BatchNorm::operator()(const Tensor& x) {
  TG_CHECK(x.ndim() >= 2, "BatchNorm needs an input of (N, C, ...), got shape ", shape_str(x.shape()));
  auto [batch_mean, batch_var] = calc_stats(x);
  if (track_running_stats && Tensor::training) {
    running_mean->assign((1 - momentum) * *running_mean + momentum * batch_mean.detach());
    // the running variance is unbiased: n/(n-C) times the batch's
    double n = double(x.numel()), unbias = momentum * n / (n - double(x.shape()[1]));
    running_var->assign((1 - momentum) * *running_var + unbias * batch_var.detach());
    MetadataScope m("__iadd__");
    num_batches_tracked.assign(num_batches_tracked + 1);
  }
  return x.batchnorm(weight, bias, batch_mean, (batch_var + eps).rsqrt());
}

// *** LayerNorm, LayerNorm2d ***

LayerNorm::LayerNorm(Shape shape, double eps_, bool affine)
    : normalized_shape(std::move(shape)), eps(eps_), elementwise_affine(affine) {
  for (size_t i = 0; i < normalized_shape.size(); i++) axis.push_back(-1 - int64_t(i));
  if (affine) weight = Tensor::ones(normalized_shape), bias = Tensor::zeros(normalized_shape);
}

Tensor LayerNorm::operator()(const Tensor& x) const {
  Shape s = x.shape();
  bool match = s.size() >= normalized_shape.size() &&
               std::equal(normalized_shape.begin(), normalized_shape.end(), s.end() - int64_t(normalized_shape.size()));
  TG_CHECK(match, "last dimensions of ", shape_str(s), " must match ", shape_str(normalized_shape));
  Tensor y = x.layernorm(axis, eps);
  if (!elementwise_affine) return y;
  return y * *weight + *bias;
}

Tensor LayerNorm2d::operator()(const Tensor& x) const {
  TG_CHECK(x.ndim() == 4, "LayerNorm2d needs an input of (N, C, H, W), got shape ", shape_str(x.shape()));
  return LayerNorm::operator()(x.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
}

// *** GroupNorm, InstanceNorm ***

namespace {
// layernorm over groups of channels (groups = channels: each channel alone), then the affine per channel
Tensor norm_groups(const Tensor& x, int64_t groups, double eps, const std::optional<Tensor>& weight,
                   const std::optional<Tensor>& bias) {
  TG_CHECK(x.ndim() >= 2, "group/instance norm needs an input of (N, C, ...), got shape ", shape_str(x.shape()));
  Tensor y = x.reshape({x.shape()[0], groups, -1}).layernorm({-1}, eps).reshape(x.shape());
  if (!weight || !bias) return y;
  return y * weight->reshape(channel_shape(x.ndim())) + bias->reshape(channel_shape(x.ndim()));
}
}  // namespace

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps_, bool affine)
    : num_groups(groups), num_channels(channels), eps(eps_) {
  if (affine) weight = Tensor::ones({channels}), bias = Tensor::zeros({channels});
}
Tensor GroupNorm::operator()(const Tensor& x) const { return norm_groups(x, num_groups, eps, weight, bias); }

InstanceNorm::InstanceNorm(int64_t features, double eps_, bool affine) : num_features(features), eps(eps_) {
  if (affine) weight = Tensor::ones({features}), bias = Tensor::zeros({features});
}
Tensor InstanceNorm::operator()(const Tensor& x) const { return norm_groups(x, num_features, eps, weight, bias); }

// *** RMSNorm ***

RMSNorm::RMSNorm(int64_t dim, double eps_, bool affine) : eps(eps_) {
  if (affine) weight = Tensor::ones({dim});
}
Tensor RMSNorm::_norm(const Tensor& x) const { return x * (x.square().mean(-1, true) + eps).rsqrt(); }
Tensor RMSNorm::operator()(const Tensor& x) const {
  Tensor y = _norm(x.float_()).cast(x.dtype());
  return weight ? y * *weight : y;
}

// *** Embedding ***

Embedding::Embedding(int64_t vocab_size, int64_t embed_size)
    : vocab_sz(vocab_size), embed_sz(embed_size), weight(Tensor::glorot_uniform({vocab_size, embed_size})) {}

Tensor Embedding::operator()(const Tensor& idx) const {
  // one-hot rows against the table: (..., vocab, embed), summed over vocab
  Tensor arange = Tensor::arange(vocab_sz, TensorOptions{weight.device(), std::nullopt, false}).unsqueeze(-1);
  Shape big = concat(idx.shape(), {vocab_sz, embed_sz});
  Tensor hit = arange.expand(big).eq(idx.reshape(concat(idx.shape(), {1, 1})).expand(big));
  return hit.mul(weight.expand(big)).sum(-2, false, weight.dtype());
}

// *** LSTMCell ***

LSTMCell::LSTMCell(int64_t input_size, int64_t hidden_size, bool has_bias)
    : weight_ih(uniform_fan_in({hidden_size * 4, input_size}, hidden_size)),
      weight_hh(uniform_fan_in({hidden_size * 4, hidden_size}, hidden_size)) {
  if (has_bias) bias_ih = Tensor::zeros({hidden_size * 4}), bias_hh = Tensor::zeros({hidden_size * 4});
}

std::pair<Tensor, Tensor> LSTMCell::operator()(const Tensor& x,
                                               const std::optional<std::pair<Tensor, Tensor>>& hc) const {
  auto [h, c] = hc ? *hc : [&] {
    Tensor z = Tensor::zeros({x.shape()[0], weight_hh.shape()[1]}, TensorOptions{x.device(), x.dtype(), std::nullopt});
    return std::pair{z, z};
  }();
  Tensor gates = x.linear(weight_ih.T(), bias_ih) + h.linear(weight_hh.T(), bias_hh);
  // the four gates along dim 1 (tinygrad's chunk(4, dim=1))
  // TODO: gates.chunk(4, 1) when the movement ops are on main
  std::vector<Tensor> ifgo;
  int64_t hs = weight_hh.shape()[1];
  for (int64_t k = 0; k < 4; k++) ifgo.push_back(gates.shrink({{0, gates.shape()[0]}, {k * hs, (k + 1) * hs}}));
  Tensor i = ifgo[0].sigmoid(), f = ifgo[1].sigmoid(), g = ifgo[2].tanh(), o = ifgo[3].sigmoid();
  Tensor new_c = f * c + i * g;
  Tensor new_h = o * new_c.tanh();
  return {new_h.contiguous(), new_c.contiguous()};
}

}  // namespace tg::nn
