// graph_rewrite (top down and bottom up, to a fixed point), substitute, and the tutorial's constant folding
// (ports TestSubstitute from tinygrad's test/unit/test_graph_rewrite.py)
#include <gtest/gtest.h>
#include <tinygrad/tinygrad.h>

using namespace tg;

namespace {

UOp ci(int64_t v) { return UOp::const_(dtypes::int32, v); }
UOp var(const char* name) { return UOp::variable(name, int64_t(0), int64_t(10)); }

}  // namespace

// *** the tutorial: "Pattern Matching and Graph Rewriting" ***

TEST(GraphRewrite, TutorialConstantFolding) {
  UOp a_plus_b = UOp::make(Ops::CONST, dtypes::int32, {}, ConstValue(int64_t(2))) +
                 UOp::make(Ops::CONST, dtypes::int32, {}, ConstValue(int64_t(2)));
  // UPat(Ops.ADD, src=(UPat(Ops.CONST, name="c1"), UPat(Ops.CONST, name="c2"))) -> UOp(Ops.CONST, c1.dtype,
  // c1.arg+c2.arg)
  PatternMatcher<UOp> simple_pm{
      {op(Ops::ADD, {op(Ops::CONST).named("c1"), op(Ops::CONST).named("c2")}),
       [](M m) {
         UOp c1 = m["c1"], c2 = m["c2"];
         return UOp::make(Ops::CONST, c1.dtype(), {}, exec_alu(Ops::ADD, c1.dtype(), {c1.const_arg(), c2.const_arg()}));
       }},
  };
  // UPat.cvar("c1")+UPat.cvar("c2") -> c1.const_like(c1.arg+c2.arg)
  PatternMatcher<UOp> simpler_pm{
      {pat::c0 + pat::c1,
       [](M m) {
         using namespace pat;
         return m[c0].const_like(exec_alu(Ops::ADD, m[c0].dtype(), {m[c0].const_arg(), m[c1].const_arg()}));
       }},
  };
  UOp simplified = graph_rewrite(a_plus_b, simple_pm);
  EXPECT_EQ(simplified.repr(), "UOp(Ops.CONST, dtypes.int, arg=4, src=())");
  EXPECT_EQ(graph_rewrite(a_plus_b, simpler_pm), simplified);  // `is`: the very same node
  EXPECT_EQ(simplified, UOp::const_(dtypes::int32, 4));
}

// *** direction and fixed point ***

TEST(GraphRewrite, FoldsToFixedPoint) {
  // ((2+3)+4)+5 folds from the leaves up in one call
  using namespace pat;
  PatternMatcher<UOp> fold{
      {c0 + c1, [](M m) {
         return m[c0].const_like(exec_alu(Ops::ADD, m[c0].dtype(), {m[c0].const_arg(), m[c1].const_arg()}));
       }}};
  EXPECT_EQ(graph_rewrite(((ci(2) + 3) + 4) + 5, fold), ci(14));
  EXPECT_EQ(graph_rewrite(((ci(2) + 3) + 4) + 5, fold, {.bottom_up = true}), ci(14));
}

TEST(GraphRewrite, RewritesTheResultAgain) {
  // a rule whose result matches again: CONST n -> CONST n-1 runs until n == 0
  PatternMatcher<UOp> dec{{op(Ops::CONST).dtype(dtypes::int32).named("c"), [](M m) -> UOp {
                             int64_t v = as_int(m["c"].const_arg());
                             return v > 0 ? ci(v - 1) : UOp{};
                           }}};
  UOp a = var("a");
  EXPECT_EQ(graph_rewrite(a + 5, dec), a + 0);
  EXPECT_EQ(graph_rewrite(a + 5, dec, {.bottom_up = true}), a + 0);
}

TEST(GraphRewrite, TopDownVsBottomUp) {
  // sin(sin(a)) with {sin(a) -> sqrt(a), sin(sin(a)) -> sqrt(sin(a))}:
  // bottom up sees the root first: sqrt(sin(a)), then its source: sqrt(sqrt(a))
  // top down (the default) rewrites the sources first: sin(sqrt(a)), which no rule matches
  PatternMatcher<UOp> pm{
      {op(Ops::SIN, {op(Ops::SIN, {op(Ops::DEFINE_VAR)})}).named("x"), [](M m) { return m["x"].src(0).sqrt(); }},
      {op(Ops::SIN, {op(Ops::DEFINE_VAR)}).named("x"), [](M m) { return m["x"].src(0).sqrt(); }},
  };
  UOp a = var("a"), ret = a.sin().sin();
  EXPECT_EQ(graph_rewrite(ret, pm, {.bottom_up = true}), a.sqrt().sqrt());
  EXPECT_EQ(graph_rewrite(ret, pm), a.sqrt().sin());
}

TEST(GraphRewrite, SharedNodesRewrittenOnce) {
  struct Count {
    int adds = 0;
  };
  PatternMatcher<UOp, Count> pm{{op(Ops::ADD).named("x"), [](M, Count& c) -> UOp {
                                   c.adds++;
                                   return {};
                                 }}};
  UOp a = var("a"), s = a + 1;
  Count ctx;
  graph_rewrite((s * s) + (s * 2), pm, ctx);
  EXPECT_EQ(ctx.adds, 2);  // a+1 once though it is used three times, and the root
}

TEST(GraphRewrite, NoMatchKeepsTheGraph) {
  PatternMatcher<UOp> pm{{op(Ops::SQRT).named("x"), [](M m) { return m["x"].src(0); }}};
  UOp a = var("a"), g = (a + 1) * a;
  EXPECT_EQ(graph_rewrite(g, pm), g);
  EXPECT_EQ(graph_rewrite(g, pm, {.bottom_up = true}), g);
}

TEST(GraphRewrite, RebuildsParentsOfRewrittenNodes) {
  using namespace pat;
  PatternMatcher<UOp> pm{{x * 1, x}, {x + 0, x}};  // x*1 -> x, x+0 -> x
  UOp a = var("a"), b = var("b");
  UOp g = UOp::sink({(a * 1 + 0) * (b + 0), a * 1});
  EXPECT_EQ(graph_rewrite(g, pm), UOp::sink({a * b, a}));
  EXPECT_EQ(graph_rewrite(g, pm, {.bottom_up = true}), UOp::sink({a * b, a}));
}

TEST(GraphRewrite, KeepsTags) {
  PatternMatcher<UOp> pm{{op(Ops::DEFINE_VAR).arg(VarArg{"a", int64_t(0), int64_t(10)}), [](M) { return var("b"); }}};
  UOp a = var("a"), b = var("b");
  UOp tagged = (a + 4).with_tag(ConstValue(int64_t(1)));
  EXPECT_EQ(graph_rewrite(tagged, pm), (b + 4).with_tag(ConstValue(int64_t(1))));
}

// *** substitute (TestSubstitute) ***

TEST(Substitute, Simple) {
  UOp a = var("a"), b = var("b");
  EXPECT_EQ((a + 4).substitute({{a, b}}), b + 4);
}

TEST(Substitute, Double) {
  UOp a = var("a"), b = var("b"), c = var("c");
  EXPECT_EQ(((a + 4) + b).substitute({{a, c}, {b, c}}), (c + 4) + c);
}

TEST(Substitute, Diamond) {
  UOp a = var("a"), b = var("b");
  EXPECT_EQ(((a + 4) + (a + 5)).substitute({{a, b}}), (b + 4) + (b + 5));
}

TEST(Substitute, Sin) {
  UOp a = var("a"), b = var("b");
  EXPECT_EQ(a.sin().sin().substitute({{a.sin(), b}}), b.sin());
}

TEST(Substitute, SinToSqrt) {
  UOp a = var("a");
  EXPECT_EQ(a.sin().sin().substitute({{a.sin(), a.sqrt()}}), a.sqrt().sin());
}

TEST(Substitute, DoubleSinToSqrt) {
  UOp a = var("a"), n1 = a.sin();
  // NOTE: this would work if it had gone in the opposite order
  EXPECT_EQ(n1.sin().substitute({{a.sin(), a.sqrt()}, {n1.sin(), n1.sqrt()}}), a.sqrt().sqrt());
}

TEST(Substitute, TaggedReplace) {
  UOp a = var("a"), b = var("b");
  UOp ret = (a + 4).with_tag(ConstValue(int64_t(1)));
  EXPECT_EQ(ret.substitute({{a, b}}),
            (b + 4).with_tag(ConstValue(int64_t(1))));  // the srcs are rewritten, the tag kept
}

TEST(Substitute, IdentityAndEmpty) {
  UOp a = var("a"), g = a * 3;
  EXPECT_EQ(g.substitute({}), g);
  EXPECT_EQ(g.substitute({{a, a}}), g);
  EXPECT_EQ(g.substitute({{g, a}}), a);  // the root itself
}

TEST(Substitute, ChainsAndCycles) {
  // a replacement is itself looked up (a -> b -> c), and so is a node remade from replaced sources; a map that
  // never settles is an error, not a hang
  UOp a = var("a"), b = var("b"), c = var("c");
  EXPECT_EQ((a + 1).substitute({{a, b}, {b, c}}), c + 1);
  EXPECT_EQ(((a + 1) * 2).substitute({{a, b}, {b + 1, c}}), c * 2);
  EXPECT_THROW((a + 1).substitute({{a, b}, {b, a}}), InternalError);
}

// *** toposort ***

TEST(Toposort, SourcesBeforeUsers) {
  UOp a = var("a"), b = var("b"), s = a + b, g = UOp::sink({s * a, s});
  std::vector<UOp> order = g.toposort();
  std::vector<UOp> want = {a, b, s, s * a, g};
  EXPECT_EQ(order, want);
  // a shared node appears once
  EXPECT_EQ(((a + 1) * (a + 1)).toposort().size(), 4u);
}
