// UOp.__repr__ byte for byte as the reference prints it (tests/data/uop_repr/repr_cases.out, cases R1-R10, R13)
#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

#include <cmath>
#include <fstream>
#include <map>

#include "tg/uop/kernel_info.h"

using namespace tg;

namespace {

// case label ("R8") -> its printed text, lines joined by '\n'
const std::map<std::string, std::string>& golden() {
  static const std::map<std::string, std::string> cases = [] {
    std::map<std::string, std::string> out;
    std::ifstream f(std::string(TG_TEST_DATA) + "/uop_repr/repr_cases.out");
    std::string label;
    for (std::string line; std::getline(f, line);) {
      if (line.rfind("#### ", 0) == 0) {
        label = line.substr(5, line.find(' ', 5) - 5);
        out[label];
      } else if (!label.empty()) {
        std::string& s = out[label];
        s += (s.empty() ? "" : "\n") + line;
      }
    }
    return out;
  }();
  return cases;
}
std::string expected(const std::string& label) {
  auto it = golden().find(label);
  EXPECT_NE(it, golden().end()) << "no case " << label << " in repr_cases.out";
  return it == golden().end() ? "" : it->second;
}
std::string lines(const std::vector<std::string>& xs) { return join(xs, "\n"); }

// an arg whose repr is fixed text: stands in for payloads of higher layers in printing tests
struct FixedRepr final : ArgObject {
  std::string text;
  explicit FixedRepr(std::string t) : text(std::move(t)) {}
  std::string repr() const override { return text; }
  uint64_t hash() const override { return fnv1a(text); }
  bool equals(const ArgObject& o) const override {
    auto* f = dynamic_cast<const FixedRepr*>(&o);
    return f != nullptr && f->text == text;
  }
};

const DType int_ = dtypes::int32;
UOp c(ConstValue v, DType d = dtypes::int32) { return UOp::const_(d, v); }

}  // namespace

TEST(UOpRepr, R1Leaf) { EXPECT_EQ(UOp::make(Ops::CONST, int_, {}, ConstValue(int64_t(2))).repr(), expected("R1")); }

TEST(UOpRepr, R2SameChildTwice) {
  UOp a = c(int64_t(2));
  EXPECT_EQ((a + a).repr(), expected("R2"));
}

TEST(UOpRepr, R3PreorderNumbering) {
  UOp a = c(int64_t(2)), b = a * c(int64_t(3)), sum = b + b;
  EXPECT_EQ((sum + a).repr(), expected("R3"));
}

TEST(UOpRepr, R4DeeperSharing) {
  UOp v = UOp::variable("v", int64_t(1), int64_t(10));
  UOp e = (v + 1) * (v + 1);
  EXPECT_EQ((e + v).repr(), expected("R4"));
}

TEST(UOpRepr, R5StrIsReprAndOps) {
  UOp a = c(int64_t(2));
  EXPECT_EQ(cat(cat(a) == a.repr() ? "True" : "False", " ", op_repr(Ops::ADD), " ", Ops::ADD, " ",
                static_cast<int>(Ops::ADD)),
            expected("R5"));
}

TEST(UOpRepr, R6ReduceAxisArg) {
  // NOTE: the VIEW's ShapeTracker is a stand-in with the same text until the shape layer exists
  auto st = std::make_shared<const FixedRepr>(
      "ShapeTracker(views=(View(shape=(4, 4), strides=(4, 1), offset=0, mask=None, contiguous=True),))");
  UOp x = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, ConstValue(int64_t(0)));
  UOp view = UOp::make(Ops::VIEW, x.dtype(), {x}, ObjectArg(st));
  UOp load = UOp::make(Ops::LOAD, dtypes::float32, {view});
  UOp r = UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {load}, ReduceArg{Ops::ADD, {1}});
  EXPECT_EQ(r.repr(), expected("R6"));
}

TEST(UOpRepr, R7Tags) {
  UOp one = c(int64_t(1));
  EXPECT_EQ(lines({one.with_tag(std::string("t1")).repr(), one.with_tag(ConstValue(int64_t(7))).repr()}),
            expected("R7"));
  EXPECT_NE(one.with_tag(std::string("t1")), one);  // the tag is part of the identity
  EXPECT_EQ(one.with_tag(std::string("t1")), one.with_tag(std::string("t1")));
}

TEST(UOpRepr, R8ConstValues) {
  const std::pair<ConstValue, DType> cases[] = {
      {2.0, dtypes::float32},       {-1.5, dtypes::float32}, {1e-10, dtypes::float32},   {INFINITY, dtypes::float32},
      {-INFINITY, dtypes::float32}, {NAN, dtypes::float32},  {true, dtypes::bool_},      {false, dtypes::bool_},
      {int64_t(-7), int_},          {0.1, dtypes::half},     {int64_t(3), dtypes::uint8}};
  std::vector<std::string> out;
  for (auto& [v, d] : cases) out.push_back(UOp::const_(d, v).repr());
  EXPECT_EQ(lines(out), expected("R8"));
}

TEST(UOpRepr, R9Args) {
  std::vector<std::string> out = {
      UOp::make(Ops::DEVICE, dtypes::void_, {}, std::string("CPU")).repr(),
      UOp::variable("a", int64_t(1), int64_t(10)).repr(),
      UOp::make(Ops::SPECIAL, int_, {}, SpecialArg{"gidx0", 4}).repr(),
      UOp::range(int_, 8, 0).repr(),
      UOp::make(Ops::VCONST, int_.vec(4), {}, Tuple{int64_t(1), int64_t(2), int64_t(3), int64_t(4)}).repr(),
      UOp::make(Ops::CUSTOM, int_, {}, std::string("it's")).repr(),
  };
  EXPECT_EQ(lines(out), expected("R9"));
}

TEST(UOpRepr, R10DTypes) {
  const DType cases[] = {dtypes::float32.vec(4),
                         dtypes::float32.ptr(),
                         dtypes::float32.ptr(16),
                         dtypes::float32.ptr(16, true),
                         dtypes::float32.ptr(16).vec(4),
                         dtypes::imagef({2, 4, 4}),
                         dtypes::half.vec(2),
                         dtypes::bool_,
                         dtypes::void_,
                         dtypes::uint8,
                         dtypes::int64,
                         dtypes::bfloat16,
                         dtypes::fp8e4m3};
  std::vector<std::string> out;
  for (DType d : cases) out.push_back(cat(d.repr(), " | ", d, " | ", d.name()));
  EXPECT_EQ(lines(out), expected("R10"));
}

TEST(UOpRepr, R13KernelInfo) {
  EXPECT_EQ(UOp::sink({}, kernel_info("E_4", 0, 1)).repr(), expected("R13"));
  // content equality: two KernelInfos with the same fields intern to one node
  EXPECT_EQ(UOp::sink({}, kernel_info("E_4", 0, 1)), UOp::sink({}, kernel_info("E_4", 0, 1)));
  EXPECT_NE(UOp::sink({}, kernel_info("E_4", 0, 1)), UOp::sink({}, kernel_info("E_4", 0, 2)));
  UOp named = UOp::sink({}, kernel_info("r_4"));  // keeps the arg alive
  const KernelInfo* ki = as_kernel_info(named.arg());
  ASSERT_NE(ki, nullptr);
  EXPECT_EQ(ki->name, "r_4");
  EXPECT_EQ(as_kernel_info(c(int64_t(1)).arg()), nullptr);
  EXPECT_EQ(KernelInfo().repr(), "KernelInfo(name='test', local_dims=0, upcasted=0, dont_use_locals=False)");
}

// *** beyond the recorded cases ***

TEST(UOpRepr, Strings) {
  const std::pair<std::string, std::string> cases[] = {
      {"it's", "\"it's\""},
      {"say \"hi\"", "'say \"hi\"'"},
      {"a'b\"c", "'a\\'b\"c'"},
      {"100%", "'100%'"},
      {"a%sb", "'a%sb'"},  // the reference's %-formatting bug (R14) is not copied
      {"line\nbreak", "'line\\nbreak'"},
      {"back\\slash", "'back\\\\slash'"},
      {"", "''"},
  };
  for (auto& [s, want] : cases)
    EXPECT_EQ(UOp::make(Ops::CUSTOM, int_, {}, s).repr(), "UOp(Ops.CUSTOM, dtypes.int, arg=" + want + ", src=())");
}

TEST(UOpRepr, OtherArgs) {
  UOp x = c(1.0, dtypes::float32);
  const std::pair<UOp, std::string> cases[] = {
      {UOp::make(Ops::GEP, dtypes::float32, {x}, Tuple{int64_t(0)}), "arg=(0,)"},
      {UOp::make(Ops::RESHAPE, dtypes::float32, {x}, Tuple{}), "arg=()"},
      {UOp::make(Ops::PAD, dtypes::float32, {x}, PairTuple{{1, 1}, {0, 0}}), "arg=((1, 1), (0, 0))"},
      {UOp::make(Ops::REDUCE, dtypes::float32, {x}, Ops::MAX), "arg=<Ops.MAX: 56>"},
      {UOp::make(Ops::DEFINE_VAR, dtypes::float32, {}, VarArg{"f", 0.5, 2.0}), "arg=('f', 0.5, 2.0)"},
      {UOp::make(Ops::CONST, dtypes::float32, {}, ConstValue(-0.0)), "arg=-0.0"},
      {UOp::make(Ops::CONST, dtypes::float64, {}, ConstValue(0.6931471805599453)), "arg=0.6931471805599453"},
      {UOp::make(Ops::CONST, dtypes::float64, {}, ConstValue(1e16)), "arg=1e+16"},
      {UOp::make(Ops::CONST, dtypes::float64, {}, ConstValue(123456789.0)), "arg=123456789.0"},
      {UOp::make(Ops::CONST, dtypes::int64, {}, ConstValue(INT64_MIN)), "arg=-9223372036854775808"},
  };
  for (auto& [u, want] : cases) EXPECT_NE(u.repr().find(want), std::string::npos) << u.repr() << "\nwant " << want;
}

TEST(UOpRepr, ZeroAndNegativeZeroAreDistinct) {
  // interning compares bitwise: 0.0 and -0.0 are two nodes, every NaN const is one node
  EXPECT_NE(c(0.0, dtypes::float32), c(-0.0, dtypes::float32));
  EXPECT_EQ(c(NAN, dtypes::float32), c(NAN, dtypes::float32));
  EXPECT_NE(c(int64_t(1), dtypes::float32), c(int64_t(1), int_));
}

TEST(UOpRepr, SharedLeafInsideSharedNodeAndRepeatedSrc) {
  // a node used three times in one src tuple: labelled once, then back-referenced
  UOp a = c(int64_t(5));
  UOp v = UOp::make(Ops::VECTORIZE, int_.vec(3), {a, a, a});
  EXPECT_EQ(v.repr(),
            "UOp(Ops.VECTORIZE, dtypes.int.vec(3), arg=None, src=(\n"
            "  x0:=UOp(Ops.CONST, dtypes.int, arg=5, src=()),\n"
            "   x0,\n"
            "   x0,))");
  UOp s = UOp::sink({v, a});
  EXPECT_EQ(s.repr(),
            "UOp(Ops.SINK, dtypes.void, arg=None, src=(\n"
            "  UOp(Ops.VECTORIZE, dtypes.int.vec(3), arg=None, src=(\n"
            "    x1:=UOp(Ops.CONST, dtypes.int, arg=5, src=()),\n"
            "     x1,\n"
            "     x1,)),\n"
            "   x1,))");
}

TEST(UOpRepr, PrintUops) {
  UOp g = UOp::make(Ops::DEFINE_GLOBAL, dtypes::int32.ptr(4), {}, ConstValue(int64_t(0)));
  UOp st = g.index(c(int64_t(0))).store({c(int64_t(7))});
  std::ostringstream os;
  std::vector<UOp> uops = UOp::sink({st}).toposort();
  print_uops(uops, os);
  EXPECT_EQ(os.str(),
            "   0 Ops.DEFINE_GLOBAL   : dtypes.int.ptr(4)              []                               0\n"
            "   1 Ops.CONST           : dtypes.int                     []                               0\n"
            "   2 Ops.INDEX           : dtypes.int.ptr(4)              [0, '0']                         None\n"
            "   3 Ops.CONST           : dtypes.int                     []                               7\n"
            "   4 Ops.STORE           : dtypes.void                    [2, '7']                         None\n"
            "   5 Ops.SINK            : dtypes.void                    [4]                              None\n");
}
