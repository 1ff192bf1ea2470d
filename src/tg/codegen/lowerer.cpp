#include "tg/codegen/lowerer.h"

#include <algorithm>
#include <cmath>

#include "tg/uop/kernel_info.h"

namespace tg {

// *** indexing ***

namespace {

// (a, b, c, d) -> (ab, c, d) until the dims fit max_sizes; nullopt when they cannot
std::optional<Shape> group_dims(Shape dims, const std::vector<int64_t>& max_sizes) {
  auto too_big = [&] {
    if (dims.size() > max_sizes.size()) return true;
    for (size_t i = 0; i < dims.size(); i++)
      if (dims[i] > max_sizes[i]) return true;
    return false;
  };
  while (too_big()) {
    bool merged = false;
    for (size_t i = 0; i < max_sizes.size(); i++) {
      if (i + 1 < dims.size() && dims[i] * dims[i + 1] <= max_sizes[i]) {
        dims[i] *= dims[i + 1];
        dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        merged = true;
        break;
      }
    }
    if (!merged) return std::nullopt;
  }
  return dims;
}

// (a,) -> (b, c) when a dim is bigger than its max
Shape split_dims(const Shape& dims, const std::vector<int64_t>& max_sizes) {
  bool fits = true;
  for (size_t i = 0; i < std::min(dims.size(), max_sizes.size()); i++) fits &= dims[i] <= max_sizes[i];
  if (fits) return dims;
  Shape d = dims;
  while (d.size() < 3) d.push_back(1);
  for (size_t i = 0; i < d.size(); i++) {
    while (d[i] > max_sizes[i]) {
      int64_t div = 1;
      for (int64_t c = 2; c <= static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(d[i])))); c++)
        if (d[i] % c == 0) {
          div = c;
          break;
        }
      TG_CHECK(div != 1, "cannot limit dim ", shape_str(dims));
      d[i] = d[i].as_int() / div;
      d[(i + 1) % d.size()] *= div;
    }
  }
  if (d[2] == 1) return d[1] == 1 ? Shape{d[0]} : Shape{d[0], d[1]};
  return d;
}

}  // namespace

std::vector<UOp> get_grouped_dims(const std::string& prefix, Shape dims,
                                  const std::optional<std::vector<int64_t>>& max_sizes, bool reverse) {
  if (reverse) std::reverse(dims.begin(), dims.end());
  Shape limited = dims;
  if (max_sizes) {
    if (auto g = group_dims(dims, *max_sizes)) limited = *g;
    TG_CHECK(limited.size() <= max_sizes->size(), "cannot limit dim ", shape_str(dims));
    if (limited == dims) limited = split_dims(dims, *max_sizes);
  }
  std::vector<UOp> raw, ret;
  for (size_t i = 0; i < limited.size(); i++) {
    // a symbolic size: launched at its value, its largest value bounds the index
    ObjectArg sym = limited[i].is_sym() ? std::make_shared<UOpArg>(limited[i].uop()) : nullptr;
    raw.push_back(UOp::make(Ops::SPECIAL, dtypes::int32, {}, SpecialArg{cat(prefix, i), limited[i].vmax(), sym}));
  }
  ret = raw;
  if (limited.size() < dims.size()) {
    ret.clear();
    auto contraction = get_contraction(dims, limited);
    TG_ASSERT(contraction.has_value(), "get_contraction should not be None ", shape_str(dims), " ", shape_str(limited));
    for (size_t i = 0; i < raw.size(); i++) {
      UOp idx = raw[i];
      const auto& grp = (*contraction)[i];
      for (size_t j = 0; j + 1 < grp.size(); j++) {
        sint d = dims[static_cast<size_t>(grp[j])];
        ret.push_back(idx % d);
        idx = idiv(idx, d);
      }
      ret.push_back(idx);
    }
  } else if (limited.size() > dims.size()) {
    size_t a = limited.size(), b = dims.size();
    if (a == 2 && b == 1) ret = {raw[0] * limited[1] + raw[1]};
    if (a == 3 && b == 1) ret = {raw[0] * (limited[1] * limited[2]) + raw[1] * limited[2] + raw[2]};
    if (a == 3 && b == 2) ret = {raw[0] * limited[1] + raw[1], raw[2]};
  }
  if (reverse) std::reverse(ret.begin(), ret.end());
  return ret;
}

Shape ast_full_shape(const UOp& ast) {
  Shape full;
  for (const UOp& u : ast.toposort()) {
    if (u.op() != Ops::VIEW) continue;
    const ShapeTracker* st = get_st(u.arg());
    if (st == nullptr) continue;
    const Shape& s = st->shape();
    if (full.empty())
      full = s;
    else if (s.size() == full.size())
      for (size_t i = 0; i < s.size(); i++) full[i] = smax(full[i], s[i]);
  }
  return full;
}

namespace {
const ShapeTracker& st_of(const UOp& u) {  // the ShapeTracker of a LOAD/STORE: its VIEW source
  const ShapeTracker* st = get_st(u.src(0).arg());
  TG_ASSERT(st != nullptr, "no ShapeTracker on ", u.op());
  return *st;
}
UOp base_of(UOp u) {
  while (u.op() == Ops::VIEW || GroupOp::Movement.has(u.op())) u = u.src(0);
  return u;
}
UOp range_uop(const sint& end, int64_t axis) { return UOp::range(dtypes::int32, end.to_uop(), axis); }
}  // namespace

IndexContext get_index(const UOp& ast, const RenderOpts& opts) {
  const KernelInfo* kip = as_kernel_info(ast.arg());
  KernelInfo ki = kip ? *kip : KernelInfo();
  // NOTE: assumes the shape is <global dims> <local dims> <group_for_reduces> <reduces> <upcasts/unrolls>
  Shape full_shape = ast_full_shape(ast);
  std::vector<UOp> topo = ast.toposort();
  int64_t n = static_cast<int64_t>(full_shape.size());
  int64_t first_upcasted = n - ki.upcasted;
  int64_t first_reduce = first_upcasted;
  for (const UOp& x : topo)
    if (x.op() == Ops::REDUCE_AXIS)
      for (int64_t a : x.arg<ReduceArg>().axes) first_reduce = std::min(first_reduce, a);
  std::vector<UOp> local_loads;
  for (const UOp& x : topo)
    if (x.op() == Ops::LOAD && base_of(x.src(0)).op() == Ops::DEFINE_LOCAL) local_loads.push_back(x);
  // NOTE: sum up the reduced axes looking across all local loads, yields the number of grouped reduces
  int64_t group_for_reduces = 0;
  for (int64_t i = first_reduce; i < first_upcasted; i++) {
    bool differs = false;
    for (const UOp& l : local_loads)
      differs |= st_of(l).shape()[static_cast<size_t>(i)] != st_of(ast.src(0)).shape()[static_cast<size_t>(i)];
    group_for_reduces += differs;
  }
  int64_t global_dims = first_reduce - ki.local_dims;
  auto slice = [&](int64_t a, int64_t b) { return Shape(full_shape.begin() + a, full_shape.begin() + b); };

  IndexContext ctx;
  std::vector<UOp>& idxs = ctx.idxs;
  if (opts.has_local) {
    if (ki.dont_use_locals) {
      TG_ASSERT(ki.local_dims == 0, "can't use locals if there's no local dims");
      idxs = get_grouped_dims("idx", slice(0, global_dims), opts.global_max, true);
    } else {
      // define indexes for GPU-like execution
      idxs = get_grouped_dims("gidx", slice(0, global_dims), opts.global_max, true);
      auto l = get_grouped_dims("lidx", slice(global_dims, first_reduce + group_for_reduces), opts.local_max);
      idxs.insert(idxs.end(), l.begin(), l.end());
    }
  } else {
    // all loops are RANGES
    for (int64_t i = 0; i < first_reduce; i++) idxs.push_back(range_uop(full_shape[static_cast<size_t>(i)], i));
  }
  // reduce loops
  for (int64_t i = first_reduce + group_for_reduces; i < first_upcasted; i++)
    idxs.push_back(range_uop(full_shape[static_cast<size_t>(i)], i));
  // upcast loops
  for (int64_t i = first_upcasted; i < n; i++) {
    int64_t g = full_shape[static_cast<size_t>(i)];
    Tuple vals;
    for (int64_t j = 0; j < g; j++) vals.push_back(ConstValue(j));
    UOp vc = UOp::vconst(dtypes::int32.vec(static_cast<int>(g)), vals);
    idxs.push_back(UOp::make(Ops::UNROLL, dtypes::int32, {vc}, PairTuple{{i, g}}));
  }
  // late indexes (group for reduce)
  ctx.ridxs = idxs;
  for (int64_t a = first_reduce; a < first_reduce + group_for_reduces; a++)
    ctx.ridxs[static_cast<size_t>(a)] = range_uop(full_shape[static_cast<size_t>(a)], 1000 + a);
  return ctx;
}

// *** lowering (given index) ***

namespace {

UOp lower_reduce_axis(M m, IndexContext& ctx) {
  UOp x = m["x"];
  const ReduceArg& ra = x.arg<ReduceArg>();
  // NOTE: always using ridxs is fine here
  std::vector<UOp> reduce_range;
  PairTuple contract_axis;
  for (int64_t a : ra.axes) {
    const UOp& r = ctx.ridxs.at(static_cast<size_t>(a));
    if (r.op() == Ops::RANGE)
      reduce_range.push_back(r);
    else {
      TG_ASSERT(r.op() == Ops::UNROLL, "not all UNROLLS in reduce axes");
      for (auto& p : r.arg<PairTuple>()) contract_axis.push_back(p);
    }
  }
  UOp ret = x.src(0);
  if (!contract_axis.empty()) {
    int64_t sz = 1;
    for (auto& p : contract_axis) sz *= p.second;
    ret = UOp::make(Ops::CONTRACT, x.dtype().vec(static_cast<int>(sz)), {ret}, contract_axis);
  }
  // REDUCE supports both "horizontal" reduction and range reduction: the horizontal elements are taken nearest
  reduce_range.insert(reduce_range.begin(), ret);
  return UOp::make(Ops::REDUCE, x.dtype(), std::move(reduce_range), ra.op);
}

UOp lower_load_store(M m, IndexContext& ctx) {
  UOp x = m["x"], buf = m["buf"];
  const ShapeTracker& st = st_of(x);
  bool local_buf = buf.op() == Ops::DEFINE_LOCAL;
  auto [idx, valid] = st.to_indexed_uops(x.op() == Ops::LOAD && local_buf ? &ctx.ridxs : &ctx.idxs);
  if (x.op() == Ops::LOAD) {
    std::vector<UOp> src{buf.index(idx, valid)};
    if (local_buf) src.push_back(UOp::make(Ops::BARRIER, dtypes::void_, {x.src(1)}));
    return UOp::make(Ops::LOAD, x.dtype(), std::move(src));
  }
  // NOTE: only store the local reduceop in the threads that are actually doing the reduce
  bool store_back = false;
  if (buf.dtype().local() && x.src(1).op() == Ops::REDUCE) {
    const UOp& reduce_input = x.src(1).src(0);
    store_back = reduce_input.op() == Ops::LOAD && reduce_input.src(0).dtype().local();
  }
  // NOTE: if we're storing the reduced value back into each thread, need to zero-out the reduced axes
  if (store_back) {
    std::vector<UOp> zidx;
    const auto& rsrc = x.src(1).src();
    for (const UOp& u : ctx.idxs)
      zidx.push_back(std::find(rsrc.begin(), rsrc.end(), u) != rsrc.end() ? u.const_like(0) : u);
    idx = st.to_indexed_uops(&zidx).first;
  }
  if (!buf.dtype().local() || store_back)
    for (size_t i = 0; i < ctx.idxs.size(); i++)
      if (ctx.idxs[i] != ctx.ridxs[i]) valid = valid * ctx.idxs[i].eq(ctx.idxs[i].const_like(0));
  return UOp::make(Ops::STORE, dtypes::void_, {buf.index(idx, valid), x.src(1)});
}

UOp lower_const(M m) {
  UOp x = m["x"];
  const ShapeTracker* st = get_st(x.src(0).arg());
  if (st != nullptr)
    for (const View& v : st->views) TG_ASSERT(!v.mask.has_value(), "VIEW in CONST/DEFINE_VAR source must be unmasked");
  return x.replace(std::nullopt, std::nullopt, std::vector<UOp>{});
}

}  // namespace

// *** pm_lowerer ***

const PatternMatcher<UOp, IndexContext>& pm_lowerer() {
  using namespace pat;
  static const PatternMatcher<UOp, IndexContext> pm = {
      {op(Ops::REDUCE_AXIS).named("x"), lower_reduce_axis},                          // REDUCE_AXIS -> REDUCE(ranges)
      {op({Ops::CONST, Ops::DEFINE_VAR}, {op(Ops::VIEW)}).named("x"), lower_const},  // CONST(VIEW) -> CONST
      {op(Ops::VALID, {op(Ops::VIEW)}).named("x"),                                   // VALID(VIEW) -> valid expr
       [](M m, IndexContext& ctx) { return get_st(m["x"].src(0).arg())->to_indexed_uops(&ctx.idxs).second; }},
      // rewrite LOAD/STORE VIEW to LOAD/STORE with indexed
      {op({Ops::LOAD, Ops::STORE}, {op(Ops::VIEW, {var("buf")})}).any_len().named("x"), lower_load_store},
      {op(Ops::INDEX, {var("b"), var("idx"), const_pat(dtypes::bool_, true)}),  // INDEX(b, idx, True) -> INDEX(b, idx)
       [](M m) { return m["b"].index(m["idx"]); }},
      {op(Ops::IGNORE).named("x"), [](M m) { return m["x"].src(0); }},  // IGNORE(x) -> x
  };
  return pm;
}

}  // namespace tg
