#include "tg/shape/shapetracker.h"

#include <algorithm>

#include "tg/uop/symbolic.h"

namespace tg {

ShapeTracker ShapeTracker::from_shape(const Shape& shape, std::optional<Shape> strides) {
  return {{View::create(shape, std::move(strides))}};
}
bool ShapeTracker::consecutive() const {
  return views.size() == 1 && !views[0].mask && views[0].strides == strides_for_shape(views[0].shape);
}
Shape ShapeTracker::reduce(const std::vector<int64_t>& axis) const {
  Shape s = shape();
  for (int64_t a : axis) {
    TG_CHECK(a >= 0 && a < static_cast<int64_t>(s.size()), "reduce axis ", a, " out of range for shape ", shape_str(s));
    s[static_cast<size_t>(a)] = 1;
  }
  return s;
}

static ShapeTracker with_last(const ShapeTracker& st, View v) {
  ShapeTracker out = st;
  out.views.back() = std::move(v);
  return out;
}
ShapeTracker ShapeTracker::pad(const Mask& arg) const { return with_last(*this, views.back().pad(arg)); }
ShapeTracker ShapeTracker::shrink(const Mask& arg) const { return with_last(*this, views.back().shrink(arg)); }
ShapeTracker ShapeTracker::expand(const Shape& s) const { return with_last(*this, views.back().expand(s)); }
ShapeTracker ShapeTracker::permute(const std::vector<int64_t>& a) const {
  return with_last(*this, views.back().permute(a));
}
ShapeTracker ShapeTracker::flip(const std::vector<bool>& a) const { return with_last(*this, views.back().flip(a)); }
ShapeTracker ShapeTracker::reshape(const Shape& new_shape) const {
  if (auto v = views.back().reshape(new_shape)) return with_last(*this, *v);
  ShapeTracker out = *this;
  out.views.push_back(View::create(new_shape));
  return out;
}

ShapeTracker ShapeTracker::mop(Ops op, const Arg& arg) const {
  auto tuple = [&]() -> const Tuple& {
    const Tuple* t = std::get_if<Tuple>(&arg);
    TG_CHECK(t != nullptr, op, " needs a tuple arg, got ", arg_repr(arg));
    return *t;
  };
  auto ints = [&]() { return arg_shape(arg); };
  auto pairs = [&]() { return arg_mask(arg); };
  switch (op) {
    case Ops::RESHAPE: return reshape(ints());
    case Ops::EXPAND: return expand(ints());
    case Ops::PERMUTE: {
      std::vector<int64_t> order;
      for (auto& v : tuple()) order.push_back(as_int(v));
      return permute(order);
    }
    case Ops::PAD: return pad(pairs());
    case Ops::SHRINK: return shrink(pairs());
    case Ops::FLIP: {
      std::vector<bool> f;
      for (auto& v : tuple()) f.push_back(as_bool(v));
      return flip(f);
    }
    default: throw InternalError(cat("mop called with ", op));
  }
}

ShapeTracker ShapeTracker::simplify() const {
  ShapeTracker st = *this;
  while (st.views.size() >= 2) {
    auto nv = st.views[st.views.size() - 2].merge(st.views.back());
    if (!nv) break;
    st.views.pop_back();
    st.views.back() = *nv;
  }
  return st;
}
// the ShapeTracker with f applied to each of its sizes, strides, offsets and mask bounds
template <class F>
static ShapeTracker map_sints(ShapeTracker st, F&& f) {
  for (View& v : st.views) {
    for (sint& x : v.shape) x = f(x);
    for (sint& x : v.strides) x = f(x);
    v.offset = f(v.offset);
    if (v.mask)
      for (auto& [b, e] : *v.mask) b = f(b), e = f(e);
  }
  return st;
}
ShapeTracker ShapeTracker::unbind(VarVals& vals) const {
  return map_sints(*this, [&](const sint& x) { return tg::unbind(x, vals); });
}
ShapeTracker ShapeTracker::rebind(const VarVals& vals) const {
  return map_sints(*this, [&](const sint& x) { return tg::rebind(x, vals); });
}
static UOp find_var(const sint& x, const std::string& name) {
  if (x.is_int()) return {};
  for (const UOp& u : x.uop().toposort())
    if (u.op() == Ops::DEFINE_VAR && u.arg<VarArg>().name == name) return u;
  return {};
}
bool ShapeTracker::has_var(const std::string& name) const {
  bool found = false;
  map_sints(*this, [&](const sint& x) {
    found = found || find_var(x, name);
    return x;
  });
  return found;
}
ShapeTracker ShapeTracker::substitute_var(const std::string& name, int64_t val) const {
  ShapeTracker ret = map_sints(*this, [&](const sint& x) {
    UOp v = find_var(x, name);
    return v ? sint(x.uop().substitute({{v, v.const_like(val)}}).simplify()) : x;
  });
  for (View& v : ret.views) v = View::create(v.shape, v.strides, v.offset, v.mask);
  return ret;
}
ShapeTracker ShapeTracker::operator+(const ShapeTracker& o) const {
  ShapeTracker ret = *this;
  for (auto& v : o.views) {  // one view at a time simplifies better
    ret.views.push_back(v);
    ret = ret.simplify();
  }
  return ret;
}

std::pair<UOp, UOp> ShapeTracker::to_indexed_uops(const std::vector<UOp>* idxs) const {
  auto [idx, valid] = views.back().to_indexed_uops(idxs);
  for (size_t i = views.size() - 1; i-- > 0;) {
    View v = views[i].minify();
    // unravel idx over v's shape: (idx // acc) % dim per dim
    std::vector<UOp> sub(v.shape.size());
    sint acc = 1;
    for (size_t d = v.shape.size(); d-- > 0;) {
      sub[d] = idiv(idx, acc) % v.shape[d];
      acc *= v.shape[d];
    }
    std::tie(idx, valid) = v.to_indexed_uops(&sub, valid);
  }
  UOp s = graph_rewrite(UOp::sink({idx, valid}), symbolic());
  return {s.src(0), s.src(1)};
}

int64_t ShapeTracker::real_size() const {
  const Shape& s = shape();
  if (std::find(s.begin(), s.end(), sint(0)) != s.end()) return 0;
  View v = views[0].mask ? views[0].shrink(*views[0].mask) : views[0];
  auto [idx, valid] = ShapeTracker{{v}}.to_indexed_uops();
  return as_int(idx.vmax()) + 1;
}

UOp ShapeTracker::to_uop() const { return UOp::make(Ops::VIEW, dtypes::void_, {}, st_arg(*this)); }

std::string ShapeTracker::repr() const {
  std::vector<std::string> vs;
  for (auto& v : views) vs.push_back(v.repr());
  return cat("ShapeTracker(views=", py_tuple(vs), ")");
}

// by content, without formatting it (VIEW UOps are made, and hashed, all through scheduling)
uint64_t ShapeTrackerArg::hash() const {
  uint64_t h = st.views.size();
  for (const View& v : st.views) h = hash_combine(h, v.hash());
  return h;
}
// *** movement args: tuples of ints, or a SymArg when a size is symbolic ***

Arg shape_arg(const Shape& s) {
  Tuple t;
  for (const sint& x : s) {
    if (x.is_sym()) return ObjectArg(std::make_shared<SymArg>(s, Mask{}));
    t.push_back(ConstValue(x.as_int()));
  }
  return t;
}
Arg mask_arg(const Mask& m) {
  PairTuple t;
  for (const auto& [lo, hi] : m) {
    if (lo.is_sym() || hi.is_sym()) return ObjectArg(std::make_shared<SymArg>(Shape{}, m));
    t.push_back({lo.as_int(), hi.as_int()});
  }
  return t;
}
Shape arg_shape(const Arg& arg) {
  if (const SymArg* p = object_arg<SymArg>(arg)) return p->shape;
  const Tuple* t = std::get_if<Tuple>(&arg);
  TG_CHECK(t != nullptr, "a movement op needs a tuple arg, got ", arg_repr(arg));
  Shape s;
  for (const ConstValue& v : *t) s.push_back(as_int(v));
  return s;
}
Mask arg_mask(const Arg& arg) {
  if (const SymArg* p = object_arg<SymArg>(arg)) return p->mask;
  const PairTuple* t = std::get_if<PairTuple>(&arg);
  TG_CHECK(t != nullptr, "a movement op needs a tuple of pairs as arg, got ", arg_repr(arg));
  Mask m;
  for (const auto& [lo, hi] : *t) m.push_back({lo, hi});
  return m;
}
std::string SymArg::repr() const {
  if (mask.empty()) return py_tuple(shape);
  std::vector<std::string> parts;
  for (const auto& [lo, hi] : mask) parts.push_back(cat("(", lo, ", ", hi, ")"));
  return py_tuple(parts);
}
uint64_t SymArg::hash() const {
  uint64_t h = shape.size() * 31 + mask.size();
  for (const sint& x : shape) h = hash_combine(h, x.hash());
  for (const auto& [lo, hi] : mask) h = hash_combine(hash_combine(h, lo.hash()), hi.hash());
  return h;
}

Arg st_arg(ShapeTracker st) { return ObjectArg(std::make_shared<ShapeTrackerArg>(std::move(st))); }
const ShapeTracker* get_st(const Arg& arg) {
  const ShapeTrackerArg* p = object_arg<ShapeTrackerArg>(arg);
  return p ? &p->st : nullptr;
}

}  // namespace tg
