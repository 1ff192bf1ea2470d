#include "tg/codegen/linearize.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <queue>
#include <unordered_set>

namespace tg {

namespace {
bool tuplize_less(const UOp& a, const UOp& b) { return tuplize_cmp(a, b) < 0; }
bool contains(const std::vector<UOp>& v, const UOp& u) { return std::find(v.begin(), v.end(), u) != v.end(); }
std::vector<UOp> sort_ctx(const std::vector<UOp>& inp) {
  std::vector<UOp> out;
  for (const UOp& u : inp)
    if (!contains(out, u)) out.push_back(u);
  std::stable_sort(out.begin(), out.end(), tuplize_less);
  return out;
}
}  // namespace

// *** basic block ***

BasicBlock::BasicBlock(std::vector<UOp> lst_, std::vector<UOp> ctx_, UOp end_, int64_t cnt_,
                       std::optional<std::vector<UOp>> child_ctx_)
    : lst(std::move(lst_)), ctx(std::move(ctx_)), end(std::move(end_)), cnt(cnt_), child_ctx(std::move(child_ctx_)) {
  static std::atomic<uint64_t> counter{0};
  serial = counter.fetch_add(1);
}
std::string BasicBlock::repr() const {
  auto disp = [](const UOp& y) -> std::string {
    if (y.op() == Ops::RANGE) return arg_str(y.arg());
    return y.op() == Ops::IF ? "IF" : "<NONE>";
  };
  std::string s = end ? disp(end) + " " : "";
  s += cat("f", cnt, " ");
  std::vector<std::string> c;
  for (const UOp& y : ctx) c.push_back(disp(y));
  s += "[" + join(c, ", ") + "] " + std::to_string(lst.size());
  for (const UOp& y : lst) (s += "\nOps.") += op_name(y.op());
  return s;
}
const BasicBlock& basic_block(const UOp& u) {
  const BasicBlock* bb = object_arg<BasicBlock>(u.arg());
  TG_ASSERT(bb != nullptr, "no BasicBlock on ", u.op());
  return *bb;
}
namespace {
UOp block_uop(Ops op, std::vector<UOp> src, BasicBlock bb) {
  return UOp::make(op, dtypes::void_, std::move(src), ObjectArg(std::make_shared<BasicBlock>(std::move(bb))));
}

// the arg of BLOCKSTART: (ctx, child_ctx), compared by content
struct BlockStartArg final : ArgObjectOf<BlockStartArg> {
  std::vector<UOp> ctx;
  std::optional<std::vector<UOp>> child_ctx;
  BlockStartArg(std::vector<UOp> c, std::optional<std::vector<UOp>> cc) : ctx(std::move(c)), child_ctx(std::move(cc)) {}
  std::string repr() const override { return cat("BlockStart(", ctx.size(), ")"); }
  uint64_t hash() const override {
    uint64_t h = fnv1a("BlockStart");
    for (const UOp& u : ctx) h = hash_combine(h, reinterpret_cast<uintptr_t>(u.get()));
    if (child_ctx) {
      h = hash_combine(h, 1);
      for (const UOp& u : *child_ctx) h = hash_combine(h, reinterpret_cast<uintptr_t>(u.get()));
    }
    return h;
  }
  bool operator==(const BlockStartArg&) const = default;
};
}  // namespace

// NOTE: any toposort should be valid here, unlike last time this isn't required, it's just for speed
std::vector<UOp> block_reorder(const std::vector<UOp>& lst) {
  std::unordered_set<const UOpNode*> in_this_block;
  for (const UOp& u : lst) in_this_block.insert(u.get());
  std::unordered_map<const UOpNode*, std::vector<UOp>> local_children;
  std::unordered_map<const UOpNode*, int64_t> in_degree, priorities;
  // get local children and assign priorities. NOTE: this requires the lst be locally toposorted
  for (auto it = lst.rbegin(); it != lst.rend(); ++it) {
    const UOp& u = *it;
    in_degree[u.get()] = 0;
    for (const UOp& s : u.src())
      if (in_this_block.count(s.get())) {
        local_children[s.get()].push_back(u);
        in_degree[u.get()]++;
      }
    // put loads in the beginning of the block and prevent priority inversion. hack for BARRIER grouping too
    int64_t priority = 0;
    for (const UOp& x : local_children[u.get()]) priority = std::min(priority, priorities.at(x.get()));
    if (u.op() == Ops::LOAD) priority = std::min<int64_t>(priority, -1000);
    if (u.op() == Ops::BARRIER) priority = std::min<int64_t>(priority, -1500);
    priorities[u.get()] = priority;
  }
  // number the uops in "ideal" order
  std::vector<UOp> sorted = lst;
  std::stable_sort(sorted.begin(), sorted.end(), [&](const UOp& a, const UOp& b) {
    int64_t pa = priorities.at(a.get()), pb = priorities.at(b.get());
    if (pa != pb) return pa < pb;
    return tuplize_less(a, b);
  });
  std::unordered_map<const UOpNode*, size_t> nkey;
  for (size_t i = 0; i < sorted.size(); i++) nkey[sorted[i].get()] = i;
  // then force them to be toposorted in as close to the ideal order as possible
  using Item = std::pair<size_t, const UOpNode*>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  std::unordered_map<const UOpNode*, UOp> handle;
  for (const UOp& u : lst) {
    handle[u.get()] = u;
    if (in_degree[u.get()] == 0) heap.push({nkey.at(u.get()), u.get()});
  }
  std::vector<UOp> newlst;
  while (!heap.empty()) {
    const UOpNode* n = heap.top().second;
    heap.pop();
    newlst.push_back(handle.at(n));
    for (const UOp& v : local_children[n])
      if (--in_degree[v.get()] == 0) heap.push({nkey.at(v.get()), v.get()});
  }
  TG_ASSERT(newlst.size() == lst.size(), "len mismatch ", newlst.size(), " != ", lst.size());
  return newlst;
}

// *** block context ***

const std::vector<UOp>& BlockContext::last_ctx(const UOp& u) const {
  auto it = child_ctxs.find(u.get());
  return it != child_ctxs.end() ? it->second : block_ctxs.at(u.get());
}

BlockContext BlockContext::from_sink(const UOp& sink) {
  // get children and all block contexts
  BlockContext ctx;
  for (const UOp& u : sink.toposort()) {
    std::vector<UOp> this_block_ctx;
    ctx.child_count[u.get()] = 0;
    // get children and accumulate the last_ctx
    for (const UOp& s : u.src()) {
      // NOTE: if a parent appears multiple times in the src, it counts multiple times as a child
      ctx.child_count[s.get()] += 1;
      const auto& lc = ctx.last_ctx(s);
      this_block_ctx.insert(this_block_ctx.end(), lc.begin(), lc.end());
    }
    // save the block ctx
    ctx.block_ctxs[u.get()] = sort_ctx(this_block_ctx);
    // RANGE/IF add to the next ctx, STORE/ASSIGN subtract from the next ctx
    if (u.op() == Ops::RANGE || u.op() == Ops::IF) {
      std::vector<UOp> c = ctx.block_ctxs[u.get()];
      c.push_back(u);
      ctx.child_ctxs[u.get()] = sort_ctx(c);
    } else if (u.op() == Ops::STORE) {
      // ugh, deal with non-reduce locals. probably wrong
      bool local = false;
      for (const UOp& x : u.src(0).toposort()) local |= x.op() == Ops::DEFINE_LOCAL;
      if (local) {
        const auto &idx_context = ctx.last_ctx(u.src(0)), &store_context = ctx.last_ctx(u.src(1));
        std::vector<UOp> c;
        for (const UOp& y : store_context)
          if (!contains(idx_context, y) && y.op() == Ops::RANGE) c.push_back(y);
        ctx.child_ctxs[u.get()] = c;
      } else {
        ctx.child_ctxs[u.get()] = {};
      }
    } else if (u.op() == Ops::ASSIGN) {
      TG_ASSERT(u.src(0).op() == Ops::DEFINE_ACC, "ASSIGN must be to a DEFINE_ACC");
      std::vector<UOp> acc_ranges(u.src(0).src().begin() + 1, u.src(0).src().end()), c;
      for (const UOp& y : ctx.last_ctx(u.src(1)))
        if (!contains(acc_ranges, y)) c.push_back(y);
      ctx.child_ctxs[u.get()] = c;
    }
  }
  return ctx;
}

// *** make blocks ***

namespace {

constexpr OpSet DONT_PLACE_IN_BLOCK{Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL, Ops::DEFINE_VAR, Ops::SPECIAL, Ops::CONST};

UOp add_blockends(UOp base_block, std::vector<UOp> new_ctx, const std::vector<UOp>& current_ctx, int64_t cnt = 1) {
  std::vector<UOp> ends_to_add;
  for (const UOp& z : new_ctx)
    if (!contains(current_ctx, z)) ends_to_add.push_back(z);
  while (!ends_to_add.empty()) {
    UOp r = ends_to_add.back();
    ends_to_add.pop_back();
    new_ctx.erase(std::remove(new_ctx.begin(), new_ctx.end(), r), new_ctx.end());
    UOp end_uop = UOp::make(r.op() == Ops::IF ? Ops::ENDIF : Ops::ENDRANGE, dtypes::void_, {r});
    base_block = block_uop(Ops::BLOCKEND, std::vector<UOp>(static_cast<size_t>(cnt), base_block),
                           BasicBlock({end_uop}, new_ctx, r, cnt));
  }
  return base_block;
}

UOp make_block_bottom_up(M m, BlockContext& ctx) {
  UOp x = m["x"];
  std::vector<UOp> current_ctx, lst;
  std::optional<std::vector<UOp>> child_ctx;
  int64_t child_count;
  if (x.op() == Ops::BLOCKSTART) {
    const BlockStartArg* a = object_arg<BlockStartArg>(x.arg());
    current_ctx = a->ctx, child_ctx = a->child_ctx;
    lst = x.src();
    child_count = 1;
  } else {
    current_ctx = ctx.block_ctxs.at(x.get()), child_count = ctx.child_count.at(x.get());
    if (auto it = ctx.child_ctxs.find(x.get()); it != ctx.child_ctxs.end()) child_ctx = it->second;
    lst = {x};
  }
  // count of times we've seen this block, or a seed for a new block if we can't merge it (both in first-seen order)
  std::vector<std::pair<UOp, int64_t>> unmergable;
  auto unm_find = [&](const UOp& u) {
    return std::find_if(unmergable.begin(), unmergable.end(), [&](auto& p) { return p.first == u; });
  };
  struct Seed {
    std::vector<UOp> ctx;
    std::optional<std::vector<UOp>> child_ctx;
    std::vector<UOp> v;
  };
  std::vector<Seed> blockseeds;

  // add the srcs of this to the frontier. NOTE: things may be in here multiple times, that's okay
  std::deque<UOp> frontier;
  for (const UOp& y : lst) frontier.insert(frontier.end(), y.src().rbegin(), y.src().rend());
  while (!frontier.empty()) {
    UOp u = frontier.front();
    frontier.pop_front();
    bool placeable = !DONT_PLACE_IN_BLOCK.has(u.op());
    auto it = placeable ? unm_find(u) : unmergable.end();
    if (placeable && it == unmergable.end()) it = unmergable.insert(unmergable.end(), {u, 0});  // defaultdict read
    if (placeable && ctx.child_count.at(u.get()) == it->second + 1) {
      // count is correct
      const auto& newctx = ctx.block_ctxs.at(u.get());
      if (newctx == current_ctx) {
        // block has same context, merge it, and put the srcs on the frontier
        lst.push_back(u);
        frontier.insert(frontier.end(), u.src().rbegin(), u.src().rend());
      } else {
        // block has different context, add it to blockseeds
        std::optional<std::vector<UOp>> cc;
        if (auto ci = ctx.child_ctxs.find(u.get()); ci != ctx.child_ctxs.end()) cc = ci->second;
        auto si = std::find_if(blockseeds.begin(), blockseeds.end(),
                               [&](const Seed& s) { return s.ctx == newctx && s.child_ctx == cc; });
        if (si == blockseeds.end()) si = blockseeds.insert(blockseeds.end(), Seed{newctx, cc, {}});
        si->v.push_back(u);
      }
      unmergable.erase(it);
    } else {
      // count is incorrect (or it's DONT_PLACE_IN_BLOCK), add it to unmergable
      if (it == unmergable.end()) it = unm_find(u);
      if (it == unmergable.end()) it = unmergable.insert(unmergable.end(), {u, 0});
      it->second += 1;
    }
  }

  // add unmergables to sources
  std::vector<UOp> srcs;
  for (auto& [u, cnt] : unmergable) {
    UOp be = add_blockends(u, ctx.block_ctxs.at(u.get()), current_ctx, cnt);
    for (int64_t i = 0; i < cnt; i++) srcs.push_back(be);
  }
  // add blockseeds, with blockends as needed
  for (Seed& s : blockseeds) {
    UOp base_block =
        UOp::make(Ops::BLOCKSTART, dtypes::void_, s.v, ObjectArg(std::make_shared<BlockStartArg>(s.ctx, s.child_ctx)));
    srcs.push_back(add_blockends(base_block, s.ctx, current_ctx));
  }
  std::reverse(lst.begin(), lst.end());
  lst = block_reorder(lst);
  return block_uop(Ops::BLOCK, std::move(srcs), BasicBlock(std::move(lst), current_ctx, {}, child_count, child_ctx));
}

}  // namespace

const PatternMatcher<UOp, BlockContext>& block_create() {
  static const PatternMatcher<UOp, BlockContext> pm = {
      {op(GroupOp::All - DONT_PLACE_IN_BLOCK - OpSet{Ops::BLOCK, Ops::BLOCKEND}).named("x"),
       make_block_bottom_up},  // x -> BLOCK
  };
  return pm;
}

// *** blockend merging ***

namespace {
UOp merge_blockends(M m) {
  UOp sink = m["sink"];
  // only run on the final BLOCK with the SINK in it
  if (basic_block(sink).lst.back().op() != Ops::SINK) return {};
  // combine matching BLOCKENDS, the keys of this dictionary are the RANGE UOps, values are the BLOCKENDs
  std::vector<std::pair<UOp, std::vector<UOp>>> blockends_to_arg;
  for (const UOp& be : sink.toposort()) {
    if (be.op() != Ops::BLOCKEND) continue;
    const UOp& end = basic_block(be).end;
    auto it = std::find_if(blockends_to_arg.begin(), blockends_to_arg.end(), [&](auto& p) { return p.first == end; });
    if (it == blockends_to_arg.end()) it = blockends_to_arg.insert(blockends_to_arg.end(), {end, {}});
    it->second.push_back(be);
  }
  std::vector<std::pair<UOp, UOp>> new_forks;
  for (auto& [k, v] : blockends_to_arg) {
    if (v.size() <= 1) continue;
    // if any BLOCKEND is the parent of any other with the same arg, this algo fails: the substitution would put the
    // merged BLOCKEND inside itself, without end. Two loops over one RANGE, one after the other, is a codegen bug.
    for (const UOp& y : v)
      for (const UOp& p : y.toposort())
        TG_CHECK(p == y || std::find(v.begin(), v.end(), p) == v.end(),
                 "linearize: two loops over one RANGE nest (the second reads the first's result): ", k.repr());
    std::vector<UOp> ctxs, srcs;
    int64_t cnt = 0;
    for (const UOp& y : v) {
      const BasicBlock& b = basic_block(y);
      ctxs.insert(ctxs.end(), b.ctx.begin(), b.ctx.end());
      cnt += b.cnt;
      srcs.insert(srcs.end(), y.src().begin(), y.src().end());
    }
    UOp out = block_uop(Ops::BLOCKEND, srcs, BasicBlock(basic_block(v[0]).lst, sort_ctx(ctxs), k, cnt));
    // NOTE: bb.ctx != u.arg.ctx can cause problems here
    for (const UOp& u : v) new_forks.push_back({u, out});
  }
  if (new_forks.empty()) return {};
  return sink.substitute(new_forks);
}
}  // namespace

const PatternMatcher<UOp>& pm_blockend_merge() {
  static const PatternMatcher<UOp> pm = {
      {op(Ops::BLOCK).named("sink"), merge_blockends},  // BLOCKENDs of one RANGE -> one BLOCKEND
  };
  return pm;
}

// *** block merging ***

namespace {

UOp merge_block(M m) {
  UOp x = m["x"];
  const BasicBlock& xb = basic_block(x);
  std::vector<UOp> unmergable_blocks, mergable_blocks;
  std::vector<std::pair<UOp, int64_t>> mergable_dict;
  for (const UOp& y : x.src()) {
    bool mergable = false;
    if (y.op() == Ops::BLOCK && x.op() == Ops::BLOCK && xb.ctx == basic_block(y).ctx)
      mergable = true;
    else if (y.op() == Ops::BLOCK && x.op() == Ops::BLOCKEND && contains(basic_block(y).ctx, xb.end))
      mergable = true;
    if (!mergable) {
      unmergable_blocks.push_back(y);
      continue;
    }
    auto it = std::find_if(mergable_dict.begin(), mergable_dict.end(), [&](auto& p) { return p.first == y; });
    if (it == mergable_dict.end()) it = mergable_dict.insert(mergable_dict.end(), {y, 0});
    it->second++;
  }
  for (auto& [k, v] : mergable_dict) {
    if (v == basic_block(k).cnt)
      mergable_blocks.push_back(k);
    else
      for (int64_t i = 0; i < v; i++) unmergable_blocks.push_back(k);
  }
  if (mergable_blocks.empty()) return {};
  // create the block
  std::vector<UOp> lst, srcs;
  for (const UOp& y : mergable_blocks) {
    const auto& l = basic_block(y).lst;
    lst.insert(lst.end(), l.begin(), l.end());
    srcs.insert(srcs.end(), y.src().begin(), y.src().end());
  }
  lst.insert(lst.end(), xb.lst.begin(), xb.lst.end());
  srcs.insert(srcs.end(), unmergable_blocks.begin(), unmergable_blocks.end());
  return block_uop(x.op(), srcs, BasicBlock(lst, xb.ctx, xb.end, xb.cnt, xb.child_ctx));
}

UOp remove_blockend(M m) {
  UOp x = m["x"];
  const BasicBlock& xb = basic_block(x);
  // if there's any remaining blocks that need to go in this BLOCKEND, we don't remove it
  for (const UOp& y : x.src())
    if ((y.op() == Ops::BLOCK || y.op() == Ops::BLOCKEND) && contains(basic_block(y).ctx, xb.end)) return {};
  std::vector<UOp> parent_blocks;
  for (const UOp& y : x.src())
    if (y.op() == Ops::BLOCK && basic_block(y).child_ctx && contains(*basic_block(y).child_ctx, xb.end))
      parent_blocks.push_back(y);
  if (parent_blocks.empty()) return {};
  UOp parent_block = parent_blocks[0];
  for (const UOp& p : parent_blocks) TG_ASSERT(p == parent_block, "should never have two parent blocks");
  TG_ASSERT(static_cast<int64_t>(parent_blocks.size()) == basic_block(parent_block).cnt, "parent block count mismatch");
  // range needs DEFINE_ACC to be before the range (never in DEFINE_ACC for if)
  std::vector<UOp> early_ops, late_ops;
  for (const UOp& y : xb.lst)
    (y.op() == Ops::DEFINE_ACC && contains(y.src(), xb.end) ? early_ops : late_ops).push_back(y);
  // NOTE: we have to add a barrier at the start if barrier is used in the range
  bool has_barrier = std::any_of(late_ops.begin(), late_ops.end(), [](const UOp& y) { return y.op() == Ops::BARRIER; });
  if (x.op() == Ops::BLOCKEND && has_barrier && late_ops.back().op() == Ops::ENDRANGE)
    late_ops.insert(late_ops.begin(), UOp::make(Ops::BARRIER, dtypes::void_));
  std::vector<UOp> lst = early_ops;
  const auto& pl = basic_block(parent_block).lst;
  lst.insert(lst.end(), pl.begin(), pl.end());
  lst.insert(lst.end(), late_ops.begin(), late_ops.end());
  std::vector<UOp> ctx;
  for (const UOp& y : xb.ctx)
    if (y != xb.end) ctx.push_back(y);
  std::vector<UOp> srcs;
  for (const UOp& y : x.src())
    if (y != parent_block) srcs.push_back(y);
  srcs.insert(srcs.end(), parent_block.src().begin(), parent_block.src().end());
  return block_uop(Ops::BLOCK, srcs, BasicBlock(lst, ctx, {}, xb.cnt));
}

}  // namespace

const PatternMatcher<UOp>& block_merge() {
  static const PatternMatcher<UOp> pm = {
      {op({Ops::BLOCK, Ops::BLOCKEND}).named("x"), merge_block},  // BLOCK(BLOCK same ctx) -> one BLOCK
      {op(Ops::BLOCKEND).named("x"), remove_blockend},            // BLOCKEND(BLOCK(RANGE)) -> BLOCK with ENDRANGE
  };
  return pm;
}

// *** finalize ***

const PatternMatcher<UOp>& pm_finalize() {
  static const PatternMatcher<UOp> pm = {
      {op(Ops::BLOCK).named("sink"),
       [](M m) {  // BLOCK(defines) -> BLOCKFINAL(defines + lst)
         UOp sink = m["sink"];
         for (const UOp& x : sink.src()) TG_CHECK(DONT_PLACE_IN_BLOCK.has(x.op()), "linearize failure");
         // place the early things
         std::vector<UOp> lst;
         for (const UOp& x : sink.src())
           if (!contains(lst, x)) lst.push_back(x);
         std::stable_sort(lst.begin(), lst.end(), tuplize_less);
         const auto& l = basic_block(sink).lst;
         lst.insert(lst.end(), l.begin(), l.end());
         return block_uop(Ops::BLOCKFINAL, {}, BasicBlock(lst));
       }},
  };
  return pm;
}

}  // namespace tg
