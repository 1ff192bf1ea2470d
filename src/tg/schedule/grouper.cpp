// kernelize (tinygrad's engine/grouper.py): simplify the tensor graph, decide which UOps realize (group_realizes),
// cut the graph into KERNELs at those UOps (create_kernels) and build each kernel's AST (view_left/view_right
// swizzling, add_buffer_ops, fix_kernel_ops). Every stage is a PatternMatcher; the walks use explicit stacks.
#include "tg/schedule/grouper.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "tg/codegen/kernel.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/device.h"
#include "tg/schedule/grouper_util.h"
#include "tg/uop/symbolic.h"

namespace tg {

// *** the Kernel arg ***

std::string metadata_repr(const std::vector<const Metadata*>& m) {
  std::vector<std::string> parts;
  for (const Metadata* x : m) parts.push_back(x->repr());
  if (parts.size() == 1) return "(" + parts[0] + ",)";
  return "(" + join(parts, ", ") + ")";
}

std::string KernelArg::repr() const {
  std::string ast_rep;
  if (ast.op() == Ops::SINK) {
    std::vector<std::string> ops;
    for (const UOp& s : ast.src()) ops.push_back(op_repr(s.op()));
    ast_rep = "SINK" + (ops.size() == 1 ? "(" + ops[0] + ",)" : "(" + join(ops, ", ") + ")");
  } else {
    ast_rep = op_repr(ast.op());
  }
  return cat("<Kernel ", ast.toposort().size(), " ", ast_rep, " ", metadata_repr(metadata), ">");
}
uint64_t KernelArg::hash() const {
  uint64_t h = hash_combine(0x6b65726e656cULL, reinterpret_cast<uintptr_t>(ast.get()));
  for (const Metadata* m : metadata) h = hash_combine(h, reinterpret_cast<uintptr_t>(m));
  return h;
}
ObjectArg kernel_arg(UOp ast, std::vector<const Metadata*> metadata) {
  return std::make_shared<const KernelArg>(std::move(ast), std::move(metadata));
}
const KernelArg& get_kernel(const UOp& k) {
  const KernelArg* ka = object_arg<KernelArg>(k.arg());
  TG_ASSERT(ka != nullptr, "not a KERNEL: ", k.op());
  return *ka;
}

const UOp& UOpMap::at(const UOp& k) const {
  const UOp* v = get(k);
  TG_ASSERT(v != nullptr, "UOp not in map: ", k.op());
  return *v;
}

std::vector<const Metadata*> MetaTable::get(const UOp& u) const {
  if (auto it = m_.find(u.get()); it != m_.end()) return it->second.second;
  if (const Metadata* m = u.metadata()) return {m};
  return {};
}

namespace {

// *** small tensor-level helpers (tinygrad's UOp properties) ***

const ShapeTracker& st_of(const UOp& u) {
  const ShapeTracker* st = uop_st(u);
  TG_ASSERT(st != nullptr, "UOp ", u.op(), " has no ShapeTracker");
  return *st;
}
bool has_st(const UOp& u) { return uop_st(u) != nullptr; }
sint size_of(const UOp& u) {
  if (u.op() == Ops::BUFFER_VIEW) return as_int(u.arg<Tuple>().at(0));
  return uop_size(u);
}
UOp make_contiguous(const UOp& u) { return UOp::make(Ops::CONTIGUOUS, u.dtype(), {u}); }
UOp make_fuse(const UOp& u) { return UOp::make(Ops::FUSE, u.dtype(), {u}); }
UOp make_gbarrier(const UOp& u) { return UOp::make(Ops::GBARRIER, u.dtype(), {u}); }
UOp make_assign(const UOp& t, const UOp& x) { return UOp::make(Ops::ASSIGN, t.dtype(), {t, x}); }
const std::vector<int64_t>& axis_arg(const UOp& r) { return r.arg<ReduceArg>().axes; }
std::vector<const Metadata*> dedup(const std::vector<const Metadata*>& xs) {
  std::vector<const Metadata*> out;
  for (const Metadata* m : xs)
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  return out;
}
std::vector<ShapeTracker> dedup_sts(std::vector<ShapeTracker> xs) {
  std::vector<ShapeTracker> out;
  for (auto& s : xs)
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  return out;
}

// View.invert / ShapeTracker.invert: the view that undoes this one, when it only permutes and flips
std::optional<View> view_invert(const View& v, const Shape& out_shape) {
  View ret = View::create(v.shape);
  if (v.mask) ret = ret.shrink(*v.mask);
  std::vector<bool> flips;
  std::vector<sint> keys;
  for (sint s : v.strides) flips.push_back(s < 0), keys.push_back(s > 0 ? -s : s);
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

// *** the context every grouper matcher shares ***

struct GrouperCtx {
  MetaTable* meta = nullptr;
  UOpMap contig;                         // replace_contiguous: base -> contiguous view of it
  UOpSet* realizes = nullptr;            // do_realize / add_gbarrier
  std::vector<UOp> bufs;                 // add_buffer_ops: the kernel's buffers, output first
  std::optional<ShapeTracker> store_st;  // check_load_st: how the kernel stores its first output
};
using GPM = PatternMatcher<UOp, GrouperCtx>;

constexpr OpSet ALWAYS_CONTIGUOUS{Ops::CONTIGUOUS, Ops::ASSIGN, Ops::COPY,    Ops::BUFFER, Ops::BUFFER_VIEW, Ops::CONST,
                                  Ops::BIND,       Ops::DEVICE, Ops::MSELECT, Ops::MSTACK, Ops::GBARRIER};

// *** schedule simplifier ***

UOp simplify_stride0_reduce(M m) {
  UOp reduce = m["reduce"], x = m["x"];
  const ShapeTracker& st = st_of(x);
  if (has_mask(st)) return {};  // must be unmasked
  const auto& axes = axis_arg(reduce);
  for (int64_t a : axes)
    if (st.views.back().strides[a] != 0) return {};  // all stride 0 on the reduced axes
  Shape shape = st.shape();
  sint prshape = 1;
  Mask arg;
  for (size_t i = 0; i < shape.size(); i++) {
    bool red = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (red) prshape *= shape[i];
    arg.push_back({0, red ? 1 : shape[i]});
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
  if (!device) return false;
  try {
    return !Device::get(*device).renderer->has_local;
  } catch (const std::exception&) {
    return false;  // a tuple of devices, or one that can't open here: the reference's rule
  }
}

// split a big reduce into two kernels when there are few outputs (SPLIT_REDUCEOP, REDUCEOP_SPLIT_THRESHOLD)
UOp split_reduceop(M m) {
  UOp reduce = m["reduce"], x = m["x"];
  Shape xs = uop_shape(x), rs = uop_shape(reduce);
  if (!SPLIT_REDUCEOP || prod(xs) / prod(rs) < REDUCEOP_SPLIT_THRESHOLD) return {};
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
      // CONTIGUOUS of something contiguous -> it
      {op(Ops::CONTIGUOUS, {op({Ops::CONTIGUOUS, Ops::BUFFER, Ops::COPY, Ops::ASSIGN})}).named("root"),
       [](M m) { return m["root"].src(0); }},
      // ASSIGN(t, ASSIGN(t, x)) -> one ASSIGN
      {op(Ops::ASSIGN, {var("t"), op(Ops::ASSIGN, {var("t"), var("x")})}),
       [](M m) { return make_assign(m["t"], make_contiguous(m["x"])); }},
      // an ASSIGN to something unrealized -> CONTIGUOUS
      {op(Ops::ASSIGN, {var("t"), var("x")}),
       [](M m) -> UOp {
         Ops b = uop_base(m["t"]).op();
         return b != Ops::BUFFER && b != Ops::BUFFER_VIEW ? make_contiguous(m["x"]) : UOp{};
       }},
      // CAST(expand) -> expand(CAST), when the cast doesn't widen
      {op(Ops::CAST, {op(Ops::VIEW).named("vm")}).named("cast"),
       [](M m) -> UOp {
         UOp cast = m["cast"], vm = m["vm"];
         const ShapeTracker& st = st_of(vm);
         if (cast.dtype().itemsize() > vm.dtype().itemsize() || prod(st.shape()) <= st.real_size()) return {};
         return uop_view(uop_base(vm).cast(cast.dtype()), st);
       }},
      // unary(expand) -> expand(unary)
      {op(GroupOp::Unary, {op(Ops::VIEW, {op(GroupOp::All - ALWAYS_CONTIGUOUS).named("inp")}).named("v")}).named("alu"),
       [](M m) -> UOp {
         UOp alu = m["alu"], v = m["v"];
         const ShapeTracker& st = st_of(v);
         if (prod(uop_shape(alu)) <= st.real_size()) return {};
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
                         const PatternMatcher<UOp>* pm = nullptr;
                         try {
                           pm = Device::get(*device).renderer->kernelize_matcher;
                         } catch (const std::exception&) {  // a tuple of devices, or one that can't open here
                         }
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

// *** do_realize: which UOps always realize ***

void realize_before_view(const UOp& view, const UOp& tr, UOpSet& realizes) {
  const ShapeTracker& st = st_of(view);
  // always realize unsafe pad ops before masked view
  if (has_mask(st)) {
    bool can_pad = true;
    for (const UOp& u : toposort_gated(tr, [&](const UOp& x) { return !realizes.has(x); }))
      if (GroupOp::UnsafePad.has(u.op())) can_pad = false;
    if (!can_pad) {
      realizes.add(tr);
      return;
    }
  }
  // fold simple pads
  Shape trs = uop_shape(tr);
  if (st.views.size() == 1 && st.views.back().mask) {
    sint msize = 1;
    for (auto& [b, e] : *st.views.back().mask) msize *= e - b;
    if (prod(trs) >= msize) return;
  }
  // realize before expand
  if (prod(trs) < prod(st.shape()) && !DONT_REALIZE_EXPAND) realizes.add(tr);
}

const GPM& do_realize() {
  static const GPM pm{
      {op(Ops::SINK).named("s"),
       [](M m, GrouperCtx& ctx) -> UOp {
         for (const UOp& x : m["s"].src())
           if (UOp b = uop_base(x); !ALWAYS_CONTIGUOUS.has(b.op())) ctx.realizes->add(b);
         return {};
       }},  // SINK parents realize
      {op(OpSet{Ops::ASSIGN, Ops::CONTIGUOUS} | GroupOp::Meta).named("tr"),
       [](M m, GrouperCtx& ctx) -> UOp {
         ctx.realizes->add(m["tr"]);
         return {};
       }},  // ASSIGN/CONTIGUOUS/COPY realize
      {op(Ops::VIEW, {op(GroupOp::All - ALWAYS_CONTIGUOUS).named("tr")}).named("view"),
       [](M m, GrouperCtx& ctx) -> UOp {
         realize_before_view(m["view"], m["tr"], *ctx.realizes);
         return {};
       }},  // realize before expand/unsafe pad
      {op({Ops::COPY, Ops::MSELECT, Ops::MSTACK}).named("rb"),
       [](M m, GrouperCtx& ctx) -> UOp {
         for (const UOp& s : m["rb"].src())
           if (!ALWAYS_CONTIGUOUS.has(s.op())) ctx.realizes->add(s);
         return {};
       }},  // parents of COPY realize
  };
  return pm;
}

// *** group_realizes ***

using Children = std::unordered_map<const UOpNode*, UOpSet>;
const std::vector<UOp>& children_of(const Children& children, const UOp& u) {
  static const std::vector<UOp> none;
  auto it = children.find(u.get());
  return it == children.end() ? none : it->second.items();
}

// the children of r's group, through fusable (contiguous, same size) edges; an explicit stack of frames
void recursive_group(const UOp& r, const Children& children, const UOpSet& realizes, const UOpMap& reduce_for_op,
                     UOpSet& group) {
  std::unordered_map<const UOpNode*, std::vector<ShapeTracker>> cache;
  sint rsize = st_of(r).size();
  struct Frame {
    UOp tr;
    ShapeTracker st;
    size_t i;
  };
  std::vector<Frame> stack;
  auto enter = [&](const UOp& tr, const ShapeTracker& st) {
    auto& seen = cache[tr.get()];
    if (std::find(seen.begin(), seen.end(), st) != seen.end()) return;
    seen.push_back(st);
    if (realizes.has(tr) && tr != r) {
      // can only fuse contiguous; max one reduceop per kernel
      if (!st.contiguous() || st.size() != rsize || reduce_for_op.get(tr)) group.add(r);
      group.add(tr);
      return;
    }
    stack.push_back({tr, st, 0});
  };
  enter(r, st_of(r));
  while (!stack.empty()) {
    Frame& f = stack.back();
    const auto& kids = children_of(children, f.tr);
    if (f.i >= kids.size()) {
      stack.pop_back();
      continue;
    }
    UOp tr_next = kids[f.i++];
    if (tr_next.op() == Ops::REDUCE_AXIS) {  // max one reduceop per kernel
      group.add(r);
      stack.pop_back();
      continue;
    }
    std::vector<ShapeTracker> sts;
    for (const UOp& x : tr_next.src())
      if (uop_base(x) == f.tr) sts.push_back(st_of(x));
    sts = dedup_sts(std::move(sts));
    if (sts.size() > 1) {  // can only fuse contiguous
      group.add(r);
      stack.pop_back();
      continue;
    }
    ShapeTracker nst = f.st + sts[0];
    enter(tr_next, nst);
  }
}

UOpSet group_realizes(const UOp& sink) {
  UOpSet realizes;
  GrouperCtx ctx;
  ctx.realizes = &realizes;
  graph_rewrite(sink, do_realize(), ctx, {.name = "do_realize"});
  if (DONT_GROUP_REDUCES) return realizes;

  // construct children graph (only for bases)
  Children children;
  UOpSet assigns;
  std::vector<UOp> topo = sink.toposort();
  for (const UOp& u : topo) {
    if (u.op() == Ops::VIEW || u.op() == Ops::SINK) continue;
    if (u.op() == Ops::ASSIGN) assigns.add(buf_uop(u));
    for (const UOp& s : u.src()) children[uop_base(s).get()].add(u);
  }

  // find all reduces, and pair them to a elementwise op. if they can't be cleanly paired, force realize the reduce
  UOpMap reduce_for_op;
  std::vector<UOp> double_reduces;
  for (const UOp& r : topo) {
    if (r.op() != Ops::REDUCE_AXIS || r.arg<ReduceArg>().fuse) continue;  // a fused reduce is in its consumer's kernel
    if (FUSE_CONV_BW && uop_base(r.src(0)).op() == Ops::REDUCE_AXIS && r.src(0) != uop_base(r.src(0)))
      double_reduces.push_back(r);
    if (realizes.has(r)) continue;
    UOpSet group;
    recursive_group(r, children, realizes, reduce_for_op, group);
    // max one reduceop per kernel
    bool can_chase = std::none_of(group.items().begin(), group.items().end(),
                                  [&](const UOp& tr) { return reduce_for_op.get(tr) != nullptr; });
    for (const UOp& u : toposort_gated(r, [&](const UOp& x) { return !realizes.has(x); }))
      if (u.op() == Ops::REDUCE_AXIS && uop_base(u.src(0)).op() == Ops::CONST) {
        can_chase = false;
        break;
      }
    // NOTE: forced_realize exists because the scheduler is incapable of checking for self-contained DAGs
    bool forced_realize = group.has(r);
    if (!forced_realize && group.size() > 1) forced_realize = true;  // can only have one output
    // can only fuse assign if no other assign_target is used in the kernel
    if (!forced_realize) {
      UOpSet assign_targets;
      for (const UOp& x : group.items())
        if (x.op() == Ops::ASSIGN) assign_targets.add(buf_uop(x));
      if (!assign_targets.empty()) {
        std::vector<UOp> parents{r};
        parents.insert(parents.end(), group.items().begin(), group.items().end());
        while (!parents.empty() && !forced_realize) {
          UOp p = uop_base(parents.back());
          parents.pop_back();
          if (p.op() == Ops::BUFFER && assigns.has(p) && !assign_targets.has(p))
            forced_realize = true, can_chase = false;
          if (realizes.has(p)) continue;
          parents.insert(parents.end(), p.src().begin(), p.src().end());
        }
      }
    }
    if (forced_realize || group.empty()) {
      UOp tr = r;
      if (can_chase) {
        // can chase this down to contiguous children
        ShapeTracker st = st_of(tr);
        while (children_of(children, tr).size() == 1) {
          UOp tr_next = children_of(children, tr)[0];
          std::vector<ShapeTracker> sts;
          for (const UOp& s : tr_next.src())
            if (uop_base(s) == tr) sts.push_back(st_of(s));
          sts = dedup_sts(std::move(sts));
          if (sts.size() > 1 || st.size() != sts[0].size()) break;
          st = st + sts[0];
          if (!st.contiguous() || tr_next.op() == Ops::REDUCE_AXIS) break;
          tr = tr_next;
        }
        // don't cast to higher size before store (tr cannot be realized if forced_realize)
        if (tr.op() == Ops::CAST && tr.dtype().itemsize() > tr.src(0).dtype().itemsize()) tr = uop_base(tr.src(0));
      }
      group = UOpSet();
      group.add(tr);
      realizes.add(tr);
    }
    for (const UOp& tr : group.items()) reduce_for_op.set(tr, r);
  }
  // fuse double reduces with no other child
  for (const UOp& reduceop : double_reduces) {
    UOp top = uop_base(reduceop.src(0));
    if (children_of(children, top).size() == 1) realizes.erase(top);
  }
  return realizes;
}

// *** gbarriers where the realize map says ***

const GPM& add_gbarrier() {
  static const GPM pm{
      {op(GroupOp::All - OpSet{Ops::GBARRIER, Ops::ASSIGN}).named("x"),
       [](M m, GrouperCtx& ctx) -> UOp {
         UOp x = m["x"];
         if (!ctx.realizes->has(x) || !is_none(x.tag())) return {};
         return make_gbarrier(x.with_tag(ConstValue(int64_t(1))));
       }},  // x -> GBARRIER(x) where x realizes
  };
  return pm;
}

const GPM& finalize_gbarrier() {
  static const GPM pm{
      // NOTE: limit_bufs (MAX_KERNEL_BUFFERS) is not here: no device this builds for has a limit
      {op({Ops::GBARRIER, Ops::CONTIGUOUS}, {op(Ops::GBARRIER)}).named("x"),
       [](M m) { return m["x"].src(0); }},  // GBARRIER(GBARRIER) -> GBARRIER
      {op(Ops::GBARRIER, {op(Ops::VIEW)}).named("x"),
       [](M m) { return make_gbarrier(make_contiguous(m["x"].src(0))); }},  // GBARRIER(VIEW) -> GBARRIER(CONTIGUOUS)
      {op(Ops::GBARRIER, {op(Ops::CONST)}).named("x"), [](M m) { return m["x"].src(0); }},  // GBARRIER(CONST) -> CONST
  };
  return pm;
}

const GPM& remove_tags() {
  static const GPM pm{
      {op(GroupOp::All).named("x"),
       [](M m) -> UOp {
         UOp x = m["x"];
         return is_none(x.tag()) ? UOp{} : x.with_tag(Arg{});
       }},  // x(tag) -> x
  };
  return pm;
}

// *** create kernels ***

// the element offset of a view that reads one contiguous range of its buffer, in order
std::optional<sint> contiguous_range(const ShapeTracker& st) {
  if (st.views.size() != 1) return std::nullopt;
  const View& v = st.views[0];
  if (v.mask || v.strides != strides_for_shape(v.shape)) return std::nullopt;
  return v.offset;
}

UOp create_kernel(const UOp& x, UOp b, MetaTable& meta) {
  if (!b) b = uop_new_buffer(uop_device_str(x), size_of(x), x.dtype());
  std::vector<UOp> src{b};
  src.insert(src.end(), x.src().begin(), x.src().end());
  UOp kernel = UOp::make(Ops::KERNEL, dtypes::void_, src, kernel_arg(UOp::sink({x}), meta.get(x)));
  // an assign to a view of a buffer writes the view's elements of the whole buffer (the kernel stores through the
  // view). Afterwards the assign is: the buffer; a BUFFER_VIEW of the range when the view is a contiguous range of
  // it (as the reference); else the view of the buffer (there the reference's BUFFER_VIEW reads the wrong elements)
  UOp bb = uop_base(b);
  std::optional<sint> range = contiguous_range(st_of(b));
  if (!range) return uop_view(make_assign(bb, kernel), st_of(b));
  UOp buffer = size_of(b) == size_of(bb)
                   ? bb
                   : UOp::make(Ops::BUFFER_VIEW, b.dtype(), {bb}, Tuple{ConstValue(size_of(b)), ConstValue(*range)});
  return uop_reshape(make_assign(buffer, kernel), uop_shape(x));
}

constexpr OpSet DONT_PLACE_IN_KERNEL{Ops::KERNEL, Ops::ASSIGN, Ops::BUFFER, Ops::MSELECT, Ops::MSTACK, Ops::MULTI};

// walk back the local graph until we reach a realized source
UOp append_to_kernel(const UOp& x, MetaTable& meta) {
  std::vector<UOp> new_srcs;
  const KernelArg& k = get_kernel(x);
  std::vector<const Metadata*> metadata = k.metadata;
  for (const UOp& s : x.src()) {
    if (DONT_PLACE_IN_KERNEL.has(s.op())) {
      new_srcs.push_back(s);
      continue;
    }
    new_srcs.insert(new_srcs.end(), s.src().begin(), s.src().end());
    // NOTE: const and device are shared UOps, they don't change metadata; a reshape after ASSIGN is another kernel
    Ops b = uop_base(s).op();
    if (b == Ops::CONST || b == Ops::DEVICE || (s.op() == Ops::RESHAPE && b == Ops::ASSIGN)) continue;
    auto m = meta.get(s);
    metadata.insert(metadata.end(), m.begin(), m.end());
  }
  std::vector<UOp> dd;
  for (const UOp& s : new_srcs)
    if (std::find(dd.begin(), dd.end(), s) == dd.end()) dd.push_back(s);
  if (dd == x.src()) return {};
  return x.replace(std::nullopt, std::nullopt, dd, kernel_arg(k.ast, dedup(metadata)));
}

const GPM& create_kernels() {
  static const GPM pm{
      {op(Ops::ASSIGN, {var("b"), op(GroupOp::All - Ops::KERNEL)}).named("x"),
       [](M m, GrouperCtx& ctx) { return create_kernel(m["x"], m["b"], *ctx.meta); }},  // ASSIGN(b, x) -> KERNEL
      {op(Ops::GBARRIER, {var("x")}),
       [](M m, GrouperCtx& ctx) { return create_kernel(m["x"], UOp{}, *ctx.meta); }},  // GBARRIER(x) -> KERNEL
      {op(Ops::KERNEL).named("x"),
       [](M m, GrouperCtx& ctx) { return append_to_kernel(m["x"], *ctx.meta); }},  // KERNEL(x) -> KERNEL(x.src)
  };
  return pm;
}

// *** fix kernel AST ***

const GPM& add_buffer_ops() {
  static const GPM pm{
      {op(Ops::BUFFER).named("x"),
       [](M m, GrouperCtx& ctx) {
         UOp x = m["x"];
         auto it = std::find(ctx.bufs.begin(), ctx.bufs.end(), x);
         TG_ASSERT(it != ctx.bufs.end(), "BUFFER not in the kernel's buffers");
         UOp dg =
             UOp::make(Ops::DEFINE_GLOBAL, x.dtype().ptr(size_of(x)), {}, ConstValue(int64_t(it - ctx.bufs.begin())));
         return uop_view(dg, st_of(x)).load();
       }},                                                                          // BUFFER -> LOAD(DEFINE_GLOBAL)
      {op(Ops::SINK, {op(GroupOp::Meta).named("x")}), [](M m) { return m["x"]; }},  // SINK(COPY) -> COPY
      {op(Ops::SINK).each(op(GroupOp::All - Ops::STORE)).named("sink"),
       [](M m, GrouperCtx& ctx) {
         std::vector<UOp> stores;
         const auto& src = m["sink"].src();
         for (size_t i = 0; i < src.size(); i++) {
           UOp s = uop_base(src[i]);
           UOp dg = UOp::make(Ops::DEFINE_GLOBAL, s.dtype().ptr(size_of(ctx.bufs.at(i))), {}, ConstValue(int64_t(i)));
           stores.push_back(uop_view(dg, st_of(s)).store({s}));
         }
         return UOp::sink(stores);
       }},                                                              // SINK(x) -> SINK(STORE(x))
      {op(Ops::ASSIGN).named("x"), [](M m) { return m["x"].src(1); }},  // ASSIGN(t, x) -> x
      {op(Ops::VIEW, {cvar()}).named("self"),
       [](M m) {
         UOp self = m["self"];
         UOp valid = UOp::make(Ops::VALID, dtypes::bool_, {st_of(self).to_uop()});
         return valid.where(self.const_like(uop_base(self).arg<ConstValue>()), ConstValue(int64_t(0)));
       }},  // masked VIEW(CONST) -> VALID.where
  };
  return pm;
}

UOp check_load_st(M m, GrouperCtx& ctx) {
  UOp glbl = m["glbl"], view = m["view"];
  const ShapeTracker& st = st_of(view);
  const auto* garg = std::get_if<ConstValue>(&glbl.arg());
  if (garg == nullptr || *garg != ConstValue(int64_t(0)) || st.contiguous()) return {};
  // fine if it reads each element where it is stored (x[1] += 1: the view's element is read, then written), which
  // the reference doesn't allow
  if (ctx.store_st && st == *ctx.store_st) return {};
  if (st.views.size() == 1) {
    // fine if it becomes contiguous when you shrink expanded axes
    Mask arg;
    for (size_t i = 0; i < st.shape().size(); i++) arg.push_back({0, st.views[0].strides[i] == 0 ? 1 : st.shape()[i]});
    if (st.shrink(arg).contiguous()) return {};
    // fine if it's equal when you shrink a contig
    if (const auto& mask = st.views[0].mask;
        mask && ShapeTracker::from_shape(st.shape()).shrink(*mask) == st.shrink(*mask))
      return {};
  }
  throw Error(
      "self operand of augmented assign must be contiguous.\nhelp: consider using .contiguous():\n"
      "   - a += a.T\n   + a += a.T.contiguous()");
}

const GPM& fix_kernel_ops() {
  static const GPM pm{
      {op({Ops::CONTIGUOUS, Ops::MSELECT}, {var("x")}), [](M m) { return m["x"]; }},  // CONTIGUOUS(x) -> x
      {op(Ops::VIEW, {op(Ops::DEVICE)}).named("view"),
       [](M m) { return m["view"].replace(std::nullopt, std::nullopt, std::vector<UOp>{}); }},  // VIEW(DEVICE) -> VIEW
      {op(Ops::LOAD, {op(Ops::VIEW, {var("glbl")}).named("view")}), check_load_st},  // LOAD: assign target must index
  };
  return pm;
}

const GPM& replace_globals() {
  static const GPM pm{
      {op(Ops::ASSIGN, {op(Ops::BUFFER), op(Ops::KERNEL)}).any_len().named("assign"),
       [](M m) { return m["assign"].src(0); }},  // ASSIGN(BUFFER, KERNEL) -> BUFFER
      {op(Ops::ASSIGN, {op(Ops::BUFFER_VIEW, {op(Ops::BUFFER).named("b")}).named("bv"), op(Ops::KERNEL)}).any_len(),
       [](M m) {
         const Tuple& arg = m["bv"].arg<Tuple>();
         return uop_view(m["b"], ShapeTracker{{View::create({as_int(arg.at(0))}, std::nullopt, as_int(arg.at(1)))}});
       }},  // ASSIGN(BUFFER_VIEW(BUFFER), KERNEL) -> the range of BUFFER
      {op(Ops::MSTACK).named("x"), [](M m) { return m["x"].src(0); }},  // HACK: MSTACK -> its 0 branch
  };
  return pm;
}

UOp fix_kernel_ast(M m) {
  UOp k = m["k"];
  const KernelArg& ka = get_kernel(k);
  if (GroupOp::Meta.has(ka.ast.op()) ||
      std::all_of(ka.ast.src().begin(), ka.ast.src().end(), [](const UOp& s) { return s.op() == Ops::STORE; }))
    return {};
  GrouperCtx ctx;
  // replace global memory ops with the BUFFER they write to
  UOp ast = graph_rewrite(ka.ast, replace_globals(), ctx, {.bottom_up = true, .name = "replace globals"});
  // push views to edges
  ast = graph_rewrite(graph_rewrite(ast, view_left(), ctx, {.name = "Main View Left"}), view_right(), ctx,
                      {.name = "Main View Right"});
  // replace buffer with define_global + add load/store last
  for (const UOp& s : k.src()) {
    UOp b = buf_uop(s);
    while (b.op() == Ops::MSELECT || b.op() == Ops::MSTACK) b = b.src(0);
    ctx.bufs.push_back(b);
  }
  if (ast.op() == Ops::SINK && !ast.src().empty() && ast.src(0).op() != Ops::STORE)
    if (const ShapeTracker* st = uop_st(uop_base(ast.src(0)))) ctx.store_st = *st;
  static const GPM last = view_left() + add_buffer_ops() + fix_kernel_ops();
  ast = graph_rewrite(ast, last, ctx, {.bottom_up = true, .name = "replace buffer"});
  if (ast.op() == Ops::SINK) {
    auto dev = uop_device(k.src(0));
    for (const UOp& s : k.src()) TG_CHECK(uop_device(s) == dev, "all buffers must be on the same device");
  }
  return k.replace(std::nullopt, std::nullopt, std::nullopt, kernel_arg(ast, ka.metadata));
}

// add metadata of KERNEL outputs
UOp append_metadata(M m, GrouperCtx& ctx) {
  UOp root = m["root"], k = m["k"];
  auto rm = ctx.meta->get(root);
  if (rm.empty()) return {};
  const KernelArg& ka = get_kernel(k);
  std::vector<const Metadata*> all = ka.metadata;
  all.insert(all.end(), rm.begin(), rm.end());
  all = dedup(all);
  if (all == ka.metadata) return {};
  std::vector<UOp> src = root.src();
  src[1] = k.replace(std::nullopt, std::nullopt, std::nullopt, kernel_arg(ka.ast, all));
  return root.replace(std::nullopt, std::nullopt, src);
}

const GPM& create_ast() {
  static const GPM pm{
      {op(Ops::KERNEL).named("k"), fix_kernel_ast},  // KERNEL -> KERNEL(ast)
      {op(Ops::ASSIGN, {var(), op(Ops::KERNEL).named("k")}).any_len().named("root"),
       append_metadata},  // ASSIGN: its metadata to the KERNEL
  };
  return pm;
}

const GPM& substitute_pm() {
  static const GPM pm{
      {op(GroupOp::All).named("x"), [](M m, GrouperCtx& ctx) -> UOp { return ctx.contig.get_or(m["x"], UOp{}); }},
  };  // x -> ctx[x] (tinygrad's _substitute, with the map in ctx.contig)
  return pm;
}

}  // namespace

// *** get_kernelize_map ***

namespace {

std::vector<std::pair<UOp, UOp>> kernelize_map(const UOp& big_sink) {
  trace::TrackedContext viz("get_kernelize_map");
  const int call = trace::enabled() ? trace::next_count("get_kernelize_map") : 0;
  MetaTable meta;
  GrouperCtx ctx;
  ctx.meta = &meta;
  // merge_views + simplify (multi_pm and replace_allreduce are not here yet: no multi device)
  static const GPM merge_pm = do_fuse() + merge_views() + grouper_sym() + device_rewrites() + replace_contiguous();
  UOpMap tensor_map = graph_rewrite_map(big_sink, merge_pm, ctx, meta, {.name = "merge_views"});
  UOp sink = tensor_map.at(big_sink);
  trace::snapshot(sink, "View Tensor Graph");  // the cleaned up tensor graph

  // insert gbarriers in places determined by the realize map
  UOpSet realize_map = group_realizes(sink);
  ctx.realizes = &realize_map;
  tensor_map =
      graph_rewrite_map(sink, add_gbarrier(), ctx, meta, {.bottom_up = true, .name = "insert_gbarrier"}, &tensor_map);
  tensor_map = graph_rewrite_map(tensor_map.at(big_sink), finalize_gbarrier(), ctx, meta, {.name = "finalize_gbarrier"},
                                 &tensor_map);
  tensor_map =
      graph_rewrite_map(tensor_map.at(big_sink), remove_tags(), ctx, meta, {.name = "remove_tags"}, &tensor_map);

  // group into kernels
  tensor_map =
      graph_rewrite_map(tensor_map.at(big_sink), create_kernels(), ctx, meta, {.name = "create_kernels"}, &tensor_map);

  // if a kernel depends on a buffer, and that buffer is later assigned to, make the assign depend on the kernel's
  // assign
  UOpMap kernel_assign, assign_rep;
  for (const UOp& u : tensor_map.at(big_sink).toposort()) {
    if (u.op() != Ops::ASSIGN) continue;
    kernel_assign.set(buf_uop(u), u);
    for (const UOp& s : u.src(1).src()) {
      const UOp* a = kernel_assign.get(s);
      if (s.op() != Ops::BUFFER || s == buf_uop(u) || a == nullptr) continue;
      for (const UOp& x : u.toposort())
        TG_CHECK(!(x.op() == Ops::ASSIGN && buf_uop(x) == s),
                 "cycle detected in graph, kernel for a buffer must either depend on ASSIGN or BUFFER");
      std::vector<UOp> src = a->src();
      src.push_back(u);
      UOp na = a->replace(std::nullopt, std::nullopt, src);
      assign_rep.set(*a, na);
      kernel_assign.set(s, na);
    }
  }
  if (!assign_rep.items().empty()) {
    GrouperCtx sctx;
    sctx.contig = assign_rep;
    tensor_map = graph_rewrite_map(tensor_map.at(big_sink), substitute_pm(), sctx, meta,
                                   {.bottom_up = true, .name = "fix_assign"}, &tensor_map);
  }

  // finally, create the AST for kernels
  tensor_map = graph_rewrite_map(tensor_map.at(big_sink), create_ast(), ctx, meta,
                                 {.bottom_up = true, .name = "create_ast"}, &tensor_map);

  // the final graph, and the context's name (tinygrad's "Schedule 2 Kernels n1")
  if (trace::enabled()) {
    const UOp& sched_sink = tensor_map.at(big_sink);
    trace::snapshot(sched_sink, "View Kernel Graph");
    trace::snapshot(sched_sink, "View Memory Graph");
    size_t kernels = 0;
    for (const UOp& u : sched_sink.toposort()) kernels += u.op() == Ops::KERNEL;
    viz.set_name(cat("Schedule ", kernels, kernels == 1 ? " Kernel" : " Kernels", " n", call));
  }
  return tensor_map.items();
}

// *** the kernelize cache ***
//
// Graphs that differ only in the buffers they read kernelize alike: a training step, a model's forward on each
// batch, the same matmul realized in a loop. The map is made once per shape of graph, its buffers turned into
// placeholders; a hit fills the placeholders with this call's buffers (the ones the graph reads) and fresh ones (the
// ones kernelize made), which skips every rewrite of the grouper (~0.15 ms of a 512 matmul's realize). As tinygrad's
// schedule cache, newer than the reference. The key is the graph with placeholders for its buffers (interned, so
// one pointer), the knobs marked KERNELIZE and the nodes' metadata (the kernels' names come from it). SCACHE=0 turns it
// off; VIZ bypasses it, as there each kernelize is a context of rewrites.

struct KernelizeTemplate {
  UOp key;                                // big_sink with placeholder UNIQUEs (holds the interned graph)
  std::string env;                        // knobs_key(KERNELIZE) when it was made
  std::vector<const Metadata*> metadata;  // big_sink's nodes', in toposort order
  // placeholders hole(0 .. inputs): big_sink's UNIQUEs in toposort order; hole(inputs .. inputs + made): the ones
  // kernelize made, in the counter's order
  size_t inputs = 0, made = 0;
  std::vector<size_t> same, changed;  // toposort indices of big_sink's nodes the map leaves alone / replaces
  // SINK(the images of `changed`, then key and image of each entry whose key is a node kernelize made on the way),
  // over the placeholders
  UOp images;
};

// the i-th placeholder: a UNIQUE no BUFFER of a Tensor has (theirs count up from 0), so it never gets a Buffer
UOp hole(size_t i) { return UOp::make(Ops::UNIQUE, dtypes::void_, {}, ConstValue(-1 - static_cast<int64_t>(i))); }

std::vector<std::pair<UOp, UOp>> fill_template(const KernelizeTemplate& t, const std::vector<UOp>& topo,
                                               const std::vector<UOp>& uniques) {
  std::vector<std::pair<UOp, UOp>> fill;
  for (size_t i = 0; i < t.inputs + t.made; i++) fill.push_back({hole(i), i < t.inputs ? uniques[i] : UOp::unique()});
  UOp filled = t.images.substitute(fill);
  std::vector<std::pair<UOp, UOp>> out;
  for (size_t i : t.same) out.push_back({topo[i], topo[i]});
  for (size_t i = 0; i < t.changed.size(); i++) out.push_back({topo[t.changed[i]], filled.src(i)});
  for (size_t i = t.changed.size(); i + 1 < filled.src().size(); i += 2)
    out.push_back({filled.src(i), filled.src(i + 1)});
  return out;
}

KernelizeTemplate make_template(UOp key, std::string env, std::vector<const Metadata*> metadata,
                                const std::vector<UOp>& topo, std::vector<std::pair<UOp, UOp>> to_holes,
                                const std::vector<std::pair<UOp, UOp>>& map) {
  KernelizeTemplate t{std::move(key), std::move(env), std::move(metadata), to_holes.size(), 0, {}, {}, {}};
  std::unordered_map<const UOpNode*, size_t> index;
  for (size_t i = 0; i < topo.size(); i++) index.emplace(topo[i].get(), i);
  std::vector<UOp> images, made_on_the_way;
  for (const auto& [k, v] : map) {
    auto it = index.find(k.get());
    if (it == index.end()) {
      if (k != v) made_on_the_way.insert(made_on_the_way.end(), {k, v});  // k -> k changes no Tensor
    } else if (k == v) {
      t.same.push_back(it->second);
    } else {
      t.changed.push_back(it->second);
      images.push_back(v);
    }
  }
  images.insert(images.end(), made_on_the_way.begin(), made_on_the_way.end());
  UOp images_sink = UOp::sink(std::move(images));
  UOpSet seen;
  for (const auto& h : to_holes) seen.add(h.first);
  std::vector<UOp> made;  // in the order of the counter, so that a hit numbers its new buffers as a miss does
  for (const UOp& u : images_sink.toposort())
    if (u.op() == Ops::UNIQUE && !seen.has(u)) made.push_back(u);
  std::sort(made.begin(), made.end(),
            [](const UOp& a, const UOp& b) { return as_int(a.arg<ConstValue>()) < as_int(b.arg<ConstValue>()); });
  for (const UOp& u : made) to_holes.push_back({u, hole(to_holes.size())});
  t.made = made.size();
  t.images = images_sink.substitute(to_holes);
  return t;
}

}  // namespace

std::vector<std::pair<UOp, UOp>> get_kernelize_map(const UOp& big_sink) {
  if (trace::enabled() || !SCACHE) return kernelize_map(big_sink);
  std::vector<std::pair<UOp, UOp>> to_holes;
  std::vector<UOp> uniques, topo = big_sink.toposort();
  std::vector<const Metadata*> metadata;
  for (const UOp& u : topo) {
    metadata.push_back(u.metadata());
    if (u.op() != Ops::UNIQUE) continue;
    to_holes.push_back({u, hole(to_holes.size())});
    uniques.push_back(u);
  }
  UOp key = big_sink.substitute(to_holes);
  std::string env = knobs_key(knob_flag::KERNELIZE);

  static std::mutex mu;
  static std::unordered_map<const UOpNode*, KernelizeTemplate> cache;
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(key.get()); it != cache.end() && it->second.env == env && it->second.metadata == metadata)
      return fill_template(it->second, topo, uniques);
  }
  std::vector<std::pair<UOp, UOp>> map = kernelize_map(big_sink);
  KernelizeTemplate t = make_template(key, std::move(env), std::move(metadata), topo, std::move(to_holes), map);
  std::lock_guard lock(mu);
  if (cache.size() >= 256) cache.clear();  // graphs that never repeat (new constants each call) don't pile up
  cache.insert_or_assign(key.get(), std::move(t));
  return map;
}

}  // namespace tg
