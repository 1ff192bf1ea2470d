#pragma once
// the lowerer: ShapeTracker VIEWs on LOAD/STORE become INDEX math over RANGE/SPECIAL/UNROLL indices, REDUCE_AXIS
// becomes REDUCE over ranges (tinygrad's codegen/lowerer.py)
#include <vector>

#include "tg/renderer/renderer.h"
#include "tg/shape/shapetracker.h"

namespace tg {

struct IndexContext {
  std::vector<UOp> idxs;   // one per axis of the full shape: SPECIAL / RANGE / UNROLL
  std::vector<UOp> ridxs;  // the same, with group-for-reduce axes as late RANGEs (1000+axis)
};

std::vector<UOp> get_grouped_dims(const std::string& prefix, Shape dims,
                                  const std::optional<std::vector<int64_t>>& max_sizes, bool reverse = false);
Shape ast_full_shape(const UOp& ast);  // the elementwise max of the shapes of every VIEW in the AST
IndexContext get_index(const UOp& ast, const RenderOpts& opts);

const PatternMatcher<UOp, IndexContext>& pm_lowerer();

}  // namespace tg
