#include "tg/shape/real_strides.h"

#include <algorithm>

#include "tg/helpers/helpers.h"

namespace tg {

// the terms of an index as (x, k) with idx = sum of x*k: ADDs are split and constant factors distributed over them, as
// symbolic_flat leaves an index before tinygrad's views_to_real_strides splits it
namespace {

std::vector<std::pair<UOp, sint>> flat_terms(const UOp& idx) {
  std::vector<std::pair<UOp, sint>> out, stack{{idx, 1}};
  while (!stack.empty()) {
    auto [x, k] = stack.back();
    stack.pop_back();
    if (x.op() == Ops::ADD) {
      stack.emplace_back(x.src(1), k), stack.emplace_back(x.src(0), k);  // left first, as split_uop
    } else if (x.op() == Ops::MUL && x.src(1).op() == Ops::CONST && x.src(0).op() != Ops::CONST) {
      stack.emplace_back(x.src(0), k * as_int(x.src(1).const_arg()));
    } else if (x.op() == Ops::MUL && x.src(0).op() == Ops::CONST && x.src(1).op() != Ops::CONST) {
      stack.emplace_back(x.src(1), k * as_int(x.src(0).const_arg()));
    } else {
      out.emplace_back(x, k);
    }
  }
  return out;
}

}  // namespace

std::vector<std::optional<sint>> real_strides(const ShapeTracker& st, bool ignore_valid) {
  const View& last = st.views.back();
  if (st.views.size() == 1 && !last.mask) return {last.strides.begin(), last.strides.end()};
  std::vector<std::optional<sint>> ret(last.shape.size());
  auto [idx, valid] = st.to_indexed_uops();
  auto range_axis = [&](const UOp& r) { return static_cast<size_t>(as_int(r.arg<ConstValue>())); };
  for (auto& [x, k] : flat_terms(idx))
    if (x.op() == Ops::RANGE && range_axis(x) < ret.size()) ret[range_axis(x)] = k;
  std::vector<bool> used(ret.size(), false);
  for (const UOp& x : idx.toposort())
    if (x.op() == Ops::RANGE && range_axis(x) < ret.size()) used[range_axis(x)] = true;
  for (size_t i = 0; i < ret.size(); i++)
    if (!used[i]) ret[i] = 0;
  if (!ignore_valid)  // NOTE: a stride that is not always valid is None
    for (const UOp& x : valid.toposort())
      if (x.op() == Ops::RANGE && range_axis(x) < ret.size()) ret[range_axis(x)] = std::nullopt;
  return ret;
}

std::vector<int> unit_stride_axes(const ShapeTracker& st, bool ignore_valid) {
  std::vector<int> ret;
  auto rs = real_strides(st, ignore_valid);
  for (size_t i = 0; i < rs.size(); i++)
    if (rs[i] && *rs[i] == 1) ret.push_back(static_cast<int>(i));
  return ret;
}

bool axis_is_masked(const ShapeTracker& st, int axis) {
  UOp valid = st.to_indexed_uops().second;
  for (const UOp& x : valid.toposort())
    if (x.op() == Ops::RANGE && as_int(x.arg<ConstValue>()) == axis) return true;
  return false;
}

std::string strides_str(const std::vector<std::optional<sint>>& strides) {
  std::vector<std::string> parts;
  for (auto& s : strides) parts.push_back(s ? s->str() : "None");  // a symbolic stride as its expression
  return py_tuple(parts);
}

bool has_mask(const ShapeTracker& st) {
  return std::any_of(st.views.begin(), st.views.end(), [](const View& v) { return v.mask.has_value(); });
}

}  // namespace tg
