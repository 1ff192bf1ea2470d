#pragma once
// View: one strided, offset, masked window onto a buffer (tinygrad's shape/view.py).
// Sizes, strides, offsets and masks are sints (shape/sint.h): ints, or expressions of bound Variables.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tg/shape/sint.h"
#include "tg/uop/uop.h"

namespace tg {

using Shape = std::vector<sint>;
using Mask = std::vector<std::pair<sint, sint>>;  // per dim: [begin, end) of valid indices

sint prod(const Shape& s);
inline bool all_int(const Shape& s) {  // no symbolic dims (tinygrad's all_int)
  for (const sint& x : s)
    if (x.is_sym()) return false;
  return true;
}
sint prod_range(const Shape& s, int start, int stop);  // prod(s[start:stop]), the bounds clamped to s
std::string shape_str(const Shape& s);                 // (4, 4), (4,), ()
int64_t prod(const std::vector<int64_t>& s);           // of plain ints (kernel sizes, strides)
inline std::string shape_str(const std::vector<int64_t>& s) { return py_tuple(s); }

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

  int64_t size() const;  // elements; a symbolic dim counts at its largest value (buffers are allocated for it)
  // (idx, valid) for the given index expressions, or RANGE(i) per dim when none are given
  std::pair<UOp, UOp> to_indexed_uops(const std::vector<UOp>* idxs = nullptr, UOp valid = {}) const;

  // movement ops: throw tg::Error on an invalid argument, naming the shapes
  View pad(const Mask& arg) const;
  View shrink(const Mask& arg) const;
  View expand(const Shape& new_shape) const;
  View permute(const std::vector<int64_t>& axis) const;
  View flip(const std::vector<bool>& arg) const;
  std::optional<View> reshape(const Shape& new_shape) const;  // nullopt: not expressible as one view

  // this then vm1 as one view (tinygrad's vm2 + vm1), if possible. Remembered (a model's layers merge the same
  // pairs of views over and over: its symbolic projection made ~15% of a TinyLlama Q4_K process)
  std::optional<View> merge(const View& vm1) const;
  View minify() const;
  std::string repr() const;
  uint64_t hash() const;  // by content
  bool operator==(const View&) const = default;

 private:
  View unsafe_resize(const Mask& arg, std::optional<Mask> mask = {}) const;
  std::optional<View> merge_uncached(const View& vm1) const;
};

}  // namespace tg
