#pragma once
// the verifier: a PatternMatcher<std::optional<bool>> over UOps (tinygrad's spec.py)
#include "tg/uop/upat.h"

namespace tg {

const PatternMatcher<std::optional<bool>>& spec();  // rules for codegen-level UOps
// checks every node of the graph; throws tg::Error naming the op and what is wrong on the first bad one
void type_verify(const std::vector<UOp>& uops);
void type_verify(const UOp& sink);

}  // namespace tg
