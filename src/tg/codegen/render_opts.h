#pragma once
// with_ctx: a context-free matcher as one that takes a ctx, so it composes with + (the codegen's rule lists)
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tg/renderer/renderer.h"
#include "tg/uop/upat.h"

namespace tg {

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
