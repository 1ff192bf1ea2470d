#include "tg/uop/arg.h"

#include <bit>
#include <cstring>

#include "tg/helpers/helpers.h"

namespace tg {

// an int is an int64_t or, above INT64_MAX, a uint64_t; an equal value given as the other one is the same int
static bool is_int_cv(const ConstValue& v) {
  return std::holds_alternative<int64_t>(v) || std::holds_alternative<uint64_t>(v);
}
static bool const_bitwise_eq(const ConstValue& a, const ConstValue& b) {
  if (is_int_cv(a) && is_int_cv(b)) return as_i128(a) == as_i128(b);
  if (a.index() != b.index()) return false;
  if (auto* d = std::get_if<double>(&a))
    return std::bit_cast<uint64_t>(*d) == std::bit_cast<uint64_t>(std::get<double>(b));
  return a == b;
}
static uint64_t const_hash(const ConstValue& v) {
  uint64_t bits = 0;
  if (auto* b = std::get_if<bool>(&v))
    bits = *b;
  else if (auto* i = std::get_if<int64_t>(&v))
    bits = static_cast<uint64_t>(*i);
  else if (auto* u = std::get_if<uint64_t>(&v))
    bits = *u;
  else
    bits = std::bit_cast<uint64_t>(std::get<double>(v));
  return hash_combine(is_int_cv(v) ? 1 : v.index(), bits);
}
static bool tuple_bitwise_eq(const Tuple& a, const Tuple& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (!const_bitwise_eq(a[i], b[i])) return false;
  return true;
}

bool arg_eq(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (auto* c = std::get_if<ConstValue>(&a)) return const_bitwise_eq(*c, std::get<ConstValue>(b));
  if (auto* t = std::get_if<Tuple>(&a)) return tuple_bitwise_eq(*t, std::get<Tuple>(b));
  if (auto* v = std::get_if<VarArg>(&a)) {
    auto& w = std::get<VarArg>(b);
    return v->name == w.name && const_bitwise_eq(v->min, w.min) && const_bitwise_eq(v->max, w.max);
  }
  if (auto* o = std::get_if<ObjectArg>(&a)) {
    auto& p = std::get<ObjectArg>(b);
    return *o == p || (*o && p && (*o)->equals(*p));
  }
  return a == b;  // the remaining alternatives have exact ==
}

bool arg_match(const Arg& pat, const Arg& a) {
  if (auto* c = std::get_if<ConstValue>(&pat)) {
    auto* d = std::get_if<ConstValue>(&a);
    return d != nullptr && const_eq_numeric(*c, *d);
  }
  if (auto* t = std::get_if<Tuple>(&pat)) {
    auto* u = std::get_if<Tuple>(&a);
    if (u == nullptr || u->size() != t->size()) return false;
    for (size_t i = 0; i < t->size(); i++)
      if (!const_eq_numeric((*t)[i], (*u)[i])) return false;
    return true;
  }
  return arg_eq(pat, a);
}

uint64_t arg_hash(const Arg& a) {
  uint64_t h = a.index();
  struct V {
    uint64_t& h;
    void operator()(std::monostate) {}
    void operator()(const ConstValue& c) { h = hash_combine(h, const_hash(c)); }
    void operator()(const std::string& s) { h = hash_combine(h, fnv1a(s)); }
    void operator()(Ops o) { h = hash_combine(h, static_cast<uint64_t>(o)); }
    void operator()(const VarArg& v) {
      h = hash_combine(hash_combine(hash_combine(h, fnv1a(v.name)), const_hash(v.min)), const_hash(v.max));
    }
    void operator()(const SpecialArg& s) {
      h = hash_combine(hash_combine(h, fnv1a(s.name)), static_cast<uint64_t>(s.size));
      if (s.sym) h = hash_combine(h, s.sym->hash());
    }
    void operator()(const ReduceArg& r) {
      h = hash_combine(h, static_cast<uint64_t>(r.op));
      for (auto x : r.axes) h = hash_combine(h, static_cast<uint64_t>(x));
      h = hash_combine(h, r.fuse);
    }
    void operator()(const Tuple& t) {
      for (auto& x : t) h = hash_combine(h, const_hash(x));
    }
    void operator()(const PairTuple& t) {
      for (auto& [x, y] : t) h = hash_combine(hash_combine(h, static_cast<uint64_t>(x)), static_cast<uint64_t>(y));
    }
    void operator()(const ObjectArg& o) { h = hash_combine(h, o ? o->hash() : 0); }
  };
  std::visit(V{h}, a);
  return h;
}

static std::string tuple_repr(const Tuple& t) {
  std::vector<std::string> parts;
  for (auto& x : t) parts.push_back(const_repr(x));
  return py_tuple(parts);
}

std::string arg_repr(const Arg& a) {
  struct V {
    std::string operator()(std::monostate) { return "None"; }
    std::string operator()(const ConstValue& c) { return const_repr(c); }
    std::string operator()(const std::string& s) { return py_str_repr(s); }
    std::string operator()(Ops o) { return op_repr(o); }
    std::string operator()(const VarArg& v) {
      return cat("(", py_str_repr(v.name), ", ", const_repr(v.min), ", ", const_repr(v.max), ")");
    }
    std::string operator()(const SpecialArg& s) {
      return cat("(", py_str_repr(s.name), ", ", s.sym ? s.sym->repr() : std::to_string(s.size), ")");
    }
    std::string operator()(const ReduceArg& r) {
      return cat("(", op_repr(r.op), ", ", py_tuple(r.axes), r.fuse ? ", True)" : ")");
    }
    std::string operator()(const Tuple& t) { return tuple_repr(t); }
    std::string operator()(const PairTuple& t) {
      std::vector<std::string> parts;
      for (auto& [x, y] : t) parts.push_back(cat("(", x, ", ", y, ")"));
      return py_tuple(parts);
    }
    std::string operator()(const ObjectArg& o) { return o ? o->repr() : "None"; }
  };
  return std::visit(V{}, a);
}

std::string arg_str(const Arg& a) {
  if (auto* s = std::get_if<std::string>(&a)) return *s;
  return arg_repr(a);
}

}  // namespace tg
