#include "tg/uop/kernel_info.h"

#include "tg/helpers/helpers.h"
#include "tg/uop/uop.h"

namespace tg {

std::string KernelInfo::repr() const {
  auto py = [](bool b) { return b ? "True" : "False"; };
  return cat("KernelInfo(name=", py_str_repr(name), ", local_dims=", local_dims, ", upcasted=", upcasted,
             ", dont_use_locals=", py(dont_use_locals),
             lowering == Lowering{} ? ""
                                    : cat(", lowering=(vector_alus=", py(lowering.vector_alus),
                                          ", deferred_horizontal_reduce=", py(lowering.deferred_horizontal_reduce),
                                          ", polynomial_transcendentals=", py(lowering.polynomial_transcendentals),
                                          ", integer_block_sums=", py(lowering.integer_block_sums),
                                          ", reassociate_reduces=", py(lowering.reassociate_reduces), ")"),
             ")");
}
uint64_t KernelInfo::hash() const {
  uint64_t h = hash_combine(fnv1a("KernelInfo"), fnv1a(name));
  h = hash_combine(h, static_cast<uint64_t>(local_dims));
  h = hash_combine(h, static_cast<uint64_t>(upcasted));
  h = hash_combine(h, dont_use_locals);
  return hash_combine(h, uint64_t(lowering.vector_alus) | uint64_t(lowering.deferred_horizontal_reduce) << 1 |
                             uint64_t(lowering.polynomial_transcendentals) << 2 |
                             uint64_t(lowering.integer_block_sums) << 3 | uint64_t(lowering.reassociate_reduces) << 4);
}

ObjectArg kernel_info(std::string name, int local_dims, int upcasted, bool dont_use_locals, Lowering lowering) {
  return std::make_shared<const KernelInfo>(std::move(name), local_dims, upcasted, dont_use_locals, lowering);
}
const KernelInfo* as_kernel_info(const Arg& arg) { return object_arg<KernelInfo>(arg); }
Lowering lowering_of(const UOp& sink) {
  const KernelInfo* ki = as_kernel_info(sink.arg());
  return ki != nullptr ? ki->lowering : Lowering{};
}

}  // namespace tg
