#pragma once
// layers (tinygrad's nn/__init__.py): plain structs of tensors, initialized with the reference's distributions, so
// after Tensor::manual_seed(s) they hold the reference's numbers. Each lists its tensors with TG_PARAMS (state.h) in
// the reference's attribute order, and is called as a function: `nn::Linear l(3, 4); Tensor y = l(x);`.
// Optional tensors (bias=false, affine=false) are empty std::optionals, as the reference's None.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tg/nn/state.h"
#include "tg/tensor/tensor.h"

namespace tg::nn {

// y = x @ weight.T + bias; weight (out, in) and bias (out,) uniform in +-1/sqrt(in)
struct Linear {
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  Tensor weight;
  std::optional<Tensor> bias;
  TG_PARAMS(weight, bias)
};

// padding of a convolution: one value for every spatial dim (`.padding = 1`), one per dim, or a (before, after)
// pair per dim in torch's flat order, last dim first (`.padding = {0, 1, 2, 3}`), or "same" (stride 1 only)
struct ConvPadding {
  std::vector<int64_t> values = {0};
  bool same = false;
  ConvPadding(int64_t p = 0) : values{p} {}  // NOLINT: implicit, for `.padding = 1`
  ConvPadding(std::initializer_list<int64_t> p) : values(p) {}
  ConvPadding(std::vector<int64_t> p) : values(std::move(p)) {}  // NOLINT
  template <size_t N>
  ConvPadding(const char (&s)[N]) : ConvPadding(std::string_view(s, N - 1), 0) {}  // NOLINT: "same"
  ConvPadding(std::string_view s, int);
};

struct ConvOptions {
  std::vector<int64_t> stride = {1};  // one value for every spatial dim, or one per dim
  ConvPadding padding = 0;
  std::vector<int64_t> dilation = {1};
  int64_t groups = 1;
  bool bias = true;
};

// a convolution over the trailing len(kernel_size) dims; weight (out, in/groups, *kernel_size) and bias (out,)
// uniform in +-1/sqrt(in*prod(kernel_size)). An int kernel size is square; a vector gives one size per dim.
struct Conv2d {
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, ConvOptions opts = {});
  Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size, ConvOptions opts = {});
  Tensor operator()(const Tensor& x) const;
  std::vector<int64_t> kernel_size, stride, dilation, padding;  // padding: the values conv2d gets
  int64_t groups;
  Tensor weight;
  std::optional<Tensor> bias;
  TG_PARAMS(weight, bias)
};
// a Conv2d with a kernel of one dim
Conv2d Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, ConvOptions opts = {});

struct ConvTransposeOptions {
  std::vector<int64_t> stride = {1};
  std::vector<int64_t> padding = {0};
  std::vector<int64_t> output_padding = {0};
  std::vector<int64_t> dilation = {1};
  int64_t groups = 1;
  bool bias = true;
};
// the transpose of Conv2d: weight (in, out/groups, *kernel_size). As the reference, it draws a Conv2d's weight
// and bias first, then its own weight, so a seed gives the reference's numbers.
struct ConvTranspose2d : Conv2d {
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, ConvTransposeOptions opts = {});
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
                  ConvTransposeOptions opts = {});
  Tensor operator()(const Tensor& x) const;
  std::vector<int64_t> output_padding;
};
ConvTranspose2d ConvTranspose1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                                ConvTransposeOptions opts = {});

struct BatchNormOptions {
  double eps = 1e-5;
  bool affine = true;               // learnable weight (ones) and bias (zeros)
  bool track_running_stats = true;  // running_mean/running_var, used outside training
  double momentum = 0.1;
};
// normalizes over every dim but 1 (channels). In training (Tensor::training) it uses the batch's statistics and
// updates the running ones by assign (and counts num_batches_tracked); otherwise it uses the running ones.
struct BatchNorm {
  explicit BatchNorm(int64_t sz, BatchNormOptions opts = {});
  std::pair<Tensor, Tensor> calc_stats(const Tensor& x) const;  // (mean, var)
  Tensor operator()(const Tensor& x);
  double eps;
  bool track_running_stats;
  double momentum;
  std::optional<Tensor> weight, bias;
  Tensor num_batches_tracked;  // int64, shape (1,)
  std::optional<Tensor> running_mean, running_var;
  TG_PARAMS(weight, bias, num_batches_tracked, running_mean, running_var)
};
using BatchNorm2d = BatchNorm;
using BatchNorm3d = BatchNorm;

// normalizes over the last normalized_shape.size() dims, then x * weight + bias
struct LayerNorm {
  explicit LayerNorm(int64_t normalized_shape, double eps = 1e-5, bool elementwise_affine = true)
      : LayerNorm(Shape{normalized_shape}, eps, elementwise_affine) {}
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor operator()(const Tensor& x) const;
  Shape normalized_shape;
  std::vector<int64_t> axis;
  double eps;
  bool elementwise_affine;
  std::optional<Tensor> weight, bias;
  TG_PARAMS(weight, bias)
};
// LayerNorm over the channels of (N, C, H, W)
struct LayerNorm2d : LayerNorm {
  using LayerNorm::LayerNorm;
  Tensor operator()(const Tensor& x) const;
};

// normalizes each of num_groups groups of channels, then the affine per channel
struct GroupNorm {
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  int64_t num_groups, num_channels;
  double eps;
  std::optional<Tensor> weight, bias;
  TG_PARAMS(weight, bias)
};

// normalizes each channel of each sample, then the affine per channel
struct InstanceNorm {
  explicit InstanceNorm(int64_t num_features, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  int64_t num_features;
  double eps;
  std::optional<Tensor> weight, bias;
  TG_PARAMS(weight, bias)
};

// x / rms(x) over the last dim (computed in float32), times weight
struct RMSNorm {
  explicit RMSNorm(int64_t dim, double eps = 1e-6, bool elementwise_affine = true);
  Tensor operator()(const Tensor& x) const;
  Tensor _norm(const Tensor& x) const;
  double eps;
  std::optional<Tensor> weight;
  TG_PARAMS(weight)
};

// a lookup table: idx (any shape, ints) -> idx.shape + (embed_size,); weight glorot-uniform (vocab, embed)
struct Embedding {
  Embedding(int64_t vocab_size, int64_t embed_size);
  Tensor operator()(const Tensor& idx) const;
  int64_t vocab_sz, embed_sz;
  Tensor weight;
  TG_PARAMS(weight)
};

// one LSTM step: (h, c) = cell(x, (h, c)); no state given starts from zeros. Gates in the order i, f, g, o.
struct LSTMCell {
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  std::pair<Tensor, Tensor> operator()(const Tensor& x,
                                       const std::optional<std::pair<Tensor, Tensor>>& hc = std::nullopt) const;
  Tensor weight_ih, weight_hh;
  std::optional<Tensor> bias_ih, bias_hh;
  TG_PARAMS(weight_ih, weight_hh, bias_ih, bias_hh)
};

}  // namespace tg::nn
