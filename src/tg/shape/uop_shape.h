#pragma once
// shapes and devices of tensor-level UOps (tinygrad's UOp.st, .shape, ._device, .base and the movement-op builders)
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tg/shape/shapetracker.h"

namespace tg {

// fills a cached property of root and of everything below it, bottom-up with an explicit stack (never recursion on
// depth): done(n) says whether node n has it, compute(n) computes it once n's sources have it
template <class Done, class Compute>
void fill_caches(const UOp& root, Done done, Compute compute) {
  if (done(root.get())) return;
  std::vector<std::pair<const UOpNode*, bool>> stack{{root.get(), false}};
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    stack.pop_back();
    if (done(n)) continue;
    if (!expanded) {
      stack.push_back({n, true});
      for (const UOp& s : n->src)
        if (!done(s.get())) stack.push_back({s.get(), false});
    } else {
      compute(n);
    }
  }
}

const ShapeTracker* uop_st(const UOp& u);  // null when the UOp has no shape (codegen-level nodes)
Shape uop_shape(const UOp& u);             // throws when it has none
std::optional<std::string> uop_device(const UOp& u);
std::string uop_device_str(const UOp& u);  // throws when it has none
UOp uop_base(const UOp& u);                // below VIEWs and movement ops
int64_t uop_size(const UOp& u);            // elements; symbolic dims at their largest value (tinygrad's UOp.size)

// movement ops: a no-op movement returns the input itself (tinygrad's _mop)
UOp uop_reshape(const UOp& u, const Shape& s);
UOp uop_expand(const UOp& u, const Shape& s);
UOp uop_permute(const UOp& u, const std::vector<int64_t>& order);
UOp uop_pad(const UOp& u, const Mask& arg);
UOp uop_shrink(const UOp& u, const Mask& arg);
UOp uop_flip(const UOp& u, const std::vector<bool>& axes);
UOp uop_view(const UOp& u, const ShapeTracker& st);  // VIEW(u) with the tracker as arg

// UOp.const with a device and a shape: CONST(VIEW(DEVICE)) reshaped to ones and expanded
UOp uop_const(DType dtype, const ConstValue& v, const std::optional<std::string>& device,
              const std::optional<Shape>& shape);
UOp uop_new_buffer(const std::string& device, sint size, DType dtype);  // BUFFER(UNIQUE, DEVICE)
UOp uop_copy_to_device(const UOp& u, const std::string& device);
UOp uop_r(const UOp& u, Ops op, std::vector<int64_t> axes);  // REDUCE_AXIS over the axes whose size is not 1

}  // namespace tg
