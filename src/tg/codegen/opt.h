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

// numbered as tinygrad's enum.auto() numbers them: the order is part of Opt's ordering
enum class OptOps { TC = 1, UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP, NOLOCALS, PADTO, SWAP };
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
