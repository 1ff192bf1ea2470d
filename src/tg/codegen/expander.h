#pragma once
// the expander: UNROLL/CONTRACT expansion into vectors, gates for masked stores, IGNORE (tinygrad's
// codegen/expander.py)
#include "tg/uop/upat.h"

namespace tg {

const PatternMatcher<UOp>& expander();
const PatternMatcher<UOp>& migrate_indexing();  // create_gate: a gated STORE gates its BARRIERed loads with an IF
const PatternMatcher<UOp>& pm_store_ignore();
const PatternMatcher<UOp>& pm_move_ignore();
const PatternMatcher<UOp>& pm_delete_ignore();

}  // namespace tg
