#pragma once
// KernelInfo: the SINK arg that names a kernel and says how its ranges were remapped (tinygrad's ops.KernelInfo)
#include <memory>
#include <string>

#include "tg/uop/arg.h"

namespace tg {

// How the codegen lowers a kernel's opts where the heuristic chose more than opts (ours: the CPU's tiles and loops,
// codegen/cpu_tiles.h). Recorded by the heuristic on the Kernel, carried to the codegen in the SINK's KernelInfo.
struct Lowering {
  bool vector_alus = false;                 // vector ALUs and accumulators stay vectors (devectorize 0)
  bool deferred_horizontal_reduce = false;  // a vector accumulator's lanes summed once, after the loop
  bool polynomial_transcendentals = false;  // EXP2/LOG2/SIN as polynomials even where the renderer has them
  // a deferred reduce of integer products scaled per output (a quantized weight's block): each output's products
  // summed as integers, in the order of a dot-product instruction's operands, then scaled once (ReduceContext)
  bool integer_block_sums = false;
  // a reduce's accumulating adds may be reordered: the C compiler's loop vectorizer then sums them in vector lanes
  // (a plain loop's reduce, codegen/cpu_tiles.h cpu_vector_loop)
  bool reassociate_reduces = false;
  bool operator==(const Lowering&) const = default;
};

struct KernelInfo final : ArgObjectOf<KernelInfo> {
  std::string name = "test";     // name of the kernel
  int local_dims = 0;            // number of local dimensions (RANGE remapped to SPECIAL)
  int upcasted = 0;              // count that are upcasted (RANGE remapped to UNROLL)
  bool dont_use_locals = false;  // don't use local indexing
  Lowering lowering;             // ours

  KernelInfo() = default;
  KernelInfo(std::string name_, int local_dims_ = 0, int upcasted_ = 0, bool dont_use_locals_ = false,
             Lowering lowering_ = {})
      : name(std::move(name_)),
        local_dims(local_dims_),
        upcasted(upcasted_),
        dont_use_locals(dont_use_locals_),
        lowering(lowering_) {}

  // KernelInfo(name='E_4', local_dims=0, upcasted=1, dont_use_locals=False), then the lowering when it isn't the
  // default
  std::string repr() const override;
  uint64_t hash() const override;
  bool operator==(const KernelInfo&) const = default;
};

// a SINK arg holding a KernelInfo
ObjectArg kernel_info(std::string name = "test", int local_dims = 0, int upcasted = 0, bool dont_use_locals = false,
                      Lowering lowering = {});
// the KernelInfo of an arg, or null when it holds none
const KernelInfo* as_kernel_info(const Arg& arg);
// the lowering a kernel's SINK asks for (the default when it has no KernelInfo)
Lowering lowering_of(const UOp& sink);

}  // namespace tg
