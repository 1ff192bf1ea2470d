// A user's program against the installed package: builds 2+2 as a UOp graph and folds it with a PatternMatcher.
#include <tinygrad/tinygrad.h>

#include <iostream>

using namespace tg;

int main() {
  UOp two = UOp::const_(dtypes::int32, 2);
  PatternMatcher<UOp> fold{
      {pat::c1 + pat::c2,
       [](M m) {
         return m[pat::c1].const_like(
             exec_alu(Ops::ADD, m[pat::c1].dtype(), {m[pat::c1].const_arg(), m[pat::c2].const_arg()}));
       }},
  };
  std::cout << graph_rewrite(two + two, fold).repr() << "\n";
  return 0;
}
