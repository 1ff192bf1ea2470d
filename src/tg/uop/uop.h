#pragma once
// UOp: a one-pointer, refcounted handle to an immutable, hash-consed node (op, dtype, src, arg, tag).
// Building the same node twice gives the same pointer, so == is identity and is structural equality.
// A node leaves the intern table when its last handle goes. Every graph walk uses an explicit stack.
#include <atomic>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "tg/dtype/dtype.h"
#include "tg/helpers/helpers.h"
#include "tg/uop/arg.h"
#include "tg/uop/ops.h"

namespace tg {

struct UOpNode;

// what Tensor method made a node (tinygrad's helpers.Metadata): kept beside the node, not part of its identity
struct Metadata {
  std::string name, caller;
  bool backward = false;
  std::string str() const { return name + (backward ? " bw" : ""); }
  std::string repr() const { return str() + (caller.empty() ? "" : " - " + caller); }
};
const Metadata* intern_metadata(const std::string& name, const std::string& caller = "", bool backward = false);

// scalars usable where a UOp is expected: they become a const of the other operand's dtype (MathTrait.ufix)
template <class T>
concept Scalar = std::is_arithmetic_v<T>;
template <Scalar T>
ConstValue to_const(T v) {
  if constexpr (std::is_same_v<T, bool>)
    return v;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<int64_t>(v);
  else
    return static_cast<double>(v);
}

class UOp {
 public:
  UOp() = default;
  UOp(const UOp& o) noexcept;
  UOp(UOp&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  UOp& operator=(const UOp& o) noexcept;
  UOp& operator=(UOp&& o) noexcept;
  ~UOp();

  // the constructor: UOp(op, dtype, src, arg, tag) in tinygrad
  static UOp make(Ops op, DType dtype = {}, std::vector<UOp> src = {}, Arg arg = {}, Arg tag = {});

  explicit operator bool() const { return n_ != nullptr; }
  bool operator==(const UOp& o) const { return n_ == o.n_; }  // identity == structure
  bool operator!=(const UOp& o) const { return n_ != o.n_; }
  const UOpNode* get() const { return n_; }
  static UOp borrow(const UOpNode* n);  // a new handle to a live node

  // *** fields ***
  Ops op() const;
  DType dtype() const;
  const std::vector<UOp>& src() const;
  const UOp& src(size_t i) const;
  const Arg& arg() const;
  template <class T>
  const T& arg() const {
    const T* p = std::get_if<T>(&arg());
    if (p == nullptr) bad_arg(typeid(T).name());
    return *p;
  }
  const Arg& tag() const;
  UOp replace(std::optional<Ops> op, std::optional<DType> dtype = {}, std::optional<std::vector<UOp>> src = {},
              std::optional<Arg> arg = {}) const;
  UOp with_tag(Arg tag) const;
  const Metadata* metadata() const;            // null when none was recorded
  void set_metadata(const Metadata* m) const;  // metadata is not part of identity: deduped nodes share it

  // *** constructors of common nodes ***
  static UOp const_(DType dtype, ConstValue v);
  template <Scalar T>
  static UOp const_(DType dtype, T v) {
    return const_(dtype, to_const(v));
  }
  static UOp vconst(DType dtype, const Tuple& vals);  // VCONST, or CONST when all equal
  static UOp variable(const std::string& name, ConstValue min_val, ConstValue max_val, DType dtype = dtypes::int32);
  static UOp range(DType dtype, int64_t end, int64_t idx);
  static UOp range(DType dtype, const UOp& end, int64_t idx);
  static UOp unique();  // UNIQUE with the next number of the process-wide counter
  static UOp sink(std::vector<UOp> srcs, Arg arg = {});
  UOp const_like(ConstValue v) const;
  template <Scalar T>
  UOp const_like(T v) const {
    return const_like(to_const(v));
  }
  UOp alu(Ops op, std::vector<UOp> more = {}) const;  // output dtype: last src's, bool for comparisons
  UOp cast(DType dtype) const;
  UOp bitcast(DType dtype) const;
  UOp gep(std::vector<int64_t> idx) const;
  UOp gep(int64_t i) const;
  UOp broadcast(int count) const;
  UOp index(const UOp& idx) const;
  UOp index(const UOp& idx, const UOp& valid) const;
  UOp load(std::vector<UOp> more = {}) const;
  UOp store(std::vector<UOp> more) const;
  UOp bind(int64_t val) const;

  // *** math (MathTrait) ***
  UOp ufix(const ConstValue& v) const { return const_like(v); }
  UOp neg() const;
  UOp logical_not() const;
  UOp ne(const UOp& x) const;
  UOp eq(const UOp& x) const;
  UOp maximum(const UOp& x) const;
  UOp minimum(const UOp& x) const;
  UOp where(const UOp& t, const UOp& f) const;
  UOp where(const UOp& t, ConstValue f) const { return where(t, t.ufix(f)); }
  UOp where(ConstValue t, const UOp& f) const { return where(f.ufix(t), f); }
  UOp reciprocal() const { return alu(Ops::RECIP); }
  UOp sqrt() const { return alu(Ops::SQRT); }
  UOp exp2() const { return alu(Ops::EXP2); }
  UOp log2() const { return alu(Ops::LOG2); }
  UOp sin() const { return alu(Ops::SIN); }
  UOp pow(const UOp& x) const { return alu(Ops::POW, {x}); }

  // *** symbolic ***
  ConstValue vmin() const;
  ConstValue vmax() const;
  const ConstValue& const_arg() const;  // CONST's arg; InternalError otherwise
  int64_t const_factor() const;         // largest known int dividing this
  UOp divides(int64_t v) const;         // this / v when exact, else null
  bool is_increasing() const;
  UOp simplify() const;                            // graph_rewrite with symbolic (uop/symbolic.cpp)
  std::string render(bool simplify = true) const;  // index expression as text: (((a+b)+1)//4)

  // *** graph ***
  std::vector<UOp> toposort() const;  // sources before users; order as tinygrad's (src order, depth first)
  // name: a step of the VIZ trace ("Apply Kernelize Map"); unnamed, it is not recorded
  UOp substitute(const std::vector<std::pair<UOp, UOp>>& dvars, const char* name = nullptr,
                 const char* file = __builtin_FILE(), int line = __builtin_LINE()) const;
  uint64_t key() const;      // deterministic content hash (stable across runs, not the pointer)
  std::string repr() const;  // the multi-line UOp(...) form, identical to tinygrad's

 private:
  friend struct UOpInternals;
  explicit UOp(UOpNode* n) : n_(n) {}  // adopts a reference
  [[noreturn]] void bad_arg(const char* want) const;
  UOpNode* n_ = nullptr;
};
std::ostream& operator<<(std::ostream& os, const UOp& u);

struct UOpNode {  // never mutated after interning, except the refcount
  Ops op;
  DType dtype;
  std::vector<UOp> src;
  Arg arg, tag;
  uint64_t hash;          // of (op, dtype, arg, tag, child addresses): identity-stable, not run-stable
  OpSet src_ops;          // ops of the direct sources (the matcher's early reject)
  ConstValue vmin, vmax;  // value bounds, computed once when the node is made (tinygrad's _min_max)
  // the order nodes were made in: a node's sources are older (smaller), so a graph whose root is older than a node
  // can't hold it (apply_map_to_tensors skips the graphs older than every key of its map)
  uint64_t seq = 0;
  mutable std::atomic<uint32_t> refs{1};
  mutable std::atomic<int16_t> axis_cache{-2};  // the sharded axis of a multi-device graph: -2 not computed, -1 None
  // lazily computed properties of tensor-level graphs, owned by the node (tinygrad's cached_property st, _device):
  // null until computed; uop_cache_none() when computed as None
  mutable std::atomic<const ArgObject*> st_cache{nullptr};
  mutable std::atomic<const std::string*> device_cache{nullptr};
  mutable std::atomic<const Metadata*> metadata{nullptr};  // interned, set by the Tensor method that made it
};
const ArgObject* uop_cache_none();                          // the "computed, and it is None" marker for st_cache
const std::string* uop_device_none();                       // the same for device_cache
const std::string* intern_device(const std::string& name);  // device names live for the whole process

// A tuple of devices (tinygrad's device tuple, a multi-device tensor's) is one name here: the devices joined by ','
// ("CPU,CPU:1"; a tuple of one ends in ',': "CPU,"), as no device name has a ','. Its DEVICE node's arg is a
// DeviceTupleArg, printed as the reference prints the tuple.
bool is_multi_device(std::string_view device);
std::string multi_device_name(const std::vector<std::string>& devices);
std::vector<std::string> device_names(std::string_view device);  // a tuple's devices, or {device}
struct DeviceTupleArg final : ArgObjectOf<DeviceTupleArg> {
  std::vector<std::string> devices;
  explicit DeviceTupleArg(std::vector<std::string> d) : devices(std::move(d)) {}
  std::string repr() const override;
  uint64_t hash() const override;
  bool operator==(const DeviceTupleArg&) const = default;
};
Arg device_arg(const std::string& device);  // a DEVICE node's arg: the name, or a DeviceTupleArg for a tuple
std::string device_of_arg(const Arg& arg);  // the inverse

// hooks the shape layer installs: tensor-level consts carry a VIEW(DEVICE) source (tinygrad's UOp.const_like with
// device and shape), and the runtime frees a BUFFER's memory when its node dies (tinygrad's buffers weak dict)
using ConstLikeHook = UOp (*)(const UOp& self, const ConstValue& v);
using NodeFreeHook = void (*)(const UOpNode* n);
void set_const_like_hook(ConstLikeHook hook);
void set_buffer_free_hook(NodeFreeHook hook);

inline Ops UOp::op() const { return n_->op; }
inline DType UOp::dtype() const { return n_->dtype; }
inline const std::vector<UOp>& UOp::src() const { return n_->src; }
inline const Arg& UOp::arg() const { return n_->arg; }
inline const Arg& UOp::tag() const { return n_->tag; }
inline ConstValue UOp::vmin() const { return n_->vmin; }
inline ConstValue UOp::vmax() const { return n_->vmax; }

// *** operators: the same spellings as tinygrad's, on UOps and scalars ***

#define TG_UOP_BINOP(OPER, OPNAME)                                                                        \
  inline UOp operator OPER(const UOp& a, const UOp& b) { return a.alu(Ops::OPNAME, {b}); }                \
  template <Scalar T>                                                                                     \
  UOp operator OPER(const UOp& a, T b) {                                                                  \
    return a.alu(Ops::OPNAME, {a.ufix(to_const(b))});                                                     \
  }                                                                                                       \
  template <Scalar T>                                                                                     \
  UOp operator OPER(T a, const UOp& b) {                                                                  \
    return b.ufix(to_const(a)).alu(Ops::OPNAME, {b});                                                     \
  }                                                                                                       \
  inline UOp operator OPER(const UOp& a, const ConstValue& b) { return a.alu(Ops::OPNAME, {a.ufix(b)}); } \
  inline UOp operator OPER(const ConstValue& a, const UOp& b) { return b.ufix(a).alu(Ops::OPNAME, {b}); }
TG_UOP_BINOP(+, ADD)
TG_UOP_BINOP(*, MUL)
TG_UOP_BINOP(%, MOD)
TG_UOP_BINOP(&, AND)
TG_UOP_BINOP(|, OR)
TG_UOP_BINOP(^, XOR)
TG_UOP_BINOP(<<, SHL)
TG_UOP_BINOP(>>, SHR)
TG_UOP_BINOP(<, CMPLT)
#undef TG_UOP_BINOP
inline UOp operator-(const UOp& a) { return a.neg(); }
inline UOp operator-(const UOp& a, const UOp& b) { return a + (-b); }
template <Scalar T>
UOp operator-(const UOp& a, T b) {
  return a + a.ufix(to_const(-b));
}
template <Scalar T>
UOp operator-(T a, const UOp& b) {
  return b.ufix(to_const(a)) + (-b);
}
inline UOp operator>(const UOp& a, const UOp& b) { return b < a; }
template <Scalar T>
UOp operator>(const UOp& a, T b) {
  return a.ufix(to_const(b)) < a;
}
inline UOp operator>=(const UOp& a, const UOp& b) { return (a < b).logical_not(); }
inline UOp operator<=(const UOp& a, const UOp& b) { return (a > b).logical_not(); }
inline UOp idiv(const UOp& a, const UOp& b) { return a.alu(Ops::IDIV, {b}); }
template <Scalar T>
UOp idiv(const UOp& a, T b) {
  return a.alu(Ops::IDIV, {a.ufix(to_const(b))});
}
inline UOp mod(const UOp& a, const UOp& b) { return a % b; }
inline UOp fdiv(const UOp& a, const UOp& b) { return a * b.reciprocal(); }  // MathTrait.div
inline UOp ne(const UOp& a, const UOp& b) { return a.ne(b); }
template <Scalar T>
UOp ne(const UOp& a, T b) {
  return a.ne(a.ufix(to_const(b)));
}
inline UOp maximum(const UOp& a, const UOp& b) { return a.maximum(b); }
template <Scalar T>
UOp maximum(const UOp& a, T b) {
  return a.maximum(a.ufix(to_const(b)));
}
inline UOp minimum(const UOp& a, const UOp& b) { return a.minimum(b); }

// python_alu on consts, then truncate into dtype (the output's). Unsigned operands of the ops that order them (<, !=,
// max, //, %, >>) are read modulo 2**bits first, as C reads them; src_dtype names their dtype where it is not dtype
// (comparisons; void: dtype). Untruncated, an int result stays python's exact int, except that int64 and uint64 wrap.
ConstValue exec_alu(Ops op, DType dtype, const std::vector<ConstValue>& operands, bool truncate_output = true,
                    DType src_dtype = dtypes::void_);
// the bounds [vmin, vmax] of the value of a node made of these parts (tinygrad's _min_max); UOp::make stores them
std::pair<ConstValue, ConstValue> compute_min_max(Ops op, DType dtype, const std::vector<UOp>& src, const Arg& arg);
// the value that leaves a reduce of op unchanged, as a const of dt: 0 for ADD, 1 for MUL, dtypes::min(dt) for MAX
// (tinygrad's identity_element); what a reduce starts from and what pads its input
ConstValue identity_element(Ops op, DType dt);
// the values of a Tuple arg (GEP, PERMUTE) as ints
std::vector<int64_t> tuple_ints(const Arg& a);

// *** python arithmetic on consts (int + int stays int, a float makes it float): rule bodies fold with these ***

inline ConstValue operator+(const ConstValue& a, const ConstValue& b) {
  return exec_alu(Ops::ADD, dtypes::void_, {a, b}, false);
}
inline ConstValue operator*(const ConstValue& a, const ConstValue& b) {
  return exec_alu(Ops::MUL, dtypes::void_, {a, b}, false);
}
inline ConstValue operator-(const ConstValue& a, const ConstValue& b) {
  return exec_alu(Ops::SUB, dtypes::void_, {a, b}, false);
}

// *** python-side helpers ***

void print_uops(const std::vector<UOp>& uops, std::ostream& os);
std::string repr_head(const UOp& u);  // a node's line of repr(): "UOp(Ops.ADD, dtypes.int, arg=None, src=("

// python's ordering of u.tuplize, (op, arg, dtype, *src tuplize): -1, 0 or 1 (the canonical order of commutative
// sources and of the linearizer)
int tuplize_cmp(const UOp& a, const UOp& b);

// a UOp as an ArgObject payload: a symbolic SPECIAL's size (SpecialArg::sym)
struct UOpArg final : ArgObjectOf<UOpArg> {
  UOp u;
  explicit UOpArg(UOp x) : u(std::move(x)) {}
  std::string repr() const override { return u.render(); }
  uint64_t hash() const override { return u.key(); }
  bool operator==(const UOpArg&) const = default;
};
// a SPECIAL's size: the expression of a symbolic one, else a CONST
UOp special_size(const UOp& special);

// introspection for tests: how many nodes are interned now
size_t uop_intern_count();
// the interned nodes alive now that have u among their sources (tinygrad's UOp.children; a scan of the whole table)
std::vector<UOp> uop_live_parents(const UOp& u);

}  // namespace tg
