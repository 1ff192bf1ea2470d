#pragma once
// Ops: the reference's 84 ops (and CUSTOM_GRAD, ours, last), numbered as tinygrad numbers them (its order drives the
// toposort), and GroupOp sets.
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string_view>

namespace tg {

// clang-format off
// in tinygrad's order and groups (the order drives the toposort); CUSTOM_GRAD is ours, last: a value with a
// hand-written derivative (tg/gradient/gradient.h)
#define TG_OPS(X)                                                                                          \
  X(SINK) X(CONTIGUOUS) X(CONTIGUOUS_BACKWARD) X(DETACH) X(KERNEL) X(UNIQUE)                                \
  X(COPY) X(BUFFER_VIEW) X(MSELECT) X(MSTACK)                                                               \
  X(BLOCK) X(BLOCKSTART) X(BLOCKEND) X(BLOCKFINAL)                                                          \
  X(RESHAPE) X(PERMUTE) X(EXPAND) X(PAD) X(SHRINK) X(FLIP)                                                  \
  X(UNROLL) X(CONTRACT) X(VIEW) X(DEFINE_GLOBAL) X(BUFFER) X(DEFINE_VAR) X(DEFINE_LOCAL) X(DEFINE_ACC)      \
  X(VALID) X(SPECIAL) X(NOOP)                                                                               \
  X(REDUCE_AXIS) X(REDUCE) X(ALLREDUCE)                                                                     \
  X(GEP) X(VECTORIZE) X(CAT) X(PTRCAT)                                                                      \
  X(CAST) X(BITCAST) X(EXP2) X(LOG2) X(SIN) X(SQRT) X(RECIP) X(NEG)                                         \
  X(LOAD) X(STORE) X(INDEX) X(WMMA)                                                                         \
  X(ADD) X(MUL) X(SHL) X(SHR) X(IDIV) X(MAX) X(MOD) X(CMPLT) X(CMPNE)                                       \
  X(XOR) X(OR) X(AND) X(THREEFRY) X(SUB) X(FDIV) X(POW)                                                     \
  X(WHERE) X(MULACC) X(ASSIGN) X(BIND)                                                                      \
  X(BARRIER) X(RANGE) X(IF) X(ENDRANGE) X(ENDIF) X(GBARRIER)                                                \
  X(VCONST) X(CONST) X(DEVICE) X(MULTI) X(CUSTOM) X(CUSTOMI) X(IGNORE) X(FUSE)                              \
  X(CUSTOM_GRAD)
// clang-format on

enum class Ops : uint8_t {
  NONE_ = 0,  // not an op: tinygrad numbers from 1
#define TG_X(name) name,
  TG_OPS(TG_X)
#undef TG_X
};
inline constexpr int NUM_OPS = static_cast<int>(Ops::CUSTOM_GRAD) + 1;

std::string_view op_name(Ops op);                    // "ADD"
std::ostream& operator<<(std::ostream& os, Ops op);  // "Ops.ADD", as str(Ops.ADD)
std::string op_repr(Ops op);                         // "<Ops.ADD: 51>", as repr(Ops.ADD)

// A set of ops as a 128-bit mask: constexpr, so GroupOp sets cost nothing.
struct OpSet {
  uint64_t bits[2] = {0, 0};
  constexpr OpSet() = default;
  constexpr OpSet(Ops op) { add(op); }  // NOLINT: an op is a one-element set
  constexpr OpSet(std::initializer_list<Ops> ops) {
    for (Ops o : ops) add(o);
  }
  constexpr void add(Ops o) { bits[static_cast<int>(o) >> 6] |= uint64_t(1) << (static_cast<int>(o) & 63); }
  constexpr bool has(Ops o) const { return (bits[static_cast<int>(o) >> 6] >> (static_cast<int>(o) & 63)) & 1; }
  constexpr bool empty() const { return bits[0] == 0 && bits[1] == 0; }
  constexpr bool contains(const OpSet& o) const {  // o is a subset of this
    return (o.bits[0] & ~bits[0]) == 0 && (o.bits[1] & ~bits[1]) == 0;
  }
  constexpr int size() const { return __builtin_popcountll(bits[0]) + __builtin_popcountll(bits[1]); }
  constexpr Ops first() const {
    return static_cast<Ops>(bits[0] ? __builtin_ctzll(bits[0]) : 64 + __builtin_ctzll(bits[1]));
  }
  friend constexpr OpSet operator|(OpSet a, OpSet b) {
    return OpSet::raw(a.bits[0] | b.bits[0], a.bits[1] | b.bits[1]);
  }
  friend constexpr OpSet operator-(OpSet a, OpSet b) {
    return OpSet::raw(a.bits[0] & ~b.bits[0], a.bits[1] & ~b.bits[1]);
  }
  friend constexpr bool operator==(OpSet a, OpSet b) { return a.bits[0] == b.bits[0] && a.bits[1] == b.bits[1]; }
  static constexpr OpSet raw(uint64_t lo, uint64_t hi) {
    OpSet s;
    s.bits[0] = lo, s.bits[1] = hi;
    return s;
  }
};

namespace GroupOp {
inline constexpr OpSet Unary{Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::SQRT, Ops::RECIP, Ops::NEG};
inline constexpr OpSet Binary{Ops::ADD, Ops::MUL, Ops::IDIV, Ops::MAX, Ops::MOD,      Ops::CMPLT, Ops::CMPNE, Ops::XOR,
                              Ops::SHL, Ops::SHR, Ops::OR,   Ops::AND, Ops::THREEFRY, Ops::SUB,   Ops::FDIV,  Ops::POW};
inline constexpr OpSet Ternary{Ops::WHERE, Ops::MULACC};
inline constexpr OpSet ALU = Unary | Binary | Ternary;
inline constexpr OpSet Irreducible{Ops::CONST, Ops::DEFINE_VAR, Ops::SPECIAL, Ops::RANGE};
inline constexpr OpSet Movement{Ops::RESHAPE, Ops::EXPAND, Ops::PERMUTE, Ops::PAD, Ops::SHRINK, Ops::FLIP};
inline constexpr OpSet Buffer{Ops::LOAD, Ops::STORE, Ops::VALID, Ops::CONST, Ops::DEFINE_VAR};
inline constexpr OpSet Block{Ops::BLOCK, Ops::BLOCKEND, Ops::BLOCKSTART};
inline constexpr OpSet Commutative{Ops::ADD, Ops::MUL, Ops::MAX, Ops::CMPNE, Ops::XOR, Ops::AND, Ops::OR};
inline constexpr OpSet Associative{Ops::ADD, Ops::MUL, Ops::AND, Ops::OR, Ops::MAX};
inline constexpr OpSet Idempotent{Ops::OR, Ops::AND, Ops::MAX};
inline constexpr OpSet UnsafePad{Ops::RECIP, Ops::LOG2, Ops::EXP2, Ops::IDIV, Ops::POW};
inline constexpr OpSet Meta{Ops::COPY, Ops::BUFFER_VIEW};
inline constexpr OpSet All = OpSet::raw(~uint64_t(1), (uint64_t(1) << (NUM_OPS - 64)) - 1);
}  // namespace GroupOp

}  // namespace tg
