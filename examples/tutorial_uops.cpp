// The tutorial's two UOp-level sections in C++: "Low-Level UOP Construction" and "Pattern Matching and Graph
// Rewriting". The output matches reference/golden/tutorial/s12_lowlevel_uop.out + s13_pattern.out byte for byte
// (checked by the CTest test tutorial_uops). Run with an argument to print one section only: s12 or s13.
#include <tinygrad/tinygrad.h>

#include <cstdlib>
#include <iostream>
#include <string_view>

using namespace tg;

// *** Low-Level UOP Construction ***

static UOp lowlevel_uop() {
  // create constant UOps
  UOp a = UOp::make(Ops::CONST, dtypes::int32, {}, ConstValue{int64_t{2}});
  UOp b = UOp::make(Ops::CONST, dtypes::int32, {}, ConstValue{int64_t{2}});

  // global uniqueness: same specifications = same object
  TG_ASSERT(a.get() == b.get(), "hash-consing gave two nodes for one UOp");

  // construct computation
  UOp a_plus_b = a + b;
  std::cout << a_plus_b.repr() << "\n";
  return a_plus_b;
}

// *** Pattern Matching and Graph Rewriting ***

static void pattern_matching(const UOp& a_plus_b) {
  // define a constant folding pattern: UOp(Ops.CONST, dtype=c1.dtype, arg=c1.arg+c2.arg)
  PatternMatcher<UOp> simple_pm{
      {op(Ops::ADD, {op(Ops::CONST).named("c1"), op(Ops::CONST).named("c2")}),
       [](M m) {
         UOp c1 = m["c1"], c2 = m["c2"];
         return UOp::make(Ops::CONST, c1.dtype(), {}, exec_alu(Ops::ADD, c1.dtype(), {c1.const_arg(), c2.const_arg()}));
       }},
  };

  // apply the pattern
  UOp a_plus_b_simplified = graph_rewrite(a_plus_b, simple_pm);
  std::cout << a_plus_b_simplified.repr() << "\n";  // UOp(Ops.CONST, dtypes.int, arg=4, src=())

  // the same rule with UPat.cvar and const_like
  PatternMatcher<UOp> simpler_pm{
      {pat::c1 + pat::c2,
       [](M m) {
         return m[pat::c1].const_like(
             exec_alu(Ops::ADD, m[pat::c1].dtype(), {m[pat::c1].const_arg(), m[pat::c2].const_arg()}));
       }},
  };
  TG_ASSERT(graph_rewrite(a_plus_b, simple_pm) == graph_rewrite(a_plus_b, simpler_pm), "the two matchers disagree");
}

int main(int argc, char** argv) {
  std::string_view only = argc > 1 ? argv[1] : "";
  if (only == "s13") {
    // the section's prelude builds a_plus_b without printing it
    pattern_matching(UOp::const_(dtypes::int32, 2) + UOp::const_(dtypes::int32, 2));
    return EXIT_SUCCESS;
  }
  UOp a_plus_b = lowlevel_uop();
  if (only != "s12") pattern_matching(a_plus_b);
  return EXIT_SUCCESS;
}
