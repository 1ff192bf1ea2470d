#include "tg/gradient/gradient.h"

#include <cmath>
#include <numbers>
#include <unordered_set>

#include "tg/shape/uop_multi.h"
#include "tg/shape/uop_shape.h"
#include "tg/uop/toposort.h"

namespace tg {

namespace {

using G = std::vector<UOp>;  // one gradient per source of the differentiated node

Shape shape_of(const UOp& u) { return uop_shape(u); }
UOp zero_like(const UOp& u) { return u.const_like(ConstValue(int64_t(0))); }
// one gradient per source, in source order (a null UOp: none flows to that source)
template <class... U>
GradList grads(U&&... g) {
  return G{UOp(std::forward<U>(g))...};
}

// REDUCE_AXIS: a sum broadcasts back; a max splits the gradient evenly between the tied maxima; a product divides
GradList reduce_gradient(M m, UOp& ctx) {
  UOp ret = m["ret"], x = ret.src(0);
  const auto& ra = ret.arg<ReduceArg>();
  Shape xs = shape_of(x);
  if (ra.op == Ops::ADD) return grads(uop_expand(ctx, xs));
  if (ra.op == Ops::MAX) {
    UOp is_max = x.ne(uop_expand(ret, xs)).ne(x.const_like(int64_t(1)).cast(dtypes::bool_)).cast(ctx.dtype());
    UOp count = uop_expand(uop_r(is_max, Ops::ADD, ra.axes), xs);
    return grads(fdiv(is_max, count) * uop_expand(ctx, xs));
  }
  if (ra.op == Ops::MUL) return grads(fdiv(uop_expand(ctx * ret, xs), x));
  return std::nullopt;
}

// the nodes between root and the targets, sources first: a node is on the path when one of its sources is a
// target or on the path; DETACH and ASSIGN end it (tinygrad's _deepwalk)
std::vector<UOp> deepwalk(const UOp& root, const std::vector<UOp>& targets) {
  std::unordered_set<const UOpNode*> target_set, on_path;
  for (const UOp& t : targets) target_set.insert(t.get());
  for (const UOp& u : root.toposort())
    for (const UOp& s : u.src())
      if (target_set.count(s.get()) || on_path.count(s.get())) {
        on_path.insert(u.get());
        break;
      }
  return toposort_gated(root, [&](const UOp& u) {
    return u.op() != Ops::DETACH && u.op() != Ops::ASSIGN && on_path.count(u.get()) != 0;
  });
}

}  // namespace

const PatternMatcher<GradList, UOp>& pm_gradient() {
  static constexpr double ln2 = std::numbers::ln2;
  static const auto* pm = new PatternMatcher<GradList, UOp>{
      {op(Ops::CAST).named("ret"), [](M m, UOp& ctx) { return grads(ctx.cast(m["ret"].src(0).dtype())); }},
      {op(Ops::RECIP).named("ret"), [](M m, UOp& ctx) { return grads(-ctx * m["ret"] * m["ret"]); }},
      {op(Ops::SIN).named("ret"),
       [](M m, UOp& ctx) { return grads((std::numbers::pi / 2 - m["ret"].src(0)).sin() * ctx); }},
      {op(Ops::LOG2).named("ret"), [](M m, UOp& ctx) { return grads(fdiv(ctx, m["ret"].src(0) * ln2)); }},
      {op(Ops::EXP2).named("ret"), [](M m, UOp& ctx) { return grads(m["ret"] * ctx * ln2); }},
      {op(Ops::SQRT).named("ret"), [](M m, UOp& ctx) { return grads(fdiv(ctx, m["ret"] * 2)); }},
      {op({Ops::CMPLT, Ops::CMPNE}), [](M, UOp&) { return grads(UOp(), UOp()); }},
      {op(Ops::ADD), [](M, UOp& ctx) { return grads(ctx, ctx); }},
      {op(Ops::POW).named("ret"),
       [](M m, UOp& ctx) {
         UOp ret = m["ret"], b = ret.src(0), e = ret.src(1);
         UOp both_zero = b.eq(zero_like(b)) & e.eq(zero_like(e));
         UOp db = ctx * both_zero.where(e, e * b.pow(e - 1));
         UOp neg_inf_or_zero = (e < 0).where(ret.const_like(-INFINITY), zero_like(ret));
         UOp de = ctx * b.eq(zero_like(b)).where(neg_inf_or_zero, ret * b.log2() * ln2);
         return grads(db, de);
       }},
      {op(Ops::MAX).named("ret"),
       [](M m, UOp& ctx) {  // ties: each side gets half
         UOp a = m["ret"].src(0), b = m["ret"].src(1), half = ctx * 0.5, zero = zero_like(ctx);
         return grads((a > b).where(ctx, a.ne(b).where(zero, half)), (a < b).where(ctx, a.ne(b).where(zero, half)));
       }},
      {op(Ops::MUL).named("ret"), [](M m, UOp& ctx) { return grads(m["ret"].src(1) * ctx, m["ret"].src(0) * ctx); }},
      {op(Ops::WHERE).named("ret"),
       [](M m, UOp& ctx) {
         UOp c = m["ret"].src(0), zero = zero_like(ctx);
         return grads(UOp(), c.where(ctx, zero), c.where(zero, ctx));
       }},
      {op(Ops::REDUCE_AXIS).named("ret"), reduce_gradient},
      {op({Ops::CONTIGUOUS, Ops::FUSE}), [](M, UOp& ctx) { return grads(ctx); }},
      {op(Ops::CONTIGUOUS_BACKWARD), [](M, UOp& ctx) { return grads(UOp::make(Ops::CONTIGUOUS, ctx.dtype(), {ctx})); }},
      {op(Ops::RESHAPE).named("ret"), [](M m, UOp& ctx) { return grads(uop_reshape(ctx, shape_of(m["ret"].src(0)))); }},
      {op(Ops::PERMUTE).named("ret"),
       [](M m, UOp& ctx) { return grads(uop_permute(ctx, argsort(tuple_ints(m["ret"].arg())))); }},
      {op(Ops::PAD).named("ret"),
       [](M m, UOp& ctx) {
         Shape s = shape_of(m["ret"].src(0));
         const Mask p = arg_mask(m["ret"].arg());
         Mask sh;
         for (size_t i = 0; i < s.size(); i++) sh.push_back({p[i].first, s[i] + p[i].first});
         return grads(uop_shrink(ctx, sh));
       }},
      {op(Ops::SHRINK).named("ret"),
       [](M m, UOp& ctx) {
         Shape s = shape_of(m["ret"].src(0));
         const Mask p = arg_mask(m["ret"].arg());
         Mask pd;
         for (size_t i = 0; i < s.size(); i++) pd.push_back({p[i].first, s[i] - p[i].second});
         return grads(uop_pad(ctx, pd));
       }},
      {op(Ops::FLIP).named("ret"),
       [](M m, UOp& ctx) {
         std::vector<bool> axes;
         for (const ConstValue& c : m["ret"].arg<Tuple>()) axes.push_back(as_bool(c));
         return grads(uop_flip(ctx, axes));
       }},
      // the gradient of a broadcast sums over the broadcast dims, in the accumulation dtype
      {op(Ops::EXPAND).named("ret"),
       [](M m, UOp& ctx) {
         Shape in = shape_of(m["ret"].src(0)), out = shape_of(m["ret"]);
         std::vector<int64_t> axes;
         for (size_t i = 0; i < in.size(); i++)
           if (in[i] != out[i]) axes.push_back(static_cast<int64_t>(i));
         return grads(uop_r(ctx.cast(sum_acc_dtype(ctx.dtype())), Ops::ADD, axes).cast(ctx.dtype()));
       }},
      // COPY: the gradient goes back to the source's device (from a tuple of replicas: the first one's)
      {op(Ops::COPY).named("ret"),
       [](M m, UOp& ctx) { return grads(uop_copy_to_device(ctx, uop_device_str(m["ret"].src(0))), UOp()); }},
      // MULTI: each device takes its slice of the gradient
      {op(Ops::MULTI).named("ret"),
       [](M m, UOp& ctx) {
         const UOp& ret = m["ret"];
         return grads(uop_shard_slice(uop_copy_to_device(ctx, uop_device_str(ret)), *uop_axis(ret)));
       }},
      {op(Ops::BITCAST), [](M, UOp&) { return grads(UOp()); }},  // no gradient through a bitcast
      {op(Ops::CUSTOM_GRAD).named("ret"),
       [](M m, UOp& ctx) {
         UOp ret = m["ret"];
         const GradFn* fn = object_arg<GradFn>(ret.arg());
         TG_ASSERT(fn != nullptr, "CUSTOM_GRAD without a GradFn arg");
         G out{ctx};
         for (UOp& g : fn->backward(ctx, ret)) out.push_back(std::move(g));
         return GradList(std::move(out));
       }},
  };
  return *pm;
}

std::unordered_map<const UOpNode*, UOp> compute_gradient(const UOp& root, const UOp& root_grad,
                                                         const std::vector<UOp>& targets) {
  std::unordered_map<const UOpNode*, UOp> grads{{root.get(), root_grad}};
  std::vector<UOp> order = deepwalk(root, targets);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UOp& t0 = *it;
    auto g = grads.find(t0.get());
    if (g == grads.end()) continue;
    UOp ctx = g->second;
    GradList lgrads = pm_gradient().rewrite(t0, &ctx);
    TG_CHECK(lgrads.has_value(), "failed to compute gradient for ", op_repr(t0.op()), " (", t0.dtype(),
             "): no derivative rule for it");
    TG_ASSERT(lgrads->size() == t0.src().size(), "got ", lgrads->size(), " gradients for ", op_repr(t0.op()),
              ", expected ", t0.src().size());
    const Metadata* fwd = t0.metadata();
    const Metadata* bw = fwd ? intern_metadata(fwd->name, fwd->caller, true) : nullptr;
    for (size_t i = 0; i < lgrads->size(); i++) {
      UOp& v = (*lgrads)[i];
      if (!v) continue;
      const UOp& k = t0.src(i);
      if (auto kg = grads.find(k.get()); kg != grads.end())
        kg->second = kg->second + v;
      else
        grads.emplace(k.get(), v);
      if (bw) v.set_metadata(bw);
    }
  }
  return grads;
}

}  // namespace tg
