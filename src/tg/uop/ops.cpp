#include "tg/uop/ops.h"

#include <ostream>
#include <string>

namespace tg {

std::string_view op_name(Ops op) {
  static constexpr std::string_view names[] = {"NONE_",
#define TG_X(name) #name,
                                               TG_OPS(TG_X)
#undef TG_X
  };
  int i = static_cast<int>(op);
  return i < NUM_OPS ? names[i] : std::string_view("?");
}
std::ostream& operator<<(std::ostream& os, Ops op) { return os << "Ops." << op_name(op); }
std::string op_repr(Ops op) {
  return "<Ops." + std::string(op_name(op)) + ": " + std::to_string(static_cast<int>(op)) + ">";
}

}  // namespace tg
