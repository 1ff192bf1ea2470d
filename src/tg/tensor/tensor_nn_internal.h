#pragma once
// helpers shared by the [nn] group's sources (tensor_nn.cpp, tensor_pool.cpp), not part of the public API
#include "tg/tensor/tensor.h"

namespace tg::nn_detail {

// one value for every one of n dims, or exactly n values
std::vector<int64_t> as_tuple(const std::vector<int64_t>& v, size_t n, const char* what);
// padding as one value, one per dim or a (before, after) pair per dim, as the flat torch-order list of 2*dims
std::vector<int64_t> resolve_pool_pads(const std::vector<int64_t>& padding, size_t dims, const Shape& shape);
// a flat torch-order padding list (last dim first) applied to the trailing dims of an ndim tensor
Mask flat_to_mask(const std::vector<int64_t>& pads, size_t ndim);
// constant padding that keeps the dtype (a fill for an int tensor stays an int)
Tensor pad_const(const Tensor& x, const Mask& padding, ConstValue value);
// index == arange(num_classes) along dim: a bool tensor with a new axis of num_classes at dim
Tensor one_hot_along_dim(const Tensor& index, sint num_classes, int64_t dim = -1);
// out[..., i, ...] = x[..., index[..., i, ...], ...] along dim (tinygrad's gather, by a one-hot sum)
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// the (r, c) bool mask of j - i >= diagonal (tinygrad's _tri), and x's lower triangle
Tensor tri(sint r, sint c, int64_t diagonal, const std::string& device);
Tensor tril(const Tensor& x, int64_t diagonal = 0);

}  // namespace tg::nn_detail
