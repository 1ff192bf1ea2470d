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
const PatternMatcher<GradList, UOp>& pm_gradient();

// the gradient of root (seeded with root_grad, root's shape) with respect to every node on a path from root to one
// of targets; DETACH and ASSIGN stop the walk. Throws tg::Error for a node on the path no rule differentiates.
// The map is keyed by node; root keeps every key alive.
std::unordered_map<const UOpNode*, UOp> compute_gradient(const UOp& root, const UOp& root_grad,
                                                         const std::vector<UOp>& targets);

}  // namespace tg
