#include "tg/uop/transcendental.h"

#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <utility>

namespace tg {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

// the bit layout of a float dtype, and the integer dtypes of its width
struct Layout {
  DType sint, uint;
  int mantissa, bias, exp_mask;
};
Layout layout(DType d) {
  DType s = d.scalar();
  if (s == dtypes::float64) return {dtypes::int64, dtypes::uint64, 52, 1023, 2047};
  if (s == dtypes::float32) return {dtypes::int32, dtypes::uint32, 23, 127, 255};
  TG_ASSERT(s == dtypes::float16, "no transcendental approximation for ", d);
  return {dtypes::int16, dtypes::uint16, 10, 15, 31};
}
bool is_f64(const UOp& x) { return x.dtype().scalar() == dtypes::float64; }

DType vec_like(DType scalar, const UOp& x) { return scalar.vec(x.dtype().count()); }
UOp cast_vec(const UOp& x, DType scalar) { return x.cast(vec_like(scalar, x)); }  // same lane count, new element
UOp shr(const UOp& x, int y) { return idiv(x, int64_t(1) << y); }                 // x // 2**y
UOp shl(const UOp& x, int y) { return x * (int64_t(1) << y); }                    // x * 2**y

// Horner: ((c0*x + c1)*x + c2) ...
UOp poly(const UOp& x, std::initializer_list<double> coeffs) {
  UOp acc;
  for (double c : coeffs) acc = acc ? acc * x + c : x.const_like(c);
  return acc;
}

// x's inf -> inf, -inf -> minus_inf, nan -> nan, anything else -> other
UOp map_special(const UOp& x, const UOp& inf, const UOp& minus_inf, const UOp& nan, const UOp& other) {
  return x.ne(x.const_like(kInf)).where(x.ne(x).where(nan, x.ne(x.const_like(-kInf)).where(other, minus_inf)), inf);
}

}  // namespace

// round to the nearest integer, ties away from zero, as the signed int of d's width
UOp rintk(const UOp& d) {
  return (d + (d < 0.0).where(d.const_like(-0.5), d.const_like(0.5))).cast(vec_like(layout(d.dtype()).sint, d));
}

// 2**q as a float (q an integer in the exponent's normal range): q's bits placed in the exponent field. int16 goes to
// float_dtype (float16), int32 to float32, int64 to float64
UOp pow2if(const UOp& q, DType float_dtype) {
  DType qs = q.dtype().scalar();
  DType out = qs == dtypes::int64 ? dtypes::float64 : qs == dtypes::int32 ? dtypes::float32 : float_dtype.scalar();
  Layout l = layout(out);
  return shl(q + l.bias, l.mantissa).bitcast(vec_like(out, q));
}

namespace {

// floor(log2(d)) for a normal d >= 0, from its exponent bits
UOp ilogb2k(const UOp& d) {
  Layout l = layout(d.dtype());
  return (shr(d.bitcast(vec_like(l.sint, d)), l.mantissa) & l.exp_mask) - l.bias;
}

// d * 2**e by adding e to d's exponent bits (e a float holding an integer in [-127, 127])
UOp ldexp3k(const UOp& d, const UOp& e) {
  Layout l = layout(d.dtype());
  DType it = vec_like(l.sint, d);
  return (d.bitcast(it) + shl(e.cast(it), l.mantissa)).bitcast(d.dtype());
}

// d * 2**e for an int e, in two steps so that each factor is a normal float (d > 0 and not denormal); e's halves by an
// arithmetic shift (floor), one instruction where e // 2 (toward zero) takes three
UOp ldexp2k(const UOp& d, const UOp& e) {
  UOp half = e >> e.const_like(1);
  return (d * pow2if(half, d.dtype())) * pow2if(e - half, d.dtype());
}

}  // namespace

// (mantissa in [0.5, 1), exponent) of v != 0, the exponent unsigned as the bits it comes from
std::pair<UOp, UOp> frexp(const UOp& v) {
  Layout l = layout(v.dtype());
  DType s = v.dtype().scalar();
  const int64_t keep = s == dtypes::float64 ? 0x000FFFFFFFFFFFFF : s == dtypes::float32 ? 0x807FFFFF : 0x83FF;
  const int64_t half = s == dtypes::float64 ? 0x3FE0000000000000 : s == dtypes::float32 ? 0x3F000000 : 0x3800;
  UOp bits = v.bitcast(vec_like(l.uint, v));
  UOp exponent = shr(bits, l.mantissa) & l.exp_mask;
  return {((bits & keep) | half).bitcast(v.dtype()), exponent - l.bias + 1};
}

// *** range reduction for sine: (r, q) with d = q*pi/2 + r, |r| <= pi/4, q as int32 (q % 4 the quadrant) ***

// Payne-Hanek, for 39800 <= d (here: d >= switch_over): d times 2/pi in 96 bits of fixed point, the bits of 2/pi
// picked by d's exponent
std::pair<UOp, UOp> payne_hanek_reduction(const UOp& d) {
  static constexpr std::array<uint32_t, 7> two_over_pi = {0x00000000, 0x28be60db, 0x9391054a, 0x7f09d5f4,
                                                          0x7d4d3770, 0x36d8a566, 0x4f10e410};
  const DType inter = d.dtype().scalar() == dtypes::float16 ? vec_like(dtypes::float32, d) : d.dtype();
  auto [f, e] = frexp(d);
  UOp ia = cast_vec(f.cast(inter) * 4.294967296e9, dtypes::uint64);
  UOp i = shr(cast_vec(e, dtypes::uint64), 5);  // which 32-bit word of 2/pi comes first
  UOp shift = cast_vec(e, dtypes::int32) & 31, unshift = 32 - shift;
  // two_over_pi[i + offset] (0 past the table), as a chain of selects on i
  auto take = [&](size_t offset) {
    UOp an = UOp::const_(vec_like(dtypes::uint32, d), 0);
    for (size_t c = two_over_pi.size() - 1 - offset; c-- > 0;)
      an = i.ne(i.const_like(static_cast<int64_t>(c)))
               .where(an, an.const_like(static_cast<int64_t>(two_over_pi[c + offset])));
    return an;
  };
  // x << y and x >> y for a per-lane y, as a multiply and a divide by 2**y
  auto shl_lazy = [&](const UOp& x, const UOp& y) {
    return cast_vec(cast_vec(x, dtypes::uint64) * cast_vec(pow2if(y, d.dtype()), dtypes::uint64), dtypes::uint32);
  };
  auto shr_lazy = [&](const UOp& x, const UOp& y) {
    return cast_vec(idiv(cast_vec(x, dtypes::uint64), cast_vec(pow2if(y, d.dtype()), dtypes::uint64)), dtypes::uint32);
  };
  std::array<UOp, 4> a = {take(0), take(1), take(2), take(3)};
  UOp hi = shl_lazy(a[0], shift) | shr_lazy(a[1], unshift);
  UOp mi = shl_lazy(a[1], shift) | shr_lazy(a[2], unshift);
  UOp lo = shl_lazy(a[2], shift) | shr_lazy(a[3], unshift);
  auto mul64 = [](const UOp& x, const UOp& y) { return cast_vec(x, dtypes::uint64) * cast_vec(y, dtypes::uint64); };
  UOp p = shl(mul64(ia, hi), 32) + mul64(ia, mi) + shr(mul64(ia, lo), 32);  // d * 2/pi, 2 integer bits
  UOp q = cast_vec(shr(p, 62), dtypes::int32);                              // rounded to nearest below
  UOp r = ((p & 0x3fffffffffffffff).cast(inter) * 3.4061215800865545e-19).cast(d.dtype());
  UOp low = f < 0.5;  // the fraction: below one half stays, else r - pi/2 in the next quadrant
  return {low.where(r, r - kPi / 2), low.where(q, q + 1)};
}

namespace {

// Cody-Waite, for |d| <= 39800: d - q*pi/2 with pi split into parts whose products with q are exact
UOp cody_waite_reduce(const UOp& x, const UOp& q, const UOp& qdh) {
  if (x.dtype().scalar() == dtypes::float16)  // float16 needs float32's precision here to reach 1 ulp
    return cast_vec(cody_waite_reduce(cast_vec(x, dtypes::float32), cast_vec(q, dtypes::float32), UOp{}),
                    dtypes::float16);
  if (is_f64(x)) {
    constexpr double a = 3.1415926218032836914, b = 3.1786509424591713469e-08, c = 1.2246467864107188502e-16,
                     dd = 1.2736634327021899816e-24;
    UOp r = qdh * -a + x;
    r = q * -a + r;
    r = qdh * -b + r;
    r = q * -b + r;
    r = qdh * -c + r;
    r = q * -c + r;
    return (qdh + q) * -dd + r;
  }
  UOp r = q * -3.1414794921875 + x;
  r = q * -0.00011315941810607910156 + r;
  r = q * -1.9841872589410058936e-09 + r;
  return q * -1.2154201256553420762e-10 + r;
}

}  // namespace

std::pair<UOp, UOp> cody_waite_reduction(const UOp& d) {
  constexpr double m_1_pi = 0.318309886183790671537767526745028724;
  UOp qdh, quadrant;
  if (is_f64(d)) {  // float64: the quotient's high part, split off so that q*pi's parts stay exact
    qdh = cast_vec(d * (m_1_pi / 16777216.0), dtypes::int64).cast(d.dtype()) * 16777216.0;
    quadrant = rintk(d * m_1_pi - qdh);
  } else {
    quadrant = rintk(d * m_1_pi);
  }
  return {cody_waite_reduce(d, quadrant.cast(d.dtype()), qdh), cast_vec(quadrant, dtypes::int32)};
}

namespace {

// sin on [-pi/2, pi/2]: d * P(d*d)
UOp sin_poly(const UOp& d) {
  UOp d2 = d * d;
  UOp p =
      is_f64(d)
          ? poly(d2, {-7.97255955009037868891952e-18, 2.81009972710863200091251e-15, -7.64712219118158833288484e-13,
                      1.60590430605664501629054e-10, -2.50521083763502045810755e-08, 2.75573192239198747630416e-06,
                      -0.000198412698412696162806809, 0.00833333333333332974823815, -0.166666666666666657414808, 1.0})
          : poly(d2, {2.6083159809786593541503e-06, -0.0001981069071916863322258, 0.00833307858556509017944336,
                      -0.166666597127914428710938, 1.0});
  return d * p;
}
UOp bit_set(const UOp& q, int64_t n) { return (q & n).ne(q.const_like(0)); }
UOp sign_if(const UOp& cond, const UOp& like) { return cond.where(like.const_like(-1.0), like.const_like(1.0)); }
// q counts multiples of pi (Cody-Waite's quotient): odd ones flip the sign
UOp sin_poly_small(const UOp& d, const UOp& q) {
  UOp r = sin_poly(d);
  return r * sign_if(bit_set(q, 1), r);
}
// q counts multiples of pi/2 (Payne-Hanek's): odd ones shift by pi/2, the third and fourth flip the sign
UOp sin_poly_large(const UOp& d, const UOp& q) {
  UOp r = sin_poly(d + bit_set(q, 1).where(d.const_like(kPi / 2), d.const_like(0.0)));
  return r * sign_if(bit_set(q, 2), r);
}

}  // namespace

bool transcendental_supported(DType d) {
  DType s = d.scalar();
  return s == dtypes::float16 || s == dtypes::float32 || s == dtypes::float64;
}

UOp xsin(const UOp& d, bool fast, double switch_over) {
  UOp zero = d.const_like(0.0), nan = d.const_like(kNan);
  UOp x = map_special(d, zero, zero, zero, d);  // +-inf and nan computed as 0, answered nan at the end
  UOp x_sign = x.ne(zero).where((x < 0.0).where(d.const_like(-1.0), d.const_like(1.0)), zero);
  UOp x_abs = x * x_sign;
  UOp result;
  if (fast) {
    auto [r, q] = cody_waite_reduction(x_abs);
    result = sin_poly_small(r, q);
  } else {  // Payne-Hanek assumes |x| >= pi/4: below switch_over Cody-Waite's answer is taken
    auto [r, q] = payne_hanek_reduction(x_abs);
    auto [r_small, q_small] = cody_waite_reduction(x_abs);
    result = (x_abs < switch_over).where(sin_poly_small(r_small, q_small), sin_poly_large(r, q));
  }
  return map_special(d, nan, nan, nan, result * x_sign);
}

UOp xexp2(const UOp& d) {
  DType sc = d.dtype().scalar();
  // beyond these the answer is inf or 0. d is clamped to `upper` (nan too) before the integer conversion, where the
  // computation itself gives inf. Below `lower` it computes 2**0 and a select gives 0: 2**lower rounds to 0
  // (2**-150, 2**-1075; float16's 2**-22 is one of its denormals, kept), but computing such a 0, the last multiply
  // underflows, and an Intel core takes a microcode assist for each such lane: a causal softmax's masked half (-inf)
  // took 15x the time of the rest (exp of 6.3M floats 1.6 -> 25 ms on the Xeon model 207). A denormal result (2**-149
  // to 2**-126) is still computed, exact, with its assist
  const double upper = sc == dtypes::float64 ? 1024 : sc == dtypes::float32 ? 128 : 23;
  const double lower = sc == dtypes::float64 ? -1075 : sc == dtypes::float32 ? -150 : -22;
  UOp below = d < lower;
  UOp x = below.where(d.const_like(0.0), d);
  x = (x < upper).where(x, x.const_like(upper));
  UOp q = rintk(x);
  UOp s = x - q.cast(x.dtype());  // in [-1/2, 1/2]
  UOp u = is_f64(d) ? poly(s, {0.4434359082926529454e-9, 0.7073164598085707425e-8, 0.1017819260921760451e-6,
                               0.1321543872511327615e-5, 0.1525273353517584730e-4, 0.1540353045101147808e-3,
                               0.1333355814670499073e-2, 0.9618129107597600536e-2, 0.5550410866482046596e-1,
                               0.2402265069591012214e+0, 0.6931471805599452862e+0, 0.1000000000000000000e+1})
                    : poly(s, {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0,
                               0.6931471825e+0, 1.0});
  u = ldexp2k(u, q);  // u * 2**q
  u = below.where(d.const_like(0.0), u);
  return d.ne(d).where(d.const_like(kNan), u);
}

UOp xlog2(const UOp& d) {
  // TODO: float16's denormals need float32 to be exact: float16 is computed in float32
  if (d.dtype().scalar() == dtypes::float16) return cast_vec(xlog2(cast_vec(d, dtypes::float32)), dtypes::float16);
  UOp is_denormal = d < 1e-4;
  UOp a = is_denormal.where(d * 18446744073709551616.0, d);  // * 2**64
  UOp e = ilogb2k(a * (1.0 / 0.75)).cast(a.dtype());
  UOp m = ldexp3k(a, -e);  // in [0.75, 1.5)
  e = is_denormal.where(e - 64.0, e);
  UOp x = fdiv(m - 1.0, m + 1.0), x2 = x * x;
  UOp t, s_hi, s_lo;
  if (is_f64(d)) {
    t = poly(x2,
             {0.2211941750456081490e+0, 0.2200768693152277689e+0, 0.2623708057488514656e+0, 0.3205977477944495502e+0,
              0.4121985945485324709e+0, 0.5770780162997058982e+0, 0.96179669392608091449});
    s_hi = e + x * 2.885390081777926774, s_lo = e.const_like(0.0);
  } else {
    t = poly(x2, {0.4374550283e+0, 0.5764790177e+0, 0.9618012905120});
    s_hi = e + x * 2.8853900432586669922, s_lo = x * 3.2734474483568488616e-08;
  }
  UOp r = t * (x * x2) + (s_hi + s_lo);
  const UOp inf = r.const_like(kInf), minus_inf = r.const_like(-kInf), nan = r.const_like(kNan);
  r = d.ne(d.const_like(kInf)).where(r, inf);
  r = (d < -0.0).where(nan, r);  // log2 of a negative number
  // log2(0) = -inf, told by the value the approximation gives at 0 (a tiny d compares equal to 0 on some devices)
  const double log2_zero = is_f64(d) ? -1087 : -191;
  r = r.ne(r.const_like(log2_zero)).where(r, minus_inf);
  r = d.ne(d).where(nan, r);
  return d.reciprocal().ne(minus_inf).where(r, minus_inf);  // log2(-0.0) = -inf (x == -0.0 isn't on every device)
}

UOp xpow(const UOp& base, const UOp& exponent) {
  UOp negative = base < 0.0;
  UOp ret = (negative.where(-base, base).alu(Ops::LOG2) * exponent).alu(Ops::EXP2);
  // a negative base: nan for a non-integer exponent, -1 for an odd one
  UOp non_int = exponent.ne(cast_vec(exponent, dtypes::int32).cast(exponent.dtype()));
  UOp odd = cast_vec(cast_vec((exponent < 0.0).where(-exponent, exponent), dtypes::int32) % 2, dtypes::bool_);
  UOp adj = non_int.where(ret.const_like(kNan), odd.where(ret.const_like(-1.0), ret.const_like(1.0)));
  UOp zero_zero = base.eq(base.const_like(0.0)) & exponent.eq(exponent.const_like(0.0));  // 0**0 = 1
  return zero_zero.where(ret.const_like(1.0), ret * negative.where(adj, ret.const_like(1.0)));
}

}  // namespace tg
