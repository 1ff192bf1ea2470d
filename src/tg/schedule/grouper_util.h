#pragma once
// helpers the grouper shares with the scheduler: ordered UOp sets and maps, a gated toposort, graph_rewrite_map
// with tinygrad's metadata propagation (the all_metadata table, kept per kernelize call)
#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tg/shape/uop_shape.h"
#include "tg/uop/toposort.h"
#include "tg/uop/upat.h"

namespace tg {

// an insertion-ordered set of UOps (tinygrad's dict[UOp, None]); holds its members alive
class UOpSet {
 public:
  bool add(const UOp& u) {
    if (!in_.insert(u.get()).second) return false;
    order_.push_back(u);
    return true;
  }
  bool has(const UOp& u) const { return in_.count(u.get()) != 0; }
  void erase(const UOp& u) {
    if (in_.erase(u.get()) == 0) return;
    for (size_t i = 0; i < order_.size(); i++)
      if (order_[i] == u) {
        order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
  }
  size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }
  const std::vector<UOp>& items() const { return order_; }

 private:
  std::vector<UOp> order_;
  std::unordered_set<const UOpNode*> in_;
};

// an insertion-ordered map UOp -> UOp (tinygrad's dict[UOp, UOp]); setting an existing key keeps its position
class UOpMap {
 public:
  void set(const UOp& k, const UOp& v) {
    auto [it, fresh] = idx_.emplace(k.get(), items_.size());
    if (fresh)
      items_.push_back({k, v});
    else
      items_[it->second].second = v;
  }
  const UOp* get(const UOp& k) const {
    auto it = idx_.find(k.get());
    return it == idx_.end() ? nullptr : &items_[it->second].second;
  }
  UOp get_or(const UOp& k, const UOp& dflt) const {
    const UOp* v = get(k);
    return v ? *v : dflt;
  }
  const UOp& at(const UOp& k) const;
  const std::vector<std::pair<UOp, UOp>>& items() const { return items_; }

 private:
  std::vector<std::pair<UOp, UOp>> items_;
  std::unordered_map<const UOpNode*, size_t> idx_;
};

// tinygrad's all_metadata: the Tensor methods behind a node. A node made by a Tensor method has its own
// (UOp::metadata); graph_rewrite_map adds the metadata of what a node replaced.
class MetaTable {
 public:
  std::vector<const Metadata*> get(const UOp& u) const;
  void set(const UOp& u, std::vector<const Metadata*> m) { m_[u.get()] = {u, std::move(m)}; }

 private:
  std::unordered_map<const UOpNode*, std::pair<UOp, std::vector<const Metadata*>>> m_;
};

// graph_rewrite_map: rewrites every node of sink's graph with one shared cache (tinygrad's RewriteContext), so
// the map has an entry per node. A replaced node's metadata is added to its replacement's. input_map chains a
// previous map: each of its keys maps to where its value went.
template <class Ctx>
UOpMap graph_rewrite_map(const UOp& sink, const PatternMatcher<UOp, Ctx>& pm, Ctx& ctx, MetaTable& meta,
                         RewriteOpts opts = {}, const UOpMap* input_map = nullptr);

// *** implementation ***

template <class Ctx>
class MapRewriter {
 public:
  MapRewriter(const PatternMatcher<UOp, Ctx>& pm, Ctx& ctx) : pm_(pm), ctx_(ctx) {}
  // tinygrad's unified_rewrite, with the replace cache kept across calls
  UOp rewrite(const UOp& root, bool bottom_up) {
    struct Item {
      UOp n;
      int stage;
      UOp new_n;
    };
    std::vector<Item> stack{{root, 0, root}};
    while (!stack.empty()) {
      Item it = std::move(stack.back());
      stack.pop_back();
      if (replace_.count(it.n.get())) continue;
      if (it.stage == 0) {
        UOp new_n = bottom_up ? pm_.fixed_point_rewrite(it.new_n, &ctx_) : it.new_n;
        stack.push_back({it.n, 1, new_n});
        for (auto s = new_n.src().rbegin(); s != new_n.src().rend(); ++s) stack.push_back({*s, 0, *s});
      } else if (it.stage == 1) {
        std::vector<UOp> new_src;
        bool changed = false;
        for (const UOp& s : it.new_n.src()) {
          new_src.push_back(replace_.at(s.get()).second);
          changed |= new_src.back() != s;
        }
        UOp next;
        if (!changed) {
          if (bottom_up || !(next = pm_.rewrite(it.new_n, &ctx_))) {
            replace_.emplace(it.n.get(), std::make_pair(it.n, it.new_n));
            continue;
          }
        } else {
          const UOp& nn = it.new_n;
          next = UOp::make(nn.op(), nn.dtype(), std::move(new_src), nn.arg(), nn.tag());
        }
        stack.push_back({it.n, 2, next});
        stack.push_back({next, 0, next});
      } else {
        UOp r = replace_.at(it.new_n.get()).second;
        replace_.emplace(it.n.get(), std::make_pair(it.n, std::move(r)));
      }
    }
    return replace_.at(root.get()).second;
  }

 private:
  const PatternMatcher<UOp, Ctx>& pm_;
  Ctx& ctx_;
  std::unordered_map<const UOpNode*, std::pair<UOp, UOp>> replace_;
};

template <class Ctx>
UOpMap graph_rewrite_map(const UOp& sink, const PatternMatcher<UOp, Ctx>& pm, Ctx& ctx, MetaTable& meta,
                         RewriteOpts opts, const UOpMap* input_map) {
  std::optional<trace::StepScope> step;
  if (trace::tracking()) [[unlikely]]
    step.emplace(sink, opts.name, opts.bottom_up, opts.file, opts.line);
  const bool bottom_up = opts.bottom_up;
  MapRewriter<Ctx> rw(pm, ctx);
  UOpMap new_map;
  for (const UOp& k : sink.toposort()) {
    UOp v = rw.rewrite(k, bottom_up);
    new_map.set(k, v);
    if (k == v) continue;
    auto km = meta.get(k);
    if (km.empty()) continue;
    std::vector<const Metadata*> vm;  // dedup(v's) + k's, as tinygrad
    for (const Metadata* m : meta.get(v))
      if (std::find(vm.begin(), vm.end(), m) == vm.end()) vm.push_back(m);
    vm.insert(vm.end(), km.begin(), km.end());
    meta.set(v, std::move(vm));
  }
  if (input_map != nullptr)
    for (const auto& [k, v] : input_map->items()) new_map.set(k, new_map.get_or(v, v));
  return new_map;
}

// the BUFFER a kernel source stands for (tinygrad's buf_uop): itself, or what an ASSIGN writes; an assign to a
// contiguous range (BUFFER_VIEW) writes its base BUFFER
inline UOp buf_uop(const UOp& u) {
  if (u.op() == Ops::BUFFER) return u;
  if (u.op() == Ops::MSELECT) return UOp::make(Ops::MSELECT, u.dtype(), {buf_uop(u.src(0))}, u.arg());
  if (u.op() == Ops::MSTACK) {
    std::vector<UOp> src;
    for (const UOp& s : u.src()) src.push_back(buf_uop(s));
    return UOp::make(Ops::MSTACK, u.dtype(), src);
  }
  TG_ASSERT(u.op() == Ops::ASSIGN, "buf_uop: must be ASSIGN, not ", u.op());
  UOp b = uop_base(u.src(0));
  return b.op() == Ops::BUFFER_VIEW ? b.src(0) : b;
}

}  // namespace tg
