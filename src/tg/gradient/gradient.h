#pragma once
// Autograd as a graph rewrite (tinygrad's gradient.py): pm_gradient holds one derivative rule per op; each rule
// takes the gradient flowing into a node (the context) and returns one gradient per source (null: none flows).
// compute_gradient walks the graph from the root back to the targets, summing the gradients of shared nodes.
#include <optional>
#include <unordered_map>
#include <vector>

#include "tg/uop/upat.h"

namespace tg {

using GradList = std::optional<std::vector<UOp>>;  // a null UOp in the list: no gradient for that source

// CUSTOM_GRAD(value, inputs...) is `value`, with a hand-written derivative for `inputs` (an op of ours, not
// tinygrad's). The gradient flowing in goes on into value's own graph as usual (it reaches whatever value was not
// detached from), and the arg's backward gives each input its gradient. The scheduler keeps just `value`. conv2d
// uses it: differentiating its windows gives a kernel that scatters through div/mod indexing, while the same
// gradient written as a transposed convolution is one dense conv kernel (tg/tensor/tensor_pool.cpp).
struct GradFn : ArgObject {
  // one gradient per input (node.src(1), node.src(2), ...; a null UOp: none), given ctx, the gradient of node
  virtual std::vector<UOp> backward(const UOp& ctx, const UOp& node) const = 0;
};
const PatternMatcher<GradList, UOp>& pm_gradient();

// the gradient of root (seeded with root_grad, root's shape) with respect to every node on a path from root to one
// of targets; DETACH and ASSIGN stop the walk. Throws tg::Error for a node on the path no rule differentiates.
// The map is keyed by node; root keeps every key alive.
std::unordered_map<const UOpNode*, UOp> compute_gradient(const UOp& root, const UOp& root_grad,
                                                         const std::vector<UOp>& targets);

}  // namespace tg
