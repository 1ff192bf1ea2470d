#pragma once
// the verifier: a PatternMatcher<std::optional<bool>> over UOps (tinygrad's spec.py). A rule answers true (valid),
// false (invalid) or nullopt (no opinion: the next rule is asked). A node no rule accepts is invalid.
#include <optional>
#include <vector>

#include "tg/uop/upat.h"

namespace tg {

using SpecMatcher = PatternMatcher<std::optional<bool>>;

const SpecMatcher& spec();  // rules for codegen-level UOps (the linearized kernel)

// checks every node; throws tg::Error on the first bad one, naming its position, op, dtype, sources and what is wrong:
//   UOp verification failed at 3 on Ops.ADD dtypes.float 2 [Ops.CONST, Ops.CONST] None: src dtypes [dtypes.int, ...]:
//   ...
// extra_spec rules are asked first (tinygrad's extra_spec)
void type_verify(const std::vector<UOp>& uops, const SpecMatcher* extra_spec = nullptr);
void type_verify(const UOp& sink, const SpecMatcher* extra_spec = nullptr);  // verifies sink.toposort()

}  // namespace tg
