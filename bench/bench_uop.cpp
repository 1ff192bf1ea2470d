// UOp micro-benchmarks: interning (hit and miss), one PatternMatcher rewrite, a graph_rewrite, and the rule-heavy
// case: UOp::simplify() on 10,000 index expressions. bench/bench_uop_tinygrad.py times the same work in tinygrad's
// Python, with the same names and units; bench/README.md has the figures.
#include <benchmark/benchmark.h>
#include <tinygrad/tinygrad.h>

#include <cstdio>
#include <vector>

using namespace tg;

namespace {

// *** the workloads, shared with bench_uop_tinygrad.py: keep the two in step ***

// tinygrad's tutorial rule: CONST+CONST -> CONST
const PatternMatcher<UOp>& fold_pm() {
  static const PatternMatcher<UOp> pm{
      {op(Ops::ADD, {op(Ops::CONST).named("c1"), op(Ops::CONST).named("c2")}),
       [](M m) {
         return m["c1"].const_like(exec_alu(Ops::ADD, m["c1"].dtype(), {m["c1"].const_arg(), m["c2"].const_arg()}));
       }},
  };
  return pm;
}

struct IndexVars {
  UOp a = UOp::variable("a", 0, 7), b = UOp::variable("b", 0, 3), c = UOp::variable("c", 0, 3);
  UOp d = UOp::variable("d", 1, 10);
};

// expression i of the 10,000: index arithmetic of the kind the shape and codegen layers produce
UOp index_expr(const IndexVars& v, int64_t i) {
  int64_t k1 = 1 + i % 8, k2 = 1 + (i / 8) % 6, k3 = (i / 48) % 208;  // 9,984 distinct (k1, k2, k3)
  const UOp &a = v.a, &b = v.b, &c = v.c, &d = v.d;
  return idiv((a * 4 + b) * 4 + c, 16) % 8 + idiv(a * k1 + b * k1 + c + k3, k1 * 4) + (b * k2 + c) % (k2 * 4) +
         idiv(c + k3, 8) * d + ((a * 2 + 1) < 2 * k1).where(d * k2, a + 0);
}
constexpr int64_t kNumExprs = 10000;

size_t count_nodes(const std::vector<UOp>& roots) { return UOp::sink(roots).toposort().size() - 1; }

// *** construction ***

// building a node that exists: one lookup in the intern table
void BM_UOpConstructHit(benchmark::State& state) {
  UOp x = UOp::variable("x", 0, 10), y = UOp::const_(dtypes::int32, 3);
  UOp keep = UOp::make(Ops::ADD, dtypes::int32, {x, y});
  for (auto _ : state) benchmark::DoNotOptimize(UOp::make(Ops::ADD, dtypes::int32, {x, y}));
}
BENCHMARK(BM_UOpConstructHit);

// building new nodes: insert, then free when the handle goes; 1,000 distinct consts per iteration
void BM_UOpConstructMiss(benchmark::State& state) {
  int64_t base = 1000000;
  for (auto _ : state) {
    for (int64_t j = 0; j < 1000; j++) benchmark::DoNotOptimize(UOp::const_(dtypes::int32, base + j));
    base += 1000;
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_UOpConstructMiss);

// building the 10,000 expressions (about 30 nodes each, most of them new)
void BM_BuildIndexExprs10k(benchmark::State& state) {
  IndexVars v;
  for (auto _ : state) {
    std::vector<UOp> exprs;
    exprs.reserve(kNumExprs);
    for (int64_t i = 0; i < kNumExprs; i++) exprs.push_back(index_expr(v, i));
    benchmark::DoNotOptimize(exprs.data());
  }
}
BENCHMARK(BM_BuildIndexExprs10k)->Unit(benchmark::kMillisecond);

// *** rewriting ***

// one PatternMatcher.rewrite call that matches: CONST(2)+CONST(2) -> CONST(4)
void BM_PatternMatcherRewrite(benchmark::State& state) {
  UOp two = UOp::const_(dtypes::int32, 2), sum = two + two;
  for (auto _ : state) benchmark::DoNotOptimize(fold_pm().rewrite(sum));
}
BENCHMARK(BM_PatternMatcherRewrite);

// graph_rewrite folding a chain of 100 const adds to one const
void BM_GraphRewriteFold100(benchmark::State& state) {
  UOp chain = UOp::const_(dtypes::int32, 0);
  for (int i = 1; i <= 100; i++) chain = chain + UOp::const_(dtypes::int32, i);
  for (auto _ : state) benchmark::DoNotOptimize(graph_rewrite(chain, fold_pm()));
}
BENCHMARK(BM_GraphRewriteFold100)->Unit(benchmark::kMicrosecond);

// the rule-heavy case: simplify 10,000 expressions, built fresh (untimed) each iteration so nothing is cached
void BM_SimplifyIndexExprs10k(benchmark::State& state) {
  IndexVars v;
  size_t nodes_after = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<UOp> exprs, out;
    exprs.reserve(kNumExprs), out.reserve(kNumExprs);
    for (int64_t i = 0; i < kNumExprs; i++) exprs.push_back(index_expr(v, i));
    state.ResumeTiming();
    for (const UOp& e : exprs) out.push_back(e.simplify());
    state.PauseTiming();
    nodes_after = count_nodes(out);
    exprs.clear(), out.clear();  // the nodes leave the intern table here, untimed
    state.ResumeTiming();
  }
  state.counters["nodes_after"] = static_cast<double>(nodes_after);
}
BENCHMARK(BM_SimplifyIndexExprs10k)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // the same samples as the Python script prints, to check that both simplify alike
  IndexVars v;
  std::vector<UOp> exprs;
  for (int64_t i = 0; i < kNumExprs; i++) exprs.push_back(index_expr(v, i));
  std::vector<UOp> out;
  for (const UOp& e : exprs) out.push_back(e.simplify());
  std::printf("nodes before simplify: %zu, after: %zu\n", count_nodes(exprs), count_nodes(out));
  for (int64_t i : {0, 1, 4321}) std::printf("expr %lld: %s\n", static_cast<long long>(i), out[i].render().c_str());
  std::fflush(stdout);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
