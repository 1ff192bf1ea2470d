// sint (shape/sint.h): tinygrad's `int | UOp` size. Ints stay ints; an expression of Variables simplifies and folds
// back to an int when it is constant; equality is structural; order comparisons are decided by the bounds or throw;
// int-only code given a symbolic size throws naming the Variable and its range. Movement args carry symbolic sizes.
#include <gtest/gtest.h>

#include <string>

#include "error_of.h"
#include "tg/shape/shapetracker.h"

using namespace tg;
using tg::test::error_of;

TEST(Sint, IntsStayInts) {
  sint a = 6, b = 4;
  EXPECT_TRUE((a + b).is_int());
  EXPECT_EQ(a * b, 24);
  EXPECT_EQ(a - b, 2);
  EXPECT_EQ(floordiv(sint(-7), sint(2)), -4);  // python's //
  EXPECT_EQ(floormod(sint(-7), sint(2)), 1);
  EXPECT_EQ(ceildiv(sint(7), sint(2)), 4);
  EXPECT_TRUE(a > b);
  EXPECT_EQ(std::max(a, b), 6);
  EXPECT_EQ(static_cast<int64_t>(a), 6);
  EXPECT_EQ(sint(UOp::const_(dtypes::int32, 5)), 5);  // a CONST is an int
  EXPECT_TRUE(sint(UOp::const_(dtypes::int32, 5)).is_int());
}

TEST(Sint, ExpressionsOfAVariable) {
  UOp i = UOp::variable("i", 1, 10);
  sint s(i);
  EXPECT_TRUE(s.is_sym());
  EXPECT_EQ(s.vmin(), 1);
  EXPECT_EQ(s.vmax(), 10);
  sint t = s * 3 + 2;
  EXPECT_EQ(t.vmin(), 5);
  EXPECT_EQ(t.vmax(), 32);
  EXPECT_EQ(t.str(), "((i*3)+2)");
  EXPECT_EQ(s * 3 + 2, t);        // structural equality: the same expression
  EXPECT_FALSE(s == 4);           // a symbol is not an int
  EXPECT_TRUE((s - s).is_int());  // folds back to an int
  EXPECT_EQ(s - s, 0);
  EXPECT_EQ(s * 0, 0);
  EXPECT_TRUE(s > 0);  // decided by the bounds
  EXPECT_TRUE(s < 11);
  EXPECT_TRUE(resolve_lt(s, sint(5), true));  // undecided: the default
  EXPECT_FALSE(resolve_lt(s, sint(5), false));
  EXPECT_EQ(std::hash<sint>()(s * 3 + 2), std::hash<sint>()(t));
}

TEST(Sint, IntOnlyUsesOfASymbolNameItAndItsRange) {
  sint s(UOp::variable("start_pos", 1, 100));
  std::string e = error_of([&] { (void)static_cast<int64_t>(s + 1); });
  EXPECT_NE(e.find("(start_pos+1)"), std::string::npos) << e;
  EXPECT_NE(e.find("start_pos in [1, 100]"), std::string::npos) << e;
  e = error_of([&] { (void)(s < 50); });
  EXPECT_NE(e.find("can't decide start_pos < 50"), std::string::npos) << e;
}

TEST(Sint, MovementArgsCarrySymbolicSizes) {
  sint v(UOp::variable("v", 1, 8));
  EXPECT_TRUE(std::holds_alternative<Tuple>(shape_arg({3, 4})));  // ints: the plain tuple, as before
  Arg a = shape_arg({3, v});
  ASSERT_NE(object_arg<SymArg>(a), nullptr);
  EXPECT_EQ(arg_shape(a), (Shape{3, v}));
  EXPECT_EQ(arg_repr(a), "(3, v)");
  Arg m = mask_arg({{0, 3}, {0, v}});
  EXPECT_EQ(arg_mask(m), (Mask{{0, 3}, {0, v}}));
  EXPECT_EQ(arg_shape(shape_arg({3, 4})), (Shape{3, 4}));
  EXPECT_EQ(prod(Shape{3, v}), v * 3);
}
