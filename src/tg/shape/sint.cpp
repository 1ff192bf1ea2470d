#include "tg/shape/sint.h"

#include <ostream>

#include "tg/helpers/helpers.h"

namespace tg {

namespace {
// a symbolic result folds back to an int when it simplifies to a constant (tinygrad's ssimplify)
sint sym(const UOp& u) { return sint(u.simplify()); }

std::string range_of(const UOp& u) {
  std::vector<std::string> vars;
  for (const UOp& x : u.toposort())
    if (x.op() == Ops::DEFINE_VAR) {
      const VarArg& a = x.arg<VarArg>();
      vars.push_back(cat(a.name, " in [", const_repr(a.min), ", ", const_repr(a.max), "]"));
    }
  return join(vars, ", ");
}
}  // namespace

sint::sint(const UOp& u) {
  TG_CHECK(u, "a symbolic size needs an expression");
  if (u.op() == Ops::CONST)
    i_ = tg::as_int(u.const_arg());
  else
    u_ = u;
}

int64_t sint::as_int() const {
  if (!u_) return i_;
  throw Error(cat("the symbolic size ", u_.render(), " (", range_of(u_),
                  ") is used where an int is needed: bind its Variables and realize, or use a concrete size"));
}

UOp sint::to_uop(DType dtype) const { return u_ ? u_ : UOp::const_(dtype, i_); }
int64_t sint::vmin() const { return u_ ? tg::as_int(u_.vmin()) : i_; }
int64_t sint::vmax() const { return u_ ? tg::as_int(u_.vmax()) : i_; }
std::string sint::str() const { return u_ ? u_.render() : std::to_string(i_); }
size_t sint::hash() const { return u_ ? std::hash<const void*>()(u_.get()) : std::hash<int64_t>()(i_); }

sint operator+(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.i_ + b.i_;
  return sym(a.to_uop() + b.to_uop());
}
sint operator-(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.i_ - b.i_;
  return sym(a.to_uop() - b.to_uop());
}
sint operator*(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.i_ * b.i_;
  return sym(a.to_uop() * b.to_uop());
}
bool operator<(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.i_ < b.i_;
  UOp c = (a.to_uop() < b.to_uop()).simplify();
  if (c.op() == Ops::CONST) return as_bool(c.const_arg());
  throw Error(
      cat("can't decide ", a.str(), " < ", b.str(), " for every value of ", range_of(a.is_sym() ? a.uop() : b.uop())));
}
bool resolve_lt(const sint& a, const sint& b, bool dflt) {
  if (a.is_int() && b.is_int()) return a.as_int() < b.as_int();
  UOp c = (a.to_uop() < b.to_uop()).simplify();
  return c.op() == Ops::CONST ? as_bool(c.const_arg()) : dflt;
}

sint floordiv(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) {
    int64_t x = a.as_int(), y = b.as_int();
    return x / y - ((x % y != 0) && ((x < 0) != (y < 0)));
  }
  return sym(idiv(a.to_uop(), b.to_uop()));
}
sint floormod(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a - floordiv(a, b) * b;
  return sym(a.to_uop().alu(Ops::MOD, {b.to_uop()}));
}
sint smax(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return std::max(a.as_int(), b.as_int());
  return sym(a.to_uop().maximum(b.to_uop()));
}
sint smin(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return std::min(a.as_int(), b.as_int());
  return sym(a.to_uop().minimum(b.to_uop()));
}

std::ostream& operator<<(std::ostream& os, const sint& s) { return os << s.str(); }

}  // namespace tg
