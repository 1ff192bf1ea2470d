// What the ALU ops do to values: the bounds of a node's value (tinygrad's _min_max, computed once when a node is
// made) and constant evaluation with python's semantics (exec_alu, identity_element)
#include <algorithm>
#include <cmath>

#include "tg/uop/uop.h"

namespace tg {

// *** value bounds (tinygrad's _min_max), computed once per node ***

namespace {
bool num_lt(const ConstValue& a, const ConstValue& b) {
  if (std::holds_alternative<double>(a) || std::holds_alternative<double>(b)) return as_double(a) < as_double(b);
  return as_i128(a) < as_i128(b);
}
const ConstValue& num_min(const ConstValue& a, const ConstValue& b) { return num_lt(b, a) ? b : a; }
const ConstValue& num_max(const ConstValue& a, const ConstValue& b) { return num_lt(a, b) ? b : a; }
bool is_int_val(const ConstValue& v) { return !std::holds_alternative<double>(v); }

constexpr i128 kConstLo = INT64_MIN, kConstHi = UINT64_MAX;  // the ints a ConstValue holds
bool fits_const(i128 v) { return v >= kConstLo && v <= kConstHi; }
int bit_len(i128 v) {
  int n = 0;
  for (i128 a = v < 0 ? -v : v; a != 0; a >>= 1) n++;
  return n;
}
// a*b, pinned to +-2**126 where it would not fit an i128 (the operands here stay well inside 2**100)
i128 mul_sat(i128 a, i128 b) {
  if (bit_len(a) + bit_len(b) <= 126) return a * b;
  i128 big = i128(1) << 126;
  return (a < 0) != (b < 0) ? -big : big;
}
// python's exact bounds, saturated into what a ConstValue holds. Where that saturation would make the bounds one value
// (the whole range past 2**64, so C's arithmetic wrapped), nothing is known: the dtype's range.
std::pair<ConstValue, ConstValue> bounds(i128 lo, i128 hi, DType dtype) {
  ConstValue l = int_const(lo), h = int_const(hi);
  if ((!fits_const(lo) || !fits_const(hi)) && l == h) return {dtypes::min(dtype), dtypes::max(dtype)};
  return {l, h};
}
}  // namespace

std::pair<ConstValue, ConstValue> compute_min_max(Ops op, DType dtype, const std::vector<UOp>& src, const Arg& arg) {
  if (GroupOp::Binary.has(op) && !dtypes::is_float(dtype) && src.size() == 2) {
    ConstValue a0 = src[0].vmin(), a1 = src[0].vmax(), b0 = src[1].vmin(), b1 = src[1].vmax();
    bool all_int = is_int_val(a0) && is_int_val(a1) && is_int_val(b0) && is_int_val(b1);
    if (all_int) {
      i128 x0 = as_i128(a0), x1 = as_i128(a1), y0 = as_i128(b0), y1 = as_i128(b1);
      switch (op) {
        case Ops::ADD: return bounds(x0 + y0, x1 + y1, dtype);
        case Ops::SUB: return bounds(x0 - y1, x1 - y0, dtype);
        case Ops::AND:
          if (y0 == y1 && x0 >= 0 && y0 >= 0) return bounds(std::min<i128>(0, x0), std::min(x1, y1), dtype);
          break;
        case Ops::MUL: {
          i128 v[4] = {mul_sat(x0, y0), mul_sat(x0, y1), mul_sat(x1, y0), mul_sat(x1, y1)};
          return bounds(*std::min_element(v, v + 4), *std::max_element(v, v + 4), dtype);
        }
        case Ops::SHL:
          if (y0 == y1 && y0 >= 0 && y0 < 64)
            return bounds(mul_sat(x0, i128(1) << y0), mul_sat(x1, i128(1) << y0), dtype);
          break;
        case Ops::SHR:
          if (y0 == y1 && y0 >= 0 && y0 < 64) return bounds(x0 >> y0, x1 >> y0, dtype);
          break;
        case Ops::MOD:
          if (y0 > 0) {
            if (x0 >= 0) return bounds(0, y1 - 1, dtype);
            if (x1 <= 0) return bounds(-(y1 - 1), 0, dtype);
            return bounds(-(y1 - 1), y1 - 1, dtype);
          }
          if (y1 < 0) {  // NOTE: tinygrad bounds by -y1-1; the largest |y| is -y0
            if (x0 >= 0) return bounds(0, -y0 - 1, dtype);
            if (x1 <= 0) return bounds(-(-y0 - 1), 0, dtype);
            return bounds(-(-y0 - 1), -y0 - 1, dtype);
          }
          break;
        case Ops::IDIV: {
          auto cd = [](i128 a, i128 b) -> i128 { return b == 0 ? 0 : a / b; };  // C truncation, as cdiv
          if (y0 == y1) {
            if (y0 > 0) return bounds(cd(x0, y0), cd(x1, y0), dtype);
            if (y0 < 0) return bounds(cd(x1, y0), cd(x0, y0), dtype);
          }
          if (x1 <= 0 && y1 < 0) return bounds(cd(x1, y0), cd(x0, y1), dtype);
          if (x0 >= 0 && y0 > 0) return bounds(cd(x0, y1), cd(x1, y0), dtype);
          if (x1 <= 0 && y0 > 0) return bounds(cd(x0, y0), cd(x1, y1), dtype);
          if (x0 >= 0 && y1 < 0) return bounds(cd(x1, y1), cd(x0, y0), dtype);
          break;
        }
        case Ops::MAX: return bounds(std::max(x0, y0), std::max(x1, y1), dtype);
        default: break;
      }
    }
    if (op == Ops::MAX && !all_int) return {num_max(a0, b0), num_max(a1, b1)};
    if (op == Ops::CMPLT) return {ConstValue(num_lt(a1, b0)), ConstValue(num_lt(a0, b1))};
    if (op == Ops::CMPNE) {
      bool all_eq = const_eq_numeric(a0, a1) && const_eq_numeric(a1, b0) && const_eq_numeric(b0, b1);
      return {ConstValue(num_lt(a1, b0) || num_lt(b1, a0)), ConstValue(!all_eq)};
    }
    if (dtype == dtypes::bool_) {
      if (op == Ops::OR) return {as_bool(a0) || as_bool(b0), as_bool(a1) || as_bool(b1)};
      if (op == Ops::AND) return {as_bool(a0) && as_bool(b0), as_bool(a1) && as_bool(b1)};
    }
  }
  switch (op) {
    case Ops::WHERE:
      if (dtypes::is_int(dtype)) return {num_min(src[1].vmin(), src[2].vmin()), num_max(src[1].vmax(), src[2].vmax())};
      break;
    case Ops::DEFINE_VAR:
      if (auto* v = std::get_if<VarArg>(&arg)) return {v->min, v->max};
      break;
    case Ops::RANGE: {
      ConstValue e = src[0].vmax();
      return {int64_t(0), is_int_val(e) ? int_const(as_i128(e) - 1) : ConstValue(as_double(e) - 1)};
    }
    case Ops::BIND: return {src[0].vmin(), src[0].vmax()};
    case Ops::UNROLL:
    case Ops::VECTORIZE: {
      if (src.empty()) break;
      ConstValue lo = src[0].vmin(), hi = src[0].vmax();
      for (auto& s : src) lo = num_min(lo, s.vmin()), hi = num_max(hi, s.vmax());
      return {lo, hi};
    }
    case Ops::SPECIAL:
      if (auto* s = std::get_if<SpecialArg>(&arg)) return {int64_t(0), s->size - 1};
      break;
    case Ops::CONST:
      if (auto* c = std::get_if<ConstValue>(&arg)) return {*c, *c};
      break;
    case Ops::VCONST:
      if (auto* t = std::get_if<Tuple>(&arg); t && !t->empty()) {
        ConstValue lo = (*t)[0], hi = (*t)[0];
        for (auto& x : *t) lo = num_min(lo, x), hi = num_max(hi, x);
        return {lo, hi};
      }
      break;
    case Ops::CAST: {
      if (dtype == dtypes::bool_) {  // nonzero: False only if the source can be 0, True only if it can be nonzero
        ConstValue lo = src[0].vmin(), hi = src[0].vmax(), zero = int64_t(0);
        return {num_lt(zero, lo) || num_lt(hi, zero), num_lt(lo, zero) || num_lt(zero, hi)};
      }
      // NOTE: as tinygrad, not exact for unsigned targets (CAST is not monotone there)
      ConstValue dmin = dtypes::min(dtype), dmax = dtypes::max(dtype);
      return {num_max(dmin, src[0].vmin()), num_min(src[0].vmax(), dmax)};
    }
    default: break;
  }
  return {dtypes::min(dtype), dtypes::max(dtype)};
}

// *** constant evaluation with python semantics (python_alu + truncate) ***

namespace {
// an int result: python's exact int while a ConstValue holds it, else its value modulo 2**64 (as C wraps)
// (wrapped says when the value was cut to its low 64 bits)
ConstValue int_result(i128 v, bool& wrapped) {
  if (fits_const(v)) return int_const(v);
  wrapped = true;
  return static_cast<int64_t>(static_cast<uint64_t>(v));
}
ConstValue int_mul(i128 a, i128 b, bool& wrapped) {
  if (bit_len(a) + bit_len(b) <= 126) return int_result(a * b, wrapped);
  wrapped = true;
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));  // the low 64 bits
}
ConstValue int_pow(i128 base, i128 e,
                   bool& wrapped) {  // e >= 0, by squaring; past 2**126 only the low 64 bits are kept
  i128 acc = 1;
  uint64_t lacc = 1, lbase = static_cast<uint64_t>(base);
  bool exact = true;
  for (; e > 0; e >>= 1) {
    if (e & 1) {
      lacc *= lbase;
      if (exact && bit_len(acc) + bit_len(base) <= 126)
        acc *= base;
      else
        exact = false;
    }
    if (e > 1) {
      lbase *= lbase;
      if (exact && 2 * bit_len(base) <= 126)
        base *= base;
      else
        exact = false;
    }
  }
  wrapped |= !exact;
  return exact ? int_result(acc, wrapped) : ConstValue(static_cast<int64_t>(lacc));
}
}  // namespace

ConstValue exec_alu(Ops op, DType dtype, const std::vector<ConstValue>& operands, bool truncate_output,
                    DType src_dtype) {
  auto need = [&](size_t n) {
    TG_CHECK(operands.size() == n, "exec_alu ", op, " takes ", n, " operands, got ", operands.size());
  };
  std::vector<ConstValue> x = operands;
  bool any_float = std::any_of(x.begin(), x.end(), [](auto& v) { return std::holds_alternative<double>(v); });
  bool all_bool = std::all_of(x.begin(), x.end(), [](auto& v) { return std::holds_alternative<bool>(v); });
  // ops that order their operands read unsigned ones as the dtype does (a uint64 -1 is 2**64-1), as the C code would
  DType in = (src_dtype == dtypes::void_ ? dtype : src_dtype).scalar();
  bool ordered =
      op == Ops::CMPLT || op == Ops::CMPNE || op == Ops::MAX || op == Ops::IDIV || op == Ops::MOD || op == Ops::SHR;
  if (ordered && dtypes::is_unsigned(in))
    for (auto& v : x)
      if (!std::holds_alternative<double>(v)) v = truncate(v, in);
  auto i = [&](size_t k) { return as_i128(x[k]); };
  ConstValue r;
  bool wrapped = false;
  switch (op) {
    case Ops::LOG2: {
      need(1);
      double v = as_double(x[0]);
      r = v > 0 ? std::log2(v) : v == 0 ? -INFINITY : NAN;
      break;
    }
    case Ops::EXP2: need(1), r = std::exp2(as_double(x[0])); break;
    case Ops::SQRT: {
      need(1);
      double v = as_double(x[0]);
      r = v >= 0 ? std::sqrt(v) : NAN;
      break;
    }
    case Ops::RECIP: {
      need(1);
      double v = as_double(x[0]);
      r = v != 0 ? 1.0 / v : std::copysign(INFINITY, v);
      break;
    }
    case Ops::SIN: {
      need(1);
      double v = as_double(x[0]);
      r = std::isinf(v) ? NAN : std::sin(v);
      break;
    }
    case Ops::NEG:
      need(1);
      r = any_float ? ConstValue(-as_double(x[0])) : int_result(-i(0), wrapped);
      break;
    case Ops::POW: {
      need(2);
      double a = as_double(x[0]), b = as_double(x[1]);
      if (!any_float && b >= 0)  // python int ** non-negative int stays an int
        r = int_pow(i(0), i(1), wrapped);
      else if (a == 0 && b < 0)
        r = INFINITY;
      else
        r = std::pow(a, b);
      break;
    }
    case Ops::ADD:
    case Ops::SUB:
    case Ops::MUL: {
      need(2);
      if (any_float) {
        double a = as_double(x[0]), b = as_double(x[1]);
        r = op == Ops::ADD ? a + b : op == Ops::SUB ? a - b : a * b;
      } else {
        r = op == Ops::ADD   ? int_result(i(0) + i(1), wrapped)
            : op == Ops::SUB ? int_result(i(0) - i(1), wrapped)
                             : int_mul(i(0), i(1), wrapped);
      }
      break;
    }
    case Ops::CMPNE: need(2), r = !const_eq_numeric(x[0], x[1]); break;
    case Ops::CMPLT: need(2), r = num_lt(x[0], x[1]); break;
    case Ops::XOR:
    case Ops::OR:
    case Ops::AND: {
      need(2);
      TG_CHECK(!any_float, "bitwise ", op, " on float operands");
      i128 a = i(0), b = i(1), v = op == Ops::XOR ? (a ^ b) : op == Ops::OR ? (a | b) : (a & b);
      r = all_bool ? ConstValue(v != 0) : int_result(v, wrapped);
      break;
    }
    case Ops::SHL:
    case Ops::SHR: {
      need(2);
      TG_CHECK(!any_float, "shift ", op, " on float operands");
      i128 a = i(0), b = i(1);
      if (b < 0)
        r = int64_t(0);
      else if (op == Ops::SHL)  // |a| < 2**64, so a * 2**b fits an i128 for b < 64; past that the low bits are 0
        r = b >= 64 ? ConstValue(int64_t(0)) : int_result(a * (i128(1) << b), wrapped);
      else
        r = int_result(a >> std::min<i128>(b, 127), wrapped);  // python's >> floors
      break;
    }
    case Ops::MAX: need(2), r = num_lt(x[0], x[1]) ? x[1] : x[0]; break;
    case Ops::MOD: need(2), r = i(1) == 0 ? ConstValue(int64_t(0)) : int_result(i(0) % i(1), wrapped); break;   // C's %
    case Ops::IDIV: need(2), r = i(1) == 0 ? ConstValue(int64_t(0)) : int_result(i(0) / i(1), wrapped); break;  // C's /
    case Ops::MULACC:
      need(3);
      r = exec_alu(Ops::ADD, dtype, {exec_alu(Ops::MUL, dtype, {x[0], x[1]}, false), x[2]}, false);
      break;
    case Ops::WHERE: need(3), r = as_bool(x[0]) ? x[1] : x[2]; break;
    default: throw Error(cat("exec_alu: no constant evaluation for ", op));
  }
  if (truncate_output) return truncate(r, dtype);
  // the 64-bit ints wrap even untruncated: python's ints would grow past what the dtype (and a ConstValue) holds. An
  // exact negative uint64 stays negative, as python keeps it (uint64 (x+-1023)+1 folds to x+-1022, whose bounds stay
  // [-1022, 1025] for x in [0, 2047], not a wrapped 2**64-1022 whose sum overflows the bounds)
  DType s = dtype.scalar();
  const int64_t* neg = std::get_if<int64_t>(&r);
  if (s == dtypes::uint64 && !wrapped && neg != nullptr && *neg < 0) return r;
  if ((s == dtypes::uint64 || s == dtypes::int64) && !std::holds_alternative<double>(r)) return truncate(r, s);
  return r;
}

ConstValue identity_element(Ops op, DType dt) {
  if (op == Ops::ADD) return dtypes::as_const(int64_t(0), dt);
  if (op == Ops::MUL) return dtypes::as_const(int64_t(1), dt);
  TG_ASSERT(op == Ops::MAX, "no identity element for ", op);
  return dtypes::as_const(dtypes::min(dt), dt);
}

}  // namespace tg
