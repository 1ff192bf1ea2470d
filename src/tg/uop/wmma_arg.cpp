#include "tg/uop/wmma_arg.h"

#include "tg/helpers/helpers.h"

namespace tg {

std::string WmmaArg::repr() const {
  std::vector<std::string> ups;
  for (const PairTuple& u : upcast_axes) ups.push_back(arg_repr(u));
  return cat("(", py_str_repr(name), ", ", py_tuple(std::vector<int>(dims.begin(), dims.end())), ", ", dtype_in.repr(),
             ", ", dtype_out.repr(), ", ", py_str_repr(device), ", ", threads, ", ", py_tuple(ups), ", ",
             py_tuple(reduce_axes), ")");
}

uint64_t WmmaArg::hash() const {
  uint64_t h = hash_combine(fnv1a("WmmaArg"), fnv1a(name));
  h = hash_combine(h, fnv1a(device));
  h = hash_combine(h, static_cast<uint64_t>(threads));
  for (const PairTuple& u : upcast_axes)
    for (auto& [a, s] : u) h = hash_combine(hash_combine(h, static_cast<uint64_t>(a)), static_cast<uint64_t>(s));
  for (int64_t a : reduce_axes) h = hash_combine(h, static_cast<uint64_t>(a));
  return h;
}

bool WmmaArg::operator==(const WmmaArg&) const = default;

int64_t WmmaArg::upcast_size(int operand) const {
  int64_t n = 1;
  for (auto& p : upcast_axes.at(static_cast<size_t>(operand))) n *= p.second;
  return n;
}

ObjectArg wmma_arg(WmmaArg a) { return std::make_shared<const WmmaArg>(std::move(a)); }

const WmmaArg* get_wmma_arg(const Arg& arg) { return object_arg<WmmaArg>(arg); }
const WmmaArg& as_wmma_arg(const Arg& arg) {
  const WmmaArg* w = get_wmma_arg(arg);
  TG_ASSERT(w != nullptr, "WMMA without a WmmaArg: ", arg_repr(arg));
  return *w;
}

}  // namespace tg
