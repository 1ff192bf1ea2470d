// tinygrad's test/unit/test_uop_symbolic.py (and parts of test_uop_vmin_vmax.py), with the same expected strings
#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "tg/uop/symbolic.h"

using namespace tg;

namespace {

UOp Variable(const std::string& name, int64_t lo, int64_t hi) { return UOp::variable(name, lo, hi); }
UOp uconst(int64_t v) { return UOp::const_(dtypes::int32, v); }
UOp usum(const std::vector<UOp>& xs) {
  UOp r = xs.at(0);
  for (size_t i = 1; i < xs.size(); i++) r = r + xs[i];
  return r;
}
UOp uand(const std::vector<UOp>& xs) {
  UOp r = xs.at(0);
  for (size_t i = 1; i < xs.size(); i++) r = r * xs[i];
  return r;
}
UOp ge(const UOp& a, int64_t b) { return a >= a.ufix(b); }  // python's a >= b: (a<b).logical_not()
UOp le(const UOp& a, int64_t b) { return a <= a.ufix(b); }  // python's a <= b: (b<a).logical_not()
UOp ne_true(const UOp& a) { return a.ne(a.const_like(true)); }

// the expression after the index pipeline's symbolic pass, as tinygrad's test renders it
UOp rewritten(const UOp& v) { return graph_rewrite(v, sym()); }

// checks render and range; on failure prints Input/Output/Expected (file and line of the caller)
void helper_test_variable(const UOp& v, ConstValue n, ConstValue m, const std::vector<std::string>& s,
                          const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  UOp r = rewritten(v);
  std::string out = r.render(false);
  bool ok_s = std::find(s.begin(), s.end(), out) != s.end();
  bool ok_r = const_eq_numeric(r.vmin(), n) && const_eq_numeric(r.vmax(), m);
  if (ok_s && ok_r) return;
  std::string want = s.size() == 1 ? s[0] : "one of {" + join(s, ", ") + "}";
  ADD_FAILURE_AT(file, line) << "\n   Input: " << v.render(false) << "\nOutput: " << out << "  ["
                             << const_repr(r.vmin()) << ", " << const_repr(r.vmax()) << "]\nExpected: " << want << "  ["
                             << const_repr(n) << ", " << const_repr(m) << "]";
}
void helper_test_variable(const UOp& v, ConstValue n, ConstValue m, const char* s, const char* file = __builtin_FILE(),
                          int line = __builtin_LINE()) {
  helper_test_variable(v, n, m, std::vector<std::string>{s}, file, line);
}

}  // namespace

// *** TestSymbolic ***

TEST(Symbolic, CmpSimple) {
  helper_test_variable(Variable("a", 3, 8) < 4, 0, 1, "(a<4)");
  helper_test_variable(ge(Variable("a", 3, 8), 8), 0, 1, "((a<8)!=True)");
}

TEST(Symbolic, Ge) {
  helper_test_variable(ge(Variable("a", 3, 8), 77), 0, 0, "False");
  helper_test_variable(ge(Variable("a", 3, 8), 9), 0, 0, "False");
  helper_test_variable(ge(Variable("a", 3, 8), 8), 0, 1, "((a<8)!=True)");
  helper_test_variable(ge(Variable("a", 3, 8), 4), 0, 1, "((a<4)!=True)");
  helper_test_variable(ge(Variable("a", 3, 8), 3), 1, 1, "True");
  helper_test_variable(ge(Variable("a", 3, 8), 2), 1, 1, "True");
}

TEST(Symbolic, Lt) {
  helper_test_variable(Variable("a", 3, 8) < 77, 1, 1, "True");
  helper_test_variable(Variable("a", 3, 8) < 9, 1, 1, "True");
  helper_test_variable(Variable("a", 3, 8) < 8, 0, 1, "(a<8)");
  helper_test_variable(Variable("a", 3, 8) < 4, 0, 1, "(a<4)");
  helper_test_variable(Variable("a", 3, 8) < 3, 0, 0, "False");
  helper_test_variable(Variable("a", 3, 8) < 2, 0, 0, "False");
  helper_test_variable(Variable("a", 3, 4) < Variable("b", 5, 6), 1, 1, "True");
  helper_test_variable(Variable("a", 3, 5) < Variable("b", 5, 6), 0, 1, "(a<b)");
  helper_test_variable(Variable("a", 5, 6) < Variable("b", 3, 5), 0, 0, "False");
  helper_test_variable(Variable("a", 3, 4) < Variable("a", 3, 4), 0, 0, "False");
}

TEST(Symbolic, LtDivides) {
  UOp expr = (Variable("idx", 0, 511) * 4 + Variable("FLOAT4_INDEX", 0, 3)) < 512;
  helper_test_variable(expr, 0, 1, "(idx<128)");
}

TEST(Symbolic, LtDividesAnd) {
  UOp expr = uand({(Variable("idx1", 0, 511) * 4 + Variable("FLOAT4_INDEX", 0, 3)) < 512,
                   (Variable("idx2", 0, 511) * 4 + Variable("FLOAT4_INDEX", 0, 3)) < 512});
  helper_test_variable(expr, 0, 1, "((idx1<128)&(idx2<128))");
}

TEST(Symbolic, LtFactors) {
  UOp expr = (Variable("idx1", 0, 511) * 4 + Variable("FLOAT4_INDEX", 0, 256)) < 512;
  helper_test_variable(expr, 0, 1, {"(((idx1*4)+FLOAT4_INDEX)<512)", "((FLOAT4_INDEX+(idx1*4))<512)"});
}

TEST(Symbolic, DivReduction) { helper_test_variable(idiv(Variable("a", 2, 3), 2), 1, 1, "1"); }

TEST(Symbolic, Equality) {
  UOp idx1 = Variable("idx1", 0, 3), idx2 = Variable("idx2", 0, 3);
  EXPECT_EQ(idx1, idx1);
  EXPECT_NE(idx1, idx2);
  EXPECT_EQ(idx1 * 4, idx1 * 4);
  EXPECT_NE(idx1 * 4, idx1 * 3);
  EXPECT_NE(idx1 * 4, idx1 + 4);
  EXPECT_NE(idx1 * 4, idx2 * 4);
  EXPECT_EQ(idx1 + idx2, idx1 + idx2);
  EXPECT_NE(idx1 + idx2, idx2 + idx1);
  EXPECT_NE(idx1 + idx2, idx2);
  EXPECT_NE(idx1 * idx2, idx2 * idx1);
}

TEST(Symbolic, Factorize) {
  UOp a = Variable("a", 0, 8), b = Variable("b", 0, 8);
  helper_test_variable(a * 2 + a * 3, 0, 8 * 5, "(a*5)");
  helper_test_variable(b + a * 2 + a * 3, 0, 8 * 6, "(b+(a*5))");
}

TEST(Symbolic, FactorizeNoMul) {
  UOp a = Variable("a", 0, 8), b = Variable("b", 0, 8);
  helper_test_variable(a + a * 3, 0, 8 * 4, "(a*4)");
  helper_test_variable((a + b) + a * 3, 0, 8 * 5, "(b+(a*4))");
  helper_test_variable((a * 3 + b) + b * 3, 0, 8 * 7, "((a*3)+(b*4))");
}

TEST(Symbolic, Neg) { helper_test_variable(-Variable("a", 0, 8), -8, 0, "(a*-1)"); }
TEST(Symbolic, Add1) { helper_test_variable(Variable("a", 0, 8) + 1, 1, 9, "(a+1)"); }
TEST(Symbolic, Sub1) { helper_test_variable(Variable("a", 0, 8) - 1, -1, 7, "(a+-1)"); }
TEST(Symbolic, ConstVar) { helper_test_variable(Variable("fake", 1, 1), 1, 1, "1"); }

TEST(Symbolic, AddSelf) {
  UOp a = Variable("a", 0, 8), b = Variable("b", 0, 8);
  helper_test_variable(a + a, 0, 16, "(a*2)");
  helper_test_variable((a + b) + b, 0, 24, "(a+(b*2))");
}

TEST(Symbolic, SubSelf) {
  UOp a = Variable("a", 0, 8);
  helper_test_variable(a - a, 0, 0, "0");
  helper_test_variable(a * 3 - a, 0, 16, "(a*2)");
}

TEST(Symbolic, Mul0) { helper_test_variable(Variable("a", 0, 8) * 0, 0, 0, "0"); }
TEST(Symbolic, Mul1) { helper_test_variable(Variable("a", 0, 8) * 1, 0, 8, "a"); }

TEST(Symbolic, MulNeg1) {
  helper_test_variable(idiv(Variable("a", 0, 2) * -1, 3), 0, 0, "0");
  helper_test_variable(idiv(Variable("a", 2, 7) * -1, 3), -2, 0, "((a//3)*-1)");
}

TEST(Symbolic, Mul2) { helper_test_variable(Variable("a", 0, 8) * 2, 0, 16, "(a*2)"); }
TEST(Symbolic, Div1) { helper_test_variable(idiv(Variable("a", 0, 8), 1), 0, 8, "a"); }
TEST(Symbolic, Mod1) { helper_test_variable(Variable("a", 0, 8) % 1, 0, 0, "0"); }

TEST(Symbolic, MaxFolds) { helper_test_variable(maximum(maximum(Variable("a", 0, 20), 10), 11), 11, 20, "max(a, 11)"); }

TEST(Symbolic, AddMinMax) { helper_test_variable(Variable("a", 0, 8) * 2 + 12, 12, 16 + 12, "((a*2)+12)"); }
TEST(Symbolic, DivRemove) { helper_test_variable(idiv(Variable("a", 0, 7), 20), 0, 0, "0"); }

TEST(Symbolic, DivMinMax) {
  helper_test_variable(idiv(Variable("a", 1, 7), 2), 0, 3, "(a//2)");
  helper_test_variable(idiv(Variable("a", 0, 6), 2), 0, 3, "(a//2)");
}

TEST(Symbolic, DivNegMinMax) {
  helper_test_variable(idiv(Variable("a", 1, 7), -2), -3, 0, "((a//2)*-1)");
  helper_test_variable(idiv(Variable("a", 0, 6), -2), -3, 0, "((a//2)*-1)");
}

TEST(Symbolic, SumDivRemove) {
  helper_test_variable(idiv(usum({Variable("a", 0, 7), Variable("b", 0, 3)}), 20), 0, 0, "0");
}

TEST(Symbolic, SumDivMinMax) {
  helper_test_variable(idiv(usum({Variable("a", 0, 7), Variable("b", 0, 3)}), 2), 0, 5, "((a+b)//2)");
}

TEST(Symbolic, SumDivModFactor) {
  helper_test_variable(idiv(usum({Variable("a", 0, 7) * 4, Variable("b", 0, 3) * 4}), 2), 0, 20, "((a*2)+(b*2))");
  helper_test_variable(usum({Variable("a", 0, 7) * 4, Variable("b", 0, 3) * 4}) % 2, 0, 0, "0");
}

TEST(Symbolic, SumDivSomeFactor) {
  helper_test_variable(idiv(usum({Variable("a", 0, 7) * 5, Variable("b", 0, 3) * 4}), 2), 0, 23,
                       {"(((a*5)//2)+(b*2))", "((b*2)+((a*5)//2))"});
}

TEST(Symbolic, SumDivTrimConst) {
  helper_test_variable(idiv(Variable("a", 0, 7) * 4 + Variable("b", 0, 3) * 4 + 7, 16), 0, 2, "(((a+b)+1)//4)");
}

TEST(Symbolic, SumDivSomePartialFactor) {
  helper_test_variable(idiv(usum({Variable("a", 0, 7) * 6, Variable("b", 0, 7) * 6}), 16), 0, 5, "(((a*3)+(b*3))//8)");
  helper_test_variable(idiv(usum({uconst(16), Variable("a", 0, 7) * 6, Variable("b", 0, 7) * 6}), 16), 1, 6,
                       "((((a*3)+(b*3))//8)+1)");
  helper_test_variable(idiv(Variable("a", 0, 7) * 30 + 20, 20), 1, 11, "(((a*3)//2)+1)");
}

TEST(Symbolic, SumDivNoFactor) {
  helper_test_variable(idiv(usum({Variable("a", 0, 7) * 5, Variable("b", 0, 3) * 5}), 2), 0, 25, "(((a*5)+(b*5))//2)");
}

TEST(Symbolic, ModFactor) {
  helper_test_variable(usum({Variable("a", 0, 7) * 100, Variable("b", 0, 3) * 50}) % 100, 0, 50, "((b%2)*50)");
}

TEST(Symbolic, ModToSub) { helper_test_variable((1 + Variable("a", 1, 2)) % 2, 0, 1, "(a+-1)"); }

TEST(Symbolic, ModCongruence) {
  helper_test_variable((3 + 3 * Variable("a", 0, 3)) % 4, 0, 3, "((a*-1)+3)");
  helper_test_variable((17 + 13 * Variable("a", 0, 3)) % 18, 2, 17, "((a*-5)+17)");
  helper_test_variable((2 + 9 * Variable("a", 0, 3)) % 18, 2, 11, "(((a%2)*9)+2)");
}

TEST(Symbolic, ModCongruenceMulAdd) { helper_test_variable((6 * (Variable("a", 0, 2) + 1)) % 9, 0, 6, "((a*-3)+6)"); }

TEST(Symbolic, ModCongruenceMultipleVars) {
  helper_test_variable((9 + 9 * Variable("x", 0, 3) + 9 * Variable("y", 0, 3)) % 10, 3, 9, "(((x*-1)+(y*-1))+9)");
  helper_test_variable((7 + 9 * Variable("x", 0, 2) + 9 * Variable("y", 0, 2) + Variable("z", 0, 2)) % 10, 3, 9,
                       {"(((z+(x*-1))+(y*-1))+7)", "(((y*-1)+(z+(x*-1)))+7)"});
  helper_test_variable((10 + 12 * Variable("x", 0, 2) + Variable("y", 0, 4) % 3) % 13, 8, 12, "(((x*-1)+(y%3))+10)");
}

TEST(Symbolic, DivCongruence) {
  helper_test_variable(idiv(3 + 3 * Variable("a", 0, 3), 4), 0, 3, "a");
  helper_test_variable(idiv(18 + 17 * Variable("a", 0, 2) + 17, 18), 1, 3, "(a+1)");
}

TEST(Symbolic, DivCongruenceMultipleVars) {
  helper_test_variable(idiv(9 + (9 + 10) * Variable("x", 0, 3) + (8 + 10) * Variable("y", 0, 2), 10), 0, 10,
                       "((x*2)+(y*2))");
}

TEST(Symbolic, ModBinaryExpression) {
  helper_test_variable((3 + Variable("a", 0, 1)) % 4, 0, 3, "((a*-3)+3)");
  helper_test_variable((3 + Variable("a", 4, 5)) % 4, 0, 3, "((a*-3)+15)");
}

TEST(Symbolic, SumDivConst) { helper_test_variable(idiv(usum({Variable("a", 0, 7) * 4, uconst(3)}), 4), 0, 7, "a"); }

TEST(Symbolic, SumDivConstBig) {
  helper_test_variable(idiv(usum({Variable("a", 0, 7) * 4, uconst(3)}), 16), 0, 1, "(a//4)");
}

TEST(Symbolic, SumLtFold) {
  helper_test_variable(usum({Variable("a", 0, 7) * 4, Variable("b", 0, 3)}) < 16, 0, 1, "(a<4)");
  helper_test_variable(usum({Variable("a", 0, 7) * 4, Variable("b", 0, 4)}) < 16, 0, 1,
                       {"(((a*4)+b)<16)", "((b+(a*4))<16)"});
  helper_test_variable(usum({Variable("uidx", 0, 3), Variable("a", 0, 1529) * 12}) < (4 * 67), 0, 1, "(a<23)");
}

TEST(Symbolic, MulModLarge) { helper_test_variable((Variable("a", 0, 20) * 10) % 9, 0, 8, "(a%9)"); }
TEST(Symbolic, MulModSmall) { helper_test_variable((Variable("a", 0, 5) * 10) % 9, 0, 5, "a"); }

TEST(Symbolic, ModMod) {
  helper_test_variable((Variable("a", 0, 31) % 12) % 4, 0, 3, "(a%4)");
  helper_test_variable(((4 * Variable("a", 0, 31)) % 12) % 4, 0, 0, "0");
  helper_test_variable(((5 * Variable("a", 0, 31)) % 12) % 5, 0, 4, "(((a*5)%12)%5)");
  helper_test_variable((Variable("a", 0, 31) % 4) % 12, 0, 3, "(a%4)");
}

TEST(Symbolic, MulMul) { helper_test_variable((Variable("a", 0, 5) * 10) * 9, 0, 5 * 10 * 9, "(a*90)"); }

TEST(Symbolic, MulLt) {
  helper_test_variable(Variable("a", 0, 5) * 4 < 13, 0, 1, "(a<4)");
  helper_test_variable(Variable("a", 0, 5) * 4 < 16, 0, 1, "(a<4)");
  helper_test_variable(Variable("a", 0, 5) * (-2) < 0, 0, 1, "((a*-1)<0)");
  helper_test_variable(ge(Variable("a", 0, 5) * 4, 12), 0, 1, "((a<3)!=True)");
  helper_test_variable(ge(Variable("a", 0, 5) * 4, 13), 0, 1, "((a<4)!=True)");
}

TEST(Symbolic, DivDiv) { helper_test_variable(idiv(idiv(Variable("a", 0, 1800), 10), 9), 0, 20, "(a//90)"); }

TEST(Symbolic, DivConstDiv) {
  UOp a = Variable("a", 0, 124);
  helper_test_variable(idiv(idiv(a, 2) + 1, 2), 0, 31, "((a+2)//4)");
  helper_test_variable(idiv(idiv(-a, 2) - 1, 2), -31, 0, "(((a+2)//4)*-1)");
  helper_test_variable(idiv(idiv(-a, 2) + 10, 2), -26, 5, "((((a//2)*-1)+10)//2)");
}

TEST(Symbolic, DivConstDivWrongSign) {
  UOp a = Variable("a", 0, 124);
  helper_test_variable(idiv(idiv(a - 10, 2) + 10, 2), 2, 33, "((((a+-10)//2)+10)//2)");
}

TEST(Symbolic, DistributeMul) {
  helper_test_variable(usum({Variable("a", 0, 3), Variable("b", 0, 5)}) * 3, 0, 24, "((a*3)+(b*3))");
  helper_test_variable((1 + Variable("a", 0, 3)) * (-2) + 12, 4, 10, "((a*-2)+10)");
}

TEST(Symbolic, ModMulSum) {
  helper_test_variable(usum({Variable("b", 0, 2), Variable("a", 0, 5) * 10}) % 9, 0, 7, {"(b+a)", "(a+b)"});
}

TEST(Symbolic, Sum0) { helper_test_variable(usum({Variable("a", 0, 7)}), 0, 7, "a"); }
TEST(Symbolic, ModRemove) { helper_test_variable(Variable("a", 0, 6) % 100, 0, 6, "a"); }

TEST(Symbolic, BigMod) {
  helper_test_variable(Variable("a", -20, 20) % 10, -9, 9, "(a%10)");
  helper_test_variable(Variable("a", -20, 0) % 10, -9, 0, "(((a*-1)%10)*-1)");
  helper_test_variable(Variable("a", -20, 1) % 10, -9, 9, "(a%10)");
  helper_test_variable(Variable("a", 0, 20) % 10, 0, 9, "(a%10)");
  helper_test_variable(Variable("a", -1, 20) % 10, -9, 9, "(a%10)");
}

TEST(Symbolic, GeRemove) { helper_test_variable(ge(Variable("a", 0, 6), 25), 0, 0, "False"); }

TEST(Symbolic, LtRemove) {
  helper_test_variable(Variable("a", 0, 6) < -3, 0, 0, "False");
  helper_test_variable(Variable("a", 0, 6) < 3, 0, 1, "(a<3)");
  helper_test_variable(Variable("a", 0, 6) < 8, 1, 1, "True");
}

TEST(Symbolic, LtSumRemove) { helper_test_variable(Variable("a", 0, 6) + 2 < 3, 0, 1, "(a<1)"); }

TEST(Symbolic, LtSimpleFactor) {
  helper_test_variable((Variable("a", 0, 6) * 6 + Variable("b", 0, 6) * 6) < 8, 0, 1, "(((a*3)+(b*3))<4)");
}

TEST(Symbolic, LtSumFactorRhsPartial) {
  helper_test_variable((Variable("a", 0, 6) * 6 + Variable("b", 0, 6) * 4 + Variable("c", 0, 6) * 8) < 4, 0, 1,
                       {"((((a*3)+(b*2))+(c*4))<2)", "(((b*2)+((a*3)+(c*4)))<2)"});
}

TEST(Symbolic, LtSumFactorRhsAll) {
  helper_test_variable((Variable("a", 0, 6) * 6 + Variable("b", 0, 6) * 4 + Variable("c", 0, 6) * 8) < 2, 0, 1,
                       {"((((a*3)+(b*2))+(c*4))<1)", "(((b*2)+((a*3)+(c*4)))<1)"});
}

TEST(Symbolic, AndFold) { helper_test_variable(uand({uconst(0), Variable("a", 0, 1)}), 0, 0, "0"); }
TEST(Symbolic, AndRemove) { helper_test_variable(uand({uconst(1), Variable("a", 0, 1)}), 0, 1, "a"); }

TEST(Symbolic, ModFactorNegative) {
  helper_test_variable(usum({uconst(-29), Variable("a", 0, 10), Variable("b", 0, 10) * 28}) % 28, -27, 27,
                       "(((a+(b*28))+-29)%28)");
  helper_test_variable(usum({uconst(-29), Variable("a", 0, 100), Variable("b", 0, 10) * 28}) % 28, -27, 27,
                       "(((a+(b*28))+-29)%28)");
}

TEST(Symbolic, SumCombineNum) {
  helper_test_variable(usum({uconst(29), Variable("a", 0, 10), uconst(-23)}), 6, 16, "(a+6)");
}

TEST(Symbolic, SumNumHoistedAndFactorsCancelOut) {
  helper_test_variable(usum({Variable("a", 0, 1) * -4 + 1, Variable("a", 0, 1) * 4}), 1, 1, "1");
}

// tinygrad's test_div_cancel and test_mod_cancel are expected failures (floor-only); these are the correct forms
TEST(Symbolic, DivCancelCorrect) {
  helper_test_variable(idiv(usum({uconst(-40), Variable("a", 0, 10) * 2, Variable("b", 0, 10) * 40}), 40), -1, 9,
                       "(((a+(b*20))+-20)//20)");
}

TEST(Symbolic, ModCancelCorrect) {
  helper_test_variable(usum({uconst(-40), Variable("a", 0, 10) * 2, Variable("b", 0, 10) * 40}) % 40, -38, 38,
                       "((((a+(b*20))+-20)%20)*2)");
}

TEST(Symbolic, MulDiv) { helper_test_variable(idiv(Variable("a", 0, 10) * 4, 4), 0, 10, "a"); }

TEST(Symbolic, AddDiv) {
  // careful about the lower bounds and upper bounds
  helper_test_variable(idiv(Variable("a", 0, 5) - 2, 4), 0, 0, "0");
  helper_test_variable(idiv(Variable("a", 0, 5) - 1, 4), 0, 1, "((a+-1)//4)");
  helper_test_variable(idiv(Variable("a", 0, 5), 4), 0, 1, "(a//4)");
  helper_test_variable(idiv(Variable("a", 0, 5) + 1, 4), 0, 1, "((a+1)//4)");
  helper_test_variable(idiv(Variable("a", 0, 5) + 2, 4), 0, 1, "((a+2)//4)");
  helper_test_variable(idiv(Variable("a", 0, 5) + 3, 4), 0, 2, "((a+3)//4)");
  helper_test_variable(idiv(Variable("a", 0, 5) + 4, 4), 1, 2, "((a//4)+1)");
  helper_test_variable(idiv(Variable("a", 0, 5) + 5, 4), 1, 2, "(((a+1)//4)+1)");
}

TEST(Symbolic, DivNegRem) {
  helper_test_variable(idiv(-Variable("a", 0, 255) + 256, 2), 0, 128, "((((a+1)//2)*-1)+128)");
}

TEST(Symbolic, MulDivFactorMul) { helper_test_variable(idiv(Variable("a", 0, 10) * 8, 4), 0, 20, "(a*2)"); }
TEST(Symbolic, MulDivFactorMulNeg) {
  helper_test_variable(idiv(Variable("a", 0, 10) * -8 + 16, 4), -16, 4, "((a*-2)+4)");
}
TEST(Symbolic, MulDivFactorDiv) { helper_test_variable(idiv(Variable("a", 0, 10) * 4, 8), 0, 5, "(a//2)"); }
TEST(Symbolic, MulDivFactorDivNeg) {
  helper_test_variable(idiv(Variable("a", 0, 10) * -4 + 4, 8), -4, 0, "(((a*-1)+1)//2)");
}
TEST(Symbolic, ModGcdFactorNeg) {
  helper_test_variable((Variable("a", 0, 10) * -4 + 4) % 8, -4, 4, "((((a*-1)+1)%2)*4)");
}
TEST(Symbolic, ModGcdFoldNeg) { helper_test_variable((Variable("a", 0, 10) * -8 + 20) % 4, 0, 0, "0"); }

TEST(Symbolic, SumDivPartialRemove) {
  helper_test_variable(idiv(usum({Variable("idx0", 0, 127) * 4, Variable("idx2", 0, 3)}), 4), 0, 127, "idx0");
}

TEST(Symbolic, CdivConstEvaluation) {
  helper_test_variable(idiv(Variable("a", 0, 2) - 12, 8), -1, -1, "-1");
  helper_test_variable(idiv(-Variable("a", 0, 2), 7), 0, 0, "0");
}

TEST(Symbolic, CmodConstEvaluation) {
  helper_test_variable((Variable("a", 1, 1) * -3) % 8, -3, -3, "-3");
  helper_test_variable((-Variable("a", 10, 10)) % 7, -3, -3, "-3");
}

TEST(Symbolic, DivNumeratorNegative) {
  helper_test_variable(idiv(Variable("idx", 0, 9) * -10, 11), -8, 0, "(((idx*10)//11)*-1)");
}

TEST(Symbolic, DivIntoMod) { helper_test_variable(idiv((Variable("idx", 0, 16) * 4) % 8, 4), 0, 1, "(idx%2)"); }

TEST(Symbolic, DivNegCancel) {
  helper_test_variable(idiv(-Variable("idx", 0, 100) + 199, -4) + 50, 1, 26, "((idx//4)+1)");
  helper_test_variable(idiv(-Variable("idx", 0, 100) + 200, -4) + 50, 0, 25, "((idx+3)//4)");
  helper_test_variable(idiv(-Variable("idx", 0, 100) + 201, -4) + 50, 0, 25, "((idx+2)//4)");
}

TEST(Symbolic, SumDivBigConst) {
  UOp gidx0 = Variable("gidx0", 0, 24);
  helper_test_variable(idiv(gidx0 + 19, 20), 0, 2, "((gidx0+19)//20)");
  helper_test_variable(idiv(gidx0 + 20, 20), 1, 2, "((gidx0//20)+1)");
  helper_test_variable(idiv(gidx0 + 21, 20), 1, 2, "(((gidx0+1)//20)+1)");
}

TEST(Symbolic, SumDivComplex1) {
  UOp gidx0 = Variable("gidx0", 0, 24), gidx1 = Variable("gidx1", 0, 1), gidx2 = Variable("gidx2", 0, 255);
  UOp lidx0 = Variable("lidx0", 0, 1), lidx1 = Variable("lidx1", 0, 15), lidx2 = Variable("lidx2", 0, 3);
  UOp alu0 = gidx2 * 640 + gidx1 * 160 + idiv(gidx0, 5) * 2 + lidx0 * 320 + lidx1 * 10;
  helper_test_variable(idiv(alu0 + lidx2 * 2 + 1, 20), 0, 8192,
                       {"((((((gidx0//5)+lidx2)//5)+lidx1)//2)+(((gidx2*32)+(gidx1*8))+(lidx0*16)))",
                        "(((lidx1+((lidx2+(gidx0//5))//5))//2)+((gidx2*32)+((gidx1*8)+(lidx0*16))))",
                        "((((gidx1*8)+(gidx2*32))+(lidx0*16))+((lidx1+((lidx2+(gidx0//5))//5))//2))"});
}

TEST(Symbolic, SumDivComplex2) {
  UOp gidx0 = Variable("gidx0", 0, 7), lidx2 = Variable("lidx2", 0, 1), lidx3 = Variable("lidx3", 0, 1);
  helper_test_variable(idiv(gidx0 * 4 + lidx2 * 2 + 1, 10), 0, 3, {"(((gidx0*2)+lidx2)//5)", "((lidx2+(gidx0*2))//5)"});
  helper_test_variable(idiv(gidx0 * 4 + lidx2 * 2 + lidx3, 10), 0, 3,
                       {"(((gidx0*2)+lidx2)//5)", "((lidx2+(gidx0*2))//5)"});
  helper_test_variable(idiv(gidx0 * 2 + lidx2, 10), 0, 1, "(gidx0//5)");
}

TEST(Symbolic, SumDivComplex3) {
  UOp gidx0 = Variable("gidx0", 0, 7), lidx2 = Variable("lidx2", 0, 12), lidx3 = Variable("lidx3", 0, 1);
  helper_test_variable(idiv(gidx0 * 4 + lidx2 * 2 + lidx3, 12), 0, 4,
                       {"(((lidx2//2)+gidx0)//3)", "((gidx0+(lidx2//2))//3)"});
  helper_test_variable(idiv(lidx2 * 2 + gidx0 * 4 + lidx3, 12), 0, 4,
                       {"(((lidx2//2)+gidx0)//3)", "((gidx0+(lidx2//2))//3)"});
}

TEST(Symbolic, SumMulDistribute) {
  UOp gidx0 = Variable("gidx0", 0, 7), lidx2 = Variable("lidx2", 0, 12), lidx3 = Variable("lidx3", 0, 1);
  helper_test_variable((gidx0 + lidx2 + lidx3) * 4, 0, 80,
                       {"(((gidx0*4)+(lidx2*4))+(lidx3*4))", "((lidx3*4)+((gidx0*4)+(lidx2*4)))"});
}

TEST(Symbolic, DivmodVariableDenomFoldToConst) {
  UOp x = Variable("x", 20, 23), y = Variable("y", 8, 10);
  helper_test_variable(idiv(x, y), 2, 2, "2");
  helper_test_variable(x % y, 0, 7, "(x+(y*-2))");
  // ensure all 4 corners are checked
  x = Variable("x", -10, 10), y = Variable("y", -8, 9);
  helper_test_variable(idiv(x, y), -2147483648, 2147483647, "(x//y)");
  helper_test_variable(x % y, -2147483648, 2147483647, "(x%y)");
}

TEST(Symbolic, DivNegAllRange) {
  UOp gidx = Variable("gidx", 0, 124), lidx = Variable("lidx", 0, 7);
  helper_test_variable(idiv(-gidx * 8 - lidx + 999, -4) + 250, 1, 250, "(((gidx*2)+(lidx//4))+1)");
  helper_test_variable(idiv(-gidx * 8 - lidx + 1000, -4) + 250, 0, 250, "((gidx*2)+((lidx+3)//4))");
  helper_test_variable(idiv(-gidx * 8 - lidx + 1001, -4) + 250, 0, 250, "((gidx*2)+((lidx+2)//4))");
  helper_test_variable(idiv(-gidx * 8 - lidx + 1002, -4) + 250, 0, 250, "((gidx*2)+((lidx+1)//4))");
}

TEST(Symbolic, DivNegThenNeg) {
  // taken from arange opts
  UOp lidx0 = Variable("lidx0", 0, 7), lidx1 = Variable("lidx1", 0, 7);
  UOp alu2 = -lidx0 - lidx1;
  helper_test_variable(idiv(alu2 + 14, -32) + 4, 4, 4, "4");
  helper_test_variable(-(idiv(alu2 + 14, -32) + 4), -4, -4, "-4");
  helper_test_variable(idiv(alu2 + 134, -32) + 4, 0, 1, "(((lidx0+lidx1)+25)//32)");
  helper_test_variable(idiv(alu2 + 142, -32) + 4, 0, 0, "0");
  helper_test_variable(idiv(alu2 + 150, -32) + 4, 0, 0, "0");
  helper_test_variable(idiv(alu2 + 158, -32) + 4, 0, 0, "0");
}

TEST(Symbolic, DivModRecombine) {
  UOp gidx = Variable("gidx", 0, 124);
  helper_test_variable(gidx % 4 + idiv(gidx, 4) * 4, 0, 124, "gidx");
  helper_test_variable(idiv(gidx, 4) * 4 + gidx % 4, 0, 124, "gidx");
}

TEST(Symbolic, DivModRecombineFoldedMod) {
  UOp a = Variable("a", 0, 2);
  helper_test_variable((31 * a + 1) % 30 + idiv(31 * a + 1, 30) * 30, 1, 63, "((a*31)+1)");
}

TEST(Symbolic, DivModRecombineWithGcd) {
  UOp b = Variable("b", 0, 100);
  helper_test_variable((16 * b + 2) % 18 + idiv(16 * b + 2, 18) * 18, 2, 1602, "((b*16)+2)");
}

TEST(Symbolic, ArangeUnrolled4) {
  UOp gidx = Variable("gidx", 0, 2559);
  UOp unrolled_div = idiv(gidx + 2561, 4) + idiv(gidx + 2562, 4) + idiv(gidx + 2560, 4) + idiv(gidx + 2559, 4);
  helper_test_variable(unrolled_div, 2559, 5118, "(gidx+2559)");
}

TEST(Symbolic, ArangeUnrolled4Mul) {
  UOp gidx = Variable("gidx", 0, 2559);
  UOp unrolled_div =
      2 * idiv(gidx + 2561, 4) + 2 * idiv(gidx + 2562, 4) + 2 * idiv(gidx + 2560, 4) + 2 * idiv(gidx + 2559, 4);
  helper_test_variable(unrolled_div, 5118, 10236, "((gidx*2)+5118)");
}

TEST(Symbolic, ArangeUnrolled4Small) {
  for (int64_t hi : {3, 2, 1}) {
    UOp gidx = Variable("gidx", 0, hi);
    UOp unrolled_div = idiv(gidx, 4) + idiv(gidx + 2, 4) + idiv(gidx + 3, 4) + idiv(gidx + 1, 4);
    helper_test_variable(unrolled_div, 0, hi, "gidx");
  }
}

TEST(Symbolic, ArangeUnrolled2) {
  UOp gidx = Variable("gidx", 0, 2559);
  helper_test_variable(idiv(gidx + 2559, 2) + idiv(gidx + 2560, 2) + 3, 2562, 5121, "(gidx+2562)");
}

TEST(Symbolic, ArangeUnrolled2Neg) {
  UOp ridx = Variable("ridx", 0, 255);
  helper_test_variable(-idiv(255 - ridx, 2) - idiv(256 - ridx, 2), -255, 0, "(ridx+-255)");
}

TEST(Symbolic, GatedLoad) {
  UOp idx = Variable("idx", 0, 24);
  helper_test_variable(idiv(idx, 4), 0, 6, "(idx//4)");
  helper_test_variable((idx < 4).where(idiv(idx, 4), idx.const_like(-1)), -1, 6, "((idx//4) if (idx<4) else -1)");
}

TEST(Symbolic, IdivLt) {
  UOp idx = Variable("idx", 0, 24);
  helper_test_variable(idiv(idx, 4) < 3, 0, 1, "(idx<12)");
  helper_test_variable(idiv(idx - 20, 4) < -3, 0, 1, "(idx<5)");
  helper_test_variable(idiv(idx - 10, 4) < 0, 0, 1, "(idx<7)");
  helper_test_variable(idiv(idx, -4) < -3, 0, 1, "(((idx//4)*-1)<-3)");
}

TEST(Symbolic, SimplexLt) {
  UOp a = Variable("a", 0, 3), b = Variable("b", 0, 3), c = Variable("c", 0, 3), d = Variable("d", -3, 3);
  helper_test_variable(ne_true(a < 1), 0, 1, "((a<1)!=True)");
  helper_test_variable(ne_true(a + b < 1), 0, 1, "(((a+b)<1)!=True)");
  helper_test_variable(ne_true(a * 3 + b * 4 < 1), 0, 1, "(((a+b)<1)!=True)");
  helper_test_variable(ne_true(a * (-3) + b * 4 < 1), 0, 1, "((((a*-3)+(b*4))<1)!=True)");  // negative coeff
  helper_test_variable(ne_true(a * 3 + d * 4 < 1), 0, 1, "((((a*3)+(d*4))<1)!=True)");      // var can be negative
  helper_test_variable(ne_true(a + b + c * 2 < 1), 0, 1,
                       {"((((a+b)+c)<1)!=True)", "(((c+(a+b))<1)!=True)", "(((b+(a+c))<1)!=True)"});
  helper_test_variable(ne_true(a + b * 2 + c * 4 < 1), 0, 1,
                       {"((((a+b)+c)<1)!=True)", "(((c+(a+b))<1)!=True)", "(((b+(a+c))<1)!=True)"});
}

TEST(Symbolic, WhereRemoval) {
  UOp cond = Variable("a", 0, 3) < 2;
  UOp u1 = cond.ufix(int64_t(1)), u0 = cond.ufix(int64_t(0));
  helper_test_variable(cond, 0, 1, "(a<2)");
  helper_test_variable(cond.where(u1, u0), 0, 1, "(a<2)");
  helper_test_variable(cond.where(u1, u0).where(u1, u0), 0, 1, "(a<2)");
}

TEST(Symbolic, WhereCombine) {
  UOp cond = Variable("x", 0, 3) < 2;
  UOp a = Variable("a", 0, 3), b = Variable("b", 0, 3);
  UOp aa = cond.where(a, a.ufix(int64_t(0))), bb = cond.where(b, b.ufix(int64_t(1)));
  helper_test_variable(aa, 0, 3, "(a if (x<2) else 0)");
  helper_test_variable(bb, 0, 3, "(b if (x<2) else 1)");
  helper_test_variable(aa + bb, 0, 6, "((a+b) if (x<2) else 1)");
  helper_test_variable(maximum(aa, bb), 0, 3, "(max(a, b) if (x<2) else 1)");
  // not combining because it increased total ALU
  UOp c = Variable("c", 0, 3);
  UOp cc = cond.where(c, c + 1);
  helper_test_variable(bb + cc, 0, 7, "((b if (x<2) else 1)+(c if (x<2) else (c+1)))");
  // not combining
  UOp ab = cond.where(a, b), ba = cond.where(b, a);
  helper_test_variable(ab + ba, 0, 6, "((a if (x<2) else b)+(b if (x<2) else a))");
  // not combining
  helper_test_variable(aa + ab, 0, 6, "((a if (x<2) else b)+(a if (x<2) else 0))");
}

TEST(Symbolic, NegationInWhere) {
  UOp cond = Variable("x", 0, 3) < 2;
  UOp a = Variable("a", 0, 3), b = Variable("b", 0, 3);
  helper_test_variable(cond.logical_not().where(a, b), 0, 3, "(b if (x<2) else a)");
}

TEST(Symbolic, NegInComp) {
  UOp a = Variable("a", 0, 3), b = Variable("b", 0, 3);
  helper_test_variable(-a < -b, false, true, "(b<a)");
}

TEST(Symbolic, WhereCast) {
  UOp s = Variable("s", 0, 3), a = Variable("a", 0, 3), b = Variable("b", 0, 3);
  UOp cond = s < 2;
  UOp expr = cond.where(a, b).cast(dtypes::half);
  EXPECT_EQ(rewritten(expr), cond.where(a.cast(dtypes::half), b.cast(dtypes::half)));
}

TEST(Symbolic, WhereMergeBranches) {
  UOp cond1 = Variable("s", 0, 10)<6, cond2 = Variable("s", 0, 10)> 2;
  UOp a = Variable("a", 0, 3), b = Variable("b", 0, 3);
  helper_test_variable(cond1.where(cond2.where(a, b), b), 0, 3, "(a if ((s<6)&(2<s)) else b)");
}

TEST(Symbolic, SymbolicDiv) {
  // from symbolic arange
  UOp a = Variable("a", 1, 10);
  UOp denominator = (a * -2) + 1;
  UOp numerator = (((((a * 2) + -1) * 2) + 1) * a);
  helper_test_variable(denominator, -19, -1, "((a*-2)+1)");
  helper_test_variable(numerator, 3, 390, "(a*((a*4)+-1))");
  helper_test_variable(le(idiv(numerator, denominator), 0), 1, 1, "True");
}

// *** TestSymbolicNumeric: folding consts agrees with evaluation, and ranges contain every value ***

namespace {
int64_t idiv(int64_t a, int64_t b) { return cdiv(a, b); }
template <class F>
void helper_test_numeric(F f) {
  const int64_t MIN = 0, MAX = 10;
  for (int64_t i = MIN; i < MAX; i++) {
    UOp v = graph_rewrite(f(uconst(i)), sym());
    EXPECT_TRUE(const_eq_numeric(v.vmin(), v.vmax())) << i;
    EXPECT_EQ(as_int(v.vmin()), f(i)) << i;
  }
  for (int64_t kmin = MIN; kmin < MAX; kmin++)
    for (int64_t kmax = kmin; kmax < MAX; kmax++) {
      UOp v = f(Variable("tmp", kmin, kmax));
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int64_t rv = kmin; rv <= kmax; rv++) lo = std::min(lo, f(rv)), hi = std::max(hi, f(rv));
      EXPECT_LE(as_int(v.vmin()), lo) << kmin << " " << kmax;
      EXPECT_GE(as_int(v.vmax()), hi) << kmin << " " << kmax;
    }
}
}  // namespace

TEST(SymbolicNumeric, Mod4) {
  helper_test_numeric([](auto x) { return x % 4; });
}
TEST(SymbolicNumeric, Div4) {
  helper_test_numeric([](auto x) { return idiv(x, 4); });
}
TEST(SymbolicNumeric, Plus1Div2) {
  helper_test_numeric([](auto x) { return idiv(x + 1, 2); });
}
TEST(SymbolicNumeric, Plus1Mod2) {
  helper_test_numeric([](auto x) { return (x + 1) % 2; });
}
TEST(SymbolicNumeric, Times2) {
  helper_test_numeric([](auto x) { return x * 2; });
}
TEST(SymbolicNumeric, Times2Plus3) {
  helper_test_numeric([](auto x) { return x * 2 + 3; });
}
TEST(SymbolicNumeric, Times2Plus3Mod4) {
  helper_test_numeric([](auto x) { return (x * 2 + 3) % 4; });
}
TEST(SymbolicNumeric, Times2Plus3Div4) {
  helper_test_numeric([](auto x) { return idiv(x * 2 + 3, 4); });
}
TEST(SymbolicNumeric, Times2Plus3Div4Mod4) {
  helper_test_numeric([](auto x) { return idiv(x * 2 + 3, 4) % 4; });
}

// *** TestSymbolicRealWorld, TestBounds, TestFuzzFailure ***

TEST(SymbolicRealWorld, ResnetHalf) {
  UOp gidx0 = Variable("gidx0", 0, 3), gidx1 = Variable("gidx1", 0, 127), gidx2 = Variable("gidx2", 0, 7);
  UOp lidx3 = Variable("lidx3", 0, 7), lidx4 = Variable("lidx4", 0, 1), lidx5 = Variable("lidx5", 0, 15);
  UOp idx = ((((1 + lidx5) % 16) * 49) + (idiv(262145 + lidx5, 16) * 802816) + (gidx0 * 3211264) + (gidx1 * 784) +
             (gidx2 * 8) + (lidx4 * 100352) + -13151129600 + lidx3);
  idx = graph_rewrite(idx, sym());
  std::vector<std::string> want = {
      "((((((((((lidx5+1)//16)*802816)+(((lidx5+1)%16)*49))+(gidx0*3211264))+(gidx1*784))+(gidx2*8))+(lidx4*100352))+"
      "lidx3)+2207744)",
      "((lidx3+((((((((lidx5+1)//16)*802816)+(((lidx5+1)%16)*49))+(gidx0*3211264))+(gidx1*784))+(gidx2*8))+(lidx4*"
      "100352)))+2207744)",
      "((lidx3+((lidx4*100352)+((gidx2*8)+((gidx1*784)+((gidx0*3211264)+((((lidx5+1)//16)*802816)+(((lidx5+1)%16)*49)"
      "))))))+2207744)"};
  std::string got = idx.render();
  EXPECT_NE(std::find(want.begin(), want.end(), got), want.end()) << got;
}

TEST(SymbolicBounds, UnrolledArange) {
  UOp gidx0 = Variable("gidx0", 0, 2559);
  EXPECT_EQ(as_int(gidx0.vmin()), 0);
  EXPECT_EQ(as_int(gidx0.vmax()), 2559);
  UOp alu0 = gidx0 * -1;
  EXPECT_EQ(as_int(alu0.vmin()), -2559);
  EXPECT_EQ(as_int(alu0.vmax()), 0);
  EXPECT_EQ(as_int((alu0 + 2559).vmin()), 0);
  EXPECT_EQ(as_int((alu0 + 2559).vmax()), 2559);
  EXPECT_EQ(as_int(idiv(alu0 + 2559, -4).vmin()), -639);
  EXPECT_EQ(as_int(idiv(alu0 + 2559, -4).vmax()), 0);
  EXPECT_EQ(as_int((idiv(alu0 + 2559, -4) * -1).vmin()), 0);
  EXPECT_EQ(as_int((idiv(alu0 + 2559, -4) * -1).vmax()), 639);
}

TEST(SymbolicFuzzFailure, Failure1) {
  UOp v1 = Variable("v1", 0, 8), v2 = Variable("v2", 0, 2), v3 = Variable("v3", 0, 1);
  UOp e = idiv(uconst(0), 4) % 2;
  e = ((((idiv(e, 8) + -2) + -4) + -3) + v1) + -4;
  e = idiv(((((e + v2) + -2) + v3) + v2), 3) % 7;
  e = ((((((idiv(e * 1, 2) + v2) * -1) + 2) + 1) + 0) + -3) + v3;
  std::vector<std::pair<UOp, UOp>> vals = {{v1, v1.const_like(8)}, {v2, v2.const_like(0)}, {v3, v3.const_like(0)}};
  UOp num = e.simplify().substitute(vals).simplify();
  UOp rn = e.substitute(vals).simplify();
  EXPECT_EQ(num, rn) << num.render(false) << " != " << rn.render(false);
}

// *** rule-level checks that tinygrad's file does not spell out ***

TEST(Symbolic, SelfFolding) {
  UOp a = Variable("a", 0, 8), b = Variable("b", 1, 8), t = Variable("t", 0, 1) < 1;
  helper_test_variable(idiv(b, b), 1, 1, "1");
  helper_test_variable(idiv(a, a), -2147483648, 2147483647, "(a//a)");  // a can be 0, and x//0 is 0
  helper_test_variable(a % a, 0, 0, "0");
  helper_test_variable(idiv(a, -1), -8, 0, "(a*-1)");
  helper_test_variable(maximum(a, a), 0, 8, "a");
  helper_test_variable(a.ne(a), false, false, "False");
  helper_test_variable((a % b) % b, 0, 7, "(a%b)");
  helper_test_variable(ne_true(ne_true(t)), 0, 1, "(t<1)");
  helper_test_variable(t & t.const_like(true), 0, 1, "(t<1)");
  helper_test_variable(t & t.const_like(false), false, false, "False");
  helper_test_variable(t | t.const_like(true), true, true, "True");
}

TEST(Symbolic, CommutativeConstsRight) {
  UOp a = Variable("a", 0, 8), b = Variable("b", 0, 8);
  helper_test_variable(3 + a, 3, 11, "(a+3)");
  helper_test_variable(3 * a, 0, 24, "(a*3)");
  helper_test_variable(b + a, 0, 16, "(a+b)");
  helper_test_variable((a + 3) + b, 3, 19, "((a+b)+3)");
  helper_test_variable((a + 3) + 5, 8, 16, "(a+8)");
  helper_test_variable((a * 3) * b, 0, 192, "((a*b)*3)");
}

TEST(Symbolic, ModNegativeDivisor) {
  // C's mod takes the dividend's sign: 7 % -3 == 1
  UOp a = Variable("a", 0, 20), d = Variable("d", -5, -2);
  helper_test_variable(a % d, 0, 4, "(a%(d*-1))");
  helper_test_variable(a % -4, 0, 3, "(a%4)");
}

TEST(Symbolic, MaxMin) {
  UOp a = Variable("a", 0, 8), b = Variable("b", 10, 20);
  helper_test_variable(maximum(a, b), 10, 20, "b");
  helper_test_variable(minimum(a, b), 0, 8, "a");
  helper_test_variable(maximum(a, 4), 4, 8, "max(a, 4)");
}

// *** vmin/vmax (test_uop_vmin_vmax.py) ***

TEST(SymbolicVminVmax, DivSymbolic) {
  UOp x = Variable("x", 1, 10), y = Variable("y", 3, 5);
  struct Case {
    UOp u;
    int64_t lo, hi;
  } cases[] = {{idiv(x, y), 0, 3},
               {idiv(-x, y), -3, 0},
               {idiv(x, -y), -3, 0},
               {idiv(-x, -y), 0, 3},
               {idiv(y.ufix(100), y), 20, 33},
               {idiv(y.ufix(-100), y), -33, -20},
               {idiv(y.ufix(100), -y), -33, -20},
               {idiv(y.ufix(-100), -y), 20, 33}};
  for (auto& c : cases) {
    EXPECT_EQ(as_int(c.u.vmin()), c.lo) << c.u.render(false);
    EXPECT_EQ(as_int(c.u.vmax()), c.hi) << c.u.render(false);
  }
}

TEST(SymbolicVminVmax, Mod) {
  struct Case {
    UOp u;
    int64_t lo, hi;
  } cases[] = {{Variable("positive", 10, 20) % 3, 0, 2},     {Variable("negative", -20, -10) % 3, -2, 0},
               {Variable("mixed", -20, 20) % 3, -2, 2},      {Variable("positive", 10, 20) % -3, 0, 2},
               {Variable("negative", -20, -10) % -3, -2, 0}, {Variable("mixed", -20, 20) % -3, -2, 2}};
  for (auto& c : cases) {
    EXPECT_EQ(as_int(c.u.vmin()), c.lo) << c.u.render(false);
    EXPECT_EQ(as_int(c.u.vmax()), c.hi) << c.u.render(false);
  }
}
