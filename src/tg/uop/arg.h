#pragma once
// Arg: what a UOp carries besides op, dtype and src. A closed variant of small values; payloads that belong to
// higher layers (ShapeTracker, KernelInfo, the grouper's Kernel) come in as immutable ArgObjects.
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tg/dtype/dtype.h"
#include "tg/uop/ops.h"

namespace tg {

struct VarArg {  // DEFINE_VAR: ('name', min, max)
  std::string name;
  ConstValue min, max;
  bool operator==(const VarArg&) const = default;
};
struct ReduceArg {  // REDUCE_AXIS: (Ops.ADD, (2,)); (Ops.ADD, (2,), True) when fused into its consumer
  Ops op;
  std::vector<int64_t> axes;
  bool fuse = false;
  bool operator==(const ReduceArg&) const = default;
};
using Tuple = std::vector<ConstValue>;                       // VCONST, GEP, RESHAPE, EXPAND, PERMUTE, FLIP: (1, 2)
using PairTuple = std::vector<std::pair<int64_t, int64_t>>;  // PAD, SHRINK: ((1, 1), (0, 0))

// A heavy, immutable payload defined by a higher layer. Equality and hash are by content.
struct ArgObject {
  virtual ~ArgObject() = default;
  virtual std::string repr() const = 0;
  virtual uint64_t hash() const = 0;
  virtual bool equals(const ArgObject& o) const = 0;
  virtual const class UOp* kernel_ast() const { return nullptr; }  // a KERNEL's arg: its ast (VIZ links the two)
};
using ObjectArg = std::shared_ptr<const ArgObject>;

// A payload T compared by its own operator== (T's fields): the one downcast equals() needs, written once.
// struct KernelInfo final : ArgObjectOf<KernelInfo> { ...; bool operator==(const KernelInfo&) const = default; }
template <class T>
struct ArgObjectOf : ArgObject {
  bool equals(const ArgObject& o) const override {
    const T* p = dynamic_cast<const T*>(&o);
    return p != nullptr && *p == static_cast<const T&>(*this);
  }
  // no fields of its own: T's defaulted == compares T's fields (compare Ts, not their bases)
  constexpr bool operator==(const ArgObjectOf&) const { return true; }
};

struct SpecialArg {  // SPECIAL: ('gidx0', 4); a symbolic size: its largest value, the expression in sym (a UOpArg)
  std::string name;
  int64_t size;
  ObjectArg sym = nullptr;
  bool operator==(const SpecialArg& o) const {
    return name == o.name && size == o.size && (sym == o.sym || (sym && o.sym && sym->equals(*o.sym)));
  }
};

using Arg = std::variant<std::monostate, ConstValue, std::string, Ops, VarArg, SpecialArg, ReduceArg, Tuple, PairTuple,
                         ObjectArg>;
static_assert(sizeof(Arg) <= 72, "keep Arg small: big payloads go behind an ObjectArg");

// the payload of arg as a T, or null when it holds none (or another kind)
template <class T>
const T* object_arg(const Arg& arg) {
  const ObjectArg* o = std::get_if<ObjectArg>(&arg);
  return o != nullptr ? dynamic_cast<const T*>(o->get()) : nullptr;
}

bool arg_eq(const Arg& a, const Arg& b);       // bitwise for doubles (NaN == NaN, 0.0 != -0.0): for interning
bool arg_match(const Arg& pat, const Arg& a);  // python ==, numeric across bool/int/float: for UPat arg=
uint64_t arg_hash(const Arg& a);               // consistent with arg_eq
std::string arg_repr(const Arg& a);            // python repr: None, 4, 'CPU', ('a', 1, 10), (1, 2)
std::string arg_str(const Arg& a);             // python str (strings unquoted), used for tags
inline bool is_none(const Arg& a) { return std::holds_alternative<std::monostate>(a); }

}  // namespace tg
