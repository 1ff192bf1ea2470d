#pragma once
// UOp.toposort(gate), shared by the grouper and the gradient walk
#include <unordered_set>
#include <utility>
#include <vector>

#include "tg/uop/uop.h"

namespace tg {

// UOp.toposort(gate): a node whose gate is false is left out, with everything only reachable through it
template <class Gate>
std::vector<UOp> toposort_gated(const UOp& root, Gate gate) {
  std::vector<UOp> ret;
  std::unordered_set<const UOpNode*> seen;
  std::vector<std::pair<UOp, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [node, visited] = std::move(stack.back());
    stack.pop_back();
    if (seen.count(node.get())) continue;
    if (!visited) {
      if (gate(node)) {
        stack.push_back({node, true});
        for (auto s = node.src().rbegin(); s != node.src().rend(); ++s) stack.push_back({*s, false});
      }
    } else {
      seen.insert(node.get());
      ret.push_back(node);
    }
  }
  return ret;
}

}  // namespace tg
