#include "tg/codegen/devectorizer.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "tg/uop/symbolic.h"
#include "tg/uop/transcendental.h"
#include "tg/uop/wmma_arg.h"

namespace tg {

// *** helpers ***

namespace {

bool in_toposort(const UOp& needle, const UOp& root) {
  for (const UOp& u : root.toposort())
    if (u == needle) return true;
  return false;
}
UOp and_all(const std::vector<UOp>& xs) {
  UOp r = xs.at(0);
  for (size_t i = 1; i < xs.size(); i++) r = r & xs[i];
  return r;
}

// parse_valid: X <= c as (X, true, c), X >= c as (X, false, c)
struct ParsedValid {
  UOp X;
  bool is_upper;
  int64_t c;
};
std::optional<ParsedValid> parse_valid(const UOp& valid) {
  // (X < c).ne(True) -> X >= c
  if (valid.op() == Ops::CMPNE && valid.src(1).op() == Ops::CONST && const_eq_numeric(valid.src(1).const_arg(), true) &&
      valid.src(0).op() == Ops::CMPLT && valid.src(0).src(1).op() == Ops::CONST) {
    const UOp& s0 = valid.src(0);
    if (std::holds_alternative<double>(s0.src(1).const_arg())) return std::nullopt;
    return ParsedValid{s0.src(0), false, as_int(s0.src(1).const_arg())};
  }
  // X < c -> X <= c-1
  if (valid.op() == Ops::CMPLT && valid.src(1).op() == Ops::CONST && dtypes::is_int(valid.src(0).dtype()))
    return ParsedValid{valid.src(0), true, as_int(valid.src(1).const_arg()) - 1};
  return std::nullopt;
}

bool is_int_range(const UOp& u) {
  return !std::holds_alternative<double>(u.vmin()) && !std::holds_alternative<double>(u.vmax());
}

}  // namespace

// *** valid simplification (uop/symbolic.py) ***

UOp uop_given_valid(const UOp& valid, const UOp& uop_in) {
  // first, parse valid into {expr: (lower_bound, upper_bound)}, in first-seen order
  std::vector<std::pair<UOp, std::pair<std::optional<int64_t>, std::optional<int64_t>>>> bounds;
  for (const UOp& stmt : split_uop(valid, Ops::AND)) {
    auto p = parse_valid(stmt);
    if (!p) return uop_in;  // give up if we cannot parse the valid
    auto it = std::find_if(bounds.begin(), bounds.end(), [&](auto& b) { return b.first == p->X; });
    if (it == bounds.end()) it = bounds.insert(bounds.end(), {p->X, {}});
    (p->is_upper ? it->second.second : it->second.first) = p->c;
  }
  // don't simplify any other gates, can lead to OOB, we substitute them back later
  std::vector<std::pair<UOp, UOp>> load_subs, load_back;
  for (const UOp& u : uop_in.toposort())
    if (u.op() == Ops::INDEX) {
      UOp n = UOp::make(Ops::NOOP, dtypes::void_, {}, cat("__index_sub", load_subs.size()));
      load_subs.push_back({u, n});
      load_back.push_back({n, u});
    }
  UOp uop = load_subs.empty() ? uop_in : uop_in.substitute(load_subs);

  // simplify uop given that valid is True
  for (auto& [expr, v] : bounds) {
    if (!is_int_range(expr)) continue;
    int64_t v0 = v.first ? *v.first : as_int(expr.vmin()), v1 = v.second ? *v.second : as_int(expr.vmax());
    // some expr has lower bound > upper bound -> valid is an empty set and we return None
    if (v0 > v1) return {};
    // whole node became a const
    if (v0 == v1) {
      uop = uop.substitute({{expr, expr.const_like(v0)}}).simplify();
      continue;
    }
    // every candidate is a set of constrained UOps; if every item in a set simplifies uop the same way, rewrite uop
    std::vector<std::vector<std::pair<UOp, UOp>>> candidates;
    if (expr.op() == Ops::ADD && v0 == 1) {
      auto xs = split_uop(expr, Ops::ADD);
      if (std::all_of(xs.begin(), xs.end(), [](const UOp& u) { return GroupOp::Irreducible.has(u.op()); })) {
        // if the constraint is a simplex: X0 + X1 + ... > 0, we can check if all Xi > 0 simplify into the same output
        std::vector<std::pair<UOp, UOp>> c;
        for (const UOp& xi : xs) c.push_back({xi, UOp::variable("fake", int64_t(1), xi.vmax(), xi.dtype())});
        candidates.push_back(std::move(c));
      }
    }
    // try checking the whole clause
    if (in_toposort(expr, uop)) candidates.push_back({{expr, UOp::variable("fake", v0, v1, expr.dtype())}});

    for (const auto& candidate : candidates) {
      std::vector<UOp> newuops;
      for (auto& [X, newX] : candidate)
        newuops.push_back(uop.substitute({{X, newX}}).simplify().substitute({{newX, X}}).simplify());
      auto same = [&](auto f) {
        for (const UOp& n : newuops)
          if (f(n) != f(newuops[0])) return false;
        return true;
      };
      if (uop.op() == Ops::VECTORIZE && uop.src().size() == 2) {
        if (same([](const UOp& n) { return n.src(0); }))
          uop = uop.replace(std::nullopt, std::nullopt, std::vector<UOp>{newuops[0].src(0), uop.src(1)});
        if (same([](const UOp& n) { return n.src(1); }))
          uop = uop.replace(std::nullopt, std::nullopt, std::vector<UOp>{uop.src(0), newuops[0].src(1)});
      } else if (same([](const UOp& n) { return n; })) {
        uop = newuops[0];
      }
    }
  }
  // put the loads back in
  return load_back.empty() ? uop : uop.substitute(load_back);
}

UOp simplify_valid(const UOp& valid) {
  std::vector<UOp> valids = split_uop(valid, Ops::AND);
  // we want valid that's in other valids' parents to be first, so it's more likely the other valids get simplified
  auto priority = [&](const UOp& v) {
    auto p = parse_valid(v);
    if (!p) return 0;
    int s = 0;
    for (const UOp& other : valids) s -= in_toposort(p->X, other) ? 1 : 0;
    return s;
  };
  std::vector<std::pair<int, UOp>> keyed;
  for (const UOp& v : valids) keyed.push_back({priority(v), v});
  std::stable_sort(keyed.begin(), keyed.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<UOp> ret;
  bool something_changed = false;
  for (auto& [_, stmt] : keyed) {
    // TODO: root cause this and test_simplify_valid_from_div
    if (stmt.op() == Ops::CAST) return {};
    UOp newstmt = ret.empty() ? UOp{} : uop_given_valid(and_all(ret), stmt);
    ret.push_back(newstmt ? newstmt : stmt);
    if (ret.back() != stmt) something_changed = true;
  }
  return something_changed ? and_all(ret) : UOp{};
}

// *** gep_pushing ***

namespace {
// operand s of a WMMA restricted to the given instructions' elements (each instruction takes upcast_size(s) of them)
UOp wmma_operand(const UOp& wmma, size_t s, const std::vector<int64_t>& instrs) {
  const int64_t ssz = as_wmma_arg(wmma.arg()).upcast_size(static_cast<int>(s));
  std::vector<int64_t> lanes;
  for (int64_t x : instrs)
    for (int64_t e = x * ssz; e < (x + 1) * ssz; e++) lanes.push_back(e);
  return wmma.src(s).gep(lanes);
}

// A GEP that takes whole outputs of a WMMA (in order within each) becomes a WMMA of just the operands those need
UOp gep_through_wmma(M m) {
  UOp gep = m["gep"], wmma = m["wmma"];
  const WmmaArg& w = as_wmma_arg(wmma.arg());
  const int64_t out_sz = w.upcast_size(2);
  auto a = tuple_ints(gep.arg());
  std::vector<int64_t> wmma_idxs;
  for (size_t i = 0; i < a.size(); i += static_cast<size_t>(out_sz)) wmma_idxs.push_back(a[i]);
  for (int64_t i = 0; i < out_sz; i++)
    for (size_t j = 0; j < wmma_idxs.size(); j++) {
      size_t k = j * static_cast<size_t>(out_sz) + static_cast<size_t>(i);
      if (k >= a.size() || a[k] - i != wmma_idxs[j]) return {};
    }
  if (wmma_idxs.size() * static_cast<size_t>(out_sz) != a.size()) return {};
  std::vector<int64_t> instrs;
  for (int64_t x : wmma_idxs) instrs.push_back(x / out_sz);
  return UOp::make(Ops::WMMA, gep.dtype(),
                   {wmma_operand(wmma, 0, instrs), wmma_operand(wmma, 1, instrs), wmma_operand(wmma, 2, instrs)},
                   wmma.arg());
}

// a WMMA over several instructions' worth of operands -> one WMMA per instruction
UOp no_vectorized_wmma(M m) {
  UOp wmma = m["wmma"];
  const WmmaArg& w = as_wmma_arg(wmma.arg());
  const int64_t out_sz = w.upcast_size(2);
  if (wmma.dtype().count() == out_sz) return {};
  std::vector<UOp> wmma_ex;
  for (int64_t i = 0; i < wmma.dtype().count() / out_sz; i++) {
    UOp one =
        UOp::make(Ops::WMMA, wmma.dtype().scalar().vec(static_cast<int>(out_sz)),
                  {wmma_operand(wmma, 0, {i}), wmma_operand(wmma, 1, {i}), wmma_operand(wmma, 2, {i})}, wmma.arg());
    for (int64_t e = 0; e < out_sz; e++) wmma_ex.push_back(one.gep(static_cast<int>(e)));
  }
  return UOp::make(Ops::VECTORIZE, wmma.dtype(), std::move(wmma_ex));
}
}  // namespace

const PatternMatcher<UOp>& gep_pushing() {
  using namespace pat;
  static const PatternMatcher<UOp> pm = {
      {op(Ops::GEP, {op(Ops::GEP).named("g2")}).named("g1"),
       [](M m) {  // GEP(GEP(x)) -> GEP(x)
         auto a1 = tuple_ints(m["g1"].arg()), a2 = tuple_ints(m["g2"].arg());
         std::vector<int64_t> idx;
         for (int64_t i : a1) idx.push_back(a2.at(static_cast<size_t>(i)));
         return m["g2"].src(0).gep(idx);
       }},
      {op(Ops::GEP, {op(Ops::VECTORIZE).named("vec")}).named("gep"),
       [](M m) {  // GEP(VECTORIZE) -> VECTORIZE / src
         UOp gep = m["gep"], vec = m["vec"];
         auto a = tuple_ints(gep.arg());
         if (a.size() == 1) return vec.src(static_cast<size_t>(a[0]));
         std::vector<UOp> src;
         for (int64_t i : a) src.push_back(vec.src(static_cast<size_t>(i)));
         return UOp::make(Ops::VECTORIZE, gep.dtype(), src);
       }},
      {op(Ops::GEP, {cvar("c", {}, false)}).named("gep"),
       [](M m) { return m["gep"].const_like(m["c"].const_arg()); }},  // GEP(c) -> c
      {op(Ops::GEP, {op(Ops::VCONST).named("c")}).named("gep"),
       [](M m) {  // GEP(VCONST) -> VCONST
         UOp gep = m["gep"];
         Tuple t;
         for (int64_t i : tuple_ints(gep.arg())) t.push_back(m["c"].arg<Tuple>().at(static_cast<size_t>(i)));
         return UOp::vconst(gep.dtype(), t);
       }},
      {op(Ops::GEP, {var("x").dtype(dtypes::void_)}), x},  // GEP on void is skipped
      {op(Ops::GEP).named("g"),
       [](M m) -> UOp {  // GEP in order -> x
         UOp g = m["g"];
         if (g.dtype().is_ptr()) return {};
         return tuple_ints(g.arg()) == iota(0, g.src(0).dtype().count()) ? g.src(0) : UOp{};
       }},
      {op(Ops::GEP, {op(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST}).named("alu")}).named("gep"),
       [](M m) -> UOp {  // GEP(alu) -> alu(GEPs)
         UOp gep = m["gep"], alu = m["alu"];
         if (gep.dtype().is_ptr()) return {};
         auto a = tuple_ints(gep.arg());
         std::vector<UOp> src;
         for (const UOp& s : alu.src()) src.push_back(s.gep(a));
         return UOp::make(alu.op(), alu.dtype().scalar().vec(gep.dtype().count()), src, alu.arg());
       }},
      {op(Ops::GEP, {op(Ops::WMMA).named("wmma")}).named("gep"), gep_through_wmma},  // GEP(WMMA) -> smaller WMMA
      {op(Ops::CAT).named("x"),
       [](M m) -> UOp {  // CAT -> VECTORIZE of GEPs
         UOp x = m["x"];
         if (x.dtype().is_ptr()) return {};
         std::vector<UOp> src;
         for (const UOp& y : x.src())
           for (int i = 0; i < y.dtype().count(); i++) src.push_back(y.gep(i));
         return UOp::make(Ops::VECTORIZE, x.dtype(), src);
       }},
      {op(Ops::VECTORIZE).each(op(Ops::GEP, {x})).named("v"),
       [](M m) -> UOp {  // VECTORIZE(GEP(x)...) -> GEP(x)
         std::vector<int64_t> idx;
         for (const UOp& s : m["v"].src()) {
           auto a = tuple_ints(s.arg());
           if (a.size() != 1) return {};
           idx.push_back(a[0]);
         }
         return m[x].gep(idx);
       }},
  };
  return pm;
}

// *** the codegen rules of tinygrad's sym (not in uop/symbolic.cpp's sym()) ***

namespace {

UOp reduce_mul_chain(M m) {
  UOp r = m["r"];
  Ops rop = r.arg<Ops>();
  if (rop != Ops::ADD && rop != Ops::MAX) return {};
  if (r.dtype() != r.src(0).dtype()) return {};
  std::vector<UOp> inside, outside;
  for (const UOp& mm : split_uop(r.src(0), Ops::MUL)) {
    std::vector<UOp> parents = mm.toposort();
    bool independent = true;
    for (size_t i = 1; i < r.src().size(); i++)
      independent &= std::find(parents.begin(), parents.end(), r.src(i)) == parents.end();
    bool nonneg = rop != Ops::MAX || as_double(mm.vmin()) >= 0;  // (a ConstValue < compares variant indices first)
    (independent && nonneg ? outside : inside).push_back(mm);
  }
  if (outside.empty()) return {};
  auto prod = [](const std::vector<UOp>& xs) {
    UOp p = xs[0];
    for (size_t i = 1; i < xs.size(); i++) p = p * xs[i];
    return p;
  };
  std::vector<UOp> src = r.src();
  src[0] = inside.empty() ? r.src(0).const_like(1) : prod(inside);
  return r.replace(std::nullopt, std::nullopt, src) * prod(outside);
}

bool is_noop(const UOp& u) { return u.op() == Ops::NOOP; }

}  // namespace

const PatternMatcher<UOp>& sym_codegen() {
  using namespace pat;
  static const PatternMatcher<UOp> extra = {
      {op(Ops::ASSIGN, {x, x}), x},                                                   // ASSIGN(x, x) -> x
      {op(Ops::VECTORIZE).each(op(Ops::CONST)).named("vec"), [](M m) {                // VECTORIZE(consts) -> VCONST
         Tuple t;
         for (const UOp& s : m["vec"].src()) t.push_back(s.const_arg());
         return UOp::vconst(m["vec"].dtype(), t);
       }},
      {op(GroupOp::ALU, {op(Ops::VECTORIZE).each(var("x")), op(Ops::VECTORIZE).each(var("y"))}).named("alu"),
       [](M m) -> UOp {                                                               // alu(VEC(x), VEC(y)) -> VEC(alu(x, y))
         UOp alu = m["alu"];
         for (const UOp& s : alu.src())
           for (const UOp& e : s.src())
             if (e != s.src(0)) return {};
         UOp a = UOp::make(alu.op(), alu.dtype().scalar(), {m[x], m[y]});
         return UOp::make(Ops::VECTORIZE, alu.dtype(), std::vector<UOp>(static_cast<size_t>(alu.dtype().count()), a));
       }},
      {op(Ops::VECTORIZE, {x}), x},                                                   // VECTORIZE(x) -> x
      {op(Ops::VECTORIZE).dtype(dtypes::void_).each(op(Ops::BARRIER).named("b")), [](M m) { return m["b"]; }},  // VECTORIZE(BARRIER) -> BARRIER
      {op(Ops::VECTORIZE).dtype(dtypes::void_).named("x"),                            // void VECTORIZE -> SINK
       [](M m) { return UOp::make(Ops::SINK, dtypes::void_, m["x"].src()); }},
      {op(Ops::DEFINE_ACC, {x}), x},                                                  // DEFINE_ACC without ranges -> its CONST
      {op(Ops::ASSIGN, {cvar(), x}), x},                                              // ASSIGN to a const -> x
      // ** load/store folding **
      {op(Ops::STORE, {op(Ops::INDEX).named("index"), op(Ops::LOAD, {op(Ops::INDEX).named("index")})}),  // STORE(i, LOAD(i)) -> NOOP
       [](M) { return UOp::make(Ops::NOOP); }},
      {op(Ops::STORE, {op(Ops::INDEX).named("index"), where(var("gate"), var("alt"), op(Ops::LOAD, {op(Ops::INDEX).named("index")}))}),
       [](M m) {                                                                      // STORE(i, g?a:LOAD(i)) -> STORE(i gated, a)
         UOp index = m["index"];
         return index.src(0).index(index.src(1), m["gate"]).store({m["alt"]});
       }},
      // fold gated LOAD/STORE
      {op(Ops::INDEX, {var(), var(), const_pat(dtypes::bool_, true)}).named("idx"), [](M m) {  // INDEX(b, i, True) -> INDEX(b, i)
         UOp idx = m["idx"];
         return idx.replace(std::nullopt, std::nullopt, std::vector<UOp>{idx.src(0), idx.src(1)});
       }},
      {op(Ops::INDEX, {var(), var(), const_pat(dtypes::bool_, false)}).named("idx"),  // INDEX(b, i, False) -> NULL
       [](M m) { return m["idx"].const_like(0); }},
      {op(Ops::LOAD, {const_pat(std::nullopt, int64_t(0))}).any_len().named("x"),    // LOAD(NULL) -> 0
       [](M m) { return m["x"].const_like(0); }},
      {op(Ops::STORE, {const_pat(std::nullopt, int64_t(0))}).any_len(), [](M) { return UOp::make(Ops::NOOP); }},  // STORE(NULL) -> NOOP
      // remove NOOPs from SINK
      {op(Ops::SINK).named("root"), [](M m) -> UOp {                                  // SINK(.., NOOP, ..) -> SINK(..)
         UOp root = m["root"];
         std::vector<UOp> a;
         for (const UOp& s : root.src())
           if (!is_noop(s)) a.push_back(s);
         return a.size() != root.src().size() ? UOp::make(Ops::SINK, root.dtype(), a, root.arg()) : UOp{};
       }},
      // remove VECTORIZE from SINK/BARRIER
      {op(Ops::BARRIER, {op({Ops::VECTORIZE, Ops::SINK}).named("sink")}),             // BARRIER(VECTORIZE) -> BARRIER(srcs)
       [](M m) { return UOp::make(Ops::BARRIER, dtypes::void_, m["sink"].src()); }},
      {op(Ops::SINK).named("root"), [](M m) -> UOp {                                  // SINK(SINK/UNROLL(xs)) -> SINK(xs)
         UOp root = m["root"];
         std::vector<UOp> a;
         bool any = false;
         for (const UOp& s : root.src()) {
           if (s.op() == Ops::SINK || s.op() == Ops::UNROLL) {
             any = true;
             a.insert(a.end(), s.src().begin(), s.src().end());
           } else a.push_back(s);
         }
         return any ? UOp::make(Ops::SINK, root.dtype(), a, root.arg()) : UOp{};
       }},
      // move const multiply after REDUCE (NOTE: the mul chain can do this, but only if it's a same dtype reduce)
      {op(Ops::REDUCE, {x * cvar("c", {}, false)}).any_len().arg(Arg(Ops::ADD)).named("r"), [](M m) {  // REDUCE(x*c) -> REDUCE(x)*c
         UOp r = m["r"];
         std::vector<UOp> src = r.src();
         src[0] = m[x];
         return r.replace(std::nullopt, std::nullopt, src) * m["c"].const_arg();
       }},
      {op(Ops::REDUCE, {op(Ops::MUL)}).any_len().named("r"), reduce_mul_chain},  // REDUCE(a*b) -> REDUCE(a)*b, b outside
  };
  static const PatternMatcher<UOp> pm = sym() + gep_pushing() + extra;
  return pm;
}

// *** load_store_indexing ***

namespace {

UOp simplify_valid_load(M m) {
  UOp buf = m["buf"], start_idx = m["start_idx"], valid = m["valid"];
  UOp idx = uop_given_valid(valid, start_idx);
  if (!idx) return buf.const_like(0);
  TG_CHECK(!buf.dtype().is_image(), "image buffers are not supported");
  return idx == start_idx ? UOp{} : buf.index(idx, valid);
}

UOp delete_redundant_gates(const UOp& buf, const UOp& idx, const UOp& val, const UOp& store_gate, const UOp* cast) {
  bool found = false;
  for (const UOp& g : val.toposort())
    if (g.op() == Ops::IF && g.src(0) == store_gate) found = true;
  if (!found) return {};
  // remove the gate from the index
  UOp i = buf.index(idx);
  return (cast ? i.cast(cast->dtype()) : i).store({val});
}

}  // namespace

const PatternMatcher<UOp>& load_store_indexing() {
  static const PatternMatcher<UOp> pm = {
      {op(Ops::AND).named("valid"), [](M m) { return simplify_valid(m["valid"]); }},  // valid -> simplified valid
      {op(Ops::INDEX, {var("buf"), var("start_idx"), var("valid")}),
       simplify_valid_load},  // INDEX(b, i, v) -> INDEX(b, i|v, v)
      {op(Ops::INDEX,
          {var("buf"), var("start_idx"), const_pat(std::nullopt, true)}),  // INDEX(b, i, True) -> INDEX(b, i)
       [](M m) { return m["buf"].index(m["start_idx"]); }},
      // delete_redundant_gates (after expand)
      {op(Ops::STORE, {op(Ops::INDEX, {var("buf"), var("idx"), var("store_gate")}), var("val")}),
       [](M m) { return delete_redundant_gates(m["buf"], m["idx"], m["val"], m["store_gate"], nullptr); }},
      {op(Ops::STORE, {op(Ops::INDEX, {var("buf"), var("idx"), var("store_gate")}).cast().named("cast"), var("val")}),
       [](M m) {
         UOp c = m["cast"];
         return delete_redundant_gates(m["buf"], m["idx"], m["val"], m["store_gate"], &c);
       }},
  };
  return pm;
}

// *** load/store grouping ***

namespace {

UOp expand_index(M m) {
  UOp buf = m["buf"], vec = m["vec"];
  UOp mask = m.has("mask") ? m["mask"] : UOp{};
  int n = vec.dtype().count();
  // generate the individual indexes
  std::vector<UOp> idxs_src;
  for (int i = 0; i < n; i++) idxs_src.push_back(mask ? buf.index(vec.gep(i), mask.gep(i)) : buf.index(vec.gep(i)));
  static const PatternMatcher<UOp> pm_index = sym() + gep_pushing() + load_store_indexing();
  const std::string name = trace::tracking() ? cat("index_buf_", arg_str(buf.arg())) : "";
  UOp midx = graph_rewrite(UOp::sink(idxs_src), pm_index, {.name = name.empty() ? nullptr : name.c_str()});
  // extract all the relevant offsets, grouped by their root (and gate), in first-seen order
  struct Root {
    UOp gate, root;  // root null: the index is a CONST
    std::map<int64_t, std::vector<int>> offsets;
  };
  std::vector<Root> roots;
  for (int i = 0; i < n; i++) {
    const UOp& mi = midx.src(static_cast<size_t>(i));
    const UOp& idx = mi.src(1);
    UOp root_src;
    int64_t arg = 0;
    if (idx.op() == Ops::ADD && idx.src(1).op() == Ops::CONST)
      root_src = idx.src(0), arg = as_int(idx.src(1).const_arg());
    else if (idx.op() == Ops::ADD && idx.src(0).op() == Ops::CONST)
      root_src = idx.src(1), arg = as_int(idx.src(0).const_arg());
    else if (idx.op() == Ops::CONST)
      arg = as_int(idx.const_arg());
    else
      root_src = idx;
    UOp gate = mi.src().size() == 3 ? mi.src(2) : UOp{};
    auto it =
        std::find_if(roots.begin(), roots.end(), [&](const Root& r) { return r.gate == gate && r.root == root_src; });
    if (it == roots.end()) it = roots.insert(roots.end(), Root{gate, root_src, {}});
    it->offsets[arg].push_back(i);
  }
  // the buf.dtype is always a pointer
  DType ptrdtype = buf.dtype();
  // then rewrite everything we can into groups
  std::vector<UOp> ret;
  std::vector<int64_t> idxs(static_cast<size_t>(n), -1);
  int64_t global_offset = 0;
  for (const Root& r : roots) {
    std::vector<std::vector<int64_t>> groups;
    int64_t i = 0, prev_key = 0;
    for (auto& [off, _] : r.offsets) {
      if (groups.empty() || off - i != prev_key) groups.push_back({});
      prev_key = off - i;
      groups.back().push_back(off);
      i++;
    }
    for (const auto& grp : groups) {
      // get the index offset for this element. using [0] is okay, because they are the same
      UOp lidx = midx.src(static_cast<size_t>(r.offsets.at(grp[0])[0]));
      if (grp.size() > 1)
        lidx = lidx.cast(ptrdtype.base().vec(static_cast<int>(grp.size())).ptr(ptrdtype.size(), ptrdtype.local()));
      // set the idxs of the output
      for (size_t j = 0; j < grp.size(); j++)
        for (int oo : r.offsets.at(grp[j])) idxs[static_cast<size_t>(oo)] = global_offset + static_cast<int64_t>(j);
      // add this lidx to the CAT
      ret.push_back(lidx);
      global_offset += static_cast<int64_t>(grp.size());
    }
  }
  TG_ASSERT(std::find(idxs.begin(), idxs.end(), -1) == idxs.end(), "some idxs are missing");
  // this base thing is for image, we want the CAT to be a normal pointer
  UOp post_cat = UOp::make(Ops::PTRCAT, ptrdtype.base().ptr(ptrdtype.size(), ptrdtype.local()).vec(n), ret);
  return post_cat.gep(idxs);
}

UOp cat_after_store(M m) {
  UOp c = m["cat"], data = m["data"];
  int64_t offset = 0;
  std::vector<UOp> ret;
  for (const UOp& s : c.src()) {
    ret.push_back(s.store({data.gep(iota(offset, offset + s.dtype().count()))}));
    offset += s.dtype().count();
  }
  return UOp::sink(ret);
}

UOp gep_on_store(M m) {
  // NOTE: we need to invert the gep here, but it may be an expanding gep. fake argsort. TODO: handle duplicates
  UOp gep = m["gep"], st = m["st"];
  std::map<int64_t, int64_t> a;
  auto arg = tuple_ints(gep.arg());
  for (size_t i = 0; i < arg.size(); i++) a[arg[i]] = static_cast<int64_t>(i);
  std::vector<int64_t> new_arg;
  for (auto& [_, v] : a) new_arg.push_back(v);
  return UOp::make(Ops::STORE, dtypes::void_, {gep.src(0), st.gep(new_arg)});
}

}  // namespace

const PatternMatcher<UOp>& load_store_folding() {
  static const OpSet bufs{Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL};
  static const PatternMatcher<UOp> pm = {
      {op(Ops::INDEX, {op(Ops::VECTORIZE).each(op(bufs).named("buf")), var("vec")}),
       expand_index},  // INDEX(vec buf) -> PTRCAT
      {op(Ops::INDEX, {op(Ops::VECTORIZE).each(op(bufs).named("buf")), var("vec"), var("mask")}), expand_index},
      {op(Ops::LOAD, {op(Ops::GEP).named("gep")}).any_len().named("ld"),
       [](M m) {  // LOAD(GEP(p)) -> GEP(LOAD(p))
         UOp ld = m["ld"], gep = m["gep"];
         std::vector<UOp> src = ld.src();
         src[0] = gep.src(0);
         return ld.replace(std::nullopt, ld.dtype().scalar().vec(gep.dtype().count()), src).gep(tuple_ints(gep.arg()));
       }},
      {op(Ops::STORE, {op(Ops::GEP).named("gep"), var("st")}), gep_on_store},  // STORE(GEP(p), x) -> STORE(p, GEP(x))
      {op(Ops::LOAD, {op(Ops::PTRCAT).named("cat")}).any_len().named("ld"),
       [](M m) {  // LOAD(PTRCAT) -> CAT(LOADs)
         UOp ld = m["ld"];
         std::vector<UOp> loads;
         for (const UOp& p : m["cat"].src()) {
           std::vector<UOp> src = ld.src();
           src[0] = p;
           loads.push_back(ld.replace(std::nullopt, p.dtype().base(), src));
         }
         return UOp::make(Ops::CAT, ld.dtype(), loads);
       }},
      {op(Ops::STORE, {op(Ops::PTRCAT).named("cat"), var("data")}), cat_after_store},  // STORE(PTRCAT) -> SINK(STOREs)
  };
  return pm;
}

// *** correct load/store: split into the vector widths the renderer folds ***

namespace {

UOp split_load_store(M m, const RenderOpts& ctx) {
  UOp ls = m["ls"], idx = m["idx"];
  // if there's only one element to load/store, no splitting needed
  int sz = ls.src(0).dtype().count();
  if (sz == 1) return {};
  UOp buf = idx.src(0);
  DType base = buf.dtype().base();
  // determine fold lengths
  std::vector<int> lengths;
  bool must_divide = true;
  if (ctx.device == "DSP") {
    lengths = {128, 64, 32, 16, 8, 4};
    must_divide = false;
  } else if (base != dtypes::float32 && base != dtypes::float16 && !buf.dtype().is_image()) {
  } else if (buf.dtype().is_image()) {
    lengths = {4};
  } else if (ctx.supports_float4) {
    lengths = {4, 2};  // NOTE: tinygrad adds 8 for ALLOW_HALF8 and 16 for AMX
  }
  lengths.push_back(1);  // worst case, it's not folded
  // filter fold lengths that don't divide
  if (must_divide) {
    std::vector<int> l2;
    for (int x : lengths)
      if (idx.src(1).divides(x)) l2.push_back(x);
    lengths = l2;
  }
  // split based on the fold lengths
  int64_t global_offset = 0;
  std::vector<UOp> ret;
  DType ptrdtype = buf.dtype();
  while (global_offset < sz) {
    // with 1 at the end of the lengths list, this will always hit
    for (int fold_length : lengths) {
      if (global_offset + fold_length > sz) continue;
      UOp off = idx.src(1) + global_offset;
      UOp lidx = idx.src().size() > 2 ? buf.index(off, idx.src(2)) : buf.index(off);
      if (fold_length > 1) lidx = lidx.cast(ptrdtype.base().vec(fold_length).ptr(ptrdtype.size(), ptrdtype.local()));
      std::vector<UOp> src = ls.src();
      src[0] = lidx;
      if (ls.op() == Ops::STORE) {
        src[1] = ls.src(1).gep(iota(global_offset, global_offset + fold_length));
        ret.push_back(ls.replace(std::nullopt, std::nullopt, src));
      } else {
        ret.push_back(ls.replace(std::nullopt, ls.dtype().scalar().vec(fold_length), src));
      }
      global_offset += fold_length;
      break;
    }
  }
  // if it wasn't split, we return None. otherwise we CAT them
  return ret.size() > 1 ? UOp::make(Ops::CAT, ls.dtype(), ret) : UOp{};
}

}  // namespace

const PatternMatcher<UOp, const RenderOpts>& correct_load_store() {
  static const PatternMatcher<UOp, const RenderOpts> pm = {
      // split LOAD/STORE (image indexing is not supported yet)
      {op({Ops::LOAD, Ops::STORE}, {op(Ops::INDEX).named("idx").cast()}).any_len().named("ls"), split_load_store},
  };
  return pm;
}

// *** devectorize: no ALU on vectorized dtypes (no_vectorized_alu is in uop/symbolic) ***

namespace {
UOp no_vectorized_acc(M m) {
  UOp acc = m["acc"];
  int n = acc.dtype().count();
  if (n == 1) return {};
  std::vector<UOp> alus;
  for (int i = 0; i < n; i++) {
    std::vector<UOp> src = acc.src();
    src[0] = src[0].gep(i);
    Tuple a = acc.arg<Tuple>();
    a.push_back(ConstValue(int64_t(i)));
    alus.push_back(UOp::make(acc.op(), acc.dtype().scalar(), src, a));
  }
  return UOp::make(Ops::VECTORIZE, acc.dtype(), alus);
}
}  // namespace

const PatternMatcher<UOp>& devectorize() {
  static const PatternMatcher<UOp> pm = {
      {op(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::ASSIGN})
           .named("alu"),  // vector alu -> VECTORIZE(scalar alus)
       [](M m) { return no_vectorized_alu(m["alu"]); }},
      {op(Ops::WMMA).named("wmma"), no_vectorized_wmma},      // WMMA of n instructions -> n WMMAs
      {op(Ops::DEFINE_ACC).named("acc"), no_vectorized_acc},  // vector acc -> VECTORIZE(scalar accs)
  };
  return pm;
}

// *** split_odd_vectors: vector ALUs and accumulators of a count that is not a power of two, in power-of-two parts ***

namespace {
// the largest power of two dividing n
int pow2_part(int n) { return n & -n; }
// x's lanes idx, looking through CAT, VECTORIZE and GEP: a part of a CAT whole where the lanes are one part
UOp fold_gep(UOp x, std::vector<int64_t> idx) {
  while (x.op() == Ops::GEP) {  // GEP(GEP(y, a), b) is y's lanes a[b]
    auto inner = tuple_ints(x.arg());
    for (int64_t& i : idx) i = inner[static_cast<size_t>(i)];
    x = x.src(0);
  }
  if (x.op() == Ops::VECTORIZE) {
    std::vector<UOp> src;
    for (int64_t i : idx) src.push_back(x.src(static_cast<size_t>(i)));
    return src.size() == 1 ? src[0]
                           : UOp::make(Ops::VECTORIZE, x.dtype().scalar().vec(static_cast<int>(src.size())), src);
  }
  if (x.op() == Ops::CAT) {
    std::vector<std::pair<size_t, int64_t>> at;  // (part, lane in it)
    for (int64_t i : idx) {
      size_t p = 0;
      while (i >= x.src(p).dtype().count()) i -= x.src(p++).dtype().count();
      at.emplace_back(p, i);
    }
    if (std::all_of(at.begin(), at.end(), [&](auto& a) { return a.first == at[0].first; })) {
      std::vector<int64_t> lanes;
      for (auto& a : at) lanes.push_back(a.second);
      return fold_gep(x.src(at[0].first), lanes);
    }
    std::vector<UOp> src;
    for (auto& [p, i] : at) src.push_back(fold_gep(x.src(p), {i}));
    return UOp::make(Ops::VECTORIZE, x.dtype().scalar().vec(static_cast<int>(src.size())), src);
  }
  if (idx == iota(0, x.dtype().count())) return x;
  return x.gep(idx);
}
UOp split_odd_alu(M m) {
  UOp alu = m["alu"];
  int n = alu.dtype().vcount(), c = pow2_part(n);
  if (n <= 1 || c == n || c < 4 || alu.dtype().is_ptr()) return {};
  std::vector<UOp> parts;
  for (int i = 0; i < n / c; i++) {
    std::vector<UOp> src;
    for (const UOp& s : alu.src())
      src.push_back(s.dtype().vcount() == n ? fold_gep(s, iota(int64_t(i) * c, int64_t(i + 1) * c)) : s);
    parts.push_back(UOp::make(alu.op(), alu.dtype().scalar().vec(c), std::move(src), alu.arg()));
  }
  return UOp::make(Ops::CAT, alu.dtype(), std::move(parts));
}
UOp split_odd_acc(M m) {
  UOp acc = m["acc"];
  int n = acc.dtype().count(), c = pow2_part(n);
  if (n <= 1 || c == n || c < 4) return {};
  std::vector<UOp> parts;
  for (int i = 0; i < n / c; i++) {
    std::vector<UOp> src = acc.src();
    src[0] = fold_gep(src[0], iota(int64_t(i) * c, int64_t(i + 1) * c));
    Tuple a = acc.arg<Tuple>();
    a.push_back(ConstValue(int64_t(i)));
    parts.push_back(UOp::make(acc.op(), acc.dtype().scalar().vec(c), src, a));
  }
  return UOp::make(Ops::CAT, acc.dtype(), std::move(parts));
}
}  // namespace

const PatternMatcher<UOp>& split_odd_vectors() {
  static const PatternMatcher<UOp> pm = {
      {op(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::ASSIGN}).named("alu"), split_odd_alu},
      {op(Ops::DEFINE_ACC).named("acc"), split_odd_acc},
      {op(Ops::GEP, {op(Ops::CAT)}).named("g"),
       [](M m) -> UOp {
         UOp g = m["g"];
         return g.dtype().is_ptr() ? UOp{} : fold_gep(g.src(0), tuple_ints(g.arg()));
       }},
  };
  return pm;
}

const PatternMatcher<UOp>& cat_to_vectorize() {
  static const PatternMatcher<UOp> pm = {
      {op(Ops::CAT).named("x"),
       [](M m) -> UOp {
         UOp x = m["x"];
         if (x.dtype().is_ptr()) return {};
         std::vector<UOp> src;
         for (int64_t i = 0; i < x.dtype().count(); i++) src.push_back(fold_gep(x, {i}));
         return UOp::make(Ops::VECTORIZE, x.dtype(), src);
       }},
  };
  return pm;
}

// *** pm_render: explicit VECTORIZE for rendering, alt values for masked loads, IF for gated stores ***

const PatternMatcher<UOp>& pm_render() {
  using namespace pat;
  static const PatternMatcher<UOp> pm = {
      {op(Ops::CONST).named("c"),
       [](M m) -> UOp {  // vector CONST -> VECTORIZE(CONSTs)
         UOp c = m["c"];
         if (c.dtype().vcount() <= 1) return {};
         UOp s = UOp::const_(c.dtype().scalar(), c.const_arg());
         return UOp::make(Ops::VECTORIZE, c.dtype(), std::vector<UOp>(static_cast<size_t>(c.dtype().vcount()), s));
       }},
      {op(Ops::VCONST).named("c"),
       [](M m) {  // VCONST -> VECTORIZE(CONSTs)
         UOp c = m["c"];
         std::vector<UOp> src;
         for (const ConstValue& v : c.arg<Tuple>()) src.push_back(UOp::const_(c.dtype().scalar(), v));
         return UOp::make(Ops::VECTORIZE, c.dtype(), src);
       }},
      {op(Ops::GEP).named("gep"),
       [](M m) -> UOp {  // GEP(x, (a, b)) -> VECTORIZE(GEP a, GEP b)
         UOp gep = m["gep"];
         auto a = tuple_ints(gep.arg());
         if (a.size() <= 1) return {};
         std::vector<UOp> src;
         for (int64_t i : a) src.push_back(gep.src(0).gep(i));
         return UOp::make(Ops::VECTORIZE, gep.dtype(), src);
       }},
      {op(Ops::GEP).named("gep"),
       [](M m) -> UOp {  // GEP(scalar, 0) -> scalar
         UOp gep = m["gep"];
         return gep.src(0).dtype().vcount() == 1 && tuple_ints(gep.arg()) == std::vector<int64_t>{0} ? gep.src(0)
                                                                                                     : UOp{};
       }},
      {op(Ops::VECTORIZE, {x}), x},  // VECTORIZE(x) -> x
      // give any loads that are masked an alt value
      {op(Ops::LOAD, {op(Ops::INDEX, {var(), var(), var()}).or_casted()}).any_len().named("x"),
       [](M m) -> UOp {
         UOp x = m["x"];
         if (x.src().size() != 1 && x.src(1).op() != Ops::CUSTOM) return {};
         std::vector<UOp> src = x.src();
         src.insert(src.begin() + 1, x.const_like(0));
         return x.replace(std::nullopt, std::nullopt, src);
       }},
      // gate any stores that aren't gated with ifs
      {op(Ops::STORE, {op(GroupOp::All, {var(), var(), var().dtype(dtypes::bool_)}).named("idx").or_casted(), var()})
           .dtype(dtypes::void_)
           .named("store"),
       [](M m) {
         UOp store = m["store"];
         std::vector<UOp> src = store.src();
         src.push_back(UOp::make(Ops::IF, dtypes::void_, {m["idx"].src(2)}));
         return UOp::make(Ops::STORE, dtypes::void_, src);
       }},
  };
  return pm;
}

// *** pm_horizontal_tree: a deferred horizontal reduce as a tree of halvings ***

namespace {

// x = g_0 op g_1 op ... op g_(h-1), each g_i a GEP of one vector v taking lane i of every output, each output's h
// lanes one aligned block of v, h >= 4 a power of two -> halvings of those blocks ([out][h] -> [out][h/2]: lanes h/2..
// of each output op-ed onto lanes ..h/2) until one lane an output is left. The chain gathers `out` scattered lanes h
// times, a shuffle each; the halvings add whole vector registers first, and only the last few steps shuffle.
// gep_pushing would flatten the halvings back into the chain, so this runs after the last rewrite that pushes GEPs.
UOp horizontal_tree(M m) {
  UOp root = m["root"];
  const Ops op = root.op();
  const int64_t out = root.dtype().count();
  std::vector<UOp> leaves, stack{root};
  while (!stack.empty()) {  // the leaves of the op-tree under root (the same op and dtype inside)
    UOp u = stack.back();
    stack.pop_back();
    if (u.op() == op && u.dtype() == root.dtype()) {
      stack.insert(stack.end(), u.src().rbegin(), u.src().rend());
    } else {
      if (u.op() != Ops::GEP || (!leaves.empty() && u.src(0) != leaves[0].src(0))) return {};
      leaves.push_back(u);
    }
  }
  const int64_t h = static_cast<int64_t>(leaves.size());
  UOp v = leaves[0].src(0);
  if (h < 4 || (h & (h - 1)) != 0 || v.dtype().count() % h != 0) return {};
  std::vector<bool> seen(static_cast<size_t>(v.dtype().count()));
  std::vector<int64_t> block(static_cast<size_t>(out), -1);  // output o's lanes: block block[o] of h lanes of v
  for (const UOp& g : leaves) {
    auto idx = tuple_ints(g.arg());
    for (int64_t o = 0; o < out; o++) {
      int64_t lane = idx[static_cast<size_t>(o)];
      if (block[static_cast<size_t>(o)] < 0) block[static_cast<size_t>(o)] = lane / h;
      if (lane / h != block[static_cast<size_t>(o)] || seen[static_cast<size_t>(lane)]) return {};
      seen[static_cast<size_t>(lane)] = true;
    }
  }
  bool whole = out * h == v.dtype().count();  // v is [out][h] as it is
  for (int64_t o = 0; o < out; o++) whole &= block[static_cast<size_t>(o)] == o;
  if (!whole) {  // the outputs' blocks, in order (one row's accumulator of a tile whose rows store apart)
    std::vector<int64_t> lanes;
    for (int64_t b : block)
      for (int64_t j = 0; j < h; j++) lanes.push_back(b * h + j);
    v = v.gep(lanes);
  }
  for (int64_t half = h / 2; half >= 1; half /= 2) {
    std::vector<int64_t> lo, hi;
    for (int64_t o = 0; o < out; o++)
      for (int64_t j = 0; j < half; j++) lo.push_back(o * 2 * half + j), hi.push_back(o * 2 * half + half + j);
    v = v.gep(lo).alu(op, {v.gep(hi)});
  }
  return v;
}

}  // namespace

const PatternMatcher<UOp>& pm_horizontal_tree() {
  using namespace pat;
  static const PatternMatcher<UOp> pm = {{op({Ops::ADD, Ops::MUL, Ops::MAX}).named("root"), horizontal_tree}};
  return pm;
}

// *** pm_reduce: REDUCE -> DEFINE_ACC+ASSIGN ***

namespace {

std::vector<UOp> horizontal_reduce(const UOp& inp, DType out_dtype) {
  // if this has a horizontal reduction component, do that first
  if (inp.dtype() != out_dtype) {
    // NOTE: [0 1 2 3 4 5 6 7] -> [0+4, 1+5, 2+6, 3+7]
    int cnt = inp.dtype().count(), horizontal_amount = cnt / out_dtype.count();
    std::vector<UOp> out;
    for (int i = 0; i < horizontal_amount; i++) {
      std::vector<int64_t> g;
      for (int j = i; j < cnt; j += horizontal_amount) g.push_back(j);
      out.push_back(inp.gep(g));
    }
    return out;
  }
  return {inp};
}

UOp alu_fold(const std::vector<UOp>& xs, Ops op) {  // xs[0] op xs[1] op ...
  UOp ret = xs[0];
  for (size_t i = 1; i < xs.size(); i++) ret = ret.alu(op, {xs[i]});
  return ret;
}

UOp reduce_to_acc(M m, ReduceContext& ctx) {
  UOp red = m["red"];
  const UOp& inp = red.src(0);
  std::vector<UOp> reduce_range(red.src().begin() + 1, red.src().end());
  Ops rop = red.arg<Ops>();
  if (ctx.defer_horizontal && !reduce_range.empty() && inp.dtype() != red.dtype()) {
    std::vector<UOp> src{inp.const_like(identity_element(rop, inp.dtype().scalar()))};
    src.insert(src.end(), reduce_range.begin(), reduce_range.end());
    UOp acc = UOp::make(Ops::DEFINE_ACC, inp.dtype(), src, Tuple{ConstValue(ctx.acc_num++)});
    return alu_fold(horizontal_reduce(UOp::make(Ops::ASSIGN, acc.dtype(), {acc, acc.alu(rop, {inp})}), red.dtype()),
                    rop);
  }
  std::vector<UOp> lst = horizontal_reduce(inp, red.dtype());
  for (const UOp& x : lst) TG_ASSERT(x.dtype() == red.dtype(), "horizontal reduction mismatch");
  UOp acc;
  // if we have a range
  if (!reduce_range.empty()) {
    std::vector<UOp> src{red.const_like(identity_element(rop, red.dtype().scalar()))};
    src.insert(src.end(), reduce_range.begin(), reduce_range.end());
    acc = UOp::make(Ops::DEFINE_ACC, red.dtype(), src, Tuple{ConstValue(ctx.acc_num)});
    lst.insert(lst.begin(), acc);  // put acc as the first element
    ctx.acc_num++;
  }
  UOp ret = alu_fold(lst, rop);
  return acc ? UOp::make(Ops::ASSIGN, acc.dtype(), {acc, ret}) : ret;
}

UOp reduce_unparented(M m) {
  UOp red = m["red"];
  Ops rop = red.arg<Ops>();
  if (rop != Ops::ADD && rop != Ops::MAX) return {};
  std::vector<UOp> parents = red.src(0).toposort();
  std::unordered_set<const UOpNode*> ps;
  for (const UOp& p : parents) ps.insert(p.get());
  std::vector<UOp> parented, unparented;
  for (size_t i = 1; i < red.src().size(); i++)
    (ps.count(red.src(i).get()) ? parented : unparented).push_back(red.src(i));
  if (unparented.empty()) return {};
  UOp ret;
  if (!parented.empty() || red.dtype() != red.src(0).dtype()) {
    std::vector<UOp> src{red.src(0)};
    src.insert(src.end(), parented.begin(), parented.end());
    ret = red.replace(std::nullopt, std::nullopt, src);
  } else {
    ret = red.src(0);
  }
  if (rop == Ops::ADD)
    for (const UOp& r : unparented) ret = ret * r.src(0).cast(ret.dtype().scalar()).broadcast(ret.dtype().count());
  return ret;
}

bool no_range(const UOp& u) {
  for (const UOp& x : u.toposort())
    if (x.op() == Ops::RANGE) return false;
  return true;
}

UOp reduce_rangeless(M m) {
  // TODO: share code with reduce_unparented
  UOp red = m["red"];
  Ops rop = red.arg<Ops>();
  if (rop != Ops::ADD && rop != Ops::MAX) return {};
  if (red.src(0).dtype() != red.dtype()) return {};
  if (!no_range(red.src(0))) return {};
  UOp ret = red.src(0);
  if (rop == Ops::ADD)
    for (size_t i = 1; i < red.src().size(); i++)
      ret = ret * red.src(i).src(0).cast(ret.dtype().scalar()).broadcast(ret.dtype().count());
  return ret;
}

// a REDUCE of a vector: its horizontal part first (lanes folded into the output's count), then one scalar REDUCE per
// output lane, so the collapse rules see scalars (an unrolled arange)
UOp no_vectorized_reduce(M m) {
  UOp inp = m["inp"], red = m["red"];
  Ops rop = red.arg<Ops>();
  if (inp.dtype() != red.dtype()) {
    std::vector<UOp> src = red.src();
    src[0] = alu_fold(horizontal_reduce(inp, red.dtype()), rop);
    red = red.replace(std::nullopt, std::nullopt, src);
    if (red.dtype().count() == 1) return red;
  }
  if (red.dtype().count() == 1) return {};
  std::vector<UOp> alus;
  for (int i = 0; i < red.dtype().count(); i++) {
    std::vector<UOp> src = red.src();
    src[0] = red.src(0).gep(i);
    alus.push_back(UOp::make(Ops::REDUCE, red.dtype().scalar(), src, red.arg()));
  }
  return UOp::make(Ops::VECTORIZE, red.dtype(), alus);
}

UOp reduce_add(const UOp& x, const UOp& r) {  // x.reduce(*r.src[1:], arg=ADD)
  std::vector<UOp> src{x};
  src.insert(src.end(), r.src().begin() + 1, r.src().end());
  return UOp::make(Ops::REDUCE, x.dtype(), src, Ops::ADD);
}

// the rules that fold a REDUCE over a range into closed-form math (arange, one-hot indexing)
const PatternMatcher<UOp>& pm_reduce_collapse() {
  using namespace pat;
  auto reduce_of = [](UPat src) { return op(Ops::REDUCE, {std::move(src)}).any_len().arg(Arg(Ops::ADD)); };
  static const PatternMatcher<UOp> pm =
      PatternMatcher<UOp>{
          {(x + y) < z,
           [](M m) -> UOp {  // x+y<c -> x<c-y (y, c outside)
             return no_range(m[y]) && no_range(m[z]) ? m[x] < (m[z] - m[y]) : UOp{};
           }},
          {(x * y) < z,
           [](M m) -> UOp {  // x*y<c -> x<(c+y-1)//y (y > 0)
             if (!no_range(m[y]) || !no_range(m[z]) || !(as_double(m[y].vmin()) > 0)) return {};
             return m[x] < idiv(m[z] + m[y] - 1, m[y]);
           }},
          {ne(x + y, z),
           [](M m) -> UOp {  // x+y!=c -> x!=c-y (y, c outside)
             return no_range(m[y]) && no_range(m[z]) ? m[x].ne(m[z] - m[y]) : UOp{};
           }},
          // fold the range
          {reduce_of(where(op(Ops::RANGE).named("r") < var("cut"), const_pat(std::nullopt, int64_t(0)), cvar("val"))),
           [](M m) {
             UOp r = m["r"], cut = m["cut"], val = m["val"];  // sum(r<cut ? 0 : val) -> clamp(n-cut)*val
             return (r.src(0) - cut).maximum(r.src(0).const_like(0)).minimum(r.src(0)).cast(val.dtype()) * val;
           }},
          {reduce_of(where(op(Ops::RANGE).named("r") < var("cut"), cvar("val"), const_pat(std::nullopt, int64_t(0)))),
           [](M m) {
             UOp r = m["r"], cut = m["cut"], val = m["val"];  // sum(r<cut ? val : 0) -> clamp(cut)*val
             return cut.maximum(cut.const_like(0)).minimum(r.src(0)).cast(val.dtype()) * val;
           }},
          {reduce_of(x + y).named("r"),
           [](M m) {  // sum(x+y) -> sum(x)+sum(y)
             return reduce_add(m[x], m["r"]) + reduce_add(m[y], m["r"]);
           }},
          {x * var("gate").dtype(dtypes::bool_).cast(),
           [](M m) { return m["gate"].where(m[x], m[x].const_like(0)); }},  // x*cast(g) -> g?x:0
          // WHERE on LOAD (works on max too)
          {reduce_of(where(var("gate"), op(Ops::INDEX, {var("buf"), var("idx")}).load(),
                           const_pat(std::nullopt, int64_t(0)))),
           [](M m) { return m["buf"].index(m["idx"], m["gate"]).load(); }},  // sum(g?LOAD(i):0) -> LOAD(i, g)
          {reduce_of(where(var("gate"), const_pat(std::nullopt, int64_t(0)),
                           op(Ops::INDEX, {var("buf"), var("idx")}).load())),
           [](M m) {
             return m["buf"].index(m["idx"], m["gate"].logical_not()).load();
           }},  // sum(g?0:LOAD(i)) -> LOAD(i, !g)
          // INDEX on RANGE / gated RANGE: buf[expr(r)] gated by idx==r -> buf[expr(idx)], gated by 0<=idx<n
          {op(Ops::INDEX, {var("buf"), var("expr"), ne(ne(var("idx"), op(Ops::RANGE).named("r").or_casted()), true)}),
           [](M m) {
             UOp r = m["r"], i = m["idx"].cast(m["r"].dtype());
             UOp valid = (i >= i.const_like(0)) & (i < r.src(0));
             return m["buf"].index(m["expr"].substitute({{r, i}}), valid);
           }},
          // AND on WHERE: sum(x&y ? c : 0) with x a variable (outside the range) -> sum(y ? c : 0) * x
          {reduce_of(where(any({op(Ops::DEFINE_VAR).named("dv"), op(Ops::DEFINE_VAR).gep().named("dv")}) & var("g"),
                           cvar("c"), const_pat(std::nullopt, int64_t(0))))
               .named("r"),
           [](M m) {
             UOp c = m["c"];
             return reduce_add(m["g"].where(c, c.const_like(0)), m["r"]) * m["dv"].cast(c.dtype());
           }},
          {op(Ops::REDUCE).named("red"), reduce_rangeless},  // REDUCE without RANGE in src -> x*n
          {op(Ops::REDUCE, {op(Ops::VECTORIZE).named("inp")}).any_len().named("red"),
           no_vectorized_reduce},  // REDUCE(vector) -> VECTORIZE(REDUCEs)
          {op({Ops::INDEX, Ops::LOAD, Ops::WHERE}).named("alu"),
           [](M m) { return no_vectorized_alu(m["alu"]); }},  // TODO: too aggressive
      } +
      sym_codegen();
  return pm;
}

// the ordered parents of every node under root (tinygrad's u.parents: srcs first, then each src's parents)
std::unordered_map<const UOpNode*, std::vector<UOp>> all_parents(const UOp& root) {
  std::unordered_map<const UOpNode*, std::vector<UOp>> ps;
  for (const UOp& u : root.toposort()) {
    std::vector<UOp> ret;
    std::unordered_set<const UOpNode*> seen;
    for (const UOp& s : u.src())
      if (seen.insert(s.get()).second) ret.push_back(s);
    for (const UOp& s : u.src())
      for (const UOp& p : ps.at(s.get()))
        if (seen.insert(p.get()).second) ret.push_back(p);
    ps[u.get()] = std::move(ret);
  }
  return ps;
}

UOp reduce_collapse(M m) {
  UOp red = m["red"];
  auto ps = all_parents(red);
  const UOp& rng = red.src(1);
  std::vector<UOp> included, not_included;
  for (const UOp& x : ps.at(red.get())) {
    const auto& xp = ps.at(x.get());
    bool inc = x == rng || std::find(xp.begin(), xp.end(), rng) != xp.end();
    (inc ? included : not_included).push_back(x);
  }
  for (const UOp& x : included)
    if (x.op() == Ops::STORE || x.op() == Ops::REDUCE) return {};
  std::vector<std::pair<UOp, UOp>> replaces, back;
  static constexpr OpSet keep{Ops::CONST, Ops::VCONST, Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL, Ops::DEFINE_VAR};
  for (const UOp& u : included)
    for (const UOp& s : u.src()) {
      if (std::find(not_included.begin(), not_included.end(), s) == not_included.end() || keep.has(s.op())) continue;
      if (std::any_of(replaces.begin(), replaces.end(), [&](auto& p) { return p.first == s; })) continue;
      UOp v = UOp::make(Ops::DEFINE_VAR, s.dtype(), {}, VarArg{cat("in", replaces.size()), s.vmin(), s.vmax()});
      replaces.push_back({s, v});
      back.push_back({v, s});
    }
  UOp collapse_fxn = replaces.empty() ? red : red.substitute(replaces);
  UOp sink = graph_rewrite(collapse_fxn, pm_reduce_collapse(), {.name = "reduce_collapse"});
  // TODO: why is REDUCE needed here and just RANGE isn't enough?
  for (const UOp& x : sink.toposort())
    if (x.op() == Ops::REDUCE || x.op() == Ops::RANGE) return {};
  return back.empty() ? sink : sink.substitute(back);
}

}  // namespace

const PatternMatcher<UOp, ReduceContext>& pm_reduce() {
  static const PatternMatcher<UOp, ReduceContext> pm =
      PatternMatcher<UOp, ReduceContext>{
          {op(Ops::REDUCE).named("red"), reduce_unparented},                // drop ranges the source doesn't use
          {op(Ops::REDUCE, {var(), var()}).named("red"), reduce_collapse},  // REDUCE without loads -> closed form
          {op(Ops::REDUCE).named("red"), reduce_to_acc},                    // REDUCE -> DEFINE_ACC+ASSIGN
          {op(Ops::WMMA).named("wmma") + var("add"),
           [](M m) {  // WMMA(a, b, c) + add -> WMMA(a, b, c + add): the tensor core's own accumulate
             UOp w = m["wmma"];
             return UOp::make(Ops::WMMA, w.dtype(), {w.src(0), w.src(1), w.src(2) + m["add"]}, w.arg());
           }},
      } +
      with_ctx<ReduceContext>(sym_codegen());
  return pm;
}

// *** late rewrite patterns: ops the renderer lacks ***

namespace {

int bit_length(i128 v) {
  int n = 0;
  while (v > 0) v >>= 1, n++;
  return n;
}
// m, s such that x//d == (x*m) >> s for all 0 <= x <= vmax, d > 0 (Hacker's Delight, chapter 10)
std::optional<std::pair<i128, int>> magicgu(i128 vmax, i128 d) {
  i128 nc = (vmax + 1) / d * d - 1;
  int nbits = bit_length(vmax);
  if (nbits > 60) return std::nullopt;  // 2**s would not fit
  for (int s = 0; s <= 2 * nbits; s++) {
    i128 p = i128(1) << s;
    if (p > nc * (d - 1 - (p - 1) % d)) return std::make_pair((p + d - 1 - (p - 1) % d) / d, s);
  }
  return std::nullopt;
}

UOp fast_idiv(const RenderOpts* ctx, const UOp& x, int64_t d) {
  // idiv is truncated division, but arithmetic shift is floored division, so can only do non-negative numbers!
  if (as_int(x.vmin()) < 0 || d == 0) return {};
  int64_t sign = d > 0 ? 1 : -1;
  int64_t vmax = std::min(as_int(x.vmax()), as_int(dtypes::max(x.dtype())));
  auto ms = magicgu(vmax, d > 0 ? d : -d);
  if (!ms) return {};
  auto [mm, s] = *ms;
  i128 dmax = as_int(dtypes::max(x.dtype()));
  if (mm * vmax <= dmax) return sign * ((x * static_cast<int64_t>(mm)) >> s);
  // promo_lattice needs to return an unsigned type: int32 -> int64 (every device here has long)
  (void)ctx;
  if (x.dtype() == dtypes::int32 && mm * vmax <= i128(INT64_MAX))
    return sign * ((x.cast(dtypes::int64) * static_cast<int64_t>(mm)) >> s).cast(x.dtype());
  return {};
}

int64_t log2_exact(const ConstValue& c) {  // v when c == 2**v (v > 0 for the callers' truthiness), else 0
  if (std::holds_alternative<double>(c)) return 0;
  int64_t v = as_int(c);
  if (v <= 0 || (v & (v - 1)) != 0) return 0;
  return __builtin_ctzll(static_cast<uint64_t>(v));
}
bool is_pow2(const ConstValue& c) {
  if (std::holds_alternative<double>(c)) return false;
  int64_t v = as_int(c);
  return v > 0 && (v & (v - 1)) == 0;
}

}  // namespace

PatternMatcher<UOp, const RenderOpts> get_late_rewrite_patterns(OpSet ops, bool force_transcendental) {
  using namespace pat;
  using R = Rule<UOp, const RenderOpts>;
  std::vector<R> pat;
  // the transcendentals a renderer lacks (or all of them, forced) as polynomials (uop/transcendental.h)
  const std::vector<DType> approx = {dtypes::float16, dtypes::float32, dtypes::float64};
  if (!ops.has(Ops::EXP2) || force_transcendental)
    pat.push_back({op(Ops::EXP2, {x}).dtype(approx), [](M m) { return xexp2(m[x]); }});
  if (!ops.has(Ops::LOG2) || force_transcendental)
    pat.push_back({op(Ops::LOG2, {x}).dtype(approx), [](M m) { return xlog2(m[x]); }});
  if (!ops.has(Ops::SIN) || force_transcendental)
    pat.push_back({op(Ops::SIN, {x}).dtype(approx), [](M m) { return xsin(m[x]); }});
  // SQRT as x ** 0.5
  if (!ops.has(Ops::SQRT)) pat.push_back({op(Ops::SQRT, {x}), [](M m) { return xpow(m[x], m[x].const_like(0.5)); }});
  // rewrite MOD to AND (which should always be supported, but not for generic in tests): x % (2**y) -> x & (2**y-1)
  if (ops.has(Ops::AND))
    pat.push_back({x.dtype(dtypes::ints) % c0, [](M m) -> UOp {  // x%2**y -> x&(2**y-1)
                     return is_pow2(m[c0].const_arg()) ? m[x] & (as_int(m[c0].const_arg()) - 1) : UOp{};
                   }});
  // rewrite MUL/IDIV to SHL+SHR: x*(2**y) -> shl(x,y) and x//(2**y) -> shr(x,y)
  if (ops.has(Ops::SHL))
    pat.push_back({x.dtype(dtypes::ints) * c0, [](M m) -> UOp {  // x*2**y -> x<<y
                     int64_t v = log2_exact(m[c0].const_arg());
                     return v ? m[x] << v : UOp{};
                   }});
  if (ops.has(Ops::SHR)) {
    // no reason to check x>=0 for uints
    pat.push_back({idiv(x.dtype(dtypes::uints), c0), [](M m) -> UOp {  // x//2**y -> x>>y (uints)
                     int64_t v = log2_exact(m[c0].const_arg());
                     return v ? m[x] >> v : UOp{};
                   }});
    pat.push_back({idiv(x.dtype(dtypes::sints), c0), [](M m) -> UOp {  // x//2**y -> x>>y (x>=0)
                     int64_t v = log2_exact(m[c0].const_arg());
                     return v && as_double(m[x].vmin()) >= 0 ? m[x] >> v : UOp{};
                   }});
    pat.push_back({idiv(x.dtype(dtypes::ints), c1), [](M m, const RenderOpts& ctx) -> UOp {  // x//d -> (x*m)>>s
                     return fast_idiv(&ctx, m[x], as_int(m[c1].const_arg()));
                   }});
    pat.push_back({x.dtype(dtypes::ints) % c1, [](M m, const RenderOpts& ctx) -> UOp {  // x%d -> x-d*(x//d)
                     UOp f = fast_idiv(&ctx, m[x], as_int(m[c1].const_arg()));
                     return f ? m[x] - m[c1] * f : UOp{};
                   }});
  }
  if (ops.has(Ops::NEG)) {
    pat.push_back({x * -1, [](M m) { return m[x].alu(Ops::NEG); }});  // x*-1 -> -x
    if (ops.has(Ops::SUB))
      pat.push_back({x + to_upat(y).alu(Ops::NEG), [](M m) { return m[x].alu(Ops::SUB, {m[y]}); }});  // x+(-y) -> x-y
  }
  if (ops.has(Ops::MULACC))
    pat.push_back({x * y + z, [](M m) { return m[x].alu(Ops::MULACC, {m[y], m[z]}); }});  // a*b+c -> MULACC(a, b, c)
  return PatternMatcher<UOp, const RenderOpts>(std::move(pat));
}

}  // namespace tg
