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
// a < b when the bounds decide it: of the comparison, or of the difference (i+2 < i: the difference is 2)
static std::optional<bool> decide_lt(const sint& a, const sint& b) {
  UOp c = (a.to_uop() < b.to_uop()).simplify();
  if (c.op() == Ops::CONST) return as_bool(c.const_arg());
  UOp d = (a.to_uop() - b.to_uop()).simplify();
  if (tg::as_int(d.vmax()) < 0) return true;
  if (tg::as_int(d.vmin()) >= 0) return false;
  return std::nullopt;
}
bool operator<(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.i_ < b.i_;
  if (std::optional<bool> r = decide_lt(a, b)) return *r;
  throw Error(
      cat("can't decide ", a.str(), " < ", b.str(), " for every value of ", range_of(a.is_sym() ? a.uop() : b.uop())));
}
bool resolve_lt(const sint& a, const sint& b, bool dflt) {
  if (a.is_int() && b.is_int()) return a.as_int() < b.as_int();
  return decide_lt(a, b).value_or(dflt);
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

std::optional<int64_t> bound_value(const sint& s) {
  if (s.is_int()) return s.as_int();
  std::vector<std::pair<UOp, UOp>> binds;
  for (const UOp& x : s.uop().toposort())
    if (x.op() == Ops::BIND) binds.push_back({x, x.src(1)});
  UOp v = (binds.empty() ? s.uop() : s.uop().substitute(binds)).simplify();
  if (v.op() != Ops::CONST) return std::nullopt;
  return tg::as_int(v.const_arg());
}
bool sym_ne(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.as_int() != b.as_int();
  UOp d = (a.to_uop() - b.to_uop()).simplify();
  if (d.op() == Ops::CONST) return tg::as_int(d.const_arg()) != 0;
  return tg::as_int(d.vmin()) > 0 || tg::as_int(d.vmax()) < 0;
}

int64_t sym_infer(const sint& s, const VarVals& vals) {
  if (s.is_int()) return s.as_int();
  std::vector<std::pair<UOp, UOp>> subs;
  for (const UOp& x : s.uop().toposort()) {
    if (x.op() != Ops::DEFINE_VAR) continue;
    const std::string& name = x.arg<VarArg>().name;
    auto it = vals.find(name);
    TG_CHECK_AS(ValueError, it != vals.end(), "sym_infer: ", s.str(), " needs a value for Variable ", name);
    subs.push_back({x, x.const_like(it->second)});
  }
  UOp v = s.uop().substitute(subs).simplify();
  TG_CHECK_AS(ValueError, v.op() == Ops::CONST, "sym_infer: ", s.str(), " did not fold to an int: ", v.render());
  return tg::as_int(v.const_arg());
}
sint rebind(const sint& s, const VarVals& vals) {
  if (s.is_int()) return s;
  std::vector<std::pair<UOp, UOp>> binds;
  for (const UOp& x : s.uop().toposort()) {
    if (x.op() != Ops::BIND) continue;
    auto it = vals.find(x.src(0).arg<VarArg>().name);
    if (it != vals.end()) binds.push_back({x, x.src(0).bind(it->second)});
  }
  return binds.empty() ? s : sint(s.uop().substitute(binds));
}
void add_var_val(VarVals& vals, const std::string& name, int64_t val) {
  auto [it, fresh] = vals.emplace(name, val);
  TG_CHECK_AS(ValueError, fresh || it->second == val, "Variable ", name, " is bound to both ", it->second, " and ", val,
              " in one schedule");
}
sint unbind(const sint& s, VarVals& vals) {
  if (s.is_int()) return s;
  std::vector<std::pair<UOp, UOp>> binds;
  for (const UOp& x : s.uop().toposort()) {
    if (x.op() != Ops::BIND) continue;
    add_var_val(vals, x.src(0).arg<VarArg>().name, tg::as_int(x.src(1).const_arg()));
    binds.push_back({x, x.src(0)});
  }
  return binds.empty() ? s : sint(s.uop().substitute(binds));
}

}  // namespace tg
