// UPat and PatternMatcher, feature by feature (ports tinygrad's test/unit/test_pattern_matcher.py, then more)
#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <string>

using namespace tg;

namespace {

UOp cf(double v) { return UOp::make(Ops::CONST, dtypes::float32, {}, ConstValue(v)); }
UOp ci(int64_t v) { return UOp::make(Ops::CONST, dtypes::int32, {}, ConstValue(v)); }
UOp noop(std::vector<UOp> src = {}) { return UOp::make(Ops::NOOP, dtypes::void_, std::move(src)); }
UOp alu(Ops o, std::vector<UOp> src) {
  DType d = src.empty() ? DType() : src.back().dtype();
  return UOp::make(o, d, std::move(src));
}

// the identity rule, tinygrad's `lambda x: x`
UOp ret_x(M m) { return m["x"]; }
// a matcher with one rule whose body returns the matched node (named "root": patterns may use x themselves)
PatternMatcher<UOp> identity(UPat p) {
  return PatternMatcher<UOp>{{p.named("root"), [](M m) { return m["root"]; }}};
}

}  // namespace

// *** ports of TestPatternMatcher ***

TEST(PatternMatcher, SimpleMatch) {
  auto pm = identity(op(Ops::CONST).dtype(dtypes::float32));
  EXPECT_EQ(pm.rewrite(cf(1.0)), cf(1.0));
  EXPECT_FALSE(pm.rewrite(ci(1)));
}

TEST(PatternMatcher, UpatAny) {
  PatternMatcher<UOp> pm{{var("a") + any({var("x"), var("y"), var("z")}), [](M m) -> UOp {
                            return m.has("y") ? m["a"] + m["y"] : UOp{};  // only the "y" alternative answers
                          }}};
  UOp v1 = UOp::variable("a", int64_t(0), int64_t(10)), v2 = UOp::variable("b", int64_t(0), int64_t(10));
  EXPECT_EQ(pm.rewrite(v1 + v2), v1 + v2);
}

TEST(PatternMatcher, MinimumLen) {
  PatternMatcher<std::optional<bool>> pm{
      {op(Ops::NOOP, {op(Ops::NOOP), op(Ops::NOOP)}).any_len(), [](M) -> std::optional<bool> { return true; }}};
  EXPECT_EQ(pm.rewrite(noop({noop(), noop(), noop()})), true);
  EXPECT_EQ(pm.rewrite(noop({noop(), noop()})), true);
  EXPECT_EQ(pm.rewrite(noop({noop()})), std::nullopt);
}

TEST(PatternMatcher, MatchSz0Ctx) {
  using Ctx = std::vector<bool>;
  PatternMatcher<UOp, Ctx> pm{{op(Ops::CONST, {}).named("x"), [](M m, Ctx& ctx) {
                                 ctx.push_back(true);
                                 EXPECT_TRUE(m["x"].src().empty());
                                 return UOp::make(Ops::CONST, dtypes::void_, {UOp::make(Ops::CONST)});
                               }}};
  Ctx ctx;
  UOp c1 = pm.rewrite(cf(1.0), &ctx);
  EXPECT_FALSE(pm.rewrite(c1, &ctx));  // the second rewrite matches nothing: src=() means no sources
  EXPECT_EQ(ctx.size(), 1u);
}

TEST(PatternMatcher, Uop) {
  auto pm = identity(op(Ops::CONST));
  EXPECT_EQ(pm.rewrite(cf(1.0)), cf(1.0));
  EXPECT_FALSE(pm.rewrite(alu(Ops::ADD, {cf(1.0), cf(1.0)})));
}

TEST(PatternMatcher, UopSet) {
  auto pm = identity(op({Ops::CONST, Ops::CAST}));
  UOp c1 = UOp::const_(dtypes::bool_, false), c2 = UOp::make(Ops::CAST, dtypes::int32, {c1});
  EXPECT_EQ(pm.rewrite(c1), c1);
  EXPECT_EQ(pm.rewrite(c2), c2);
  EXPECT_FALSE(pm.rewrite(alu(Ops::ADD, {cf(1.0), cf(1.0)})));
}

TEST(PatternMatcher, Arg) {
  // pattern args compare as python ==: the pattern 0 matches 0.0 and False; False matches 0
  PatternMatcher<UOp> pm{
      {op(Ops::CONST).arg(ConstValue(int64_t(0))).named("x"), ret_x},
      {op(Ops::CONST).arg(ConstValue(false)).named("x"), ret_x},
      {op(Ops::MAX).named("x"), ret_x},
  };
  UOp c1 = cf(0.0), c2 = UOp::const_(dtypes::bool_, false), c3 = alu(Ops::MAX, {c1, c1});
  EXPECT_EQ(pm.rewrite(c1), c1);
  EXPECT_EQ(pm.rewrite(c2), c2);
  EXPECT_EQ(pm.rewrite(c3), c3);
  EXPECT_FALSE(pm.rewrite(alu(Ops::MUL, {c1, c1})));
  EXPECT_FALSE(pm.rewrite(ci(-1)));
  EXPECT_EQ(pm.rewrite(cf(-0.0)), cf(-0.0));  // -0.0 == 0 in python too
}

TEST(PatternMatcher, ArgNumericTable) {
  struct Case {
    ConstValue pat, node;
    bool match;
  };
  const Case cases[] = {
      {int64_t(0), 0.0, true},  {int64_t(0), false, true}, {0.0, false, true},       {false, int64_t(0), true},
      {int64_t(1), true, true}, {int64_t(1), 1.0, true},   {1.5, int64_t(1), false}, {true, int64_t(2), false},
      {NAN, NAN, false},  // nan != nan, as in python (interning still makes them one node)
  };
  for (auto& c : cases) {
    UPat p = op(Ops::CONST).arg(c.pat);
    UOp u = UOp::make(Ops::CONST, dtypes::float32, {}, c.node);
    EXPECT_EQ(static_cast<bool>(identity(p).rewrite(u)), c.match) << const_repr(c.pat) << " vs " << const_repr(c.node);
  }
  // tuples compare element-wise the same way; other args exactly
  EXPECT_TRUE(
      identity(op(Ops::GEP).arg(Tuple{0.0})).rewrite(UOp::make(Ops::GEP, dtypes::float32, {cf(1)}, Tuple{int64_t(0)})));
  EXPECT_FALSE(
      identity(op(Ops::DEVICE).arg(std::string("CPU"))).rewrite(UOp::make(Ops::DEVICE, {}, {}, std::string("GPU"))));
  EXPECT_TRUE(
      identity(op(Ops::DEVICE).arg(std::string("CPU"))).rewrite(UOp::make(Ops::DEVICE, {}, {}, std::string("CPU"))));
}

TEST(PatternMatcher, FilterArg) {
  // a source list is permuted; the body may decline (null) and the matcher moves on
  PatternMatcher<UOp> pm{
      {op(Ops::MUL, {op(Ops::CONST).named("c"), op(Ops::CONST).arg(ConstValue(int64_t(2)))}).permuted().named("x"),
       [](M m) -> UOp {
         int64_t c = as_int(m["c"].const_arg());
         return c == 1 || c == -1 ? m["x"] : UOp{};
       }}};
  UOp y1 = ci(1), y2 = ci(2), y3 = ci(-1);
  EXPECT_EQ(pm.rewrite(alu(Ops::MUL, {y1, y2})), alu(Ops::MUL, {y1, y2}));
  EXPECT_FALSE(pm.rewrite(alu(Ops::MUL, {y2, y2})));
  EXPECT_EQ(pm.rewrite(alu(Ops::MUL, {y3, y2})), alu(Ops::MUL, {y3, y2}));
  EXPECT_EQ(pm.rewrite(alu(Ops::MUL, {y2, y1})), alu(Ops::MUL, {y2, y1}));
  EXPECT_EQ(pm.rewrite(alu(Ops::MUL, {y2, y3})), alu(Ops::MUL, {y2, y3}));
}

TEST(PatternMatcher, DupName) {
  // a name used twice must bind the same node both times
  PatternMatcher<UOp> pm{{op(GroupOp::ALU, {op(Ops::CONST).named("y"), op(Ops::CONST).named("y")}).named("x"), ret_x}};
  UOp y1 = cf(1.0), y2 = cf(1.0), y3 = cf(2.0);
  UOp c1 = alu(Ops::ADD, {y1, y1});
  EXPECT_EQ(pm.rewrite(c1), c1);
  EXPECT_EQ(pm.rewrite(alu(Ops::ADD, {y1, y2})), c1);  // equal consts are one node
  EXPECT_FALSE(pm.rewrite(alu(Ops::ADD, {y1, y3})));
  // the same with Var captures: x + x matches a+a, not a+b
  using namespace pat;
  PatternMatcher<UOp> twice{{x + x, [](M m) { return m[x] * 2; }}};
  UOp a = UOp::variable("a", int64_t(0), int64_t(4)), b = UOp::variable("b", int64_t(0), int64_t(4));
  EXPECT_EQ(twice.rewrite(a + a), a * 2);
  EXPECT_FALSE(twice.rewrite(a + b));
}

TEST(PatternMatcher, Dtype) {
  auto pm = identity(op(Ops::CONST).dtype(dtypes::float32));
  EXPECT_EQ(pm.rewrite(cf(1.0)), cf(1.0));
  EXPECT_FALSE(pm.rewrite(UOp::const_(dtypes::float64, 1.0)));
}

TEST(PatternMatcher, DtypeSet) {
  auto pm = identity(op(Ops::CONST).dtype({dtypes::float32, dtypes::float64}));
  EXPECT_TRUE(pm.rewrite(cf(1.0)));
  EXPECT_TRUE(pm.rewrite(UOp::const_(dtypes::float64, 1.0)));
  EXPECT_FALSE(pm.rewrite(UOp::const_(dtypes::float16, 1.0)));
  EXPECT_FALSE(pm.rewrite(ci(1)));
}

TEST(PatternMatcher, DtypeMatchesScalarOfVector) {
  // a pattern dtype matches a node's dtype or the node's scalar: float matches float4, not the other way
  UOp v4 = UOp::make(Ops::VCONST, dtypes::float32.vec(4), {}, Tuple{1.0, 2.0, 3.0, 4.0});
  EXPECT_TRUE(identity(op(Ops::VCONST).dtype(dtypes::float32)).rewrite(v4));
  EXPECT_TRUE(identity(op(Ops::VCONST).dtype(dtypes::float32.vec(4))).rewrite(v4));
  EXPECT_FALSE(identity(op(Ops::VCONST).dtype(dtypes::float32.vec(2))).rewrite(v4));
  EXPECT_FALSE(identity(op(Ops::CONST).dtype(dtypes::float32.vec(4))).rewrite(cf(1)));
  EXPECT_TRUE(identity(op(Ops::VCONST).dtype(dtypes::floats)).rewrite(v4));
  EXPECT_FALSE(identity(op(Ops::VCONST).dtype(dtypes::ints)).rewrite(v4));
}

TEST(PatternMatcher, SrcOne) {
  auto pm = identity(op(GroupOp::ALU, {op(Ops::CONST), op(Ops::CONST)}));
  UOp c3 = alu(Ops::ADD, {cf(1.0), cf(2.0)});
  EXPECT_EQ(pm.rewrite(c3), c3);
  EXPECT_FALSE(pm.rewrite(cf(2.0)));
}

TEST(PatternMatcher, SrcOrderedVsPermuted) {
  UOp c1 = cf(1.0), c2 = cf(2.0), c3 = alu(Ops::ADD, {c1, c2});
  UOp const_first = alu(Ops::ADD, {c2, c3}), alu_first = alu(Ops::ADD, {c3, c2});
  auto ordered = identity(op(GroupOp::ALU, {op(Ops::CONST), op(GroupOp::ALU)}));
  auto permuted = identity(op(GroupOp::ALU, {op(Ops::CONST), op(GroupOp::ALU)}).permuted());
  EXPECT_TRUE(ordered.rewrite(const_first));
  EXPECT_FALSE(ordered.rewrite(alu_first));
  EXPECT_TRUE(permuted.rewrite(const_first));
  EXPECT_TRUE(permuted.rewrite(alu_first));
  // TestPatternMatcher.test_src_permutations
  EXPECT_FALSE(permuted.rewrite(c3));
  EXPECT_FALSE(permuted.rewrite(alu(Ops::ADD, {c3, alu_first})));
}

TEST(PatternMatcher, SrcRepeat) {
  auto pm = identity(op(GroupOp::ALU).each(op(Ops::CONST)));
  UOp c3 = alu(Ops::ADD, {cf(1.0), cf(2.0)});
  EXPECT_EQ(pm.rewrite(c3), c3);
  EXPECT_FALSE(pm.rewrite(alu(Ops::ADD, {cf(2.0), c3})));
  // each() takes any number of sources; but as in tinygrad, the repeated op is an early-reject requirement,
  // so a node with no sources never reaches the pattern
  auto sinks = identity(op(Ops::SINK).each(op(Ops::CONST)));
  EXPECT_FALSE(sinks.rewrite(UOp::sink({})));
  EXPECT_TRUE(identity(op(Ops::SINK).each(var())).rewrite(UOp::sink({})));
  EXPECT_TRUE(sinks.rewrite(UOp::sink({cf(1), cf(2), cf(3)})));
  EXPECT_FALSE(sinks.rewrite(UOp::sink({cf(1), noop()})));
}

TEST(PatternMatcher, AllowLen) {
  auto pm = identity(op(Ops::MULACC, {op(Ops::CONST)}).any_len());
  UOp c1 = cf(1.0), c2 = cf(2.0), c3 = cf(3.0);
  EXPECT_FALSE(pm.rewrite(alu(Ops::EXP2, {c1})));
  EXPECT_FALSE(pm.rewrite(alu(Ops::ADD, {c1, c2})));
  UOp c6 = alu(Ops::MULACC, {c1, c2, c3});
  EXPECT_EQ(pm.rewrite(c6), c6);
  // without any_len the length is strict
  EXPECT_FALSE(identity(op(Ops::MULACC, {op(Ops::CONST)})).rewrite(c6));
}

TEST(PatternMatcher, DeepSrcPermutations) {
  UOp c1 = cf(1.0), c2 = cf(2.0);
  UOp u1 = (c1 + c2) + c1, u2 = (c2 + c1) + c1;
  PatternMatcher<UOp> pm{{op(GroupOp::ALU, {op(GroupOp::ALU, {var("a"), var("b")}).permuted(), var("b")}).permuted(),
                          [](M m) { return m["b"]; }}};
  EXPECT_EQ(pm.rewrite(u1), c1);
  EXPECT_EQ(pm.rewrite(u2), c1);
}

// *** pattern sugar ***

TEST(PatternMatcher, OperatorPatterns) {
  using namespace pat;
  PatternMatcher<UOp> pm{
      {x + 0, x},                                                       // x+0 -> x
      {x * 1, x},                                                       // x*1 -> x
      {idiv(x, x), [](M m) { return m[x].const_like(1); }},             // x//x -> 1
      {ne(x, x), [](M) { return UOp::const_(dtypes::bool_, false); }},  // x!=x -> False
  };
  UOp a = UOp::variable("a", int64_t(0), int64_t(9));
  EXPECT_EQ(pm.rewrite(a + 0), a);
  EXPECT_EQ(pm.rewrite(ci(0) + a), a);  // ADD is commutative: sources in either order
  EXPECT_EQ(pm.rewrite(alu(Ops::ADD, {a.cast(dtypes::float32), cf(0.0)})), a.cast(dtypes::float32));  // 0 matches 0.0
  EXPECT_EQ(pm.rewrite(a * 1), a);
  EXPECT_EQ(pm.rewrite(idiv(a, a)), ci(1));
  EXPECT_FALSE(pm.rewrite(idiv(a, ci(1))));  // IDIV is not commutative and x//x needs the same node
  EXPECT_EQ(pm.rewrite(a.ne(a)), UOp::const_(dtypes::bool_, false));
  EXPECT_FALSE(pm.rewrite(a + 1));
}

TEST(PatternMatcher, CvarMatchesConstAndVconst) {
  UOp v = UOp::make(Ops::VCONST, dtypes::int32.vec(2), {}, Tuple{int64_t(1), int64_t(2)});
  EXPECT_TRUE(identity(cvar()).rewrite(ci(3)));
  EXPECT_TRUE(identity(cvar()).rewrite(v));
  EXPECT_FALSE(identity(cvar("", {}, false)).rewrite(v));  // vec=False: CONST only
  EXPECT_FALSE(identity(cvar()).rewrite(UOp::variable("a", int64_t(0), int64_t(1))));
  EXPECT_TRUE(identity(cvar("", {dtypes::int32})).rewrite(v));
  EXPECT_TRUE(identity(const_pat(dtypes::int32, int64_t(3))).rewrite(ci(3)));
  EXPECT_FALSE(identity(const_pat(dtypes::int32, int64_t(3))).rewrite(ci(4)));
  EXPECT_FALSE(identity(const_pat(dtypes::int32, int64_t(3))).rewrite(UOp::const_(dtypes::int64, 3)));
}

TEST(PatternMatcher, BuilderPatterns) {
  using namespace pat;
  UOp a = UOp::variable("a", int64_t(0), int64_t(9));
  UOp f = a.cast(dtypes::float32);
  EXPECT_TRUE(identity(UPat(x).cast(dtypes::float32)).rewrite(f));
  EXPECT_FALSE(identity(UPat(x).cast(dtypes::float16)).rewrite(f));
  EXPECT_TRUE(identity(UPat(x).cast()).rewrite(f));
  // or_casted: the value itself or a CAST of it, both captured under one name
  PatternMatcher<UOp> oc{{op(Ops::SQRT, {UPat(var()).or_casted("v")}), [](M m) { return m["v"]; }}};
  EXPECT_EQ(oc.rewrite(f.sqrt()), f);
  EXPECT_EQ(oc.rewrite(cf(4).sqrt()), cf(4));
  UOp g = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(4), {}, ConstValue(int64_t(0)));
  UOp st = g.index(a).store({cf(1)});
  EXPECT_TRUE(identity(UPat(var()).index(var()).store({cvar()})).rewrite(st));
  UOp gp = UOp::make(Ops::GEP, dtypes::float32, {UOp::make(Ops::VECTORIZE, dtypes::float32.vec(2), {f, cf(2)})},
                     Tuple{int64_t(1)});
  EXPECT_TRUE(identity(UPat(var()).gep(1)).rewrite(gp));
  EXPECT_FALSE(identity(UPat(var()).gep(0)).rewrite(gp));
}

// *** matcher mechanics ***

namespace {
std::atomic<int> g_calls{0};
}

TEST(PatternMatcher, EarlyReject) {
  // the rule needs a CONST source: a node without one is rejected before the body or the match runs
  UPat p = op(Ops::ADD, {op(Ops::CONST), var()}).permuted();
  EXPECT_TRUE(p.get()->early_reject.has(Ops::CONST));
  EXPECT_EQ(p.get()->early_reject.size(), 1);
  PatternMatcher<UOp> pm{{p.named("x"), [](M m) {
                            g_calls++;
                            return m["x"];
                          }}};
  UOp a = UOp::variable("a", int64_t(0), int64_t(9)), b = UOp::variable("b", int64_t(0), int64_t(9));
  g_calls = 0;
  EXPECT_FALSE(pm.rewrite(a + b));
  EXPECT_EQ(g_calls, 0);
  EXPECT_TRUE(pm.rewrite(a + 3));
  EXPECT_EQ(g_calls, 1);
  // any() and multi-op sources do not reject early
  EXPECT_TRUE(op(Ops::ADD, {any({op(Ops::CONST), op(Ops::VCONST)}), var()}).get()->early_reject.empty());
  EXPECT_TRUE(op(Ops::ADD, {op({Ops::CONST, Ops::VCONST}), var()}).get()->early_reject.empty());
}

TEST(PatternMatcher, FirstRuleWins) {
  PatternMatcher<UOp> pm{
      {op(Ops::CONST).named("x"), [](M m) -> UOp { return as_int(m["x"].const_arg()) == 1 ? ci(10) : UOp{}; }},
      {op(Ops::CONST), [](M) { return ci(20); }},
  };
  EXPECT_EQ(pm.rewrite(ci(1)), ci(10));  // the first rule answers
  EXPECT_EQ(pm.rewrite(ci(2)), ci(20));  // the first declines (null), the second answers
}

TEST(PatternMatcher, ConcatenationKeepsOrder) {
  PatternMatcher<UOp> first{{op(Ops::CONST), [](M) { return ci(1); }}};
  PatternMatcher<UOp> second{{op(Ops::CONST), [](M) { return ci(2); }}, {op(Ops::NOOP), [](M) { return ci(3); }}};
  auto both = first + second;
  EXPECT_EQ(both.rules().size(), 3u);
  EXPECT_EQ(both.rewrite(ci(7)), ci(1));
  EXPECT_EQ((second + first).rewrite(ci(7)), ci(2));
  EXPECT_EQ(both.rewrite(noop()), ci(3));
}

TEST(PatternMatcher, RuleLocations) {
  // each rule records where it was written, for match stats and viz
  const int line = __LINE__ + 2;
  PatternMatcher<UOp> pm{
      {op(Ops::CONST), [](M) { return ci(1); }},
      {op(Ops::NOOP), [](M) { return ci(2); }},
  };
  ASSERT_EQ(pm.rules().size(), 2u);
  for (auto& r : pm.rules()) EXPECT_NE(std::string(r.file).find("test_upat.cpp"), std::string::npos) << r.file;
#if defined(__clang__)
  EXPECT_EQ(pm.rules()[0].line, line);
  EXPECT_EQ(pm.rules()[1].line, line + 1);
#else
  // NOTE: g++ 12 evaluates __builtin_LINE() of an element of a braced list at the list's closing brace
  for (auto& r : pm.rules()) EXPECT_TRUE(r.line >= line && r.line <= line + 2) << r.line;
#endif
  auto sum = pm + pm;  // locations travel with the rules
  EXPECT_EQ(sum.rules()[3].line, pm.rules()[1].line);
  // a rule built on its own line records that line with both compilers
  PatternMatcher<UOp>::RuleT single(op(Ops::CONST), [](M) { return ci(1); });
  EXPECT_EQ(single.line, __LINE__ - 1);
}

TEST(PatternMatcher, ContextRule) {
  struct Counter {
    int seen = 0;
    std::vector<std::string> names;
  };
  PatternMatcher<UOp, Counter> pm{{op(Ops::DEFINE_VAR).named("v"), [](M m, Counter& ctx) -> UOp {
                                     ctx.seen++;
                                     ctx.names.push_back(m["v"].arg<VarArg>().name);
                                     return {};
                                   }}};
  Counter ctx;
  UOp a = UOp::variable("a", int64_t(0), int64_t(9)), b = UOp::variable("b", int64_t(0), int64_t(9));
  graph_rewrite(a + b * a, pm, ctx);
  EXPECT_EQ(ctx.seen, 2);  // each node visited once
  EXPECT_EQ(ctx.names, (std::vector<std::string>{"a", "b"}));
  EXPECT_THROW(pm.rewrite(a), InternalError);  // a context rule called without a context
}

TEST(PatternMatcher, StringResults) {
  // a renderer-style matcher: the result is the text, nullopt is no match
  using Str = std::optional<std::string>;
  PatternMatcher<Str> render{
      {op(Ops::CONST).dtype(dtypes::bool_).named("c"),
       [](M m) -> Str { return as_bool(m["c"].const_arg()) ? "1" : "0"; }},
      {op(Ops::CONST).named("c"), [](M m) -> Str { return const_repr(m["c"].const_arg()); }},
      {op(Ops::DEFINE_VAR).named("v"), [](M m) -> Str { return m["v"].arg<VarArg>().name; }},
  };
  EXPECT_EQ(render.rewrite(ci(5)), "5");
  EXPECT_EQ(render.rewrite(UOp::const_(dtypes::bool_, true)), "1");
  EXPECT_EQ(render.rewrite(UOp::variable("gidx", int64_t(0), int64_t(3))), "gidx");
  EXPECT_EQ(render.rewrite(noop()), std::nullopt);
}

TEST(PatternMatcher, BoolResults) {
  // false is an answer (it stops the search), nullopt is no opinion (the next rule is tried)
  using B = std::optional<bool>;
  PatternMatcher<B> pm{
      {op({Ops::IDIV, Ops::MOD}).named("x"), [](M m) -> B { return dtypes::is_int(m["x"].dtype()) ? B{} : B{false}; }},
      {op(GroupOp::ALU), [](M) -> B { return true; }},
  };
  EXPECT_EQ(pm.rewrite(idiv(ci(4), ci(2))), true);               // no opinion, then the ALU rule
  EXPECT_EQ(pm.rewrite(alu(Ops::IDIV, {cf(4), cf(2)})), false);  // rejected
  EXPECT_EQ(pm.rewrite(ci(1)), std::nullopt);
}

TEST(PatternMatcher, FixedPointRewrite) {
  PatternMatcher<UOp> dec{{op(Ops::CONST).dtype(dtypes::int32).named("c"), [](M m) -> UOp {
                             int64_t v = as_int(m["c"].const_arg());
                             return v > 0 ? ci(v - 1) : UOp{};
                           }}};
  EXPECT_EQ(dec.rewrite(ci(5)), ci(4));
  EXPECT_EQ(dec.fixed_point_rewrite(ci(5)), ci(0));
  EXPECT_EQ(dec.fixed_point_rewrite(ci(-3)), ci(-3));
}

// *** bad input ***

TEST(PatternMatcher, WrongArgTypeIsInternalError) {
  PatternMatcher<UOp> pm{
      {op(Ops::CONST).named("x"), [](M m) { return ci(static_cast<int64_t>(m["x"].arg<std::string>().size())); }}};
  try {
    pm.rewrite(ci(1));
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("Ops.CONST"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ci(1).arg<VarArg>(), InternalError);
  EXPECT_THROW(ci(1).src(0), InternalError);
}

TEST(PatternMatcher, MissingCaptureIsInternalError) {
  PatternMatcher<UOp> pm{{op(Ops::CONST).named("x"), [](M m) { return m["nope"]; }}};
  EXPECT_THROW(pm.rewrite(ci(1)), InternalError);
  using namespace pat;
  PatternMatcher<UOp> rhs{{op(Ops::CONST), x}};  // the right-hand side names a capture the pattern lacks
  EXPECT_THROW(rhs.rewrite(ci(1)), InternalError);
}

TEST(PatternMatcher, RootWithoutOpIsError) {
  using namespace pat;
  EXPECT_THROW((PatternMatcher<UOp>{{var("x"), ret_x}}), Error);
  EXPECT_THROW((PatternMatcher<UOp>{{UPat(x).dtype(dtypes::float32), ret_x}}), Error);
  EXPECT_THROW(op(OpSet{}), Error);
  // UPat.any at the root is indexed under every alternative's ops
  PatternMatcher<UOp> ok{{any({op(Ops::CONST), op(Ops::NOOP)}).named("x"), ret_x}};
  EXPECT_TRUE(ok.rewrite(ci(1)));
  EXPECT_TRUE(ok.rewrite(noop()));
  EXPECT_FALSE(ok.rewrite(ci(1) + ci(2)));
}

TEST(PatternMatcher, PermutedNeedsSources) { EXPECT_THROW(op(Ops::ADD).permuted(), Error); }
