#include "tg/uop/upat.h"

#include <algorithm>
#include <unordered_map>

#include "tg/helpers/knobs.h"

namespace tg {

// *** building patterns ***

namespace {
std::shared_ptr<UPatNode> clone(const UPat& p) {
  TG_ASSERT(p.get() != nullptr, "empty UPat");
  return std::make_shared<UPatNode>(*p.get());
}
void set_src(UPatNode& n, UPatNode::Src mode, std::vector<UPat> src, bool any_len = false) {
  n.mode = mode;
  n.src = std::move(src);
  n.src_nodes.clear();
  for (auto& s : n.src) n.src_nodes.push_back(s.get());
  n.strict_length = (mode == UPatNode::Src::Tuple || mode == UPatNode::Src::Permute) && !any_len;
  n.required_len = (mode == UPatNode::Src::Tuple || mode == UPatNode::Src::Permute) ? n.src.size() : 0;
  n.all_same = std::all_of(n.src_nodes.begin(), n.src_nodes.end(), [&](auto* s) { return s == n.src_nodes[0]; });
  n.early_reject = OpSet();
  if (mode != UPatNode::Src::Any)
    for (auto* s : n.src_nodes)
      if (s->ops.size() == 1) n.early_reject.add(s->ops.first());
}
UPat make(OpSet ops, std::vector<DType> dts = {}) {
  auto n = std::make_shared<UPatNode>();
  n->ops = ops;
  n->dtypes = std::move(dts);
  return UPat(std::move(n));
}
}  // namespace

UPat op(OpSet ops) {
  TG_CHECK(!ops.empty(), "op() needs at least one op");
  return make(ops);
}
UPat op(OpSet ops, std::vector<UPat> src) {
  auto n = clone(op(ops));
  set_src(*n, UPatNode::Src::Tuple, std::move(src));
  return UPat(std::move(n));
}
UPat var(std::string_view name, std::vector<DType> dtypes) {
  UPat p = make(OpSet(), std::move(dtypes));
  return name.empty() ? p : p.named(name);
}
UPat cvar(std::string_view name, std::vector<DType> dtypes, bool vec) {
  UPat p = make(vec ? OpSet{Ops::CONST, Ops::VCONST} : OpSet{Ops::CONST}, std::move(dtypes));
  return name.empty() ? p : p.named(name);
}
UPat const_pat(std::optional<DType> dtype, ConstValue v) {
  UPat p = make(Ops::CONST, dtype ? std::vector<DType>{*dtype} : std::vector<DType>{});
  return p.arg(v);
}
UPat any(std::vector<UPat> alternatives) {
  auto n = std::make_shared<UPatNode>();
  set_src(*n, UPatNode::Src::Any, std::move(alternatives));
  return UPat(std::move(n));
}

UPat UPat::named(std::string_view name) const {
  auto n = clone(*this);
  n->name = std::string(name);
  n->name_id = name.empty() ? 0 : fnv1a(name);
  return UPat(std::move(n));
}
UPat UPat::dtype(DType d) const { return dtype(std::vector<DType>{d}); }
UPat UPat::dtype(std::vector<DType> ds) const {
  auto n = clone(*this);
  n->dtypes = std::move(ds);
  return UPat(std::move(n));
}
UPat UPat::arg(Arg a) const {
  auto n = clone(*this);
  n->arg = std::move(a);
  return UPat(std::move(n));
}
UPat UPat::any_len() const {
  auto n = clone(*this);
  n->strict_length = false;
  return UPat(std::move(n));
}
UPat UPat::each(UPat p) const {
  auto n = clone(*this);
  set_src(*n, UPatNode::Src::Repeat, {std::move(p)});
  return UPat(std::move(n));
}
UPat UPat::permuted() const {
  auto n = clone(*this);
  TG_CHECK(n->mode == UPatNode::Src::Tuple, "permuted() needs a source list");
  set_src(*n, UPatNode::Src::Permute, n->src, !n->strict_length);
  return UPat(std::move(n));
}

static std::vector<DType> opt_dtypes(std::optional<DType> d) {
  return d ? std::vector<DType>{*d} : std::vector<DType>{};
}
UPat UPat::cast(std::optional<DType> d) const { return op(Ops::CAST, {*this}).dtype(opt_dtypes(d)); }
UPat UPat::bitcast(std::optional<DType> d) const { return op(Ops::BITCAST, {*this}).dtype(opt_dtypes(d)); }
UPat UPat::gep(std::optional<int64_t> i) const {
  UPat p = op(Ops::GEP, {*this});
  return i ? p.arg(Tuple{ConstValue(*i)}) : p;
}
UPat UPat::index(UPat idx) const { return op(Ops::INDEX, {*this, std::move(idx)}).dtype(get()->dtypes); }
UPat UPat::index(UPat idx, UPat valid) const {
  return op(Ops::INDEX, {*this, std::move(idx), std::move(valid)}).dtype(get()->dtypes);
}
UPat UPat::load(std::vector<UPat> more) const {
  more.insert(more.begin(), *this);
  return op(Ops::LOAD, std::move(more));
}
UPat UPat::store(std::vector<UPat> more) const {
  more.insert(more.begin(), *this);
  return op(Ops::STORE, std::move(more)).dtype(dtypes::void_);
}
UPat UPat::or_casted(std::string_view name) const {
  UPat self = name.empty() ? *this : named(name);
  UPat c = op(Ops::CAST, {*this});
  return any({self, name.empty() ? c : c.named(name)});
}
UPat UPat::or_broadcasted() const { return any({*this, op(Ops::VECTORIZE).dtype(get()->dtypes).each(*this)}); }
UPat UPat::alu(Ops o, std::vector<UPat> more) const {
  more.insert(more.begin(), *this);
  std::vector<DType> dts =
      (o == Ops::CMPLT || o == Ops::CMPNE) ? std::vector<DType>{dtypes::bool_} : more.back().get()->dtypes;
  UPat p = op(o, std::move(more)).dtype(std::move(dts));
  return GroupOp::Commutative.has(o) ? p.permuted() : p;
}
UPat UPat::const_like(ConstValue v) const {
  auto& dts = get()->dtypes;
  TG_CHECK(dts.size() <= 1, "const_like on a pattern with several dtypes");
  return const_pat(dts.empty() ? std::nullopt : std::optional<DType>(dts[0]), v);
}

std::string UPat::repr() const {
  const UPatNode* n = get();
  if (!n) return "UPat(null)";
  std::vector<std::string> ops;
  for (int i = 1; i < NUM_OPS; i++)
    if (n->ops.has(static_cast<Ops>(i))) ops.push_back(cat(static_cast<Ops>(i)));
  std::vector<std::string> srcs;
  for (auto& s : n->src) srcs.push_back(s.repr());
  return cat("UPat(", ops.empty() ? "None" : "(" + join(ops, ", ") + ")", ", ", n->arg ? arg_repr(*n->arg) : "None",
             ", name=", n->name.empty() ? "None" : py_str_repr(n->name), ", src=(", join(srcs, ", "), "))");
}

// *** matching: recursion follows the pattern's depth (small), never the graph's ***

namespace {
struct Pending {  // sources still to match: pats[i] against uops[i] (or pats[0] for all, when repeating)
  const UPatNode* const* pats;
  const UOp* uops;
  size_t n;
  bool repeat;
  const Pending* next;
};

bool match_node(const UPatNode* p, const UOpNode* u, Match& m, const Pending* pend, MatchCallback cb, void* env);

bool advance(const Pending* pend, Match& m, MatchCallback cb, void* env) {
  while (pend != nullptr && pend->n == 0) pend = pend->next;
  if (pend == nullptr) return cb(env, m);
  Pending rest{pend->repeat ? pend->pats : pend->pats + 1, pend->uops + 1, pend->n - 1, pend->repeat, pend->next};
  return match_node(pend->pats[0], pend->uops[0].get(), m, &rest, cb, env);
}

bool dtype_ok(const UPatNode* p, DType d) {
  if (p->dtypes.empty()) return true;
  DType s = d.scalar();
  for (DType x : p->dtypes)
    if (x == d || x == s) return true;
  return false;
}

// a named pattern captures u, or checks that the name already holds u
bool bind(const UPatNode* p, const UOpNode* u, Match& m) {
  if (p->name_id == 0) return true;
  for (size_t i = 0; i < m.n; i++)
    if (m.caps[i].first == p->name_id) return m.caps[i].second == u;
  TG_ASSERT(m.n < Match::kMax, "pattern has more than ", Match::kMax, " captures");
  m.caps[m.n++] = {p->name_id, u};
  return true;
}

bool match_node(const UPatNode* p, const UOpNode* u, Match& m, const Pending* pend, MatchCallback cb, void* env) {
  const size_t saved = m.n;
  if (p->mode == UPatNode::Src::Any) {
    if (!bind(p, u, m)) return false;  // any(...).named("x") captures the node whichever alternative matches
    const size_t bound = m.n;
    for (auto* alt : p->src_nodes) {
      if (match_node(alt, u, m, pend, cb, env)) return true;
      m.n = bound;
    }
    m.n = saved;
    return false;
  }
  if (!p->ops.empty() && !p->ops.has(u->op)) return false;
  if (!dtype_ok(p, u->dtype)) return false;
  if (p->arg && !arg_match(*p->arg, u->arg)) return false;
  if (u->src.size() < p->required_len || (p->strict_length && u->src.size() != p->required_len)) return false;
  if (!bind(p, u, m)) return false;
  bool ok = false;
  switch (p->mode) {
    case UPatNode::Src::None: ok = advance(pend, m, cb, env); break;
    case UPatNode::Src::Repeat: {
      Pending fr{p->src_nodes.data(), u->src.data(), u->src.size(), true, pend};
      ok = advance(&fr, m, cb, env);
      break;
    }
    case UPatNode::Src::Tuple: {
      Pending fr{p->src_nodes.data(), u->src.data(), p->src_nodes.size(), false, pend};
      ok = advance(&fr, m, cb, env);
      break;
    }
    case UPatNode::Src::Permute: {
      const size_t k = p->src_nodes.size();
      if (p->all_same || k < 2) {
        Pending fr{p->src_nodes.data(), u->src.data(), k, false, pend};
        ok = advance(&fr, m, cb, env);
        break;
      }
      TG_ASSERT(k <= 8, "permuted pattern with ", k, " sources");
      std::array<uint8_t, 8> order{};
      for (size_t i = 0; i < k; i++) order[i] = static_cast<uint8_t>(i);
      std::array<const UPatNode*, 8> pats{};
      const size_t mine = m.n;
      do {
        for (size_t i = 0; i < k; i++) pats[i] = p->src_nodes[order[i]];
        Pending fr{pats.data(), u->src.data(), k, false, pend};
        if (advance(&fr, m, cb, env)) return true;
        m.n = mine;
      } while (std::next_permutation(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k)));
      break;
    }
    case UPatNode::Src::Any: break;
  }
  if (!ok) m.n = saved;
  return ok;
}
}  // namespace

bool match_upat(const UPatNode* p, const UOpNode* u, Match& m, MatchCallback on_match, void* env) {
  return match_node(p, u, m, nullptr, on_match, env);
}

UOp Match::get(uint64_t id, std::string_view name) const {
  for (size_t i = 0; i < n; i++)
    if (caps[i].first == id) return UOp::borrow(caps[i].second);
  throw InternalError(cat("pattern has no capture named '", name, "'"));
}
bool Match::has(std::string_view name) const {
  uint64_t id = fnv1a(name);
  for (size_t i = 0; i < n; i++)
    if (caps[i].first == id) return true;
  return false;
}
UOp match_capture(const Match& m, uint64_t id) {
  for (size_t i = 0; i < m.n; i++)
    if (m.caps[i].first == id) return UOp::borrow(m.caps[i].second);
  throw InternalError("rule's right-hand side names a capture its pattern lacks");
}

void RuleIndex::build(const std::vector<const UPatNode*>& roots) {
  for (auto& v : by_op) v.clear();
  for (uint32_t i = 0; i < roots.size(); i++) {
    const UPatNode* p = roots[i];
    // UPat.any at the root: index under every alternative's ops
    OpSet ops = p->ops;
    if (p->mode == UPatNode::Src::Any)
      for (auto* alt : p->src_nodes) ops = ops | alt->ops;
    TG_CHECK(!ops.empty(), "a PatternMatcher rule's root pattern must name its ops");
    for (int o = 1; o < NUM_OPS; o++)
      if (ops.has(static_cast<Ops>(o))) by_op[static_cast<size_t>(o)].push_back(i);
  }
}

// *** graph_rewrite ***

namespace {
// n's sources as rewritten so far (replace: node -> (node, result)); true if any changed
bool rewritten_srcs(const UOp& n, const std::unordered_map<const UOpNode*, std::pair<UOp, UOp>>& replace,
                    std::vector<UOp>& out) {
  out.reserve(n.src().size());
  bool changed = false;
  for (const UOp& s : n.src()) {
    out.push_back(replace.at(s.get()).second);
    changed |= out.back() != s;
  }
  return changed;
}
}  // namespace

UOp unified_rewrite(const UOp& root, RewriteFn rewrite, RewriteFn fixed_point, void* env, bool bottom_up) {
  // keyed by node; the value keeps the key node alive too, so its address cannot be reused mid-rewrite
  std::unordered_map<const UOpNode*, std::pair<UOp, UOp>> replace;
  auto done = [&](const UOp& k, UOp v) { replace.emplace(k.get(), std::make_pair(k, std::move(v))); };
  struct Item {
    UOp n;
    int stage;
    UOp new_n;
  };
  std::vector<Item> stack;
  stack.push_back({root, 0, root});
  // a rule set that keeps rewriting into new nodes never converges: fail loudly instead of hanging
  const int64_t limit = TG_REWRITE_LIMIT;
  int64_t steps = 0;
  while (!stack.empty()) {
    if (++steps > limit)
      throw InternalError(cat("graph_rewrite did not converge after ", limit,
                              " steps; the last rule that matched is at ",
                              last_rule_location.file ? last_rule_location.file : "?", ":", last_rule_location.line));
    Item it = std::move(stack.back());
    stack.pop_back();
    if (replace.count(it.n.get())) continue;  // done already
    if (it.stage == 0) {
      // bottom up rewrites a node before its sources; both then push the sources
      UOp new_n = bottom_up ? fixed_point(env, it.new_n) : it.new_n;
      stack.push_back({it.n, 1, new_n});
      for (auto s = new_n.src().rbegin(); s != new_n.src().rend(); ++s) stack.push_back({*s, 0, *s});
    } else if (it.stage == 1) {
      std::vector<UOp> new_src;
      const bool changed = rewritten_srcs(it.new_n, replace, new_src);
      UOp next;
      if (!changed) {
        if (bottom_up || !(next = rewrite(env, it.new_n))) {
          done(it.n, it.new_n);
          continue;
        }
      } else {
        const UOp& nn = it.new_n;
        next = UOp::make(nn.op(), nn.dtype(), std::move(new_src), nn.arg(), nn.tag());
      }
      // rewrite the new node, then link the result back to n
      stack.push_back({it.n, 2, next});
      stack.push_back({next, 0, next});
    } else {
      UOp r = replace.at(it.new_n.get()).second;
      done(it.n, std::move(r));
    }
  }
  return replace.at(root.get()).second;
}

// *** substitute ***

namespace {
using SubMap = std::unordered_map<const UOpNode*, UOp>;
const PatternMatcher<UOp, SubMap>& pm_substitute() {
  static const PatternMatcher<UOp, SubMap> pm = {
      {op(GroupOp::All).named("x"),
       [](M m, SubMap& ctx) -> UOp {
         auto it = ctx.find(m["x"].get());
         return it == ctx.end() ? UOp{} : it->second;
       }},
  };
  return pm;
}

// unified_rewrite's bottom-up walk with the map as its one rule, without the matcher (a realize substitutes over
// every live Tensor's graph): a node is replaced while the map has it, then its sources are; a node whose sources
// changed is remade and walked again
UOp substitute_walk(const UOp& root, const SubMap& map) {
  std::unordered_map<const UOpNode*, std::pair<UOp, UOp>> replace;  // the key held: no address reuse mid-walk
  auto lookup = [&](UOp u) {
    for (size_t i = 0;; i++) {
      auto it = map.find(u.get());
      if (it == map.end()) return u;
      TG_ASSERT(i <= map.size(), "substitute: the map has a cycle at ", u.op());
      u = it->second;
    }
  };
  struct Item {
    UOp n;
    int stage;
    UOp new_n;
  };
  std::vector<Item> stack;
  stack.push_back({root, 0, UOp()});
  while (!stack.empty()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    if (replace.count(it.n.get())) continue;
    if (it.stage == 0) {
      UOp new_n = lookup(it.n);
      stack.push_back({std::move(it.n), 1, std::move(new_n)});
      const std::vector<UOp>& src = stack.back().new_n.src();
      for (size_t i = src.size(); i-- > 0;)
        if (!replace.count(src[i].get())) stack.push_back({src[i], 0, UOp()});
    } else if (it.stage == 1) {
      std::vector<UOp> new_src;
      const bool changed = rewritten_srcs(it.new_n, replace, new_src);
      const UOpNode* k = it.n.get();
      if (!changed) {
        replace.emplace(k, std::make_pair(std::move(it.n), std::move(it.new_n)));
        continue;
      }
      const UOp& nn = it.new_n;
      UOp next = UOp::make(nn.op(), nn.dtype(), std::move(new_src), nn.arg(), nn.tag());
      stack.push_back({std::move(it.n), 2, next});
      stack.push_back({std::move(next), 0, UOp()});
    } else {
      UOp r = replace.at(it.new_n.get()).second;
      const UOpNode* k = it.n.get();
      replace.emplace(k, std::make_pair(std::move(it.n), std::move(r)));
    }
  }
  return replace.at(root.get()).second;
}
}  // namespace

UOp UOp::substitute(const std::vector<std::pair<UOp, UOp>>& dvars, const char* name, const char* file, int line) const {
  SubMap map;
  for (auto& [k, v] : dvars)
    if (k != v) map.emplace(k.get(), v);
  if (map.empty()) return *this;
  if (!trace::tracking()) return substitute_walk(*this, map);
  return graph_rewrite(*this, pm_substitute(), map, {.bottom_up = true, .name = name, .file = file, .line = line});
}

}  // namespace tg
