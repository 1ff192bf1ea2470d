#pragma once
// the symbolic simplifier for index arithmetic (tinygrad's uop/symbolic.py) and the text render of expressions.
// All rules are exact for C semantics on unbounded integers: IDIV and MOD truncate toward zero, x/0 and x%0 are 0.
#include <vector>

#include "tg/uop/upat.h"

namespace tg {

const PatternMatcher<UOp>& symbolic_simple();  // self folding and constant folding
const PatternMatcher<UOp>& commutative();      // int commutative ops: sources in tuplize order (consts last)
const PatternMatcher<UOp>& symbolic();         // + reassociation, like terms, div/mod and comparison folding by range
const PatternMatcher<UOp>& symbolic_flat();    // + distribution of -1 and of int consts over sums
const PatternMatcher<UOp>& sym();              // symbolic_flat + the codegen-time extras
const PatternMatcher<UOp>& pm_render_expr();   // tinygrad's `renderer`: expressions to NOOP(arg=text)

// the terms of a chain of `sep` (x+y+z -> [x, y, z]), left to right
std::vector<UOp> split_uop(const UOp& x, Ops sep);
// x//y or x%y (which) simplified by the ranges of x and y; null when nothing changes
UOp div_and_mod_folding(const UOp& x, const UOp& y, Ops which, bool split_rem = false);

// an ALU on a vector dtype as a VECTORIZE of scalar ALUs on GEPs of its sources; null for a scalar ALU
UOp no_vectorized_alu(const UOp& alu);

}  // namespace tg
