#include "tg/codegen/expander.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "tg/uop/wmma_arg.h"

namespace tg {

namespace {

using Axes = PairTuple;                                   // ((axis, size), ...)
using Choice = std::vector<std::pair<int64_t, int64_t>>;  // (axis, value) per axis, a small dict

int64_t lookup(const Choice& rpk, int64_t axis) {
  for (auto& [a, v] : rpk)
    if (a == axis) return v;
  TG_ASSERT(false, "axis ", axis, " missing in expand choice");
  return 0;
}
void set_choice(Choice& rpk, int64_t axis, int64_t v) {
  for (auto& [a, x] : rpk)
    if (a == axis) {
      x = v;
      return;
    }
  rpk.push_back({axis, v});
}

int64_t expand_arg_to_idx(const Axes& args, const Choice& rpk) {
  int64_t idx = 0, mul = 1;
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    idx += lookup(rpk, it->first) * mul;
    mul *= it->second;
  }
  return idx;
}

// itertools.product over the axes: the last axis varies fastest
std::vector<Choice> choices_from_args(const Axes& args) {
  std::vector<Choice> out{{}};
  for (auto& [axis, m] : args) {
    std::vector<Choice> next;
    for (const Choice& c : out)
      for (int64_t i = 0; i < m; i++) {
        Choice n = c;
        n.push_back({axis, i});
        next.push_back(std::move(n));
      }
    out = std::move(next);
  }
  return out;
}

std::vector<int64_t> swizzle_args(const Axes& cargs, const Axes& eargs, const std::vector<int64_t>& exclude_args) {
  std::vector<int64_t> ret;
  for (Choice rpk : choices_from_args(cargs)) {
    for (int64_t x : exclude_args) set_choice(rpk, x, 0);
    ret.push_back(expand_arg_to_idx(eargs, rpk));
  }
  return ret;
}

int64_t prod_sizes(const Axes& a) {
  int64_t p = 1;
  for (auto& x : a) p *= x.second;
  return p;
}

UOp do_expand(M m) {
  UOp root = m["root"];
  std::vector<UOp> expands;
  for (const UOp& s : root.src())
    if (s.op() == Ops::UNROLL) expands.push_back(s);
  if (expands.empty()) return {};
  // NOTE (as tinygrad): WMMA zeroes out its reduce axes and its operands' upcast axes: they are all the same
  std::vector<int64_t> exclude_args;
  if (root.op() == Ops::WMMA) {
    const WmmaArg& w = as_wmma_arg(root.arg());
    auto add = [&](int64_t a) {
      if (std::find(exclude_args.begin(), exclude_args.end(), a) == exclude_args.end()) exclude_args.push_back(a);
    };
    for (int64_t a : w.reduce_axes) add(a);
    for (const PairTuple& u : w.upcast_axes)
      for (auto& p : u) add(p.first);
  }
  Axes expand_args;
  bool all_same = std::all_of(expands.begin(), expands.end(),
                              [&](const UOp& e) { return e.arg<Axes>() == expands[0].arg<Axes>(); });
  if (all_same && exclude_args.empty()) {
    // if there's only one expand arg, it's okay to use it (optimization)
    expand_args = expands[0].arg<Axes>();
  } else {
    // otherwise, we sort them and GEP
    for (const UOp& e : expands)
      for (auto& p : e.arg<Axes>())
        if (std::find(expand_args.begin(), expand_args.end(), p) == expand_args.end() &&
            std::find(exclude_args.begin(), exclude_args.end(), p.first) == exclude_args.end())
          expand_args.push_back(p);
    std::sort(expand_args.begin(), expand_args.end());
  }
  int expand_sz = static_cast<int>(prod_sizes(expand_args));
  std::vector<UOp> new_srcs;
  for (size_t i = 0; i < root.src().size(); i++) {
    const UOp& src = root.src(i);
    if (src.op() == Ops::UNROLL) {
      if (root.op() == Ops::IF && i == 0) {
        // IF means OR on first arg to IF
        UOp r = src.src(0).gep(0);
        for (int j = 1; j < expand_sz; j++) r = r | src.src(0).gep(j);
        new_srcs.push_back(r);
      } else if (expand_args == src.arg<Axes>()) {
        // just remove the expand
        new_srcs.push_back(src.src(0));
      } else {
        std::vector<int64_t> lst = swizzle_args(expand_args, src.arg<Axes>(), exclude_args);
        // if the base dtype is > 1, put those at the end
        int c = src.dtype().count();
        if (c > 1) {
          std::vector<int64_t> l2;
          for (int64_t x : lst)
            for (int j = 0; j < c; j++) l2.push_back(x * c + j);
          lst = std::move(l2);
        }
        new_srcs.push_back(src.src(0).gep(lst));
      }
    } else {
      if (root.op() == Ops::IF)
        new_srcs.push_back(src);  // the first arg of IF: pass through, ignoring UNROLLS
      else if (root.op() == Ops::REDUCE && src.op() == Ops::RANGE)
        new_srcs.push_back(src);         // range args of REDUCE
      else if (src.dtype().count() > 1)  // put any input dtype > 1 grouped together
        new_srcs.push_back(UOp::make(Ops::CAT, src.dtype().scalar().vec(expand_sz * src.dtype().count()),
                                     std::vector<UOp>(static_cast<size_t>(expand_sz), src)));
      else
        new_srcs.push_back(src.broadcast(expand_sz));  // repeat the arg
    }
  }
  Arg new_arg = root.arg();
  if (root.op() == Ops::GEP) {
    TG_ASSERT(root.dtype().count() == 1, "GEP expand of a vector GEP");
    int64_t start = as_int(root.arg<Tuple>().at(0)), cnt = new_srcs[0].dtype().count(), step = cnt / expand_sz;
    Tuple t;
    for (int64_t j = start; j < cnt; j += step) t.push_back(ConstValue(j));
    new_arg = t;
  }
  UOp nsrc =
      UOp::make(root.op(), root.dtype().scalar().vec(root.dtype().count() * expand_sz), std::move(new_srcs), new_arg);
  return UOp::make(Ops::UNROLL, root.dtype(), {nsrc}, expand_args);
}

UOp do_contract(M m) {
  UOp con = m["con"];
  const UOp& ex = con.src(0);
  // CONTRACT without UNROLL repeats the element VECTORIZED
  if (ex.op() != Ops::UNROLL)
    return UOp::make(Ops::VECTORIZE, con.dtype(), std::vector<UOp>(static_cast<size_t>(con.dtype().count()), ex));
  // CONTRACT may remove several axes from UNROLL
  const Axes& carg = con.arg<Axes>();
  const Axes& earg = ex.arg<Axes>();
  TG_ASSERT(con.dtype().count() == prod_sizes(carg), "dtype is wrong");
  Axes new_ex_args;
  for (auto& x : earg)
    if (std::find(carg.begin(), carg.end(), x) == carg.end()) new_ex_args.push_back(x);
  std::vector<int64_t> idxs;
  for (const Choice& rpk : choices_from_args(new_ex_args))
    for (const Choice& lrpk : choices_from_args(carg)) {
      Choice both = rpk;
      for (auto& [a, v] : lrpk) set_choice(both, a, v);
      idxs.push_back(expand_arg_to_idx(earg, both));
    }
  return UOp::make(Ops::UNROLL, con.dtype(), {ex.src(0).gep(idxs)}, new_ex_args);
}

}  // namespace

// *** expander ***

const PatternMatcher<UOp>& expander() {
  using namespace pat;
  static constexpr OpSet expandable =
      GroupOp::ALU | OpSet{Ops::CAST,  Ops::BITCAST, Ops::GEP,       Ops::WMMA, Ops::LOAD,  Ops::STORE,
                           Ops::INDEX, Ops::ASSIGN,  Ops::VECTORIZE, Ops::IF,   Ops::REDUCE};
  static const PatternMatcher<UOp> pm = {
      {op(Ops::UNROLL, {op(Ops::UNROLL).named("inner")}).named("outer"),
       [](M m) {  // UNROLL(UNROLL) -> one UNROLL
         UOp outer = m["outer"], inner = m["inner"];
         Axes a = inner.arg<Axes>();
         for (auto& p : outer.arg<Axes>()) a.push_back(p);
         return UOp::make(Ops::UNROLL, outer.dtype(), {inner.src(0)}, a);
       }},
      {op(expandable).named("root"), do_expand},      // op(UNROLL...) -> UNROLL(vector op)
      {op(Ops::CONTRACT).named("con"), do_contract},  // CONTRACT(UNROLL) -> UNROLL(GEP)
      {op(Ops::VECTORIZE).each(op(Ops::DEFINE_ACC).named("acc")).named("v"),
       [](M m) {  // VECTORIZE(acc) -> vector acc
         UOp acc = m["acc"], v = m["v"];
         std::vector<UOp> src = acc.src();
         src[0] = src[0].broadcast(v.dtype().count());
         return acc.replace(std::nullopt, v.dtype(), src);
       }},
      {op(Ops::BARRIER, {op(Ops::UNROLL).named("ex")}),
       [](M m) {  // BARRIER(UNROLL) -> UNROLL(BARRIER)
         UOp ex = m["ex"];
         UOp b = UOp::make(Ops::BARRIER, dtypes::void_, ex.src());
         return UOp::make(Ops::UNROLL, dtypes::void_, std::vector<UOp>(ex.src().size(), b), ex.arg());
       }},
      {op(Ops::UNROLL, {x}).arg(Arg(Axes{})), x},  // UNROLL(x, ()) -> x
  };
  return pm;
}

// *** migrate_indexing: create_gate MUST BE BEFORE expander ***

namespace {
UOp create_gate(M m) {
  UOp root = m["root"];
  UOp idx = root.src(0);
  if (idx.op() == Ops::CAST) idx = idx.src(0);
  if (idx.op() != Ops::INDEX || idx.src().size() == 2) return {};
  UOp gate = idx.src(2);
  // rebuild the graph under root with every BARRIERed LOAD gated by IF(gate); BARRIERs stop the walk
  std::unordered_map<const UOpNode*, UOp> done;
  std::vector<std::pair<UOp, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [u, visited] = stack.back();
    stack.pop_back();
    if (done.count(u.get())) continue;
    if (u.op() == Ops::BARRIER) {
      done[u.get()] = u;
      continue;
    }
    if (u.op() == Ops::LOAD && u.src().back().op() == Ops::BARRIER) {
      std::vector<UOp> src = u.src();
      src.back() = UOp::make(Ops::IF, dtypes::void_, {gate, src.back()});
      done[u.get()] = UOp::make(u.op(), u.dtype(), src, u.arg());
      continue;
    }
    if (!visited) {
      stack.push_back({u, true});
      for (const UOp& s : u.src()) stack.push_back({s, false});
      continue;
    }
    std::vector<UOp> src;
    bool changed = false;
    for (const UOp& s : u.src()) {
      src.push_back(done.at(s.get()));
      changed |= src.back() != s;
    }
    done[u.get()] = changed ? UOp::make(u.op(), u.dtype(), src, u.arg()) : u;
  }
  UOp ret = done.at(root.get());
  return ret == root ? UOp{} : ret;
}
}  // namespace

const PatternMatcher<UOp>& migrate_indexing() {
  static const PatternMatcher<UOp> pm = {
      {op(Ops::STORE).named("root"), create_gate},  // STORE(INDEX(.., gate), LOAD(.., BARRIER)) -> gate the loads
  };
  return pm;
}

// *** IGNORE support (for masked stores) ***

const PatternMatcher<UOp>& pm_store_ignore() {
  static const PatternMatcher<UOp> pm = {
      {op(Ops::INDEX, {var(), var(), var("mask")}).store({var()}).named("store"),
       [](M m) -> UOp {  // STORE(idx, v) -> STORE(idx, IGNORE(v, mask))
         UOp store = m["store"];
         if (store.src(1).op() == Ops::IGNORE) return {};
         UOp ig = UOp::make(Ops::IGNORE, dtypes::void_, {store.src(1), m["mask"]});
         return store.replace(std::nullopt, std::nullopt, std::vector<UOp>{store.src(0), ig});
       }},
  };
  return pm;
}

const PatternMatcher<UOp>& pm_move_ignore() {
  using namespace pat;
  static const PatternMatcher<UOp> pm = {
      {op(Ops::IGNORE, {x, x}), [](M m) { return m[x].const_like(true); }},  // IGNORE(x, x) -> True
      {op(Ops::IGNORE, {op({Ops::CONST, Ops::VCONST}).named("c"), var()}),
       [](M m) { return m["c"]; }},  // IGNORE(c, m) -> c
      {op(Ops::IGNORE, {op(GroupOp::ALU | OpSet{Ops::CAST, Ops::VECTORIZE}).named("alu"),
                        var("mask")}),  // IGNORE(alu) -> alu(IGNOREs)
       [](M m) {
         UOp alu = m["alu"];
         std::vector<UOp> src;
         for (const UOp& s : alu.src()) src.push_back(UOp::make(Ops::IGNORE, s.dtype(), {s, m["mask"]}));
         return alu.replace(std::nullopt, std::nullopt, src);
       }},
  };
  return pm;
}

const PatternMatcher<UOp>& pm_delete_ignore() {
  using namespace pat;
  static const PatternMatcher<UOp> pm = {
      {op(Ops::IGNORE, {x, var()}), x},  // IGNORE(x, mask) -> x
  };
  return pm;
}

}  // namespace tg
