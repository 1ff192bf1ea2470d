#pragma once
// sint: a size that is an int or a symbolic expression of Variables (tinygrad's sint = int | UOp).
// An int stays an int through arithmetic with ints; a UOp side makes the result a simplified UOp, folded back to an
// int when it simplifies to a constant (tinygrad's ssimplify). Equality is structural and never throws; an order
// comparison is decided from the expression's bounds (vmin/vmax) and throws tg::Error when they don't decide it, as
// tinygrad's bool(UOp) does. Code that needs a plain int converts implicitly: a symbolic sint there throws, naming
// the expression and its range, instead of computing with a wrong number.
#include <concepts>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

#include "tg/uop/uop.h"

namespace tg {

class sint {
 public:
  constexpr sint() = default;
  template <std::integral T>
  constexpr sint(T v) : i_(static_cast<int64_t>(v)) {}  // NOLINT(google-explicit-constructor): ints are sints
  explicit sint(const UOp& u);                          // a CONST becomes its int

  bool is_int() const { return !u_; }
  bool is_sym() const { return static_cast<bool>(u_); }
  int64_t as_int() const;                         // throws when symbolic
  operator int64_t() const { return as_int(); }   // NOLINT(google-explicit-constructor)
  const UOp& uop() const { return u_; }           // the expression (null for an int)
  UOp to_uop(DType dtype = dtypes::int32) const;  // a CONST for an int
  int64_t vmin() const;                           // bounds of the value
  int64_t vmax() const;
  std::string str() const;  // 4, or the expression rendered: (start_pos+1)

  sint& operator+=(const sint& o) { return *this = *this + o; }
  sint& operator-=(const sint& o) { return *this = *this - o; }
  sint& operator*=(const sint& o) { return *this = *this * o; }

  friend sint operator+(const sint& a, const sint& b);
  friend sint operator-(const sint& a, const sint& b);
  friend sint operator*(const sint& a, const sint& b);
  friend sint operator-(const sint& a) { return sint(0) - a; }
  friend bool operator==(const sint& a, const sint& b) { return a.u_ == b.u_ && (a.u_ || a.i_ == b.i_); }
  friend bool operator<(const sint& a, const sint& b);
  friend bool operator>(const sint& a, const sint& b) { return b < a; }
  friend bool operator<=(const sint& a, const sint& b) { return !(b < a); }
  friend bool operator>=(const sint& a, const sint& b) { return !(a < b); }

  // mixed with plain ints: exact matches, so they win over the builtin operators on the int conversion
#define TG_SINT_MIXED(R, OP)                 \
  template <std::integral T>                 \
  friend R operator OP(const sint& a, T b) { \
    return a OP sint(b);                     \
  }                                          \
  template <std::integral T>                 \
  friend R operator OP(T a, const sint& b) { \
    return sint(a) OP b;                     \
  }
  TG_SINT_MIXED(sint, +)
  TG_SINT_MIXED(sint, -)
  TG_SINT_MIXED(sint, *)
  TG_SINT_MIXED(bool, ==)
  TG_SINT_MIXED(bool, !=)
  TG_SINT_MIXED(bool, <)
  TG_SINT_MIXED(bool, >)
  TG_SINT_MIXED(bool, <=)
  TG_SINT_MIXED(bool, >=)
#undef TG_SINT_MIXED

  size_t hash() const;

 private:
  int64_t i_ = 0;
  UOp u_;
};

// python's // and % (floor) and ceil division, on ints or expressions (tinygrad's shape code uses them)
sint floordiv(const sint& a, const sint& b);
sint floormod(const sint& a, const sint& b);
inline sint ceildiv(const sint& a, const sint& b) { return -floordiv(-a, b); }
sint smax(const sint& a, const sint& b);
sint smin(const sint& a, const sint& b);
// tinygrad's resolve: the comparison's value when the bounds decide it, else the default
bool resolve_lt(const sint& a, const sint& b, bool dflt);
std::ostream& operator<<(std::ostream& os, const sint& s);
// the value with every bound Variable at its value (tinygrad's sym_infer of the binds); nullopt for unbound ones
std::optional<int64_t> bound_value(const sint& s);
// a and b are surely different sizes: as ints, or by the bounds (tinygrad's resolve(a != b, False))
bool sym_ne(const sint& a, const sint& b);
// a Variable's name -> its bound value (tinygrad's var_vals)
using VarVals = std::map<std::string, int64_t>;
// s at the given values of its Variables (tinygrad's sym_infer); a ValueError names a Variable without a value
int64_t sym_infer(const sint& s, const VarVals& vals);
// s with each BIND(var, val) replaced by var, the values recorded in vals (tinygrad's unbind); a Variable already
// there with another value is a ValueError naming both
sint unbind(const sint& s, VarVals& vals);
void add_var_val(VarVals& vals, const std::string& name, int64_t val);
// s with each BIND of a Variable in vals bound to its value there (a JIT replay's new values)
sint rebind(const sint& s, const VarVals& vals);

// index arithmetic of a UOp with a size (a CONST like a, or the size's expression)
inline UOp sint_like(const UOp& a, const sint& b) { return b.is_int() ? a.const_like(b.as_int()) : b.uop(); }
inline UOp operator+(const UOp& a, const sint& b) { return a + sint_like(a, b); }
inline UOp operator*(const UOp& a, const sint& b) { return a * sint_like(a, b); }
inline UOp operator%(const UOp& a, const sint& b) { return a.alu(Ops::MOD, {sint_like(a, b)}); }
inline UOp operator<(const UOp& a, const sint& b) { return a < sint_like(a, b); }
inline UOp operator>=(const UOp& a, const sint& b) { return a >= sint_like(a, b); }
inline UOp idiv(const UOp& a, const sint& b) { return idiv(a, sint_like(a, b)); }

}  // namespace tg

template <>
struct std::hash<tg::sint> {
  size_t operator()(const tg::sint& s) const { return s.hash(); }
};
