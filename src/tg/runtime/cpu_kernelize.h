#pragma once
// The CPU devices' rewrites of a tensor graph before kernelize cuts it (RenderOpts::kernelize_matcher): a big matmul's
// B copied into panels its register tiles read contiguously (BLAS's packing, CPU_PACK), and a long reduce of it cut
// into blocks whose sums one kernel adds (CPU_KSPLIT)
#include "tg/uop/upat.h"

namespace tg {

const PatternMatcher<UOp>& cpu_kernelize_matcher();

}  // namespace tg
