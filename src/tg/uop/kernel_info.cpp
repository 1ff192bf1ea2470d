#include "tg/uop/kernel_info.h"

#include "tg/helpers/helpers.h"

namespace tg {

std::string KernelInfo::repr() const {
  return cat("KernelInfo(name=", py_str_repr(name), ", local_dims=", local_dims, ", upcasted=", upcasted,
             ", dont_use_locals=", dont_use_locals ? "True" : "False", ")");
}
uint64_t KernelInfo::hash() const {
  uint64_t h = hash_combine(fnv1a("KernelInfo"), fnv1a(name));
  h = hash_combine(h, static_cast<uint64_t>(local_dims));
  h = hash_combine(h, static_cast<uint64_t>(upcasted));
  return hash_combine(h, dont_use_locals);
}
bool KernelInfo::equals(const ArgObject& o) const {
  auto* k = dynamic_cast<const KernelInfo*>(&o);
  return k != nullptr && k->name == name && k->local_dims == local_dims && k->upcasted == upcasted &&
         k->dont_use_locals == dont_use_locals;
}

ObjectArg kernel_info(std::string name, int local_dims, int upcasted, bool dont_use_locals) {
  return std::make_shared<const KernelInfo>(std::move(name), local_dims, upcasted, dont_use_locals);
}
const KernelInfo* as_kernel_info(const Arg& arg) {
  auto* o = std::get_if<ObjectArg>(&arg);
  return o != nullptr ? dynamic_cast<const KernelInfo*>(o->get()) : nullptr;
}

}  // namespace tg
