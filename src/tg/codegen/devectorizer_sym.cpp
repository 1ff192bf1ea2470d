// the parts of tinygrad's uop/symbolic.py the devectorizer needs: valid simplification (uop_given_valid,
// simplify_valid), gep_pushing, and the codegen rules of its sym (sym_codegen)
#include <algorithm>

#include "tg/codegen/devectorizer.h"
#include "tg/uop/symbolic.h"
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

// operand s of a WMMA restricted to the given instructions' elements (each instruction takes upcast_size(s) of them)
UOp wmma_operand(const UOp& wmma, size_t s, const std::vector<int64_t>& instrs) {
  const int64_t ssz = as_wmma_arg(wmma.arg()).upcast_size(static_cast<int>(s));
  std::vector<int64_t> lanes;
  for (int64_t x : instrs)
    for (int64_t e = x * ssz; e < (x + 1) * ssz; e++) lanes.push_back(e);
  return wmma.src(s).gep(lanes);
}

namespace {

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
      // ASSIGN(x, x) -> x; an accumulator whose one ASSIGN folded away keeps its start value: reading the
      // DEFINE_ACC after its loop would leave it inside the loop's context and nest two loops over one RANGE
      {op(Ops::ASSIGN, {x, x}), [](M m) { return m[x].op() == Ops::DEFINE_ACC ? m[x].src(0) : m[x]; }},
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

}  // namespace tg
