#pragma once
// KernelInfo: the SINK arg that names a kernel and says how its ranges were remapped (tinygrad's ops.KernelInfo)
#include <memory>
#include <string>

#include "tg/uop/arg.h"

namespace tg {

struct KernelInfo final : ArgObject {
  std::string name = "test";     // name of the kernel
  int local_dims = 0;            // number of local dimensions (RANGE remapped to SPECIAL)
  int upcasted = 0;              // count that are upcasted (RANGE remapped to UNROLL)
  bool dont_use_locals = false;  // don't use local indexing

  KernelInfo() = default;
  KernelInfo(std::string name_, int local_dims_ = 0, int upcasted_ = 0, bool dont_use_locals_ = false)
      : name(std::move(name_)), local_dims(local_dims_), upcasted(upcasted_), dont_use_locals(dont_use_locals_) {}

  std::string repr() const override;  // KernelInfo(name='E_4', local_dims=0, upcasted=1, dont_use_locals=False)
  uint64_t hash() const override;
  bool equals(const ArgObject& o) const override;
};

// a SINK arg holding a KernelInfo
ObjectArg kernel_info(std::string name = "test", int local_dims = 0, int upcasted = 0, bool dont_use_locals = false);
// the KernelInfo of an arg, or null when it holds none
const KernelInfo* as_kernel_info(const Arg& arg);

}  // namespace tg
