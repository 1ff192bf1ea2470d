// kernelize (tinygrad's engine/grouper.py): simplify the tensor graph, decide which UOps realize (group_realizes),
// cut the graph into KERNELs at those UOps (create_kernels) and build each kernel's AST (view_left/view_right
// swizzling, add_buffer_ops, fix_kernel_ops). Every stage is a PatternMatcher; the walks use explicit stacks.
#include "tg/schedule/grouper.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "tg/codegen/kernel.h"
#include "tg/helpers/knobs.h"
#include "tg/runtime/device.h"
#include "tg/schedule/grouper_rules.h"
#include "tg/schedule/grouper_util.h"
#include "tg/schedule/multi.h"
#include "tg/shape/uop_multi.h"
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

using namespace grouper;  // the context and helpers both halves share (grouper_rules.h)

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
  if (st.views.size() == 1 && st.views.back().mask && all_int(trs)) {
    sint msize = 1;
    for (auto& [b, e] : *st.views.back().mask) msize *= e - b;
    if (!resolve_lt(prod(trs), msize, false)) return;
  }
  // realize before expand
  if (resolve_lt(prod(trs), prod(st.shape()), true) && !DONT_REALIZE_EXPAND) realizes.add(tr);
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

// ours, as tinygrad's newer scheduler decides (rangeify's remove_bufferize keeps the buffer of a value "generated from
// multiple buffers"): an elementwise value read by two nodes or more and so computed in two kernels or more, and read
// from more than 3 buffers, realizes once (a value with one reader is computed where that reader is: a concatenation's
// partial sums are not realized one by one, only the whole). Where it is computed: every reduce that reads it through
// elementwise ops, and every realized node that does. Without it a chain of such values is recomputed from its first
// term in every kernel that reads it: a residual stream's gradient through a transformer's layers, which each layer's
// layernorm backward both sums and adds to (a GPT's 12 layernorm backwards read 9, 16, ..., 94 buffers, 134 of a step's
// 1955 ms with AVX2; its fused AdamW computed the concatenation of 76 gradients in two kernels: the step 1955 -> 1775
// ms). Sets are capped: 2 kernels decide, 4 buffers do.
void realize_shared_values(const std::vector<UOp>& topo, const Children& children, UOpSet& realizes) {
  constexpr size_t kMaxBufs = 3;
  using Few = std::vector<const UOpNode*>;  // a capped set
  auto merge = [](Few& into, const Few& from, size_t cap) {
    for (const UOpNode* x : from) {
      if (into.size() >= cap) return;
      if (std::find(into.begin(), into.end(), x) == into.end()) into.push_back(x);
    }
  };
  // the kernels that compute each node, bottom-up (the node's own when it realizes)
  std::unordered_map<const UOpNode*, Few> kernels;
  for (size_t i = topo.size(); i-- > 0;) {
    const UOp& u = topo[i];
    Few& k = kernels[u.get()];
    for (const UOp& c : children_of(children, u))
      merge(k, c.op() == Ops::REDUCE_AXIS || realizes.has(c) ? Few{c.get()} : kernels[c.get()], 2);
  }
  // of 1M elements or more: a smaller one's recomputation costs less than another kernel (from 64K on, a TinyLlama
  // prefill of 64 tokens realized its softmax's exponentials and its FFN's silu(g) * u: 3 kernels more a layer, 280
  // -> 255 tok/s; of 512 tokens, whose FFN values realize now, 385-393 either way). Small graphs keep the reference's
  // kernels
  auto big = [](const UOp& u) {
    const ShapeTracker* st = uop_st(u);
    return st != nullptr && all_int(st->shape()) && prod(st->shape()).as_int() >= (int64_t(1) << 20);
  };
  // the buffers each node reads, top-down; a node realized here is a buffer to what reads it
  std::unordered_map<const UOpNode*, Few> bufs;
  for (const UOp& u : topo) {
    Few& b = bufs[u.get()];
    if (u.op() == Ops::BUFFER || (realizes.has(u) && u.op() != Ops::SINK)) {
      b = {u.get()};
      continue;
    }
    for (const UOp& s : u.src()) merge(b, bufs[s.get()], kMaxBufs + 1);
    if (GroupOp::ALU.has(u.op()) && b.size() > kMaxBufs && children_of(children, u).size() >= 2 &&
        kernels[u.get()].size() >= 2 && big(u)) {
      realizes.add(u);
      b = {u.get()};
    }
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
  realize_shared_values(topo, children, realizes);

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
      {op(Ops::MSELECT, {op(Ops::RESHAPE).named("r")}).named("ms"),
       [](M m) {
         const UOp& r = m["r"];
         return uop_reshape(uop_mselect(r.src(0), as_int(m["ms"].arg<ConstValue>())), arg_shape(r.arg()));
       }},  // MSELECT(RESHAPE(x)) -> RESHAPE(MSELECT(x))
      {op(Ops::MSTACK).each(op(Ops::RESHAPE)).named("ms"),
       [](M m) {
         const UOp& ms = m["ms"];
         std::vector<UOp> src;
         for (const UOp& x : ms.src()) src.push_back(x.src(0));
         return uop_reshape(UOp::make(Ops::MSTACK, ms.dtype(), src), arg_shape(ms.src(0).arg()));
       }},  // MSTACK(RESHAPE(x)...) -> RESHAPE(MSTACK(x...))
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
    for (size_t i = 0; i < st.shape().size(); i++)
      arg.push_back({0, st.views[0].strides[i] == 0 ? sint(1) : st.shape()[i]});
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
    for (const UOp& s : k.src())
      TG_CHECK(uop_device(s) == dev, "all buffers of a kernel must be on the same device: ", uop_device_str(s), " and ",
               uop_device_str(k.src(0)));
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
  // multi + merge_views + simplify
  static const GPM merge_pm = multi_pm() + replace_allreduce() + do_fuse() + merge_views() + grouper_sym() +
                              device_rewrites() + replace_contiguous();
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
  // assign. The reference does this only for a reader that comes after the assign in the toposort; a reader before it
  // (the graph doesn't order them) could run after the assign and read the new value: an optimizer step's assign to a
  // BatchNorm bias ran before the kernel recomputing the normalized output for the gradient. So those readers are
  // kept until their buffer's assign shows up, which then depends on them too
  UOpMap kernel_assign, assign_rep;
  std::unordered_map<const void*, std::vector<UOp>> early_readers;  // buffer -> kernels that read it before its assign
  for (const UOp& u0 : tensor_map.at(big_sink).toposort()) {
    if (u0.op() != Ops::ASSIGN) continue;
    UOp u = u0;
    if (auto it = early_readers.find(buf_uop(u0).get()); it != early_readers.end()) {
      // a reader that needs the new value of a buffer this kernel reads the old value of can't go first (the two
      // kernels swap values: a fused optimizer's do); as the reference, the order below decides for it
      std::vector<const void*> old_reads;
      for (const UOp& s : u0.src(1).src())
        if (s.op() == Ops::BUFFER && s != buf_uop(u0) && kernel_assign.get(s) != nullptr) old_reads.push_back(s.get());
      std::vector<UOp> src = u0.src();
      for (const UOp& r : it->second) {
        bool cycle = false;
        if (!old_reads.empty())
          for (const UOp& x : r.toposort())
            cycle = cycle ||
                    (x.op() == Ops::ASSIGN && std::find(old_reads.begin(), old_reads.end(),
                                                        static_cast<const void*>(buf_uop(x).get())) != old_reads.end());
        if (!cycle) src.push_back(r);
      }
      if (src.size() > u0.src().size()) {
        u = u0.replace(std::nullopt, std::nullopt, src);
        assign_rep.set(u0, u);
      }
      early_readers.erase(it);
    }
    kernel_assign.set(buf_uop(u), u);
    for (const UOp& s : u.src(1).src())
      if (s.op() == Ops::BUFFER && s != buf_uop(u) && kernel_assign.get(s) == nullptr)
        early_readers[s.get()].push_back(u0);
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
  // SINK(the images of `changed`, in their final form), over the placeholders
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
  return out;
}

KernelizeTemplate make_template(UOp key, std::string env, std::vector<const Metadata*> metadata,
                                const std::vector<UOp>& topo, std::vector<std::pair<UOp, UOp>> to_holes,
                                const std::vector<std::pair<UOp, UOp>>& map) {
  KernelizeTemplate t{std::move(key), std::move(env), std::move(metadata), to_holes.size(), 0, {}, {}, {}};
  std::unordered_map<const UOpNode*, size_t> index;
  for (size_t i = 0; i < topo.size(); i++) index.emplace(topo[i].get(), i);
  std::vector<UOp> images;
  std::vector<std::pair<UOp, UOp>> made_on_the_way;
  for (const auto& [k, v] : map) {
    auto it = index.find(k.get());
    if (it == index.end()) {
      if (k != v) made_on_the_way.emplace_back(k, v);  // k -> k changes no Tensor
    } else if (k == v) {
      t.same.push_back(it->second);
    } else {
      t.changed.push_back(it->second);
      images.push_back(v);
    }
  }
  // the images in their final form: the nodes kernelize made on the way (KERNELs whose ast still holds this call's
  // BUFFERs, in their arg where no substitution reaches) are replaced here, so the template keeps none of them
  UOp images_sink = UOp::sink(std::move(images)).substitute(made_on_the_way);
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

std::atomic<size_t> kernelize_misses{0}, kernelize_count{0};

}  // namespace

size_t kernelize_cache_misses() { return kernelize_misses.load(); }
size_t kernelize_calls() { return kernelize_count.load(); }

std::vector<std::pair<UOp, UOp>> get_kernelize_map(const UOp& big_sink) {
  kernelize_count++;
  if (trace::enabled() || !SCACHE) return kernelize_misses++, kernelize_map(big_sink);
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
  kernelize_misses++;
  std::vector<std::pair<UOp, UOp>> map = kernelize_map(big_sink);
  KernelizeTemplate t = make_template(key, std::move(env), std::move(metadata), topo, std::move(to_holes), map);
  std::lock_guard lock(mu);
  if (cache.size() >= 256) cache.clear();  // graphs that never repeat (new constants each call) don't pile up
  cache.insert_or_assign(key.get(), std::move(t));
  return map;
}

}  // namespace tg
