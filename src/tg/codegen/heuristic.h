#pragma once
// hand_coded_optimizations: the default opts when BEAM is off (tinygrad's codegen/heuristic.py)
#include <vector>

#include "tg/codegen/kernel.h"

namespace tg {

// the opts the heuristic picks for k, worked out on a copy (k itself is unchanged)
std::vector<Opt> hand_coded_optimizations(const Kernel& k);
// what engine/realize's get_kernel does before BEAM: nothing under NOOPT=1, else the hand-coded opts
// NOTE: tensor cores would be tried first; none are implemented yet
void apply_default_opts(Kernel& k);

}  // namespace tg
