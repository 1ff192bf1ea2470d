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

}  // namespace tg::nn_detail
