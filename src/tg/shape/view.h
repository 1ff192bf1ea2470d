#pragma once
// View: one strided, offset, masked window onto a buffer (tinygrad's shape/view.py).
// NOTE: sizes are plain integers for now (sint = int64_t); symbolic sizes (Variables bound per call) come later,
// which is why shape code says sint, and uses python's floor division where tinygrad's `//` is on ints.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tg/uop/uop.h"

namespace tg {

using sint = int64_t;
using Shape = std::vector<sint>;
using Mask = std::vector<std::pair<sint, sint>>;  // per dim: [begin, end) of valid indices

// python's integer division and modulo (floor), as tinygrad's shape code uses them
inline sint floordiv(sint a, sint b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
inline sint floormod(sint a, sint b) { return a - floordiv(a, b) * b; }
inline sint ceildiv(sint a, sint b) { return -floordiv(-a, b); }
sint prod(const Shape& s);
sint prod_range(const Shape& s, int start, int stop);  // prod(s[start:stop]), the bounds clamped to s
std::string shape_str(const Shape& s);                 // (4, 4), (4,), ()

Shape strides_for_shape(const Shape& shape);
Shape canonicalize_strides(const Shape& shape, const Shape& strides);

// the axes of old_shape that multiply into each axis of new_shape, or nullopt when the reshape splits an old
// axis (tinygrad's get_contraction)
std::optional<std::vector<std::vector<int64_t>>> get_contraction(const Shape& old_shape, const Shape& new_shape);

struct View {
  Shape shape, strides;
  sint offset = 0;
  std::optional<Mask> mask;
  bool contiguous = true;

  static View create(const Shape& shape, std::optional<Shape> strides = {}, sint offset = 0,
                     std::optional<Mask> mask = {});

  sint size() const { return prod(shape); }
  // (idx, valid) for the given index expressions, or RANGE(i) per dim when none are given
  std::pair<UOp, UOp> to_indexed_uops(const std::vector<UOp>* idxs = nullptr, UOp valid = {}) const;

  // movement ops: throw tg::Error on an invalid argument, naming the shapes
  View pad(const Mask& arg) const;
  View shrink(const Mask& arg) const;
  View expand(const Shape& new_shape) const;
  View permute(const std::vector<int64_t>& axis) const;
  View flip(const std::vector<bool>& arg) const;
  std::optional<View> reshape(const Shape& new_shape) const;  // nullopt: not expressible as one view

  std::optional<View> merge(const View& vm1) const;  // this then vm1 as one view (tinygrad's vm2 + vm1), if possible
  View minify() const;
  std::string repr() const;
  bool operator==(const View&) const = default;

 private:
  View unsafe_resize(const Mask& arg, std::optional<Mask> mask = {}) const;
};

}  // namespace tg
