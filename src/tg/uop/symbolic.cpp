#include "tg/uop/symbolic.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tg {

// NOTE: every rule here is exact for C semantics (truncating IDIV and MOD, x/0 == x%0 == 0, as cdiv/cmod), on
// unbounded integers. Where a tinygrad rule is only right for floor division or for non-negative ranges, the
// same precondition is checked here; those places say so.

// *** helpers ***

namespace {
// python's // and % (floor): tinygrad's bookkeeping on plain ints uses them, the UOp arithmetic does not
int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

bool is_intv(const ConstValue& v) { return !std::holds_alternative<double>(v); }
bool int_range(const UOp& u) { return is_intv(u.vmin()) && is_intv(u.vmax()); }
int64_t imin(const UOp& u) { return as_int(u.vmin()); }
int64_t imax(const UOp& u) { return as_int(u.vmax()); }
int64_t ival(const UOp& c) { return as_int(c.const_arg()); }
bool cv_lt(const ConstValue& a, const ConstValue& b) {
  if (!is_intv(a) || !is_intv(b)) return as_double(a) < as_double(b);
  return as_i128(a) < as_i128(b);
}
bool cv_le(const ConstValue& a, const ConstValue& b) { return !cv_lt(b, a); }
bool fits64(i128 v) { return v >= INT64_MIN && v <= INT64_MAX; }
UPat cpat(ConstValue v) { return const_pat(std::nullopt, v); }  // a const of any dtype (UPat.const(None, v))

UOp usum(const std::vector<UOp>& xs) {
  UOp r = xs.at(0);
  for (size_t i = 1; i < xs.size(); i++) r = r + xs[i];
  return r;
}
// as the reference: x.const_like(v).cast(bool), so a tensor-level x keeps its shape and device (x < x on a tensor)
UOp bool_const(const UOp& like, bool v) {
  DType d = like.dtype().count() > 1 ? dtypes::bool_.vec(like.dtype().count()) : dtypes::bool_;
  return like.const_like(v).cast(d);
}

}  // namespace

std::vector<UOp> split_uop(const UOp& x, Ops sep) {
  std::vector<UOp> out;
  std::vector<const UOp*> st{&x};
  while (!st.empty()) {
    const UOp* u = st.back();
    st.pop_back();
    if (u->op() != sep) {
      out.push_back(*u);
      continue;
    }
    for (auto it = u->src().rbegin(); it != u->src().rend(); ++it) st.push_back(&*it);
  }
  return out;
}

// *** div and mod folding by ranges ***

// x//y or x%y simplified, or null for no change. NOTE: tinygrad folds the remainder form for x_min < 0 too unless
// CORRECT_DIVMOD_FOLDING; that is only right for floor division, so here it always needs x_min >= 0.
UOp div_and_mod_folding(const UOp& x, const UOp& y, Ops which, bool split_rem) {
  if (!int_range(x) || !int_range(y)) return {};
  int64_t x_min = imin(x), x_max = imax(x), y_min = imin(y), y_max = imax(y);
  // the quotient is the same at all four corners: it is the same everywhere (trunc division is monotone per side)
  if ((y_min > 0 || y_max < 0)) {
    int64_t q = cdiv(x_min, y_min);
    if (q == cdiv(x_min, y_max) && q == cdiv(x_max, y_min) && q == cdiv(x_max, y_max))
      return which == Ops::MOD ? x - q * y : x.const_like(q);
  }
  if (y.op() != Ops::CONST || x.dtype().count() > 1) return {};
  int64_t c = ival(y);
  if (c <= 0) return {};

  std::vector<UOp> svars;
  std::vector<int64_t> factors, quotients, remainders;
  int64_t gcd = c, div = 1, cnst = 0;
  bool something_changed = false;
  for (UOp u : split_uop(x, Ops::ADD)) {
    // (a%(k*c)) % c == a % c; inside a sum only when nothing can change sign (C's mod follows the dividend)
    if (u.op() == Ops::MOD && which == Ops::MOD && u.src(1).op() == Ops::CONST && floormod(ival(u.src(1)), c) == 0 &&
        x_min >= 0 && int_range(u.src(0)) && imin(u.src(0)) >= 0) {
      u = u.src(0);
      something_changed = true;
    }
    int64_t f = u.const_factor();
    if (f == 0 && u.op() != Ops::CONST) return {};
    int64_t q = floordiv(f, c), r = floormod(f, c);
    if (r == 0 || ((which == Ops::MOD || split_rem || u.op() == Ops::CONST) && r != f)) something_changed = true;
    if (u.op() == Ops::CONST) {
      cnst += f;
      continue;
    }
    UOp v = u.divides(f);
    if (!v) return {};
    if (f > 1 && c % f == 0 && (div == 1 || div > f)) div = f;  // the smallest common divisor of all terms
    gcd = std::gcd(r, gcd);
    factors.push_back(f), svars.push_back(v), quotients.push_back(q), remainders.push_back(r);
  }

  // one non-constant term that takes only two values: a line through both results
  if (svars.size() == 1 && int_range(svars[0]) && (i128)imax(svars[0]) - imin(svars[0]) == 1) {
    const UOp& v = svars[0];
    i128 a128 = (i128)factors[0] * imin(v) + cnst, b128 = (i128)factors[0] * imax(v) + cnst;
    if (!fits64(a128) || !fits64(b128)) return {};
    int64_t a = static_cast<int64_t>(a128), b = static_cast<int64_t>(b128);
    int64_t y1 = which == Ops::MOD ? cmod(a, c) : cdiv(a, c), y2 = which == Ops::MOD ? cmod(b, c) : cdiv(b, c);
    return (v - imin(v)) * (y2 - y1) + y1;
  }

  if (x_min >= 0) {
    // within a mod, multiples of c can be added freely: find a congruent expression that stays inside one period
    bool all_pos = std::all_of(factors.begin(), factors.end(), [](int64_t f) { return f > 0; });
    if (all_pos && !svars.empty()) {
      std::vector<int64_t> rems;
      std::vector<UOp> terms;
      for (size_t i = 0; i < remainders.size(); i++) {
        int64_t r = remainders[i];
        rems.push_back(std::abs(r - c) < std::abs(r) ? r - c : r);
        if (rems.back() != 0) terms.push_back(svars[i] * rems.back());
      }
      terms.push_back(x.const_like(floormod(cnst, c)));
      UOp rem = usum(terms);
      if (int_range(rem) && floordiv(imin(rem), c) == floordiv(imax(rem), c)) {
        int64_t k = floordiv(imin(rem), c);
        if (which == Ops::MOD) return rem - k * c;
        std::vector<UOp> out;
        for (size_t i = 0; i < factors.size(); i++)
          if (int64_t m = floordiv(factors[i] - rems[i], c)) out.push_back(svars[i] * m);
        out.push_back(x.const_like(floordiv(cnst - floormod(cnst, c) + k * c, c)));
        return usum(out);
      }
    }
  }

  // a common factor of everything: x = g*x', exact in C for any sign
  if (int64_t g = std::gcd(gcd, cnst); g != 1) {
    std::vector<UOp> terms;
    for (size_t i = 0; i < factors.size(); i++) terms.push_back(svars[i] * (factors[i] / g));
    if (cnst / g != 0 || terms.empty()) terms.push_back(x.const_like(cnst / g));
    UOp ret = UOp::make(which, x.dtype(), {usum(terms), x.const_like(c / g)});
    return which == Ops::MOD ? ret * g : ret;
  }

  if (gcd != 1) something_changed = true;
  if (!something_changed) {
    // x//c == (x//div)//(c//div), for positive div and c
    if (which == Ops::IDIV && 1 < div && div < c)
      if (UOp nx = div_and_mod_folding(x, x.const_like(div), Ops::IDIV)) return idiv(nx, c / div);
    return {};
  }
  std::vector<UOp> qterms, rterms;
  for (size_t i = 0; i < svars.size(); i++) {
    int64_t q = quotients[i], r = remainders[i], f = factors[i];
    if (which == Ops::IDIV && !split_rem && r != 0) {
      rterms.push_back(svars[i] * (f / gcd));
    } else {
      if (r != 0) rterms.push_back(svars[i] * (r / gcd));
      if (q != 0) qterms.push_back(svars[i] * q);
    }
  }
  int64_t qc = floordiv(cnst, c), rc = floormod(cnst, c) / gcd;
  if (qc != 0 || qterms.empty()) qterms.push_back(x.const_like(qc));
  if (rc != 0 || rterms.empty()) rterms.push_back(x.const_like(rc));
  UOp quo = usum(qterms), rem = usum(rterms);
  // C's div and mod round toward zero: only a non-negative numerator (before and after) is safe
  if ((x_min < 0 || !int_range(rem) || imin(rem) < 0) && !remainders.empty()) return {};
  if (which == Ops::MOD) return (rem % (c / gcd)) * gcd + floormod(cnst, gcd);
  return idiv(rem, c / gcd) + quo;
}

namespace {

// (x//4)+((x+1)//4)+((x+2)//4)+((x+3)//4) -> x, the div pattern of an unrolled arange (Hermite's identity)
UOp fold_unrolled_divs(const UOp& divs, int64_t denominator, int64_t fac = 1) {
  std::vector<int64_t> seen_const;
  UOp ans;
  for (UOp u : split_uop(divs, Ops::ADD)) {
    if (fac != 1) {
      if (u.op() != Ops::MUL || u.src(1).op() != Ops::CONST || !const_eq_numeric(u.src(1).const_arg(), fac)) return {};
      u = u.src(0);
    }
    if (u.op() != Ops::IDIV || u.src(1).op() != Ops::CONST) return {};
    if (!const_eq_numeric(u.src(1).const_arg(), denominator)) return {};
    UOp s0 = u.src(0);
    if (!int_range(s0) || imin(s0) < 0) return {};              // trunc == floor only for non-negative numerators
    if (s0.op() == Ops::ADD && s0.src(1).op() == Ops::CONST) {  // the const is the last source of an ADD
      seen_const.push_back(ival(s0.src(1)));
      s0 = s0.src(0);
    } else {
      seen_const.push_back(0);
    }
    if (!ans) ans = s0;
    if (ans != s0) return {};
  }
  if (!ans) return {};
  // the first terms may have folded to 0 already
  int64_t missing = denominator - static_cast<int64_t>(seen_const.size());
  for (int64_t i = 0; i < missing; i++)
    if (int_range(ans) && imin(ans) >= 0 && imax(ans) + i < denominator) seen_const.push_back(i);
  std::sort(seen_const.begin(), seen_const.end());
  if (static_cast<int64_t>(seen_const.size()) != denominator) return {};
  for (int64_t i = 0; i < denominator; i++)
    if (seen_const[static_cast<size_t>(i)] != i) return {};
  return fac == 1 ? ans : ans * fac;
}

// x<c when the terms with a factor > 1 share d | c and the rest stay in [0, d): (x/d)<(c/d)
UOp lt_folding(const UOp& x, int64_t c) {
  std::vector<UOp> p, np;
  for (const UOp& u : split_uop(x, Ops::ADD)) (u.const_factor() == 1 ? p : np).push_back(u);
  if (np.empty()) return {};
  int64_t d = c;
  for (const UOp& u : np) d = std::gcd(d, u.const_factor());
  if (d <= 1) return {};
  i128 lo = 0, hi = 0;
  for (const UOp& u : p) {
    if (!int_range(u)) return {};
    lo += imin(u), hi += imax(u);
  }
  if (!(0 <= lo && hi < d)) return {};
  UOp n = usum(np).divides(d);
  return n ? n < c / d : UOp{};
}

// (a0*x0 + a1*x1 + ...) >= 1 is x0 + x1 + ... >= 1 when all ai > 0 and xi >= 0 (the const is the last src of MUL)
UOp canonicalize_simplex(const UOp& X) {
  bool changed = false;
  std::vector<UOp> ret;
  for (UOp u : split_uop(X, Ops::ADD)) {
    if (u.op() == Ops::MUL && u.src(1).op() == Ops::CONST && cv_lt(int64_t(0), u.src(1).const_arg())) {
      changed = true;
      u = u.src(0);
    }
    if (!GroupOp::Irreducible.has(u.op()) || cv_lt(u.vmin(), int64_t(0))) return {};
    ret.push_back(u);
  }
  return changed ? usum(ret) : UOp{};
}

// as tinygrad's exec_alu: a scalar result stays python's value (untruncated, but see exec_alu for 64-bit ints); a
// vector's lanes are each truncated into the scalar dtype (a VCONST operand's lanes, a CONST one's in every lane)
UOp fold_alu(M m) {
  UOp a = m["a"];
  DType src_dtype = a.src(0).dtype().scalar();
  const int n = a.dtype().count();
  if (n == 1) {
    std::vector<ConstValue> args;
    for (const UOp& s : a.src()) args.push_back(s.const_arg());
    return a.const_like(exec_alu(a.op(), a.dtype(), args, false, src_dtype));
  }
  Tuple out;
  for (int i = 0; i < n; i++) {
    std::vector<ConstValue> args;
    for (const UOp& s : a.src())
      args.push_back(s.op() == Ops::VCONST ? s.arg<Tuple>().at(static_cast<size_t>(i)) : s.const_arg());
    out.push_back(exec_alu(a.op(), a.dtype().scalar(), args, true, src_dtype));
  }
  bool same = std::all_of(out.begin(), out.end(), [&](const ConstValue& v) { return const_eq_numeric(v, out[0]); });
  return same ? a.const_like(out[0]) : UOp::vconst(a.dtype(), out);
}

// x*0 -> 0, except a const nan or inf times 0, which renders nan
UOp mul_zero(M m) {
  UOp u = m[pat::x];
  if (u.op() == Ops::CONST && std::holds_alternative<double>(u.const_arg())) {
    double v = std::get<double>(u.const_arg());
    if (std::isnan(v) || std::isinf(v)) return u.const_like(NAN);
  }
  return u.const_like(0);
}
// x ** c for a const c: reciprocal, 1, sqrt and repeated squaring (tinygrad's simplify_pow)
UOp simplify_pow(const UOp& x, const UOp& c) {
  double v = as_double(c.const_arg());
  if (v < 0) return x.reciprocal().pow(c.const_like(-v));
  if (v == 0) return x.const_like(1);
  // (past 2^52 a double has no halves: there v - 0.5 == v, and this rule would rewrite x ** v into itself forever)
  if (v - 0.5 != v && std::trunc(v - 0.5) + 0.5 == v) return x.pow(c.const_like(v - 0.5)) * x.sqrt();
  if (std::trunc(v) == v) {
    UOp y = x.pow(c.const_like(std::floor(v / 2)));
    return std::fmod(v, 2) == 1 ? y * y * x : y * y * x.const_like(1);
  }
  return {};
}
// b ** e = exp2(e * log2(|b|)); a negative base gives nan for a non-integer e and -1 for an odd one; 0 ** 0 = 1
// (tinygrad's transcendental.xpow)
UOp xpow(const UOp& base, const UOp& exponent) {
  int n = exponent.dtype().count();
  DType i32 = n > 1 ? dtypes::int32.vec(n) : dtypes::int32, b = n > 1 ? dtypes::bool_.vec(n) : dtypes::bool_;
  UOp ret = ((base < 0).where(-base, base).log2() * exponent).exp2();
  UOp non_int = exponent.ne(exponent.cast(i32).cast(exponent.dtype()));
  UOp odd = ((exponent < 0).where(-exponent, exponent).cast(i32) % 2).cast(b);
  UOp adj = non_int.where(ret.const_like(NAN), odd.where(ret.const_like(-1), ret.const_like(1)));
  return (base.eq(base.const_like(0)) & exponent.eq(exponent.const_like(0)))
      .where(ret.const_like(1), ret * (base < 0).where(adj, ret.const_like(1)));
}
}  // namespace

// *** symbolic_simple: self folding, zero folding, constant folding ***

const PatternMatcher<UOp>& symbolic_simple() {
  using namespace pat;
  static constexpr CVar cs{"c", false};
  static const PatternMatcher<UOp> pm = {
      // *** self folding ***
      {x + 0, x},  // x+0 -> x
      {x * 1, x},  // x*1 -> x
      {idiv(x, x),
       [](M m) -> UOp {  // x//x -> 1 (x//0 is 0)
         return cv_lt(int64_t(0), m[x].vmin()) || cv_lt(m[x].vmax(), int64_t(0)) ? m[x].const_like(1) : UOp{};
       }},
      {idiv(x, 1), x},                                                 // x//1 -> x
      {idiv(x, -1), [](M m) { return -m[x]; }},                        // x//-1 -> -x
      {fdiv(x, x), [](M m) { return m[x].const_like(1); }},            // x/x -> 1
      {fdiv(x * y, y), x},                                             // (x*y)/y -> x
      {(var() % y).named("base") % y, [](M m) { return m["base"]; }},  // (x%y)%y -> x%y
      {x % c0 + idiv(x, c0) * c0,
       [](M m) -> UOp {  // (x%c)+(x//c)*c -> x
         return ival(m[c0]) != 0 ? m[x] : UOp{};
       }},
      {idiv(x, c1) * c3 + (x % c1) * c2,
       [](M m) -> UOp {  // (x//c1)*c3+(x%c1)*c2 -> x*c2 if c1*c2==c3
         return ival(m[c1]) != 0 && (i128)ival(m[c1]) * ival(m[c2]) == ival(m[c3]) ? m[x] * m[c2] : UOp{};
       }},
      {x.dtype(dtypes::bool_) & cs,
       [](M m) { return as_bool(m[cs].const_arg()) ? m[x] : m[cs]; }},  // x&True -> x, x&False -> False
      {x.dtype(dtypes::bool_) | cs,
       [](M m) { return as_bool(m[cs].const_arg()) ? m[cs] : m[x]; }},  // x|True -> True, x|False -> x
      {op(GroupOp::Idempotent, {x, x}), x},                             // x&x, x|x, max(x,x) -> x
      {ne(ne(x.dtype(dtypes::bool_), true), true), x},                  // not not x -> x
      {where(x.dtype(dtypes::bool_), const_pat(dtypes::bool_, true), const_pat(dtypes::bool_, false)),
       x},  // x?True:False -> x
      // *** zero folding ***
      {x < x, [](M m) { return bool_const(m[x], false); }},  // x<x -> False
      {x % x, [](M m) { return m[x].const_like(0); }},       // x%x -> 0
      {ne(x.dtype(dtypes::ints), x.dtype(dtypes::ints)),
       [](M m) { return bool_const(m[x], false); }},  // x!=x -> False (ints)
      {x * 0, mul_zero},                              // x*0 -> 0
      // *** constant folding ***
      {op(GroupOp::Unary, {cvar()}).named("a"), fold_alu},
      {op(GroupOp::Binary - Ops::THREEFRY, {cvar(), cvar()}).named("a"), fold_alu},
      {op(GroupOp::Ternary, {cvar(), cvar(), cvar()}).named("a"), fold_alu},
      // bool MUL is AND, ADD/MAX is OR: keeps the int rules below off bools
      {x.dtype(dtypes::bool_) * y.dtype(dtypes::bool_), [](M m) { return m[x] & m[y]; }},  // x*y -> x&y (bool)
      {x.dtype(dtypes::bool_) + y.dtype(dtypes::bool_), [](M m) { return m[x] | m[y]; }},  // x+y -> x|y (bool)
      {maximum(x.dtype(dtypes::bool_), y.dtype(dtypes::bool_)),
       [](M m) { return m[x] | m[y]; }},  // max(x,y) -> x|y (bool)
      // *** cast ***
      {op(Ops::CAST, {cvar("c", {}, false)}).named("root"),  // cast(c) -> c'
       [](M m) {
         // an int const is read as its dtype first, as C converts it: a uint32 -1 (C's -1u) is 4294967295 in a uint64
         UOp c = m["c"];
         ConstValue v = dtypes::is_int(c.dtype()) ? truncate(c.const_arg(), c.dtype()) : c.const_arg();
         return m["root"].const_like(v);
       }},
      {op({Ops::CAST, Ops::BITCAST}).named("root"),
       [](M m) -> UOp {  // cast to the same dtype -> x
         UOp r = m["root"];
         return r.dtype() == r.src(0).dtype() ? r.src(0) : UOp{};
       }},
      // *** pow ***
      {op(Ops::POW, {x, cs}), [](M m) { return simplify_pow(m[x], m[cs]); }},
      {op(Ops::POW, {cs, x}),
       [](M m) -> UOp {  // positive const ** x -> exp2(x*log2(c))
         double v = as_double(m[cs].const_arg());
         if (v == 1) return m[cs];
         return v > 0 ? (m[x] * m[x].const_like(std::log2(v))).exp2() : UOp{};
       }},
  };
  return pm;
}

// *** commutative: ints put the smaller tuplize first (so consts go right) ***

const PatternMatcher<UOp>& commutative() {
  static const PatternMatcher<UOp> pm = {
      {op(GroupOp::Commutative).dtype(dtypes::int32).named("x"),
       [](M m) -> UOp {  // y+x -> x+y if x<y
         UOp u = m["x"];
         if (u.src().size() != 2 || tuplize_cmp(u.src(1), u.src(0)) >= 0) return {};
         return u.replace(std::nullopt, std::nullopt, std::vector<UOp>{u.src(1), u.src(0)});
       }},
  };
  return pm;
}

// *** symbolic: rules that match deeper ***

static PatternMatcher<UOp> symbolic_rules() {
  using namespace pat;
  static constexpr CVar cs{"c", false}, ds{"d", false}, c0s{"c0", false}, c1s{"c1", false};
  std::vector<Rule<UOp>> rules = {
      // *** boolean algebra ***
      {x | (x & var()), x},  // x|(x&y) -> x
      // *** combine terms ***
      {x * c0 + x * c1, [](M m) { return m[x] * (m[c0] + m[c1]); }},               // x*c0+x*c1 -> x*(c0+c1)
      {(y + x * c0) + x * c1, [](M m) { return m[y] + m[x] * (m[c0] + m[c1]); }},  // (y+x*c0)+x*c1 -> y+x*(c0+c1)
      {x + x * c0, [](M m) { return m[x] * (m[c0] + 1); }},                        // x+x*c -> x*(c+1)
      {(y + x) + x * c0, [](M m) { return m[y] + m[x] * (m[c0] + 1); }},           // (y+x)+x*c -> y+x*(c+1)
      {x + x, [](M m) { return m[x] * 2; }},                                       // x+x -> x*2
      {(y + x) + x, [](M m) { return m[y] + m[x] * 2; }},                          // (y+x)+x -> y+x*2
      {fdiv(fdiv(x, y), z),
       [](M m) -> UOp {  // (x/y)/z -> x/(y*z)
         return m[y] != m[z] ? fdiv(m[x], m[y] * m[z]) : UOp{};
       }},
      {(x + c0) * -1, [](M m) { return (-m[x]) + (-m[c0]); }},  // -(x+c) -> -x+-c
      // *** where ***
      {where(var(), y, y), y},  // c?y:y -> y
      {where(cvar("gate", {}, false), y, z),
       [](M m) {  // True?y:z -> y, False?y:z -> z
         return as_bool(m["gate"].const_arg()) ? m[y] : m[z];
       }},
      {where(ne(x.dtype(dtypes::bool_), true), y, z), [](M m) { return m[x].where(m[z], m[y]); }},  // (!x)?y:z -> x?z:y
      // alu of two wheres on the same condition combine, when both true or both false branches are consts
      {op(GroupOp::Binary, {where(x, y, z), where(x, w, var("ff"))}).named("alu"),
       [](M m) -> UOp {
         UOp t = m[y], f = m[z], tt = m[w], ff = m["ff"];
         bool consts =
             (t.op() == Ops::CONST && tt.op() == Ops::CONST) || (f.op() == Ops::CONST && ff.op() == Ops::CONST);
         if (!consts) return {};
         Ops o = m["alu"].op();
         return m[x].where(t.alu(o, {tt}), f.alu(o, {ff}));
       }},
      // *** any ALU or variable whose range is one value is that value ***
      {op(GroupOp::ALU | OpSet{Ops::DEFINE_VAR, Ops::SPECIAL, Ops::RANGE}).named("x"),
       [](M m) -> UOp {
         UOp u = m[x];
         return const_eq_numeric(u.vmin(), u.vmax()) ? u.const_like(u.vmin()) : UOp{};
       }},
      // *** max folding by range ***
      {maximum(x, y),
       [](M m) -> UOp {  // max(x,y) -> x if x>=y always
         if (cv_le(m[y].vmax(), m[x].vmin())) return m[x];
         return cv_le(m[x].vmax(), m[y].vmin()) ? m[y] : UOp{};
       }},
  };
  // *** two stage ALU folding: (x op c1) op c2 -> x op (c1 op c2) ***
  for (Ops o : {Ops::ADD, Ops::MUL, Ops::AND, Ops::OR, Ops::MAX})
    rules.push_back({to_upat(x).alu(o, {c1}).alu(o, {c2}).named("f"), [](M m) {
                       Ops fo = m["f"].op();
                       return m[x].alu(fo, {m[c1].alu(fo, {m[c2]})});
                     }});
  std::vector<Rule<UOp>> more = {
      {(c0 + x) < c1, [](M m) { return m[x] < (m[c1] - m[c0]); }},             // c0+x<c1 -> x<c1-c0
      {idiv(idiv(x, c1), c2), [](M m) { return idiv(m[x], m[c1] * m[c2]); }},  // (x//c1)//c2 -> x//(c1*c2)
      // *** lt ***
      {(c0s * x.dtype(dtypes::ints)) < c1s,
       [](M m) -> UOp {  // c0*x<c1 -> x<ceil(c1/c0), c0,c1>0
         int64_t a = ival(m[c0s]), b = ival(m[c1s]);
         return a > 0 && b > 0 ? m[x] < (b + a - 1) / a : UOp{};
       }},
      {(c0s * x.dtype(dtypes::ints)) < c1s,
       [](M m) -> UOp {  // c0*x<c1 -> -x<-floor(c1/c0), c0<-1, c1<=0
         int64_t a = ival(m[c0s]), b = ival(m[c1s]);
         return a < 0 && a != -1 && b <= 0 ? (-m[x]) < -((-b) / (-a)) : UOp{};
       }},
      {idiv(x.dtype(dtypes::ints), ds) < cs,
       [](M m) -> UOp {  // x//d<c -> x<c*d (c>0) or x<c*d-(d-1)
         int64_t d = ival(m[ds]), c = ival(m[cs]);
         if (d <= 0) return {};
         i128 b = c > 0 ? (i128)c * d : (i128)c * d - (d - 1);
         return fits64(b) ? m[x] < static_cast<int64_t>(b) : UOp{};
       }},
      // *** move add/mul consts to the end ***
      {(x + c1) + y, [](M m) { return (m[x] + m[y]) + m[c1]; }},  // (x+c1)+y -> (x+y)+c1
      {(x * c1) * y, [](M m) { return (m[x] * m[y]) * m[c1]; }},  // (x*c1)*y -> (x*y)*c1
      // *** unrolled arange div folding ***
      {(var() + idiv(var(), ds)).named("divs"), [](M m) { return fold_unrolled_divs(m["divs"], ival(m[ds])); }},
      {(var() + idiv(var(), ds) * cs).named("divs"),
       [](M m) { return fold_unrolled_divs(m["divs"], ival(m[ds]), ival(m[cs])); }},
      // *** generic lt folding ***
      {x.dtype(dtypes::sints) < cs,
       [](M m) -> UOp {  // gcd-based x<c folding
         return ival(m[cs]) > 0 ? lt_folding(m[x], ival(m[cs])) : UOp{};
       }},
      {op(Ops::MUL, {x.dtype(dtypes::sints), cpat(-1)}).permuted() <
           op(Ops::MUL, {y.dtype(dtypes::sints), cpat(-1)}).permuted(),
       [](M m) { return m[y] < m[x]; }},  // -x<-y -> y<x
      {ne(op(Ops::CMPLT, {x.dtype(dtypes::ints), cpat(1)}), true),
       [](M m) -> UOp {  // !(sum ai*xi<1) -> !(sum xi<1)
         UOp nx = canonicalize_simplex(m[x]);
         return nx ? ne(nx < 1, true) : UOp{};
       }},
      // *** div ***
      {idiv(idiv(x, c0) + c1, c2),
       [](M m) -> UOp {  // (x//c+a)//d -> (x+a*c)//(c*d)
         // NOTE: tinygrad lacks c>0; with c<0, x//c and a have opposite signs
         UOp u = m[x], a = m[c1];
         if (!int_range(u) || !int_range(a) || ival(m[c0]) <= 0) return {};
         bool same_sign = (imin(u) >= 0 && imin(a) >= 0) || (imax(u) <= 0 && imax(a) <= 0);
         return same_sign ? idiv(u + a * m[c0], m[c0] * m[c2]) : UOp{};
       }},
      {idiv(x.dtype(dtypes::sints), y), [](M m) { return div_and_mod_folding(m[x], m[y], Ops::IDIV); }},
      {idiv(x, y),
       [](M m) -> UOp {  // x//d -> -(x//-d) if d<0
         return int_range(m[y]) && imax(m[y]) <= 0 && imin(m[y]) < 0 ? -idiv(m[x], -m[y]) : UOp{};
       }},
      {idiv(x, y),
       [](M m) -> UOp {  // x//d -> -((-x)//d) if x<=0
         return int_range(m[x]) && imax(m[x]) <= 0 && imin(m[x]) < 0 ? -idiv(-m[x], m[y]) : UOp{};
       }},
      {idiv((x.dtype(dtypes::sints) + cs).named("n"), ds),
       [](M m) -> UOp {  // (x+c)//d for x<=0<=x+c
         int64_t c = ival(m[cs]), d = ival(m[ds]);
         UOp u = m[x], n = m["n"];
         if (d <= 0 || !int_range(u) || !int_range(n) || imax(u) > 0 || imin(n) < 0) return {};
         return -idiv(-((u + floormod(c, d)) - (d - 1)), m[ds]) + floordiv(c, d);
       }},
      // *** mod ***
      {x % y, [](M m) { return div_and_mod_folding(m[x], m[y], Ops::MOD); }},
      {x % y,
       [](M m) -> UOp {  // x%d -> x%(-d) if d<0
         // NOTE: tinygrad has -(x%-d), which is floor mod; C's mod ignores the divisor's sign
         return int_range(m[y]) && imax(m[y]) < 0 ? m[x] % (-m[y]) : UOp{};
       }},
      {x % y,
       [](M m) -> UOp {  // x%d -> -((-x)%d) if x<=0
         return int_range(m[x]) && imax(m[x]) <= 0 && imin(m[x]) < 0 ? -((-m[x]) % m[y]) : UOp{};
       }},
  };
  rules.insert(rules.end(), more.begin(), more.end());
  return PatternMatcher<UOp>(std::move(rules));
}

const PatternMatcher<UOp>& symbolic() {
  static const PatternMatcher<UOp> pm = symbolic_simple() + commutative() + symbolic_rules();
  return pm;
}

const PatternMatcher<UOp>& symbolic_flat() {
  using namespace pat;
  static const PatternMatcher<UOp> pm =
      symbolic() + PatternMatcher<UOp>{
                       {(x + y) * -1, [](M m) { return (-m[x]) + (-m[y]); }},  // -(x+y) -> -x+-y
                       {(x.dtype(dtypes::ints) + y) * c0,
                        [](M m) { return m[x] * m[c0] + m[y] * m[c0]; }},  // (x+y)*c -> x*c+y*c (ints)
                   };
  return pm;
}

// *** sym: symbolic_flat and the codegen-time extras that concern index math ***

// threefry2x32 (Random123): 20 rounds over two uint32 halves of x, keyed by the two halves of key; the counter-based
// generator behind Tensor.rand
static UOp threefry2x32(M m) {
  using namespace pat;
  const DType u32 = dtypes::uint32, u64 = dtypes::uint64;
  UOp x = m[pat::x], key = m[y];
  UOp x0 = (x & 0xffffffff).cast(u32), x1 = (idiv(x, int64_t(1) << 32) & 0xffffffff).cast(u32);
  UOp key0 = (key & 0xffffffff).cast(u32), key1 = (idiv(key, int64_t(1) << 32) & 0xffffffff).cast(u32);
  static constexpr int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  UOp ks[3] = {key1, key0 ^ key1 ^ 0x1BD11BDA, key0};
  UOp xr0 = x0 + ks[2], xr1 = x1 + ks[0];
  for (int i = 0; i < 5; i++) {
    for (int r : rotations[i % 2]) {
      UOp n0 = xr0 + xr1;  // rotl(xr1, r) as a multiply and a divide, which later become shifts
      xr1 = n0 ^ ((xr1 * (int64_t(1) << r)) + idiv(xr1, int64_t(1) << (32 - r)));
      xr0 = n0;
    }
    xr0 = xr0 + ks[i % 3];
    xr1 = xr1 + ks[(i + 1) % 3] + (i + 1);
  }
  return (xr1.cast(u64) * (int64_t(1) << 32)) | xr0.cast(u64);
}

const PatternMatcher<UOp>& sym() {
  using namespace pat;
  static const PatternMatcher<UOp> pm =
      symbolic_flat() +
      PatternMatcher<UOp>{
          {op(Ops::VECTORIZE, {x}), x},  // VECTORIZE(x) -> x
          {op(Ops::WMMA, {const_pat(std::nullopt, 0.0), var(), var("acc")}),
           [](M m) { return m["acc"]; }},  // WMMA(0, b, acc) -> acc
          {op(Ops::WMMA, {var(), const_pat(std::nullopt, 0.0), var("acc")}),
           [](M m) { return m["acc"]; }},  // WMMA(a, 0, acc) -> acc
          {ne(x, 0),
           [](M m) {  // x!=0 -> (bool)x
             int n = m[x].dtype().count();
             return m[x].cast(n > 1 ? dtypes::bool_.vec(n) : dtypes::bool_);
           }},
          {where(x, y, z).cast().named("cast"),
           [](M m) {  // (s?a:b).cast -> s?a.cast:b.cast
             DType d = m["cast"].dtype();
             return m[x].where(m[y].cast(d), m[z].cast(d));
           }},
          {where(x, where(y, z, w), w),
           [](M m) { return (m[x] & m[y]).where(m[z], m[w]); }},            // a?(b?c:d):d -> (a&b)?c:d
          {op(Ops::THREEFRY, {x, y}).dtype(dtypes::uint64), threefry2x32},  // threefry -> rounds
          {op(Ops::POW, {x, y}), [](M m) { return xpow(m[x], m[y]); }},     // pow -> exp2/log2 (xpow)
          // reciprocals of powers and of 1+x: these keep sigmoid's gradient, s*s*e, finite where e
          // (an exp2) overflows, as s*(1-s)
          {(x * x).alu(Ops::RECIP),
           [](M m) { return m[x].reciprocal() * m[x].reciprocal(); }},  // 1/(x*x) -> (1/x)*(1/x)
          {(x * x * x).alu(Ops::RECIP),
           [](M m) {  // 1/(x*x*x) -> (1/x)*(1/x)*(1/x)
             return m[x].reciprocal() * m[x].reciprocal() * m[x].reciprocal();
           }},
          {x * (1 + x).alu(Ops::RECIP).named("d"), [](M m) { return 1 - m["d"]; }},  // x*(1/(1+x)) -> 1-1/(1+x)
          {x * ((1 + x).alu(Ops::RECIP).named("d") * y),
           [](M m) { return m[y] * (1 - m["d"]); }},  // x*(1/(1+x)*y) -> y*(1-1/(1+x))
          {x * ((1 + x).alu(Ops::RECIP).named("d") + y),
           [](M m) { return (1 - m["d"]) + m[x] * m[y]; }},  // x*(1/(1+x)+y) -> (1-1/(1+x))+x*y
      };
  return pm;
}

UOp no_vectorized_alu(const UOp& alu) {
  int n = alu.dtype().vcount();
  if (n == 1) return {};
  std::vector<UOp> alus;
  for (int i = 0; i < n; i++) {
    std::vector<UOp> src;
    for (const UOp& s : alu.src()) src.push_back(s.gep(i));
    alus.push_back(UOp::make(alu.op(), alu.dtype().scalar(), std::move(src), alu.arg()));
  }
  return UOp::make(Ops::VECTORIZE, alu.dtype(), std::move(alus));
}

// *** render: expressions to text through NOOP nodes (tinygrad's `renderer`) ***

static const char* sym_of(Ops o) {
  switch (o) {
    case Ops::ADD: return "+";
    case Ops::SUB: return "-";
    case Ops::IDIV: return "//";
    case Ops::MOD: return "%";
    case Ops::SHL: return "<<";
    case Ops::SHR: return ">>";
    case Ops::MUL: return "*";
    case Ops::CMPLT: return "<";
    case Ops::CMPNE: return "!=";
    case Ops::AND: return "&";
    case Ops::OR: return "|";
    case Ops::XOR: return "^";
    default: return nullptr;
  }
}
static UOp noop(std::string s) { return UOp::make(Ops::NOOP, dtypes::void_, {}, std::move(s)); }
static const std::string& txt(const UOp& u) { return u.arg<std::string>(); }

const PatternMatcher<UOp>& pm_render_expr() {
  static const PatternMatcher<UOp> pm = {
      {op(Ops::DEFINE_VAR).named("x"), [](M m) { return noop(m["x"].arg<VarArg>().name); }},
      {op(Ops::SPECIAL).named("x"), [](M m) { return noop(m["x"].arg<SpecialArg>().name); }},
      {op(Ops::RANGE).named("x"), [](M m) { return noop(cat("ridx", arg_str(m["x"].arg()))); }},
      {op({Ops::CONST, Ops::VCONST}).named("x"), [](M m) { return noop(arg_str(m["x"].arg())); }},
      {op(Ops::UNROLL).named("x"),
       [](M m) { return noop(cat("UNROLL(", arg_str(m["x"].src(0).arg()), ", ", arg_str(m["x"].arg()), ")")); }},
      {op(Ops::CAST).named("x"),
       [](M m) {
         UOp u = m["x"];
         return noop(cat("(", u.dtype().repr().substr(7), ")(", arg_str(u.src(0).arg()), ")"));
       }},
      {op(Ops::LOAD), [](M) { return noop("load"); }},
      {op(Ops::BIND).each(op(Ops::NOOP)).named("x"), [](M m) { return m["x"].src(0); }},
      {op(Ops::NEG).each(op(Ops::NOOP)).named("x"), [](M m) { return noop(cat("(-", txt(m["x"].src(0)), ")")); }},
      {op(Ops::MAX).each(op(Ops::NOOP)).named("x"),
       [](M m) { return noop(cat("max(", txt(m["x"].src(0)), ", ", txt(m["x"].src(1)), ")")); }},
      {op(Ops::MULACC).each(op(Ops::NOOP)).named("x"),
       [](M m) {
         UOp u = m["x"];
         return noop(cat("(", txt(u.src(0)), "*", txt(u.src(1)), "+", txt(u.src(2)), ")"));
       }},
      {op(Ops::WHERE).each(op(Ops::NOOP)).named("x"),
       [](M m) {
         UOp u = m["x"];
         return noop(cat("(", txt(u.src(1)), " if ", txt(u.src(0)), " else ", txt(u.src(2)), ")"));
       }},
      {op(GroupOp::ALU).each(op(Ops::NOOP)).named("x"),
       [](M m) -> UOp {
         UOp u = m["x"];
         const char* s = sym_of(u.op());
         if (s == nullptr || u.src().size() != 2) return {};
         return noop(cat("(", txt(u.src(0)), s, txt(u.src(1)), ")"));
       }},
  };
  return pm;
}

UOp UOp::simplify() const { return graph_rewrite(*this, symbolic()); }

std::string UOp::render(bool simplify_first) const {
  UOp r = graph_rewrite(simplify_first ? simplify() : *this, pm_render_expr());
  return r.op() == Ops::NOOP ? r.arg<std::string>() : r.repr();
}

}  // namespace tg
