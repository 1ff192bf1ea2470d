#include "tg/codegen/opt.h"

#include "tg/helpers/helpers.h"

namespace tg {

std::string optops_str(OptOps op) {
  switch (op) {
    case OptOps::TC: return "OptOps.TC";
    case OptOps::UPCAST: return "OptOps.UPCAST";
    case OptOps::UNROLL: return "OptOps.UNROLL";
    case OptOps::LOCAL: return "OptOps.LOCAL";
    case OptOps::GROUP: return "OptOps.GROUP";
    case OptOps::GROUPTOP: return "OptOps.GROUPTOP";
    case OptOps::NOLOCALS: return "OptOps.NOLOCALS";
    case OptOps::PADTO: return "OptOps.PADTO";
    case OptOps::SWAP: return "OptOps.SWAP";
    case OptOps::UPCASTTOP: return "OptOps.UPCASTTOP";
    case OptOps::THREAD: return "OptOps.THREAD";
  }
  TG_ASSERT(false, "unknown OptOps ", static_cast<int>(op));
}

static std::string opt_arg_repr(const OptArg& a) {
  if (auto* i = std::get_if<int>(&a)) return std::to_string(*i);
  if (auto* t = std::get_if<std::tuple<int, int, int>>(&a))
    return cat("(", std::get<0>(*t), ", ", std::get<1>(*t), ", ", std::get<2>(*t), ")");
  return "None";
}

std::string Opt::repr() const {
  return cat("Opt(op=", optops_str(op), ", axis=", axis ? std::to_string(*axis) : "None", ", arg=", opt_arg_repr(arg),
             ")");
}

std::string opts_repr(const std::vector<Opt>& opts) {
  std::vector<std::string> parts;
  for (const Opt& o : opts) parts.push_back(o.repr());
  return "[" + join(parts, ", ") + "]";
}

}  // namespace tg
