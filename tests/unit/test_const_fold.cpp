// constant folding (symbolic_simple's exec_alu rules) against the reference's values: a scalar result stays python's
// untruncated value, a vector's lanes are each truncated into the scalar dtype (floats rounded to their width, ints
// wrapped), and uint64 values at or above 2**63 are exact (a uint64_t ConstValue), wrapping modulo 2**64 as the
// reference's truncate does. Expected strings are the reference's reprs, from
//   graph_rewrite(<expr>, symbolic_simple).arg    (UOp(Ops.VCONST, dtype.vec(n), arg=(...)) for the vectors)
#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

#include <string>
#include <vector>

#include "tg/renderer/cstyle.h"
#include "tg/uop/symbolic.h"

using namespace tg;

namespace {

constexpr uint64_t B63 = uint64_t(1) << 63;

UOp fold(const UOp& u) { return graph_rewrite(u, symbolic_simple()); }
UOp C(DType d, ConstValue v) { return UOp::const_(d, v); }
UOp V(DType d, Tuple xs) {
  int n = static_cast<int>(xs.size());
  return UOp::vconst(d.vec(n), xs);
}
// the folded expression's arg, as the reference prints it; fails unless it folded to a const
std::string folded(const UOp& u) {
  UOp r = fold(u);
  EXPECT_TRUE(r.op() == Ops::CONST || r.op() == Ops::VCONST) << r.repr();
  return arg_repr(r.arg());
}

}  // namespace

// *** floats: scalars keep the double, lanes round to the dtype ***

TEST(ConstFold, FloatScalarKeepsPythonValue) {  // exec_alu(..., truncate_output=False) in the reference
  EXPECT_EQ(folded(C(dtypes::float32, 1.0) * C(dtypes::float32, 1.0 / 3)), "0.3333333333333333");
  EXPECT_EQ(folded(C(dtypes::float32, 0.1) + C(dtypes::float32, 0.2)), "0.30000000000000004");
}

TEST(ConstFold, FloatLanesRoundToDtype) {
  DType f32 = dtypes::float32, f16 = dtypes::half, bf16 = dtypes::bfloat16;
  EXPECT_EQ(folded(V(f32, {1.0, 2.0}) * C(f32.vec(2), 1.0 / 3)), "(0.3333333432674408, 0.6666666865348816)");
  EXPECT_EQ(folded(V(f32, {0.5, 1.0 / 3}).alu(Ops::EXP2)), "(1.4142135381698608, 1.2599210739135742)");
  EXPECT_EQ(folded(V(f16, {1.0, 3.0}) * C(f16.vec(2), 0.1)), "(0.0999755859375, 0.300048828125)");
  EXPECT_EQ(folded(V(f16, {2.0, 3.0}).alu(Ops::SQRT)), "(1.4140625, 1.732421875)");
  EXPECT_EQ(folded(V(f16, {1e-5, 3.0}).alu(Ops::RECIP)), "(inf, 0.333251953125)");  // 100000 overflows a half
  EXPECT_EQ(folded(V(bf16, {1.0, 3.0}) * C(bf16.vec(2), 0.1)), "(0.099609375, 0.298828125)");
  EXPECT_EQ(folded(V(dtypes::float64, {1.0, 2.0}) * C(dtypes::float64.vec(2), 1.0 / 3)),
            "(0.3333333333333333, 0.6666666666666666)");
  // a vector CONST folds lane-wise too, and equal lanes stay one CONST
  UOp c = fold(C(f32.vec(2), 0.1) + C(f32.vec(2), 0.2));
  EXPECT_EQ(c.op(), Ops::CONST);
  EXPECT_EQ(c.dtype(), f32.vec(2));
  EXPECT_EQ(arg_repr(c.arg()), "0.30000001192092896");
}

TEST(ConstFold, IntLanesWrapToDtype) {
  EXPECT_EQ(folded(V(dtypes::int32, {int64_t(2147483647), int64_t(5)}) + C(dtypes::int32.vec(2), int64_t(1))),
            "(-2147483648, 6)");
  EXPECT_EQ(folded(V(dtypes::uint8, {int64_t(250), int64_t(5)}) * C(dtypes::uint8.vec(2), int64_t(3))), "(238, 15)");
}

// linspace(0, 10, 4) upcasts to one float4 VCONST: its lanes are the float32 values, as the reference's kernel
// `*((float4*)((data0+0))) = (float4){0.0f,3.3333332538604736f,6.666666507720947f,10.0f};`
TEST(ConstFold, LinspaceVconstRendersFloat32Lanes) {
  DType f4 = dtypes::float32.vec(4);
  UOp lanes = V(dtypes::float32, {0.0, 1.0, 2.0, 3.0}) * C(f4, 10.0 / 3);
  UOp v = fold(lanes + C(f4, 0.0));
  ASSERT_EQ(v.op(), Ops::VCONST);
  EXPECT_EQ(arg_repr(v.arg()), "(0.0, 3.3333332538604736, 6.666666507720947, 10.0)");
  // rendered as the pipeline leaves it: a VECTORIZE of the lanes' CONSTs
  std::vector<UOp> uops{UOp::make(Ops::DEFINE_GLOBAL, f4.ptr(1), {}, ConstValue(int64_t(0))),
                        C(dtypes::int32, int64_t(0))};
  uops.push_back(uops[0].index(uops[1]));
  std::vector<UOp> lane_consts;
  for (const ConstValue& x : v.arg<Tuple>()) lane_consts.push_back(C(dtypes::float32, x));
  uops.insert(uops.end(), lane_consts.begin(), lane_consts.end());
  uops.push_back(UOp::make(Ops::VECTORIZE, f4, lane_consts));
  uops.push_back(UOp::make(Ops::STORE, dtypes::void_, {uops[2], uops.back()}));
  uops.push_back(UOp::sink({uops.back()}));
  std::string src = ClangRenderer().render(uops);
  EXPECT_NE(src.find("(float4){0.0f,3.3333332538604736f,6.666666507720947f,10.0f}"), std::string::npos) << src;
}

TEST(ConstFold, LinspaceEqualsReference) {
  EXPECT_EQ(Tensor::linspace(0, 10, 4).tolist<float>(),
            (std::vector<float>{0.0f, 3.3333332538604736f, 6.666666507720947f, 10.0f}));
}

// *** uint64: values at and above 2**63 are exact, results wrap modulo 2**64 ***

TEST(ConstFold, Uint64LanesAsReferenceTruncate) {
  DType u = dtypes::uint64;
  auto c = [](uint64_t x) { return int_const(x); };
  EXPECT_EQ(folded(V(u, {c(B63 + 5), c(1)}) + V(u, {c(B63 + 7), c(2)})), "(12, 3)");
  EXPECT_EQ(folded(V(u, {c(B63 + 5), c((1ull << 32) + 1)}) * V(u, {c(3), c(0xffffffffull)})),
            "(9223372036854775823, 18446744073709551615)");
  EXPECT_EQ(folded(V(u, {c(B63 + 1), c(0xffffffffull)}).alu(Ops::SHL, {V(u, {c(1), c(32)})})),
            "(2, 18446744069414584320)");
  EXPECT_EQ(folded(V(u, {c(5), c(B63)}) - V(u, {c(7), c(1)})), "(18446744073709551614, 9223372036854775807)");
  EXPECT_EQ(folded(V(u, {c(B63), c(5)}).maximum(V(u, {c(5), c(B63 + 3)}))),
            "(9223372036854775808, 9223372036854775811)");
  EXPECT_EQ(folded(V(u, {c(B63), c(5)}) < V(u, {c(5), c(B63 + 1)})), "(False, True)");
  EXPECT_EQ(folded(idiv(V(u, {c(UINT64_MAX), c(B63 + 10)}), V(u, {c(2), c(3)}))),
            "(9223372036854775807, 3074457345618258606)");
  EXPECT_EQ(folded(V(u, {c(UINT64_MAX), c(B63 + 10)}) % V(u, {c(10), c(7)})), "(5, 4)");
  EXPECT_EQ(folded(V(u, {c(UINT64_MAX - 1), c(B63)}).alu(Ops::SHR, {V(u, {c(1), c(63)})})), "(9223372036854775807, 1)");
  EXPECT_EQ(folded(V(u, {c(UINT64_MAX), c(B63)}) ^ C(u.vec(2), int64_t(1))),
            "(18446744073709551614, 9223372036854775809)");
  EXPECT_EQ(folded(-V(u, {c(1), c(0)})), "(18446744073709551615, 0)");
  EXPECT_EQ(folded(V(dtypes::int64, {INT64_MAX, INT64_MIN}) + V(dtypes::int64, {int64_t(1), int64_t(-1)})),
            "(-9223372036854775808, 9223372036854775807)");
}

// a scalar uint64/int64 fold wraps too (python's ints would grow past 64 bits; the reference folds
// (2**63+5)+(2**63+7) to 18446744073709551628, which no C literal holds), but a negative uint64 stays negative, as
// the reference's: 5-7 is -2 (C's -2ull), and (x + -1023) + 1 is x + -1022, whose bounds stay those of a small sum
TEST(ConstFold, Uint64ScalarsWrap) {
  DType u = dtypes::uint64;
  auto c = [&](uint64_t x) { return C(u, int_const(x)); };
  EXPECT_EQ(folded(c(B63 + 5) + c(B63 + 7)), "12");
  EXPECT_EQ(folded(c(B63 + 5) * c(3)), "9223372036854775823");
  EXPECT_EQ(folded(c(0xffffffffull) * c(1ull << 32)), "18446744069414584320");
  EXPECT_EQ(folded(c(0xffffffffull).alu(Ops::SHL, {c(32)})), "18446744069414584320");
  EXPECT_EQ(folded(c(5) - c(7)), "-2");
  UOp x = UOp::variable("x", int64_t(0), int64_t(2047), u);
  UOp e = graph_rewrite((x + C(u, int64_t(-1023))) + C(u, int64_t(1)), sym());
  EXPECT_EQ(e.render(), "(x+-1022)");
  EXPECT_EQ(const_repr(e.vmin()), "-1022");
  EXPECT_EQ(const_repr(e.vmax()), "1025");
  EXPECT_NE(graph_rewrite(idiv(e, C(u, int64_t(32))).ne(C(u, int64_t(0))), sym()).op(), Ops::CONST);  // may be 0
  EXPECT_EQ(folded(c(B63).maximum(c(5))), "9223372036854775808");
  EXPECT_EQ(folded(c(B63) < c(5)), "False");
  EXPECT_EQ(folded(c(5) < c(B63 + 1)), "True");
  EXPECT_EQ(folded(c(UINT64_MAX).alu(Ops::SHR, {c(4)})), "1152921504606846975");
  EXPECT_EQ(folded(idiv(c(UINT64_MAX), c(B63))), "1");
  EXPECT_EQ(folded(C(dtypes::int64, INT64_MAX) + C(dtypes::int64, int64_t(1))), "-9223372036854775808");
  EXPECT_EQ(folded(-C(dtypes::int64, INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(folded(c(UINT64_MAX).cast(dtypes::float32)), "1.8446744073709552e+19");
  EXPECT_EQ(folded(C(dtypes::float64, 1e19).cast(u)), "10000000000000000000");
}

// NOTE: the reference's python ints order a uint64 -1 below 5; C (and these folds) read it as 2**64-1, as the kernel
// would compute it unfolded. Same for a uint32 -1 (C's -1u), and its cast to uint64 is 4294967295, not 2**64-1.
TEST(ConstFold, UnsignedOperandsReadAsTheirDtype) {
  DType u = dtypes::uint64, u32 = dtypes::uint32;
  EXPECT_EQ(folded(C(u, int64_t(-1)) < C(u, int64_t(5))), "False");
  EXPECT_EQ(folded(C(u, int64_t(-1)).alu(Ops::SHR, {C(u, int64_t(1))})), "9223372036854775807");
  EXPECT_EQ(folded(C(u32, int64_t(-1)).alu(Ops::SHR, {C(u32, int64_t(1))})), "2147483647");
  EXPECT_EQ(folded(idiv(C(u32, int64_t(-5)), C(u32, int64_t(2)))), "2147483645");
  EXPECT_EQ(folded(C(u32, int64_t(-1)).maximum(C(u32, int64_t(5)))), "4294967295");
  EXPECT_EQ(folded(C(u32, int64_t(-1)).cast(u)), "4294967295");
  // the rand generator's shape of it: (c + -1u) as uint64, shifted to the high word
  UOp hi = (C(u32, int64_t(0)) + C(u32, int64_t(-1))).cast(u) * C(u, int64_t(1) << 32);
  EXPECT_EQ(folded(hi), "18446744069414584320");
  // ... and the full sym pass, whose range folding once turned it into INT64_MAX
  UOp r = graph_rewrite(hi, sym());
  ASSERT_EQ(r.op(), Ops::CONST);
  EXPECT_EQ(arg_repr(r.arg()), "18446744069414584320");
}

// *** uint64 bounds ***

TEST(ConstFold, Uint64Bounds) {
  EXPECT_EQ(const_repr(dtypes::max(dtypes::uint64)), "18446744073709551615");
  UOp a = UOp::variable("a", int64_t(0), int64_t(0xffffffff), dtypes::uint32);
  UOp b = UOp::variable("b", int64_t(0), int64_t(0xffffffff), dtypes::uint32);
  UOp hi = a.cast(dtypes::uint64) * int64_t(1ll << 32);
  EXPECT_EQ(const_repr(hi.vmax()), "18446744069414584320");  // the reference's values
  UOp x = hi.alu(Ops::OR, {b.cast(dtypes::uint64)});
  EXPECT_EQ(const_repr(x.vmin()), "0");
  EXPECT_EQ(const_repr(x.vmax()), "18446744073709551615");
  EXPECT_EQ(const_repr((x.alu(Ops::SHR, {x.const_like(int64_t(32))})).vmax()), "4294967295");
  UOp big = UOp::variable("big", int_const(B63), int_const(UINT64_MAX), dtypes::uint64);
  EXPECT_EQ(const_repr(big.vmin()), "9223372036854775808");
  EXPECT_EQ(const_repr((big + int64_t(1)).vmin()), "9223372036854775809");
}

// a range wholly past 2**64 (where C wraps) is unknown, not one saturated value: x*4 must not fold to a const
TEST(ConstFold, Uint64RangePastTwoTo64IsTheDtypes) {
  UOp x = UOp::variable("x", int_const(B63), int_const(B63 + 1), dtypes::uint64);
  UOp y = x * int64_t(4);
  EXPECT_EQ(const_repr(y.vmin()), "0");
  EXPECT_EQ(const_repr(y.vmax()), "18446744073709551615");
  EXPECT_EQ(graph_rewrite(y, sym()).op(), Ops::MUL);
  UOp z = UOp::variable("z", int64_t(1), int64_t(2), dtypes::int64) * int64_t(INT64_MAX) * int64_t(4);
  EXPECT_NE(graph_rewrite(z, sym()).op(), Ops::CONST);
}

// *** the C renderer prints a uint64 const as its unsigned value ***

TEST(ConstFold, RendersUint64Literals) {
  DType u = dtypes::uint64;
  UOp g = UOp::make(Ops::DEFINE_GLOBAL, u.ptr(2), {}, ConstValue(int64_t(0)));
  UOp i0 = C(dtypes::int32, int64_t(0)), i1 = C(dtypes::int32, int64_t(1));
  UOp big = C(u, int_const(UINT64_MAX)), hi = fold(C(u, int64_t(0xffffffff)) * C(u, int64_t(1) << 32));
  UOp x0 = g.index(i0), x1 = g.index(i1);
  UOp s0 = UOp::make(Ops::STORE, dtypes::void_, {x0, big}), s1 = UOp::make(Ops::STORE, dtypes::void_, {x1, hi});
  std::string src = ClangRenderer().render({g, i0, i1, big, hi, x0, x1, s0, s1, UOp::sink({s0, s1})});
  EXPECT_NE(src.find("*(data0+0) = 18446744073709551615ull;"), std::string::npos) << src;
  EXPECT_NE(src.find("*(data0+1) = 18446744069414584320ull;"), std::string::npos) << src;
  // a const made as -1 stays -1, as the reference's (x-1 is x+(1*-1), and 1*-1 is -1 by x*1 -> x): C's -1ull
  EXPECT_EQ(arg_repr(fold(C(u, int64_t(0)) - C(u, int64_t(1))).arg()), "-1");
}

TEST(ConstFold, Uint64TensorsRoundTrip) {
  Tensor t = Tensor::full({2}, int_const(UINT64_MAX), {.dtype = dtypes::uint64});
  EXPECT_EQ((t - int64_t(1)).tolist<uint64_t>(), (std::vector<uint64_t>{UINT64_MAX - 1, UINT64_MAX - 1}));
  Tensor h = Tensor::full({2}, int64_t(0xffffffff), {.dtype = dtypes::uint64}).lshift(32);
  EXPECT_EQ(h.tolist<uint64_t>(), (std::vector<uint64_t>{0xffffffff00000000ull, 0xffffffff00000000ull}));
  EXPECT_EQ(h.rshift(32).tolist<uint64_t>(), (std::vector<uint64_t>{0xffffffffull, 0xffffffffull}));
}
