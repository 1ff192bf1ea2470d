#pragma once
// A uop list written as a table, as tinygrad's DEBUG=6 prints it: {op, dtype, {sources by row}, arg}.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tg/uop/kernel_info.h"
#include "tg/uop/uop.h"

namespace tg::render_cases {

struct Row {
  Ops op;
  DType dtype;
  std::vector<int> src;
  Arg arg = {};
};

inline constexpr double INF = std::numeric_limits<double>::infinity();
inline Arg I(int64_t v) { return ConstValue(v); }
inline Arg F(double v) { return ConstValue(v); }
inline Arg B(bool v) { return ConstValue(v); }
inline Arg T(std::initializer_list<int64_t> xs) {
  Tuple t;
  for (int64_t x : xs) t.push_back(ConstValue(x));
  return t;
}
inline Arg S(const char* s) { return std::string(s); }
inline Arg V(const char* name, int64_t lo, int64_t hi) { return VarArg{name, ConstValue(lo), ConstValue(hi)}; }
inline Arg KI(const char* name, int local_dims, int upcasted) { return kernel_info(name, local_dims, upcasted); }

// the uops of the rows, in row order. A row may name a later row as a source (DEFINE_ACC names its RANGE), so rows are
// made in passes: each pass makes every row whose sources exist.
inline std::vector<UOp> build(const std::vector<Row>& rows) {
  std::vector<UOp> uops(rows.size());
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < rows.size(); i++) {
      if (uops[i]) continue;
      std::vector<UOp> src;
      for (int s : rows[i].src) src.push_back(uops[static_cast<size_t>(s)]);
      bool ready = true;
      for (const UOp& s : src) ready = ready && static_cast<bool>(s);
      if (!ready) continue;
      uops[i] = UOp::make(rows[i].op, rows[i].dtype, std::move(src), rows[i].arg);
      progress = true;
    }
  }
  for (const UOp& u : uops)
    if (!u) throw std::runtime_error("uop table has a cycle");
  return uops;
}

}  // namespace tg::render_cases
