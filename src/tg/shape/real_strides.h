#pragma once
// What the opts, the CPU tiles and the kernelize rewrites ask of a ShapeTracker (tinygrad's ShapeTracker.real_strides,
// unit_stride_axes, axis_is_masked)
#include <optional>
#include <string>
#include <vector>

#include "tg/shape/shapetracker.h"

namespace tg {

// per dim: the stride, 0 if the dim is unused, nullopt if it is not one stride (or is masked, unless ignore_valid)
std::vector<std::optional<sint>> real_strides(const ShapeTracker& st, bool ignore_valid = false);
std::vector<int> unit_stride_axes(const ShapeTracker& st, bool ignore_valid = false);
bool axis_is_masked(const ShapeTracker& st, int axis);
bool has_mask(const ShapeTracker& st);                                     // some view has a mask
std::string strides_str(const std::vector<std::optional<sint>>& strides);  // (16, 1, 0), (None, 1)

}  // namespace tg
