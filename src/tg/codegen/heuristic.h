#pragma once
// hand_coded_optimizations: the default opts when BEAM is off (tinygrad's codegen/heuristic.py)
#include <optional>
#include <vector>

#include "tg/codegen/kernel.h"

namespace tg {

// the opts the heuristic picks for k, worked out on a copy (k itself is unchanged). Ours on top of the reference's,
// on targets with vector register tiles (RenderOpts::simd_lanes: the CPU devices), codegen/cpu_tiles.h: a vector
// tile or a plain loop; else, for kernels of 2^20 iterations or more, the row upcast and the loop order
std::vector<Opt> hand_coded_optimizations(const Kernel& k);
// the heuristic's choice applied to k (on top of the opts already there): its opts, and how the codegen lowers them
// (Kernel::lowering: a CPU tile keeps its vector ALUs, codegen/cpu_tiles.h)
void apply_hand_coded(Kernel& k);
// what engine/realize's get_kernel does before BEAM: nothing under NOOPT=1, else the hand-coded opts
// NOTE: tensor cores would be tried first; none are implemented yet
void apply_default_opts(Kernel& k);

}  // namespace tg
