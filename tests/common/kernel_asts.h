#pragma once
// small kernel ASTs built by hand, shared by the test folders: sums of products over views (a matmul, a conv)
#include <vector>

#include "tg/shape/shapetracker.h"
#include "tg/uop/uop.h"

namespace tg::test {

inline ShapeTracker st(const Shape& shape, std::optional<Shape> strides = {}) {
  return {{View::create(shape, strides)}};
}
inline UOp global(int i, int64_t size) {
  return UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(size), {}, ConstValue(int64_t(i)));
}
inline UOp view_of(const UOp& g, const ShapeTracker& s) { return UOp::make(Ops::VIEW, g.dtype(), {g}, st_arg(s)); }
inline UOp load(const UOp& g, const ShapeTracker& s) { return UOp::make(Ops::LOAD, g.dtype().base(), {view_of(g, s)}); }

// out (strides out_st over the full shape, 0 on reduce axes) = sum over `axes` of a * b
inline UOp sum_of_products(const Shape& full, const Shape& out_shape, const Shape& a_st, int64_t a_size,
                           const Shape& b_st, int64_t b_size, std::vector<int64_t> axes, Ops rop = Ops::ADD) {
  UOp prod = load(global(1, a_size), st(full, a_st)) * load(global(2, b_size), st(full, b_st));
  UOp red = UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {prod}, ReduceArg{rop, std::move(axes)});
  UOp out = UOp::make(Ops::STORE, dtypes::void_, {view_of(global(0, tg::prod(out_shape)), st(out_shape)), red});
  return UOp::sink({out});
}
inline UOp matmul(sint n) { return sum_of_products({n, n, n}, {n, n, 1}, {n, 0, 1}, n * n, {0, 1, n}, n * n, {2}); }
// the same with B packed in panels of 16 (pack_matmul_operand: full shape (i, j/16, j%16, k), B at strides (0, 16k, 1,
// 16))
inline UOp packed_matmul(sint n) {
  return sum_of_products({n, n / 16, 16, n}, {n, n / 16, 16, 1}, {n, 0, 0, 1}, n * n, {0, 16 * n, 1, 16}, n * n, {3});
}

}  // namespace tg::test
