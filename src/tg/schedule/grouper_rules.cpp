// kernelize's rules for the tensor graph before kernels are cut (tinygrad's engine/grouper.py, its first half): the
// simplifier, merge_views and the swizzler (view_left, view_right), FUSE, replace_contiguous
#include "tg/schedule/grouper_rules.h"

#include <algorithm>
#include <optional>

#include "tg/helpers/knobs.h"
#include "tg/renderer/renderer.h"
#include "tg/runtime/device.h"
#include "tg/shape/real_strides.h"
#include "tg/uop/symbolic.h"

namespace tg::grouper {

std::optional<View> view_invert(const View& v, const Shape& out_shape) {
  View ret = View::create(v.shape);
  if (v.mask) ret = ret.shrink(*v.mask);
  // the strides may be symbolic (a contiguous buffer of start_pos+1 rows): compared by their bounds, as the reference
  std::vector<bool> flips;
  std::vector<sint> keys;
  for (const sint& s : v.strides) flips.push_back(s < 0), keys.push_back(0 < s ? sint(0) - s : s);
  ret = ret.flip(flips).permute(argsort(keys));
  if (prod(ret.shape) != prod(out_shape)) return std::nullopt;
  return ret;
}
std::optional<ShapeTracker> st_invert(const ShapeTracker& st, const Shape& out_shape) {
  std::vector<View> inv;
  for (size_t i = st.views.size(); i-- > 0;) {
    const Shape& s = i > 0 ? st.views[i - 1].shape : out_shape;
    auto v = view_invert(st.views[i], s);
    if (!v) return std::nullopt;
    inv.push_back(*v);
  }
  return ShapeTracker{inv}.reshape(out_shape);
}

// get_contraction_with_reduce (tinygrad's codegen/lowerer.py); get_contraction is in shape/view.h
std::optional<std::vector<std::vector<int64_t>>> get_contraction_with_reduce(const Shape& old_shape,
                                                                             const Shape& new_shape,
                                                                             const std::vector<int64_t>& reduce_axis) {
  auto contraction = get_contraction(old_shape, new_shape);
  if (!contraction) return std::nullopt;
  auto& c = *contraction;
  auto in_reduce = [&](size_t i) {
    return std::find(reduce_axis.begin(), reduce_axis.end(), static_cast<int64_t>(i)) != reduce_axis.end();
  };
  // the reduce dim must not be empty: borrow from the next one, leaving one
  for (size_t i = 0; i < c.size(); i++) {
    if (!in_reduce(i) || !c[i].empty()) continue;
    size_t take_from = i + 1;
    while (take_from < c.size() && c[take_from].empty()) take_from++;
    if (take_from == c.size() || new_shape[take_from] != 1) return std::nullopt;
    for (size_t j = take_from; j > i; j--) {
      c[j - 1].push_back(c[j].front());
      c[j].erase(c[j].begin());
    }
  }
  return contraction;
}

// *** schedule simplifier ***

UOp simplify_stride0_reduce(M m) {
  UOp reduce = m["reduce"], x = m["x"];
  const ShapeTracker& st = st_of(x);
  if (has_mask(st)) return {};  // must be unmasked
  const auto& axes = axis_arg(reduce);
  for (int64_t a : axes)
    if (st.views.back().strides[a] != 0) return {};  // all stride 0 on the reduced axes
  Shape shape = st.shape();
  if (!all_int(shape)) return {};
  sint prshape = 1;
  Mask arg;
  for (size_t i = 0; i < shape.size(); i++) {
    bool red = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (red) prshape *= shape[i];
    arg.push_back({0, red ? sint(1) : shape[i]});
  }
  UOp ret = uop_shrink(x, arg);
  switch (reduce.arg<ReduceArg>().op) {
    case Ops::ADD: return ret * ret.const_like(prshape);
    case Ops::MUL: return ret.pow(ret.const_like(prshape));
    case Ops::MAX: return ret;  // NOTE: MAX is passthrough
    default: return {};
  }
}

// Whether each output of a reduce reads one contiguous run (its reduced axes, in order, are a C-contiguous block)
bool reduces_contiguous_runs(const std::vector<std::optional<sint>>& real, const Shape& xs, std::vector<int64_t> axes) {
  std::sort(axes.begin(), axes.end());
  int64_t run = 1;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    if (real[static_cast<size_t>(*it)] != run) return false;
    run *= xs[static_cast<size_t>(*it)];
  }
  return true;
}

// A device without local memory (a CPU) runs a reduce as a few rows per core at a time, each row streamed by vector
// accumulators: 256 outputs that each read one long contiguous run already feed 64 cores, and splitting them again
// (as the reference does, for a GPU's occupancy) leaves rows of 1 KB that a core reads as one stream, at half the
// memory bandwidth (bench/bench_reduce's full sum)
bool rows_long_enough(const std::optional<std::string>& device) {
  const Compiled* dev = device ? Device::find(*device) : nullptr;
  return dev != nullptr && !dev->renderer->has_local;  // a tuple of devices, or one that can't open: the reference's
}

// split a big reduce into two kernels when there are few outputs (SPLIT_REDUCEOP, REDUCEOP_SPLIT_THRESHOLD)
UOp split_reduceop(M m) {
  UOp reduce = m["reduce"], x = m["x"];
  Shape xs = uop_shape(x), rs = uop_shape(reduce);
  if (!SPLIT_REDUCEOP || !all_int(xs) || prod(xs) / prod(rs) < REDUCEOP_SPLIT_THRESHOLD) return {};
  auto real = real_strides(st_of(x), true);
  const auto& axes = axis_arg(reduce);
  if (prod(rs) >= 256 && reduces_contiguous_runs(real, xs, axes) && rows_long_enough(uop_device(reduce))) return {};
  int64_t top = std::min<int64_t>(256, (int64_t(1) << REDUCEOP_SPLIT_SIZE) / prod(rs));
  std::optional<std::pair<int64_t, int64_t>> cand;
  for (int64_t i : axes) {
    for (int64_t d = top; d >= 8 && !cand; d--)
      if (xs[i] % d == 0 && real[i] != sint(0)) cand = {i, d};
    if (cand) break;
  }
  if (!cand) return {};
  auto [dim, divisor] = *cand;
  Shape splitted_shape(xs.begin(), xs.begin() + dim);
  splitted_shape.push_back(divisor);
  splitted_shape.push_back(xs[dim] / divisor);
  splitted_shape.insert(splitted_shape.end(), xs.begin() + dim + 1, xs.end());
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < static_cast<int64_t>(splitted_shape.size()); d++)
    if (d != dim) perm.push_back(d);
  perm.push_back(dim);
  UOp splitted = uop_permute(uop_reshape(x, splitted_shape), perm);
  // reduce original axes, then split
  Ops rop = reduce.arg<ReduceArg>().op;
  UOp first = uop_r(splitted, rop, axes);
  return uop_reshape(uop_r(first, rop, {static_cast<int64_t>(rs.size())}), rs);
}

std::optional<sint> contiguous_range(const ShapeTracker& st) {
  if (st.views.size() != 1) return std::nullopt;
  const View& v = st.views[0];
  if (v.mask || v.strides != strides_for_shape(v.shape)) return std::nullopt;
  if (v.offset.is_sym() || !all_int(v.shape)) return std::nullopt;  // symbolic: the view of the buffer
  return v.offset;
}

// DISK runs no kernels: what can be read of a file are ranges of its bytes (tinygrad's BUFFER_VIEW on DISK)
UOp disk_buffer_view(M m) {
  UOp t = m["t"], x = m["x"];
  std::optional<std::string> dev = uop_device(x);
  if (!dev || !dev->starts_with("DISK") || !has_st(x)) return {};
  UOp base = uop_base(x);
  if (base.op() != Ops::BUFFER && base.op() != Ops::BUFFER_VIEW) return {};
  std::optional<sint> range = contiguous_range(st_of(x));
  if (!range)
    throw NotImplementedError(cat("a ", *dev,
                                  " tensor is viewed only as one contiguous range of its file's bytes, got ",
                                  st_of(x).repr(), ": copy it to a device first, e.g. t.to(\"CPU\")"));
  UOp bv = UOp::make(Ops::BUFFER_VIEW, t.dtype(), {base}, Tuple{ConstValue(size_of(t)), ConstValue(*range)});
  return uop_reshape(bv, uop_shape(t));
}

UOp copy_reorder_view(M m) {
  UOp copy = m["copy"], view = m["view"], base = m["base"];
  std::string dev = uop_device_str(copy);
  if (prod(uop_shape(view)) < prod(uop_shape(base))) return uop_copy_to_device(make_contiguous(view), dev);
  return uop_view(uop_copy_to_device(base, dev), st_of(view));
}

// tinygrad's grouper `sym` (named apart from uop/symbolic.h's sym): symbolic_simple, then these
const GPM& grouper_sym() {
  static const GPM rules{
      // a UOp of size 0 is 0
      {op(GroupOp::All - Ops::SINK).named("root"),
       [](M m) -> UOp {
         UOp root = m["root"], base = uop_base(root);
         if (!has_st(base) || size_of(root) != 0) return {};
         if (base.op() == Ops::CONST && const_eq_numeric(base.arg<ConstValue>(), ConstValue(int64_t(0))))
           return {};  // 0.0 too
         return root.const_like(0);
       }},
      // DETACH(x) -> x, CONTIGUOUS_BACKWARD(x) -> x
      {op({Ops::DETACH, Ops::CONTIGUOUS_BACKWARD}, {var("x")}), [](M m) { return m["x"]; }},
      {op(Ops::CUSTOM_GRAD).named("x"), [](M m) { return m["x"].src(0); }},
      // a reduce of size 0 -> its identity
      {op(Ops::REDUCE_AXIS, {var("x")}).named("reduce"),
       [](M m) -> UOp {
         UOp reduce = m["reduce"];
         if (size_of(m["x"]) != 0 || size_of(reduce) == 0) return {};
         return reduce.const_like(identity_element(reduce.arg<ReduceArg>().op, reduce.dtype()));
       }},
      // a reduce on stride 0 -> a shrink
      {op(Ops::REDUCE_AXIS, {var("x")}).named("reduce"), simplify_stride0_reduce},
      // a big reduce -> two reduces
      {op(Ops::REDUCE_AXIS, {var("x")}).named("reduce"), split_reduceop},
      // COPY(CONST) -> CONST
      {op(Ops::COPY, {cvar("x"), op(Ops::DEVICE)}).named("root"),
       [](M m) { return m["root"].const_like(m["x"].arg<ConstValue>()); }},
      // COPY to the same device -> x
      {op(Ops::COPY, {var("x"), op(Ops::DEVICE)}).named("c"),
       [](M m) -> UOp { return uop_device(m["c"]) == uop_device(m["x"]) ? m["x"] : UOp{}; }},
      // COPY(VIEW) -> VIEW(COPY)
      {op(Ops::COPY, {op(Ops::VIEW, {var("base")}).named("view"), op(Ops::DEVICE)}).named("copy"), copy_reorder_view},
      // CAST(VIEW(CONST)) -> VIEW(CONST)
      {op(Ops::CAST, {op(Ops::VIEW, {cvar("x")})}).named("c"),
       [](M m) { return uop_view(m["x"].cast(m["c"].dtype()), st_of(m["c"].src(0))); }},
      // CONTIGUOUS(VIEW(BUFFER)) -> VIEW, when the view is the whole buffer in order
      {op(Ops::CONTIGUOUS, {op(Ops::VIEW, {op(Ops::BUFFER).named("buf")}).named("view")}).named("root"),
       [](M m) -> UOp {
         UOp view = m["view"];
         return st_of(view).contiguous() && size_of(view) == size_of(m["buf"]) ? view : UOp{};
       }},
      // on DISK, BITCAST(x) and CONTIGUOUS(x) -> BUFFER_VIEW of x's bytes: the file's bytes, no kernel
      {op({Ops::BITCAST, Ops::CONTIGUOUS}, {var("x")}).named("t"), disk_buffer_view},
      // CONTIGUOUS of something contiguous -> it
      {op(Ops::CONTIGUOUS, {op({Ops::CONTIGUOUS, Ops::BUFFER, Ops::COPY, Ops::ASSIGN})}).named("root"),
       [](M m) { return m["root"].src(0); }},
      // ASSIGN(t, ASSIGN(t, x)) -> one ASSIGN
      {op(Ops::ASSIGN, {var("t"), op(Ops::ASSIGN, {var("t"), var("x")})}),
       [](M m) { return make_assign(m["t"], make_contiguous(m["x"])); }},
      // an ASSIGN to something unrealized -> CONTIGUOUS
      {op(Ops::ASSIGN, {var("t"), var("x")}),
       [](M m) -> UOp {
         UOp b = uop_base(m["t"]);
         if (b.op() == Ops::BUFFER || b.op() == Ops::BUFFER_VIEW) return {};
         if (b.op() == Ops::MSTACK &&
             std::all_of(b.src().begin(), b.src().end(), [](const UOp& s) { return s.op() == Ops::BUFFER; }))
           return {};  // buffers of a tuple of devices, stacked
         return make_contiguous(m["x"]);
       }},
      // CAST(expand) -> expand(CAST), when the cast doesn't widen
      {op(Ops::CAST, {op(Ops::VIEW).named("vm")}).named("cast"),
       [](M m) -> UOp {
         UOp cast = m["cast"], vm = m["vm"];
         const ShapeTracker& st = st_of(vm);
         if (cast.dtype().itemsize() > vm.dtype().itemsize() || !resolve_lt(st.real_size(), prod(st.shape()), true))
           return {};
         return uop_view(uop_base(vm).cast(cast.dtype()), st);
       }},
      // unary(expand) -> expand(unary)
      {op(GroupOp::Unary, {op(Ops::VIEW, {op(GroupOp::All - ALWAYS_CONTIGUOUS).named("inp")}).named("v")}).named("alu"),
       [](M m) -> UOp {
         UOp alu = m["alu"], v = m["v"];
         const ShapeTracker& st = st_of(v);
         if (!resolve_lt(st.real_size(), prod(uop_shape(alu)), true)) return {};
         return uop_view(m["inp"].alu(alu.op()), st);
       }},
  };
  static const GPM pm = with_ctx<GrouperCtx>(symbolic_simple()) + rules;
  return pm;
}

// ours: the device's own rewrites of its reduces (RenderOpts::kernelize_matcher: the CPU's matmul packing,
// runtime/cpu_kernelize.h)
const GPM& device_rewrites() {
  static const GPM pm{{op(Ops::REDUCE_AXIS).named("reduce"), [](M m) -> UOp {
                         const UOp& reduce = m["reduce"];
                         std::optional<std::string> device = uop_device(reduce);
                         if (!device) return {};
                         const Compiled* dev = Device::find(*device);  // none: a tuple of devices, or can't open
                         const PatternMatcher<UOp>* pm = dev != nullptr ? dev->renderer->kernelize_matcher : nullptr;
                         return pm != nullptr ? pm->rewrite(reduce) : UOp{};
                       }}};
  return pm;
}

// *** merge_views and the swizzler ***

const GPM& merge_views() {
  static const GPM pm{
      {op(Ops::VIEW, {op(Ops::VIEW).named("v1")}).named("v2"),
       [](M m) {
         UOp v1 = m["v1"];
         return v1.replace(std::nullopt, std::nullopt, std::nullopt, st_arg(st_of(v1) + st_of(m["v2"])));
       }},  // VIEW(VIEW) -> VIEW
      {op(GroupOp::Movement, {var("x")}).named("mop"),
       [](M m) { return uop_view(uop_base(m["x"]), st_of(m["mop"])); }},  // movement op -> VIEW
      {op(Ops::VIEW, {var("x")}).named("view"),
       [](M m) -> UOp {
         UOp x = m["x"], view = m["view"];
         const ShapeTracker* xst = uop_st(x);
         return xst && st_of(view).contiguous() && st_of(view).shape() == xst->shape() ? x : UOp{};
       }},  // noop VIEW(x) -> x
      {op(Ops::VIEW, {op(GroupOp::All - Ops::DEFINE_GLOBAL)}).named("view"),
       [](M m) -> UOp {
         UOp view = m["view"];
         const auto& mask = st_of(view).views.back().mask;
         if (!mask) return {};
         for (auto& [b, e] : *mask)
           if (e - b == 0) return view.const_like(0);
         return {};
       }},  // VIEW with empty mask -> 0
      {op(Ops::VIEW, {op({Ops::CONST, Ops::DEFINE_VAR}).named("x")}).named("view"),
       [](M m) -> UOp {
         UOp x = m["x"];
         ShapeTracker nst = st_of(x) + st_of(m["view"]);
         if (has_mask(nst)) return {};
         UOp s0 = x.src(0).replace(std::nullopt, std::nullopt, std::nullopt, st_arg(nst));
         return x.replace(std::nullopt, std::nullopt, std::vector<UOp>{s0});
       }},  // unmasked VIEW(CONST) -> CONST
  };
  return pm;
}

// if there's ones added after reduce, put this before the reduce
UOp reduce_push_add_ones(M m) {
  UOp src = m["src"], r = m["r"], view = m["view"];
  const ShapeTracker& vst = st_of(view);
  Shape rshape = uop_shape(r), vshape = vst.shape();
  auto no_ones = [](const Shape& s) {
    Shape o;
    for (sint x : s)
      if (x != 1) o.push_back(x);
    return o;
  };
  if (!vst.contiguous() || rshape.size() >= vshape.size() || no_ones(rshape) != no_ones(vshape)) return {};
  const auto& axes = axis_arg(r);
  auto contraction = get_contraction_with_reduce(vshape, rshape, axes);
  if (!contraction) return {};
  Shape new_shape, sshape = uop_shape(src);
  std::vector<int64_t> new_axis;
  for (size_t i = 0; i < contraction->size(); i++) {
    const auto& pairs = (*contraction)[i];
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end()) {
      // a reduce axis: a 1 in the view here to put it
      TG_ASSERT(!pairs.empty(), "reduce_push_add_ones: empty contraction");
      for (size_t k = 0; k + 1 < pairs.size(); k++) new_shape.push_back(1);
      new_shape.push_back(sshape[i]);
      new_axis.push_back(static_cast<int64_t>(new_shape.size()) - 1);
    } else {
      for (int64_t p : pairs) new_shape.push_back(vshape[p]);
    }
  }
  UOp ret = r.replace(std::nullopt, std::nullopt, std::vector<UOp>{uop_reshape(src, new_shape)},
                      ReduceArg{r.arg<ReduceArg>().op, new_axis});
  TG_ASSERT(uop_shape(ret) == vshape, "shape mismatch on reduce_push_add_ones");
  return ret;
}

const GPM& view_left() {
  static const GPM pm =
      merge_views() +
      GPM{
          {op(Ops::VIEW,
              {op(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::BIND, Ops::LOAD, Ops::STORE, Ops::VALID})
                   .named("e")})
               .named("view"),
           [](M m) {
             UOp e = m["e"];
             const ShapeTracker& st = st_of(m["view"]);
             std::vector<UOp> src;
             for (const UOp& s : e.src()) src.push_back(uop_view(s, st));
             return e.replace(std::nullopt, std::nullopt, src);
           }},  // VIEW(elementwise) -> elementwise(VIEW)
          {op(Ops::VIEW, {op(Ops::REDUCE_AXIS, {var("src")}).named("r")}).named("view"),
           reduce_push_add_ones},  // VIEW(REDUCE) -> REDUCE(reshape)
      };
  return pm;
}

UOp apply_swizzle(const UOp& u) {
  GrouperCtx ctx;
  return graph_rewrite(u, view_left(), ctx, {.name = "Sub View Left"});
}

std::vector<std::pair<size_t, sint>> non_one_dims(const Shape& shape) {
  std::vector<std::pair<size_t, sint>> ret;
  for (size_t i = 0; i < shape.size(); i++)
    if (shape[i] != sint(1)) ret.push_back({i, shape[i]});
  return ret;
}

// change reduceop axes and input ShapeTrackers, view gets replaced with a reshape. With fuse, the new reduce is
// marked as fused into its consumer (and its input is fused too)
UOp swizzle_reduce(const UOp& r, const UOp& src, const UOp& view, bool fuse) {
  const ShapeTracker& vst = st_of(view);
  const ReduceArg& ra = r.arg<ReduceArg>();
  // contiguous and same size can push to children; a fused reduce only when the shapes match with ones removed
  if (vst.contiguous() && size_of(view) == size_of(r) &&
      (!ra.fuse || non_one_dims(uop_shape(r)) == non_one_dims(vst.shape())))
    return {};
  const auto& axes = ra.axes;
  ShapeTracker input_st = ShapeTracker::from_shape(uop_shape(src));
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < static_cast<int64_t>(input_st.shape().size()); i++)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) perm.push_back(i);
  perm.insert(perm.end(), axes.begin(), axes.end());
  ShapeTracker tmp = input_st.permute(perm);
  Shape rshape(tmp.shape().end() - static_cast<std::ptrdiff_t>(axes.size()), tmp.shape().end());
  sint prshape = prod(rshape);
  Shape strides = strides_for_shape(rshape);
  std::vector<View> nv;
  for (const View& v : vst.views) {
    Shape shape = v.shape, st;
    shape.insert(shape.end(), rshape.begin(), rshape.end());
    for (sint x : v.strides) st.push_back(x * prshape);
    st.insert(st.end(), strides.begin(), strides.end());
    std::optional<Mask> mask;
    if (v.mask) {
      mask = *v.mask;
      for (sint s : rshape) mask->push_back({0, s});
    }
    nv.push_back(View::create(shape, st, v.offset * prshape, mask));
  }
  UOp swizzled_input = apply_swizzle(uop_view(src, tmp + ShapeTracker{nv}));
  if (fuse) swizzled_input = make_fuse(swizzled_input);
  std::vector<int64_t> new_axis;
  for (size_t i = 0; i < axes.size(); i++) new_axis.push_back(static_cast<int64_t>(vst.shape().size() + i));
  UOp red = UOp::make(Ops::REDUCE_AXIS, r.dtype(), {swizzled_input}, ReduceArg{ra.op, new_axis, fuse});
  return uop_reshape(red, vst.shape());
}
UOp swizzle_reduceop(M m) { return swizzle_reduce(m["r"], m["src"], m["view"], false); }

UOp reduceop_view_right(M m) {
  UOp src = m["src"], v = m["v"], r = m["r"];
  TG_ASSERT(st_of(v).contiguous() && size_of(v) == size_of(src), "can't compute new axis for reduce");
  Shape ss = uop_shape(src), rs = uop_shape(r);
  std::vector<int64_t> new_axis;
  for (size_t i = 0; i < std::min(ss.size(), rs.size()); i++)
    if (ss[i] != rs[i]) new_axis.push_back(static_cast<int64_t>(i));
  return uop_reshape(uop_r(src, r.arg<ReduceArg>().op, new_axis), rs);
}

UOp elementwise_view_right(M m) {
  UOp root = m["root"];
  std::vector<UOp> swizzles;
  for (const UOp& x : root.src())
    if (x.op() == Ops::VIEW && !ALWAYS_CONTIGUOUS.has(uop_base(x).op())) swizzles.push_back(x);
  if (swizzles.empty()) return {};
  for (const UOp& x : swizzles)
    TG_ASSERT(size_of(uop_base(x)) == size_of(uop_base(swizzles[0])), "swizzle inputs must have the same size");
  // place view after applying the elementwise op
  ShapeTracker new_st = ShapeTracker::from_shape(uop_shape(uop_base(swizzles[0])));
  std::vector<UOp> new_src;
  for (const UOp& x : root.src()) {
    UOp b = uop_base(x);
    new_src.push_back(uop_shape(b) == new_st.shape() ? b : apply_swizzle(uop_view(x, new_st)));
  }
  return uop_reshape(root.replace(std::nullopt, std::nullopt, new_src), uop_shape(root));
}

// push VIEW to children
const GPM& view_right() {
  static const GPM pm =
      merge_views() +
      GPM{
          {op(Ops::VIEW, {op(Ops::REDUCE_AXIS, {var("src")}).named("r")}).named("view"),
           swizzle_reduceop},  // VIEW(REDUCE) -> REDUCE(VIEW)
          {op(Ops::REDUCE_AXIS, {op(Ops::VIEW, {op(GroupOp::All - ALWAYS_CONTIGUOUS).named("src")}).named("v")})
               .named("r"),
           reduceop_view_right},  // REDUCE(VIEW(x)) -> VIEW(REDUCE(x))
          {op(GroupOp::All - OpSet{Ops::SINK, Ops::GBARRIER}).named("root"),
           elementwise_view_right},  // elementwise(VIEW) -> VIEW(elementwise)
          {op(Ops::REDUCE_AXIS, {op(Ops::REDUCE_AXIS).named("r1")}).named("r2"),
           [](M m) -> UOp {
             UOp r1 = m["r1"], r2 = m["r2"];
             const auto &a1 = r1.arg<ReduceArg>(), &a2 = r2.arg<ReduceArg>();
             if (a1.op != a2.op) return {};
             std::vector<int64_t> axes = a2.axes;
             axes.insert(axes.end(), a1.axes.begin(), a1.axes.end());
             return r1.replace(std::nullopt, std::nullopt, std::nullopt, ReduceArg{a1.op, axes});
           }},  // double reduce -> one reduce
      };
  return pm;
}

// *** FUSE: pull a reduce (an arange) into the kernel of its consumer instead of realizing it ***

// FUSE(x) is pushed down to x's sources until it meets a reduce, which it marks as fused
const GPM& pm_fuse() {
  static const GPM pm{
      {op(Ops::FUSE, {op(Ops::CONTIGUOUS).named("c")}), [](M m) { return m["c"]; }},  // FUSE stops at CONTIGUOUS
      {op(Ops::FUSE, {op(Ops::VIEW, {op(Ops::REDUCE_AXIS, {var("src")}).named("r").or_casted()}).named("view")}),
       [](M m) -> UOp {
         UOp ret = swizzle_reduce(m["r"], m["src"], m["view"], true);
         return ret ? ret.cast(m["view"].dtype()) : UOp{};
       }},  // FUSE(VIEW(REDUCE)) swizzles the reduce
      {op(Ops::FUSE, {op(Ops::REDUCE_AXIS).named("r")}),
       [](M m) -> UOp {
         UOp r = m["r"];
         ReduceArg ra = r.arg<ReduceArg>();
         if (ra.fuse) return {};
         ra.fuse = true;
         return r.replace(std::nullopt, std::nullopt, std::vector<UOp>{make_fuse(r.src(0))}, ra);
       }},  // FUSE(REDUCE) marks the reduce for the grouper
      {op(Ops::FUSE, {op(Ops::VIEW, {op(GroupOp::UnsafePad).named("alu")}).named("view")}),
       [](M m) -> UOp {
         const ShapeTracker& st = st_of(m["view"]);
         if (std::none_of(st.views.begin(), st.views.end(), [](const View& v) { return v.mask.has_value(); }))
           return {};
         return uop_view(make_contiguous(m["alu"]), st);
       }},  // an unsafe pad is realized, not fused
      {op(Ops::FUSE, {op(Ops::VIEW, {op(GroupOp::ALU | OpSet{Ops::CAST}).named("alu")}).named("view")}),
       [](M m) {
         UOp alu = m["alu"];
         const ShapeTracker& st = st_of(m["view"]);
         std::vector<UOp> src;
         for (const UOp& x : alu.src()) src.push_back(make_fuse(apply_swizzle(uop_view(x, st))));
         return alu.replace(std::nullopt, std::nullopt, src);
       }},  // FUSE(VIEW(alu)): the view moves to the alu's sources
      {op(Ops::FUSE).named("x"),
       [](M m) {
         UOp x = m["x"].src(0);
         std::vector<UOp> src;
         for (const UOp& y : x.src()) src.push_back(make_fuse(y));
         return x.replace(std::nullopt, std::nullopt, src);
       }},  // otherwise FUSE moves to the sources
  };
  return pm;
}

// run pm_fuse below a FUSE, with every CONTIGUOUS under it cut off from its sources meanwhile
UOp do_fusion(M m) {
  UOp x = m["x"];
  std::vector<std::pair<UOp, UOp>> cut, back;
  toposort_gated(x, [&](const UOp& u) {
    if (u.op() != Ops::CONTIGUOUS) return true;
    UOp stub = u.replace(std::nullopt, std::nullopt,
                         std::vector<UOp>{UOp::make(Ops::VIEW, dtypes::void_, {}, st_arg(st_of(u)))});
    cut.push_back({u, stub});
    back.push_back({stub, u});
    return false;
  });
  GrouperCtx ctx;
  UOp ret = graph_rewrite(cut.empty() ? x : x.substitute(cut), pm_fuse(), ctx, {.name = "local fusion"});
  return back.empty() ? ret : ret.substitute(back);
}

bool is_arange(const UOp& u) { return u.op() == Ops::REDUCE_AXIS && uop_base(u.src(0)).op() == Ops::CONST; }

// FUSE_ARANGE (on unless FUSE_ARANGE=0): an arange (a reduce of a CONST, which the scheduler would realize) that a
// reduce compares with a loaded tensor (indexing by a tensor: the one-hot `idx == arange`) is fused into that
// compare, so the arange is computed in the reduce's kernel, where codegen folds the one-hot sum into one gated load.
// Narrower than the reference's FUSE_ARANGE=1, which follows the arange through any elementwise chain and breaks on
// graphs such as interpolate's backward (two reduces meet on one axis); here the arange must reach the compare
// through one view into the reduce's input shape, so its axes always land after the reduce's own.
UOp fuse_arange(M m) {
  UOp root = m["root"];
  if (!FUSE_ARANGE || is_arange(root)) return {};
  std::vector<UOp> local_arange;
  std::vector<UOp> topo = toposort_gated(root, [&](const UOp& u) {
    if (is_arange(u)) local_arange.push_back(u);
    return u == root || !(ALWAYS_CONTIGUOUS.has(u.op()) || u.op() == Ops::REDUCE_AXIS);
  });
  if (local_arange.empty()) return {};
  // every arange fused into one kernel puts its axes in the same place: they must agree in shape (can be improved)
  const Shape arange_shape = uop_shape(local_arange[0].src(0));
  for (const UOp& r : local_arange)
    if (uop_shape(r.src(0)) != arange_shape) return {};
  const Shape root_shape = uop_shape(root.src(0));
  std::unordered_map<const UOpNode*, std::vector<UOp>> children;
  for (const UOp& u : topo)
    for (const UOp& s : u.src()) children[s.get()].push_back(u);
  static const std::vector<UOp> none;
  auto kids = [&](const UOp& u) -> const std::vector<UOp>& {
    auto it = children.find(u.get());
    return it == children.end() ? none : it->second;
  };
  std::vector<std::pair<UOp, UOp>> fuse_rep;
  auto fuse_compares = [&](const UOp& r, const UOp& v) {  // v: the arange viewed into the reduce's input shape
    for (const UOp& c : kids(v)) {
      if (c.op() != Ops::CMPNE && c.op() != Ops::CMPLT) continue;
      bool loads = false;  // the other side reads a buffer
      for (const UOp& s : c.toposort())
        loads |= (s.op() == Ops::BUFFER || s.op() == Ops::REDUCE_AXIS) && s != root && s != r;
      if (!loads || std::any_of(fuse_rep.begin(), fuse_rep.end(), [&](auto& p) { return p.first == c; })) continue;
      std::vector<UOp> src;
      for (const UOp& s : c.src()) src.push_back(s == v ? make_fuse(s) : s);
      fuse_rep.push_back({c, c.replace(std::nullopt, std::nullopt, src)});
    }
  };
  for (const UOp& r : local_arange) {
    if (r.arg<ReduceArg>().fuse) continue;  // already fused
    // from the arange through its own elementwise ops (arange's start and step) to the views into the input shape
    std::vector<UOp> q{r};
    UOpSet seen;
    while (!q.empty()) {
      UOp u = q.back();
      q.pop_back();
      for (const UOp& c : kids(u)) {
        if (seen.has(c)) continue;
        seen.add(c);
        if (c.op() == Ops::VIEW && uop_shape(c) == root_shape)
          fuse_compares(r, c);
        else if (has_st(c) && uop_shape(c) != root_shape &&
                 (c.op() == Ops::VIEW || GroupOp::ALU.has(c.op()) || c.op() == Ops::CAST))
          q.push_back(c);
      }
    }
  }
  return fuse_rep.empty() ? UOp{} : root.substitute(fuse_rep);
}

const GPM& do_fuse() {
  static const GPM pm{
      {op(Ops::FUSE).named("x"), do_fusion},
      {op(Ops::REDUCE_AXIS).named("root"), fuse_arange},
  };
  return pm;
}

// *** replace_contiguous: use a contiguous permuted view instead of the parent view if one exists ***

const GPM& replace_contiguous() {
  static const GPM pm{
      {op(Ops::CONTIGUOUS, {op(Ops::VIEW).named("src")}).named("contig"),
       [](M m, GrouperCtx& ctx) -> UOp {
         UOp src = m["src"], base = uop_base(src);
         const ShapeTracker* bst = uop_st(base);
         if (bst == nullptr) return {};
         if (auto sti = st_invert(st_of(src), bst->shape())) ctx.contig.set(base, uop_view(m["contig"], *sti));
         return {};
       }},  // CONTIGUOUS(VIEW(x)): remember x
      {op(GroupOp::ALU).named("alu"),
       [](M m, GrouperCtx& ctx) -> UOp {
         UOp alu = m["alu"];
         std::vector<UOp> src;
         bool changed = false;
         for (const UOp& s : alu.src()) {
           src.push_back(ctx.contig.get_or(s, s));
           changed |= src.back() != s;
         }
         return changed ? alu.replace(std::nullopt, std::nullopt, src) : UOp{};
       }},  // alu(x) -> alu(contiguous view)
  };
  return pm;
}

}  // namespace tg::grouper
