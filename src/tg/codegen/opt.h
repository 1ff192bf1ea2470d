#pragma once
// Opt and OptOps: one kernel optimization, as the heuristic, BEAM and users apply them (tinygrad's
// renderer/__init__.py)
#include <compare>
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace tg {

// numbered as tinygrad's enum.auto() numbers them: the order is part of Opt's ordering. After the reference's (so
// their numbers and the disk cache's keys hold), two of ours: UPCASTTOP upcasts the outer part of an axis, as
// GROUPTOP groups it, so one iteration's lanes are the axis's size / amount apart (a sum's four rows far apart: four
// streams through memory); THREAD, as tinygrad's later one, splits the outer part of an axis off as the outermost
// loop, the one a CPU's threads share (each thread's share one contiguous block of that axis)
enum class OptOps { TC = 1, UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP, NOLOCALS, PADTO, SWAP, UPCASTTOP, THREAD };
std::string optops_str(OptOps op);  // "OptOps.UPCAST", as str(OptOps.UPCAST)

// None, an int, or TC's (tc_select, tc_opt, use_tensor_cores)
using OptArg = std::variant<std::monostate, int, std::tuple<int, int, int>>;

struct Opt {
  OptOps op;
  std::optional<int> axis;   // None only for NOLOCALS
  OptArg arg;                // amount (0: the whole axis), the other axis for SWAP, a tuple for TC
  std::string repr() const;  // Opt(op=OptOps.UPCAST, axis=0, arg=4)
  auto operator<=>(const Opt&) const = default;
  bool operator==(const Opt&) const = default;
};
std::string opts_repr(const std::vector<Opt>& opts);  // [Opt(...), Opt(...)], as str(list)

}  // namespace tg
