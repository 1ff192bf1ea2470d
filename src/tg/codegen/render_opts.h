#pragma once
// RenderOpts: the renderer capabilities the codegen pipeline reads (tinygrad's Renderer class attributes).
// NOTE: a stand-in until src/tg/renderer/renderer.h exists; the Renderer there should expose the same fields.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tg/uop/upat.h"

namespace tg {

struct RenderOpts {
  std::string device;                                 // "" for the generic Renderer(), "CPU" for clang
  bool supports_float4 = true;                        // loads/stores may be grouped into float4/half4 ...
  bool has_local = true;                              // global/local dims become SPECIAL, else RANGE loops
  bool has_shared = true;
  std::optional<std::vector<int64_t>> global_max = std::vector<int64_t>(3, 0x8FFFFFFF);  // (x, y, z)
  std::optional<std::vector<int64_t>> local_max = std::vector<int64_t>(3, 0x8FFFFFFF);
  OpSet code_for_op;                                  // the ALU ops the renderer emits itself
  const PatternMatcher<UOp>* pre_matcher = nullptr;   // run before the final rewrite
  const PatternMatcher<UOp>* extra_matcher = nullptr; // appended to the final rewrite

  static const RenderOpts& generic();  // Renderer(): has_local, no ops, no matchers
  static const RenderOpts& cpu();      // ClangRenderer: no locals, C ops except EXP2/LOG2/SIN, extra_pm
};
using RendererLike = RenderOpts;

// a context-free matcher as one that takes ctx (so it composes with + into a matcher whose rules read ctx)
template <class Ctx>
PatternMatcher<UOp, Ctx> with_ctx(const PatternMatcher<UOp>& pm) {
  std::vector<Rule<UOp, Ctx>> out;
  out.reserve(pm.rules().size());
  for (const auto& r : pm.rules()) {
    TG_ASSERT(r.ctx_fn == nullptr, "rule at ", r.file, ":", r.line, " takes a NoCtx context");
    Rule<UOp, Ctx> n(r.pat, typename Rule<UOp, Ctx>::Fn(r.fn), r.file, r.line);
    n.capture = r.capture;
    out.push_back(std::move(n));
  }
  return PatternMatcher<UOp, Ctx>(std::move(out));
}

}  // namespace tg
