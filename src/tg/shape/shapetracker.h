#pragma once
// ShapeTracker: a stack of Views; movement ops on a buffer without copies (tinygrad's shape/shapetracker.py)
#include "tg/shape/view.h"

namespace tg {

struct ShapeTracker {
  std::vector<View> views;

  static ShapeTracker from_shape(const Shape& shape, std::optional<Shape> strides = {});
  const Shape& shape() const { return views.back().shape; }
  int64_t size() const { return views.back().size(); }
  bool contiguous() const { return views.size() == 1 && views[0].contiguous; }
  bool consecutive() const;
  Shape reduce(const std::vector<int64_t>& axis) const;  // the shape with the reduced axes set to 1
  int64_t real_size() const;                             // upper bound on the buffer elements it touches

  // movement ops; reshape merges into the last view when it can, else stacks a new one
  ShapeTracker pad(const Mask& arg) const;
  ShapeTracker shrink(const Mask& arg) const;
  ShapeTracker expand(const Shape& new_shape) const;
  ShapeTracker permute(const std::vector<int64_t>& axis) const;
  ShapeTracker flip(const std::vector<bool>& arg) const;
  ShapeTracker reshape(const Shape& new_shape) const;
  ShapeTracker mop(Ops op, const Arg& arg) const;  // the movement op of a RESHAPE/EXPAND/... UOp
  ShapeTracker simplify() const;
  ShapeTracker unbind(VarVals& vals) const;  // every BIND(var, val) in it replaced by var, vals recording the values
  ShapeTracker rebind(const VarVals& vals) const;  // every BIND(var, _) of a Variable in vals bound to its value there
  bool has_var(const std::string& name) const;     // a Variable of that name in a size, stride, offset or mask
  ShapeTracker substitute_var(const std::string& name, int64_t val) const;  // that Variable replaced by val
  ShapeTracker operator+(const ShapeTracker& st) const;                     // this, then st

  std::pair<UOp, UOp> to_indexed_uops(const std::vector<UOp>* idxs = nullptr) const;  // (idx, valid), simplified
  UOp to_uop() const;                                                                 // VIEW with this as its arg
  std::string repr() const;
  bool operator==(const ShapeTracker&) const = default;
};

// the ShapeTracker as a UOp arg (VIEW), compared and hashed by content
struct ShapeTrackerArg final : ArgObjectOf<ShapeTrackerArg> {
  ShapeTracker st;
  explicit ShapeTrackerArg(ShapeTracker s) : st(std::move(s)) {}
  std::string repr() const override { return st.repr(); }
  uint64_t hash() const override;
  bool operator==(const ShapeTrackerArg&) const = default;
};
Arg st_arg(ShapeTracker st);

// a movement op's arg holding a symbolic size: RESHAPE/EXPAND's shape or PAD/SHRINK's mask (tinygrad keeps UOps in
// those tuples; ours are ints in Tuple/PairTuple, and this payload only where a size is symbolic)
struct SymArg final : ArgObjectOf<SymArg> {
  Shape shape;
  Mask mask;
  SymArg(Shape s, Mask m) : shape(std::move(s)), mask(std::move(m)) {}
  std::string repr() const override;
  uint64_t hash() const override;
  bool operator==(const SymArg&) const = default;
};
Arg shape_arg(const Shape& s);  // a Tuple of ints, or a SymArg
Arg mask_arg(const Mask& m);    // a PairTuple of ints, or a SymArg
Shape arg_shape(const Arg& arg);
Mask arg_mask(const Arg& arg);
const ShapeTracker* get_st(const Arg& arg);  // null when arg is not a ShapeTracker

}  // namespace tg
