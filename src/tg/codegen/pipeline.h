#pragma once
// the codegen pipeline: a kernel AST through the RewriteSteps of tinygrad's codegen/__init__.py, to a rewritten
// SINK (full_rewrite_to_sink) or to the linearized list of UOps (full_rewrite)
#include <vector>

#include "tg/renderer/renderer.h"
#include "tg/uop/kernel_info.h"

namespace tg {

// one stage: a graph_rewrite with its matcher and context, as tinygrad's RewriteStep, and the condition it runs under
// (null: always): the target's capabilities and the kernel's Lowering (its SINK's KernelInfo)
struct RewriteStep {
  const char* name;
  UOp (*apply)(const UOp& sink, const RenderOpts& opts, const Lowering& lowering);
  bool (*when)(const RenderOpts& opts, const Lowering& lowering) = nullptr;
};

std::vector<RewriteStep> get_rewrites_for_renderer(const RenderOpts& opts, bool linearizer = true,
                                                   const Lowering& lowering = {});
UOp apply_rewrites(const UOp& sink, const std::vector<RewriteStep>& rewrites, const RenderOpts& opts,
                   const Lowering& lowering = {});

// opts null: the generic Renderer() (has_local, SPECIAL indices, no native ops). The sink's KernelInfo says how to
// lower it (Lowering)
UOp full_rewrite_to_sink(const UOp& sink, const RenderOpts* opts = nullptr, bool linearizer = false);
std::vector<UOp> full_rewrite(const UOp& sink, const RenderOpts* opts = nullptr);
// a Renderer is its RenderOpts
inline UOp full_rewrite_to_sink(const UOp& sink, const RenderOpts& opts, bool linearizer = false) {
  return full_rewrite_to_sink(sink, &opts, linearizer);
}
inline std::vector<UOp> full_rewrite(const UOp& sink, const RenderOpts& opts) { return full_rewrite(sink, &opts); }

}  // namespace tg
