// get_late_rewrite_patterns: the ops a renderer lacks, in ops it has (transcendentals as polynomials, MOD as AND,
// IDIV as a shift or a magic multiply ...)
#include <algorithm>

#include "tg/codegen/devectorizer.h"
#include "tg/uop/symbolic.h"
#include "tg/uop/transcendental.h"

namespace tg {

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
  // the other floats (bfloat16, the fp8s) through float32, where the renderer lacks the op
  const std::vector<DType> narrow = {dtypes::bfloat16, dtypes::fp8e4m3, dtypes::fp8e5m2};
  for (Ops o : {Ops::EXP2, Ops::LOG2, Ops::SIN})
    if (!ops.has(o))
      pat.push_back({op(o, {x}).dtype(narrow).named("t"), [](M m) {
                       UOp t = m["t"];
                       UOp f = UOp::make(t.op(), dtypes::float32, {m[x].cast(dtypes::float32)});
                       return f.cast(t.dtype());
                     }});
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
  // ours: x*(c?2**y:0) -> c?(x<<y):0, a shift and a select for a multiply by a select: threefry's 64-bit word put
  // together from two halves, the high one of a padded (cat) counter, where AVX2 has no 64-bit vector multiply
  // (clang's three 32-bit ones and shifts: a GPT step's dropout masks 2.9 -> 2.6 ms a call held to AVX2)
  if (ops.has(Ops::SHL))
    pat.push_back({x.dtype(dtypes::ints) * where(y, c0, c1), [](M m) -> UOp {
                     int64_t v = log2_exact(m[c0].const_arg());
                     if (v == 0 || std::holds_alternative<double>(m[c1].const_arg()) || as_int(m[c1].const_arg()) != 0)
                       return {};
                     return m[y].where(m[x] << v, m[x].const_like(0));
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
