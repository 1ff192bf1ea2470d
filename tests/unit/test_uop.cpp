#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

using namespace tg;

TEST(UOp, HashConsing) {
  UOp a = UOp::const_(dtypes::int32, 2), b = UOp::const_(dtypes::int32, 2);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a + b, a + b);
  EXPECT_NE(a + b, b * a);
}

TEST(UOp, TutorialFold) {
  UOp a = UOp::const_(dtypes::int32, 2), b = UOp::const_(dtypes::int32, 2);
  PatternMatcher<UOp> fold{
      {op(Ops::ADD, {op(Ops::CONST).named("c1"), op(Ops::CONST).named("c2")}), [](M m) {
         return m["c1"].const_like(exec_alu(Ops::ADD, m["c1"].dtype(), {m["c1"].const_arg(), m["c2"].const_arg()}));
       }}};
  UOp r = graph_rewrite(a + b, fold);
  EXPECT_EQ(r.repr(), "UOp(Ops.CONST, dtypes.int, arg=4, src=())");
  EXPECT_EQ(r, UOp::const_(dtypes::int32, 4));
}

TEST(UOp, ReprSharing) {
  UOp a = UOp::const_(dtypes::int32, 2);
  UOp b = a * UOp::const_(dtypes::int32, 3);
  UOp c = b + b;
  EXPECT_EQ((c + a).repr(),
            "UOp(Ops.ADD, dtypes.int, arg=None, src=(\n"
            "  UOp(Ops.ADD, dtypes.int, arg=None, src=(\n"
            "    x1:=UOp(Ops.MUL, dtypes.int, arg=None, src=(\n"
            "      x2:=UOp(Ops.CONST, dtypes.int, arg=2, src=()),\n"
            "      UOp(Ops.CONST, dtypes.int, arg=3, src=()),)),\n"
            "     x1,)),\n"
            "   x2,))");
}

TEST(UOp, SymbolicRender) {
  UOp a = UOp::variable("a", 0, 7);
  EXPECT_EQ((a + 0).simplify(), a);
  EXPECT_EQ((a * 1 + 3).render(), "(a+3)");
}
