#pragma once
// the symbolic simplifier for index arithmetic (tinygrad's uop/symbolic.py) and the text render of expressions
#include "tg/uop/upat.h"

namespace tg {

const PatternMatcher<UOp>& symbolic_simple();  // self folding and constant folding
const PatternMatcher<UOp>& symbolic();         // + reassociation, like terms, div/mod and comparison folding by range
const PatternMatcher<UOp>& sym();              // symbolic + the codegen-time extras
const PatternMatcher<UOp>& pm_render_expr();   // tinygrad's `renderer`: expressions to NOOP(arg=text)

}  // namespace tg
