#pragma once
// nn layers (tinygrad's nn/__init__.py), initialized as the reference initializes them. Each layer is a plain struct
// of Tensors with a call operator and TG_PARAMS, so get_state_dict / get_parameters / load_state_dict see its
// tensors under the reference's names ("weight", "bias", "running_mean", ...):
//
//   nn::Conv2d conv{1, 32, 5};                 // in, out, kernel size; options: {.stride = 2, .padding = {1}}
//   nn::BatchNorm bn{32};                      // running stats are updated (by assign) when Tensor::training
//   nn::Linear fc{576, 10};
//   Tensor y = fc(bn(conv(x)).relu().max_pool2d().flatten(1));
#include <optional>
#include <utility>
#include <vector>

#include "tg/nn/state.h"
#include "tg/tensor/tensor.h"

namespace tg::nn {

struct Linear {
  Tensor weight;
  std::optional<Tensor> bias;
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  TG_PARAMS(weight, bias)
};

struct ConvOptions {
  std::vector<int64_t> stride = {1};
  std::vector<int64_t> padding = {0};  // one value, one per dim, or one per side (as Tensor::conv2d)
  bool padding_same = false;           // tinygrad's padding='same' (stride 1 only)
  std::vector<int64_t> dilation = {1};
  int64_t groups = 1;
  bool bias = true;
  std::vector<int64_t> output_padding = {0};  // ConvTranspose only
};

// N-d convolution: the kernel size's length is the number of spatial dims (an int kernel size means 2-d)
struct Conv2d {
  std::vector<int64_t> kernel_size;
  ConvOptions opts;
  Tensor weight;
  std::optional<Tensor> bias;
  Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size, ConvOptions opts = {});
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, ConvOptions opts = {})
      : Conv2d(in_channels, out_channels, std::vector<int64_t>{kernel_size, kernel_size}, std::move(opts)) {}
  Tensor operator()(const Tensor& x) const;
  TG_PARAMS(weight, bias)
};
Conv2d Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, ConvOptions opts = {});

struct ConvTranspose2d {
  std::vector<int64_t> kernel_size;
  ConvOptions opts;
  std::optional<Tensor> bias;
  Tensor weight;
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size, ConvOptions opts = {});
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, ConvOptions opts = {})
      : ConvTranspose2d(in_channels, out_channels, std::vector<int64_t>{kernel_size, kernel_size}, std::move(opts)) {}
  Tensor operator()(const Tensor& x) const;
  TG_PARAMS(weight, bias)
};
ConvTranspose2d ConvTranspose1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, ConvOptions opts = {});

struct BatchNormOptions {
  double eps = 1e-5;
  bool affine = true, track_running_stats = true;
  double momentum = 0.1;
};
struct BatchNorm {
  std::optional<Tensor> weight, bias, running_mean, running_var;
  Tensor num_batches_tracked;
  BatchNormOptions opts;
  explicit BatchNorm(int64_t sz, BatchNormOptions opts = {});
  std::pair<Tensor, Tensor> calc_stats(const Tensor& x) const;  // (mean, var) of the batch, or the running ones
  Tensor operator()(const Tensor& x);
  TG_PARAMS(weight, bias, num_batches_tracked, running_mean, running_var)
};
using BatchNorm2d = BatchNorm;
using BatchNorm3d = BatchNorm;

struct LayerNorm {
  std::optional<Tensor> weight, bias;
  Shape normalized_shape;
  double eps;
  LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  explicit LayerNorm(int64_t normalized_shape, double eps = 1e-5, bool elementwise_affine = true)
      : LayerNorm(Shape{normalized_shape}, eps, elementwise_affine) {}
  Tensor operator()(const Tensor& x) const;
  TG_PARAMS(weight, bias)
};
// LayerNorm over the channels of NCHW input
struct LayerNorm2d : LayerNorm {
  using LayerNorm::LayerNorm;
  Tensor operator()(const Tensor& x) const;
};

struct GroupNorm {
  std::optional<Tensor> weight, bias;
  int64_t num_groups, num_channels;
  double eps;
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  TG_PARAMS(weight, bias)
};

struct InstanceNorm {
  std::optional<Tensor> weight, bias;
  int64_t num_features;
  double eps;
  explicit InstanceNorm(int64_t num_features, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  TG_PARAMS(weight, bias)
};

struct RMSNorm {
  std::optional<Tensor> weight;
  double eps;
  explicit RMSNorm(int64_t dim, double eps = 1e-6, bool elementwise_affine = true);
  Tensor operator()(const Tensor& x) const;
  TG_PARAMS(weight)
};

struct Embedding {
  Tensor weight;
  int64_t vocab_size, embed_size;
  Embedding(int64_t vocab_size, int64_t embed_size);
  Tensor operator()(const Tensor& idx) const;  // out-of-range indices give zeros, as the reference
  TG_PARAMS(weight)
};

struct LSTMCell {
  Tensor weight_ih, weight_hh;
  std::optional<Tensor> bias_ih, bias_hh;
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  // (h, c) of the next step; no state: zeros
  std::pair<Tensor, Tensor> operator()(const Tensor& x,
                                       std::optional<std::pair<Tensor, Tensor>> hc = std::nullopt) const;
  TG_PARAMS(weight_ih, weight_hh, bias_ih, bias_hh)
};

}  // namespace tg::nn
