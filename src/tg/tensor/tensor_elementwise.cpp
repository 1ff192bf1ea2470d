// The Tensor's elementwise ops (tinygrad's tensor.py unary, binary and ternary ops): cast, unary math on the
// ALU ops, the broadcasting binary ops, where, comparisons, bitwise ops and shifts.
#include <numbers>

#include "tg/tensor/tensor_internal.h"

namespace tg {

// *** elementwise ***

Tensor Tensor::cast(DType dt) const {
  TG_META("cast");
  if ((dt == dtypes::uint8 || dt == dtypes::uint16) && dtypes::is_float(dtype())) {  // as tinygrad: through int32
    Tensor i = apply_uop(uop().cast(dtypes::int32), {this});
    return i.apply_uop(i.uop().cast(dt), {&i});
  }
  return dtype() == dt ? *this : apply_uop(uop().cast(dt), {this});
}
Tensor Tensor::contiguous() const {
  TG_META("contiguous");
  return apply_uop(UOp::make(Ops::CONTIGUOUS, dtype(), {uop()}), {this});
}
Tensor Tensor::contiguous_backward() const {
  TG_META("contiguous_backward");
  return apply_uop(UOp::make(Ops::CONTIGUOUS_BACKWARD, dtype(), {uop()}), {this});
}
Tensor Tensor::fuse() const {
  TG_META("fuse");
  return apply_uop(UOp::make(Ops::FUSE, dtype(), {uop()}), {this});
}
Tensor Tensor::clone() const {
  TG_META("clone");
  Tensor ret = Tensor::empty(shape(), {.device = device(), .dtype = dtype()});
  if (std::optional<Tensor> g = grad()) ret.set_grad(g->clone());
  return ret.assign(*this);
}
Tensor Tensor::detach() const {
  TG_META("detach");
  return tensor_from_uop(UOp::make(Ops::DETACH, dtype(), {uop()}), false);
}
Tensor Tensor::neg() const {
  TG_META("neg");
  return dtype() == dtypes::bool_ ? logical_not() : *this * -1;
}
Tensor Tensor::logical_not() const {
  TG_META("logical_not");
  Tensor b = cast(dtypes::bool_);
  return b.binop(Ops::CMPNE, b.scalar_like(true), false);
}
static Tensor float_unary(const Tensor& t, Ops op) {
  Tensor f = t.cast(least_upper_float(t.dtype()));
  return tensor_from_uop(f.uop().alu(op), f.requires_grad());
}
Tensor Tensor::reciprocal() const {
  TG_META("reciprocal");
  return float_unary(*this, Ops::RECIP);
}
Tensor Tensor::sqrt() const {
  TG_META("sqrt");
  return float_unary(*this, Ops::SQRT);
}
Tensor Tensor::exp2() const {
  TG_META("exp2");
  return float_unary(*this, Ops::EXP2);
}
Tensor Tensor::log2() const {
  TG_META("log2");
  return float_unary(*this, Ops::LOG2);
}
Tensor Tensor::sin() const {
  TG_META("sin");
  return float_unary(*this, Ops::SIN);
}
Tensor Tensor::exp() const {
  TG_META("exp");
  return (*this * (1 / std::numbers::ln2)).exp2();
}
Tensor Tensor::log() const {
  TG_META("log");
  return log2() * std::numbers::ln2;
}
Tensor Tensor::cos() const {
  TG_META("cos");
  return (std::numbers::pi / 2 - *this).sin();
}
Tensor Tensor::relu() const {
  TG_META("relu");
  return (*this > 0).where(*this, scalar_like(int64_t(0)));
}
Tensor Tensor::sigmoid() const {
  TG_META("sigmoid");
  return (1 + (*this * (-1 / std::numbers::ln2)).exp2()).reciprocal();
}
Tensor Tensor::sign() const {
  TG_META("sign");
  Tensor z = full_like(int64_t(0)), p = full_like(int64_t(1)), n = full_like(int64_t(-1));
  return ne(scalar_like(int64_t(0))).where((*this < 0).where(n, p), z) + *this * 0;
}
Tensor Tensor::square() const {
  TG_META("square");
  return *this * *this;
}
Tensor Tensor::abs() const {
  TG_META("abs");
  return *this * sign();
}

Tensor Tensor::add(const Tensor& x, bool reverse) const {
  TG_META("add");
  return binop(Ops::ADD, x, reverse);
}
Tensor Tensor::mul(const Tensor& x, bool reverse) const {
  TG_META("mul");
  return binop(Ops::MUL, x, reverse);
}
Tensor Tensor::sub(const Tensor& x, bool reverse) const {
  TG_META("sub");
  auto [a, b] = broadcasted(x, reverse);
  return a + -b;
}
Tensor Tensor::div(const Tensor& x, bool reverse) const {
  TG_META("div");
  auto [n, d] = broadcasted(x, reverse);
  return n.cast(least_upper_float(n.dtype())) * d.cast(least_upper_float(d.dtype())).reciprocal();
}
void Tensor::check_dtype_for(DType, const char* what) const {
  TG_CHECK(dtype() == dtypes::bool_ || dtypes::is_int(dtype()), what, " is not supported for ", dtype());
}
Tensor Tensor::idiv(const Tensor& x, bool reverse) const {
  TG_META("idiv");
  return binop(Ops::IDIV, x, reverse);
}
Tensor Tensor::mod(const Tensor& x, bool reverse) const {  // python's floor modulo: a - floor(a / b) * b
  TG_META("mod");
  auto [a, b] = broadcasted(x, reverse);
  return a - a.div(b, false, "floor") * b;
}
Tensor Tensor::pow(const Tensor& x, bool reverse) const {
  TG_META("pow");
  auto [base, e] = broadcasted(x, reverse);
  TG_CHECK(base.is_floating_point(), "base needs to be float, not ", base.dtype());
  Tensor ret = base.apply_uop(base.uop().alu(Ops::POW, {e.uop()}), {&base, &e});
  // an int tensor raised to a float comes back rounded to its own dtype
  return !reverse && !dtypes::is_float(dtype()) ? ret.round().cast(dtype()) : ret;
}
Tensor Tensor::maximum(const Tensor& x) const {
  TG_META("maximum");
  return binop(Ops::MAX, x, false);
}
Tensor Tensor::inverse() const {
  if (is_floating_point()) return -*this;
  if (dtypes::is_int(dtype())) return bitwise_not();
  return logical_not();
}
Tensor Tensor::minimum(const Tensor& x) const {
  TG_META("minimum");
  auto [t, y] = broadcasted(x);
  return t.inverse().maximum(y.inverse()).inverse();
}
Tensor Tensor::where(const Tensor& x, const Tensor& y) const {
  TG_META("where");
  auto [xx, yy] = x.broadcasted(y);
  auto [cond, xb] = broadcasted(xx, false, false);
  auto [cond2, yb] = cond.broadcasted(yy, false, false);
  Tensor c = cond2.cast(dtypes::bool_);
  auto [a, b] = xb.broadcasted(yb);
  return c.apply_uop(c.uop().alu(Ops::WHERE, {a.uop(), b.uop()}), {&c, &a, &b});
}
Tensor Tensor::lt(const Tensor& x) const {
  TG_META("lt");
  return binop(Ops::CMPLT, x, false);
}
Tensor Tensor::gt(const Tensor& x) const {
  TG_META("gt");
  return binop(Ops::CMPLT, x, true);
}
Tensor Tensor::ne(const Tensor& x) const {
  TG_META("ne");
  return binop(Ops::CMPNE, x, false);
}
Tensor Tensor::eq(const Tensor& x) const {
  TG_META("eq");
  return ne(x).logical_not();
}
Tensor Tensor::bitwise_and(const Tensor& x, bool reverse) const {
  TG_META("bitwise_and");
  check_dtype_for(dtype(), "bitwise_and");
  return binop(Ops::AND, x, reverse);
}
Tensor Tensor::bitwise_or(const Tensor& x, bool reverse) const {
  TG_META("bitwise_or");
  check_dtype_for(dtype(), "bitwise_or");
  return binop(Ops::OR, x, reverse);
}
Tensor Tensor::bitwise_xor(const Tensor& x, bool reverse) const {
  TG_META("bitwise_xor");
  check_dtype_for(dtype(), "bitwise_xor");
  return binop(Ops::XOR, x, reverse);
}
Tensor Tensor::bitwise_not() const {
  TG_META("bitwise_not");
  check_dtype_for(dtype(), "bitwise_not");
  if (dtype() == dtypes::bool_) return logical_not();
  // an unsigned dtype's all-ones is its max: a const -1 there is out of range, and MAX(x, -1) folds to x (minimum)
  return dtypes::is_unsigned(dtype()) ? bitwise_xor(scalar_like(dtypes::max(dtype()))) : *this ^ -1;
}
Tensor Tensor::lshift(int64_t bits) const {
  TG_META("lshift");
  TG_CHECK_AS(AssertionError, dtypes::is_unsigned(dtype()) && bits >= 0,
              "lshift needs an unsigned dtype and bits >= 0, got ", dtype(), " and ", bits);
  // all the bits shifted out (2**bits wraps to 0 in the dtype, as the reference's const does): 0
  if (bits >= 8 * dtype().itemsize()) return *this * scalar_like(int64_t(0));
  return *this * scalar_like(static_cast<int64_t>(uint64_t(1) << bits));
}
Tensor Tensor::rshift(int64_t bits) const {
  TG_META("rshift");
  TG_CHECK_AS(AssertionError, dtypes::is_unsigned(dtype()) && bits >= 0,
              "rshift needs an unsigned dtype and bits >= 0, got ", dtype(), " and ", bits);
  if (bits >= 8 * dtype().itemsize()) return *this * scalar_like(int64_t(0));  // every bit shifted out
  return idiv(scalar_like(static_cast<int64_t>(uint64_t(1) << bits)));
}
Tensor Tensor::clip(std::optional<ConstValue> lo, std::optional<ConstValue> hi) const {
  TG_META("clip");
  return clamp(lo, hi);
}

}  // namespace tg
