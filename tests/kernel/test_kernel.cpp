// Kernel, Opt and the CPU heuristic against the reference: kernel names (with escapes), applied opts, buffer tables and
// optimized ASTs, as tinygrad 2025-06-12 prints them (tests/data/kernel/, copied from the naming/ and debug/ goldens)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/helpers/knobs.h"
#include "tg/renderer/cstyle.h"
#include "tg/uop/kernel_info.h"

using namespace tg;

namespace {

std::string read(const std::string& name) {
  std::ifstream f(std::string(TG_TEST_DATA) + "/kernel/" + name);
  EXPECT_TRUE(f.good()) << "missing tests/data/kernel/" << name;
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// *** AST builders: the scheduled kernel ASTs, as DEBUG=5 prints them ***

ShapeTracker st(const Shape& shape, std::optional<Shape> strides = {}) { return {{View::create(shape, strides)}}; }
UOp global(int i, DType dt, int64_t size) {
  return UOp::make(Ops::DEFINE_GLOBAL, dt.ptr(size), {}, ConstValue(int64_t(i)));
}
UOp view_of(const UOp& g, const ShapeTracker& s) { return UOp::make(Ops::VIEW, g.dtype(), {g}, st_arg(s)); }
UOp load(const UOp& g, const ShapeTracker& s) { return UOp::make(Ops::LOAD, g.dtype().base(), {view_of(g, s)}); }
UOp store(const UOp& g, const ShapeTracker& s, const UOp& v) {
  return UOp::make(Ops::STORE, dtypes::void_, {view_of(g, s), v});
}
UOp cnst(DType dt, ConstValue v, const Shape& shape) {
  UOp vw = UOp::make(Ops::VIEW, dtypes::void_, {}, st_arg(st(shape, Shape(shape.size(), 0))));
  return UOp::make(Ops::CONST, dt, {vw}, dtypes::as_const(v, dt));
}
UOp rsum(const UOp& x, std::vector<int64_t> axes) {
  return UOp::make(Ops::REDUCE_AXIS, x.dtype(), {x}, ReduceArg{Ops::ADD, std::move(axes)});
}

// out[i] = in[i] op c for a contiguous float/int tensor of `shape`
UOp elementwise(DType dt, const Shape& shape, const std::vector<std::pair<Ops, ConstValue>>& chain) {
  sint n = prod(shape);
  UOp x = load(global(1, dt, n), st(shape));
  for (auto& [op, c] : chain) x = x.alu(op, {cnst(dt, c, shape)});
  return UOp::sink({store(global(0, dt, n), st(shape), x)});
}
UOp matmul(sint n) {
  UOp a = load(global(1, dtypes::float32, n * n), st({n, n, n}, Shape{n, 0, 1}));
  UOp b = load(global(2, dtypes::float32, n * n), st({n, n, n}, Shape{0, 1, n}));
  return UOp::sink({store(global(0, dtypes::float32, n * n), st({n, n, 1}), rsum(a * b, {2}))});
}
UOp relu_sum(sint n) {  // (n,n) -> relu -> sum: where(0 < x, x, 0)
  UOp x = load(global(1, dtypes::float32, n * n), st({n, n}));
  UOp zero = cnst(dtypes::float32, 0.0, {n, n});
  UOp r = rsum((zero < x).where(x, zero), {0, 1});
  return UOp::sink({store(global(0, dtypes::float32, 1), st({1, 1}), r)});
}
UOp sum16(std::vector<int64_t> axes) {
  Shape out{16, 16};
  for (int64_t a : axes) out[static_cast<size_t>(a)] = 1;
  UOp r = rsum(load(global(1, dtypes::float32, 256), st({16, 16})), axes);
  return UOp::sink({store(global(0, dtypes::float32, prod(out)), st(out), r)});
}

// the kernels each naming case compiles, in order (naming_case.py)
std::vector<UOp> naming_case(const std::string& name) {
  const DType f = dtypes::float32, i = dtypes::int32;
  if (name == "ew4") return {elementwise(i, {4}, {{Ops::ADD, int64_t(3)}, {Ops::ADD, int64_t(4)}})};
  if (name == "ew16x16") return {elementwise(f, {16, 16}, {{Ops::MUL, 2.0}, {Ops::ADD, 1.0}})};
  if (name == "sum_axis0_16x16") return {sum16({0})};
  if (name == "sum_axis1_16x16") return {sum16({1})};
  if (name == "sum_all_16x16") return {sum16({0, 1})};
  if (name == "matmul16") return {matmul(16)};
  if (name == "matmul16_relu_sum") return {matmul(16), relu_sum(16)};
  if (name == "permute_copy")
    return {UOp::sink({store(global(0, f, 256), st({16, 16}), load(global(1, f, 256), st({16, 16}, Shape{1, 16})))})};
  if (name == "dedup3")
    return {elementwise(i, {4}, {{Ops::MUL, int64_t(2)}}), elementwise(i, {4}, {{Ops::MUL, int64_t(4)}}),
            elementwise(i, {4}, {{Ops::ADD, int64_t(3)}, {Ops::ADD, int64_t(4)}})};
  if (name == "ew_3x5") return {elementwise(f, {3, 5}, {{Ops::ADD, 1.0}})};
  if (name == "ew_1024") return {elementwise(f, {1024}, {{Ops::MUL, 2.0}})};
  if (name == "scalar") return {elementwise(f, {1}, {{Ops::MUL, 3.0}, {Ops::ADD, 1.0}})};
  ADD_FAILURE() << "unknown naming case " << name;
  return {};
}

struct SummaryRow {
  std::string kase, mode, name, escaped, opts;
};
std::vector<SummaryRow> summary() {
  std::vector<SummaryRow> rows;
  std::istringstream f(read("naming_summary.txt"));
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    SummaryRow r;
    ls >> r.kase >> r.mode >> r.name >> r.escaped;
    std::getline(ls, r.opts);
    r.opts = r.opts.substr(r.opts.find_first_not_of(' '));
    for (size_t p; (p = r.escaped.find("\\x1b")) != std::string::npos;) r.escaped.replace(p, 4, "\x1b");
    rows.push_back(r);
  }
  return rows;
}

// the golden buffer table of a case: one string per kernel (rows restart at " 0:")
std::vector<std::string> golden_tables(const std::string& kase, const std::string& mode) {
  std::vector<std::string> out;
  std::istringstream f(read(kase + "." + mode + ".table.txt"));
  for (std::string line; std::getline(f, line);) {
    if (line.rfind(" 0:", 0) == 0) out.emplace_back();
    out.back() += line + "\n";
  }
  return out;
}

}  // namespace

// *** Opt / OptOps printing (uop_repr R17) ***

TEST(Opt, Repr) {
  std::vector<Opt> opts{{OptOps::UNROLL, 0, 0}};
  EXPECT_EQ(cat(Opt{OptOps::UPCAST, 0, 4}.repr(), " ", opts_repr(opts), " ", optops_str(OptOps::LOCAL)),
            "Opt(op=OptOps.UPCAST, axis=0, arg=4) [Opt(op=OptOps.UNROLL, axis=0, arg=0)] OptOps.LOCAL");
  EXPECT_EQ(opts_repr({}), "[]");
  EXPECT_EQ((Opt{OptOps::NOLOCALS, std::nullopt, {}}.repr()), "Opt(op=OptOps.NOLOCALS, axis=None, arg=None)");
  EXPECT_EQ((Opt{OptOps::TC, 0, std::tuple{-1, 2, 1}}.repr()), "Opt(op=OptOps.TC, axis=0, arg=(-1, 2, 1))");
  EXPECT_EQ(static_cast<int>(OptOps::TC), 1);
  EXPECT_EQ(static_cast<int>(OptOps::SWAP), 9);
  EXPECT_LT((Opt{OptOps::UPCAST, 0, 4}), (Opt{OptOps::UNROLL, 0, 0}));  // ordered by (op, axis, arg)
}

// *** helpers.colored / ansistrip / to_function_name ***

TEST(Helpers, Colored) {
  EXPECT_EQ(colored("_", "BLACK"), "\x1b[90m_\x1b[0m");
  EXPECT_EQ(colored("4", "blue"), "\x1b[34m4\x1b[0m");
  EXPECT_EQ(colored("4", "BLUE"), "\x1b[94m4\x1b[0m");
  EXPECT_EQ(colored("x", "yellow"), "\x1b[33mx\x1b[0m");
  EXPECT_EQ(colored("x", "magenta"), "\x1b[35mx\x1b[0m");
  EXPECT_EQ(colored("x", "red"), "\x1b[31mx\x1b[0m");
  EXPECT_EQ(colored("x", "green"), "\x1b[32mx\x1b[0m");
  EXPECT_EQ(colored("x", "cyan"), "\x1b[36mx\x1b[0m");
  EXPECT_EQ(colored("x", "red", true), "\x1b[41mx\x1b[0m");
  EXPECT_EQ(colored("x", nullptr), "x");
  EXPECT_THROW(colored("x", "purple"), Error);
  std::string e64_4 = "E_\x1b[34m64\x1b[0m\x1b[90m_\x1b[0m\x1b[33m4\x1b[0m\x1b[90m\x1b[0m";
  EXPECT_EQ(ansistrip(e64_4), "E_64_4");
  EXPECT_EQ(ansilen(e64_4), 6u);
  EXPECT_EQ(ansistrip("a\x1b[Kb"), "ab");
  EXPECT_EQ(to_function_name(e64_4), "E_64_4");
  EXPECT_EQ(to_function_name("r_4.5-x y"), "r_42E52Dx20y");
}

// *** the naming table: every case, with hand-coded opts and with NOOPT ***

TEST(KernelNaming, Summary) {
  auto rows = summary();
  ASSERT_EQ(rows.size(), 30u);
  // group the rows by (case, mode): one row per compiled kernel, in order
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<SummaryRow>> by;
  for (auto& r : rows) {
    auto key = std::make_pair(r.kase, r.mode);
    if (!by.count(key)) order.push_back(key);
    by[key].push_back(r);
  }
  for (auto& key : order) {
    auto& [kase, mode] = key;
    SCOPED_TRACE(kase + " " + mode);
    reset_kernel_cnt();  // each case ran in a fresh process
    auto asts = naming_case(kase);
    auto tables = golden_tables(kase, mode);
    ASSERT_EQ(asts.size(), by[key].size());
    ASSERT_EQ(tables.size(), asts.size());
    for (size_t i = 0; i < asts.size(); i++) {
      const SummaryRow& want = by[key][i];
      Kernel k(asts[i]);
      if (mode == "DEBUG4") k.apply_opts(hand_coded_optimizations(k));
      EXPECT_EQ(opts_repr(k.applied_opts), want.opts);
      EXPECT_EQ(k.name(), want.escaped);
      EXPECT_EQ(to_function_name(k.name()), want.name);
      EXPECT_EQ(k.buffer_table(true), tables[i]);
      // the optimized AST carries the function name and the dims' kinds
      UOp opt_ast = k.get_optimized_ast();  // keep the node alive: ki points into its arg
      const KernelInfo* ki = as_kernel_info(opt_ast.arg());
      ASSERT_NE(ki, nullptr);
      EXPECT_EQ(ki->name, want.name);
      EXPECT_EQ(ki->upcasted, k.upcasted);
      EXPECT_EQ(ki->local_dims, 0);
    }
  }
}

TEST(KernelNaming, CounterPerDistinctKernel) {
  reset_kernel_cnt();
  auto asts = naming_case("dedup3");
  std::vector<std::string> names;
  for (auto& a : asts) names.push_back(to_function_name(Kernel(a).name()));
  EXPECT_EQ(names, (std::vector<std::string>{"E_4", "E_4n1", "E_4n2"}));
  // the name is computed (and counted) once per Kernel object; copies made before naming count on their own
  Kernel k(asts[0]);
  EXPECT_EQ(to_function_name(k.name()), "E_4n3");
  EXPECT_EQ(to_function_name(k.name()), "E_4n3");
  EXPECT_EQ(k.base_name(), "E_\x1b[34m4\x1b[0m");  // base_name counts nothing
  EXPECT_EQ(to_function_name(k.get_optimized_ast(std::string("custom")).src(0).op() == Ops::STORE ? "ok" : "no"), "ok");
  Kernel c = k.copy();
  EXPECT_EQ(to_function_name(c.name()), "E_4n4");
  EXPECT_EQ(register_kernel_name("r_\x1b[31m16\x1b[0m"), "r_\x1b[31m16\x1b[0m\x1b[90m\x1b[0m");
  EXPECT_EQ(register_kernel_name("r_\x1b[35m16\x1b[0m"), "r_\x1b[35m16\x1b[0m\x1b[90mn1\x1b[0m");  // keyed by stripped
  reset_kernel_cnt();
}

// *** optimized ASTs, byte for byte as DEBUG=5 prints them ***

TEST(KernelAst, T347) {
  reset_kernel_cnt();
  UOp ast = naming_case("ew4")[0];
  EXPECT_EQ(ast.repr(), read("t347.k0.ast.txt"));
  Kernel k(ast);
  k.apply_opts(hand_coded_optimizations(k));
  EXPECT_EQ(opts_repr(k.applied_opts), read("t347.k0.opts.txt"));
  EXPECT_EQ(k.buffer_table(true), read("t347.k0.table.txt") + "\n");
  EXPECT_EQ(k.get_optimized_ast().repr(), read("t347.k0.opt_ast.txt"));
}

TEST(KernelAst, MmReluSum) {
  reset_kernel_cnt();
  std::vector<UOp> asts{matmul(4), relu_sum(4)};
  for (size_t i = 0; i < asts.size(); i++) {
    SCOPED_TRACE(i);
    std::string pre = "mm_relu_sum.k" + std::to_string(i);
    EXPECT_EQ(asts[i].repr(), read(pre + ".ast.txt"));
    Kernel k(asts[i]);
    k.apply_opts(hand_coded_optimizations(k));
    EXPECT_EQ(opts_repr(k.applied_opts), read(pre + ".opts.txt"));
    EXPECT_EQ(k.buffer_table(true), read(pre + ".table.txt") + "\n");
    EXPECT_EQ(k.get_optimized_ast().repr(), read(pre + ".opt_ast.txt"));
  }
}

TEST(KernelAst, NoOptKeepsShapes) {
  reset_kernel_cnt();
  Kernel k(matmul(4));
  UOp opt = k.get_optimized_ast();
  EXPECT_EQ(as_kernel_info(opt.arg())->repr(),
            "KernelInfo(name='r_4_4_4', local_dims=0, upcasted=0, dont_use_locals=False)");
  // no opts: same graph as the input but for the SINK arg
  EXPECT_EQ(opt.replace(std::nullopt, std::nullopt, std::nullopt, Arg{}), k.ast);
}

TEST(KernelAst, DefaultOptsHonourNoopt) {
  reset_kernel_cnt();
  Kernel k(naming_case("ew16x16")[0]);
  {
    Context ctx{{"NOOPT", 1}};
    apply_default_opts(k);
  }
  EXPECT_TRUE(k.applied_opts.empty());
  apply_default_opts(k);
  EXPECT_EQ(opts_repr(k.applied_opts), "[Opt(op=OptOps.UPCAST, axis=0, arg=4)]");
}

TEST(Kernel, CapsOfClangRenderer) {
  RenderOpts c = static_cast<const RenderOpts&>(ClangRenderer());
  RenderOpts want = RenderOpts::cpu();
  EXPECT_EQ(c.device, want.device);
  EXPECT_EQ(c.has_local, want.has_local);
  EXPECT_EQ(c.has_shared, want.has_shared);
  EXPECT_EQ(c.supports_float4, want.supports_float4);
  EXPECT_EQ(c.global_max, want.global_max);
  EXPECT_EQ(c.local_max, want.local_max);
  EXPECT_EQ(c.shared_max, want.shared_max);
}

// *** Kernel.__init__: reduce dims last, ones dropped, adjacent dims merged ***

TEST(Kernel, InitShapes) {
  Kernel k(sum16({0}));
  EXPECT_EQ(k.full_shape(), (Shape{16, 16}));
  EXPECT_EQ(k.output_shape(), (Shape{16, 1}));  // the reduce axis moved last
  EXPECT_EQ(k.first_reduce(), 1);
  EXPECT_EQ(k.bufs.size(), 2u);
  EXPECT_EQ(k.bufs[0].op(), Ops::STORE);
  EXPECT_EQ(k.sts.size(), 5u);  // 2 bufs + 2 for the reduce + the full shape
  EXPECT_EQ(strides_str(real_strides(k.sts[1])), "(1, 16)");
  Kernel e(naming_case("ew16x16")[0]);
  EXPECT_EQ(e.full_shape(), (Shape{256}));
  EXPECT_EQ(e.colored_shape(), "\x1b[34m 256\x1b[0m");
  EXPECT_EQ(e.colored_shape(8, true), "\x1b[34m256\x1b[0m     ");
  Kernel s(naming_case("scalar")[0]);
  EXPECT_EQ(s.shape_len(), 0);
  EXPECT_TRUE(s.colors().empty());
}

TEST(Kernel, RealStridesMasked) {
  ShapeTracker p = st({3, 5}).pad({{0, 1}, {0, 0}});  // (4, 5), the last row masked
  auto rs = real_strides(p);
  EXPECT_EQ(strides_str(rs), "(None, 1)");
  EXPECT_EQ(strides_str(real_strides(p, true)), "(5, 1)");
  EXPECT_TRUE(axis_is_masked(p, 0));
  EXPECT_FALSE(axis_is_masked(p, 1));
  EXPECT_EQ(unit_stride_axes(p), (std::vector<int>{1}));
  EXPECT_EQ(strides_str(real_strides(st({4, 4}, Shape{0, 1}))), "(0, 1)");
  // a symbolic stride prints as its expression (DEBUG=3's buffer table of a KV-cache kernel threw here)
  sint n(UOp::variable("start_pos", 0, 2047) + 1);
  EXPECT_EQ(strides_str({sint(64) * n, sint(1), std::nullopt}), "(((start_pos+1)*64), 1, None)");
}

// *** apply_opt: each op, and the checks that reject a bad opt ***

TEST(KernelOpts, UpcastUnrollSplit) {
  Kernel k(matmul(16));
  k.apply_opt({OptOps::UPCAST, 0, 4});
  k.apply_opt({OptOps::UNROLL, 0, 4});
  EXPECT_EQ(k.full_shape(), (Shape{4, 16, 4, 4, 4}));
  EXPECT_EQ(k.colors(), (std::vector<std::string>{"blue", "blue", "red", "yellow", "magenta"}));
  EXPECT_EQ(to_function_name(k.base_name()), "r_4_16_4_4_4");
  EXPECT_EQ(k.upcasted, 2);
  auto ua = k.upcasted_axis(1);
  ASSERT_EQ(ua.size(), 2u);
  EXPECT_EQ(ua[0].size, 4);
  EXPECT_FALSE(ua[0].reduced);
  EXPECT_TRUE(ua[1].reduced);
  UOp opt = k.get_optimized_ast(std::string("test"));
  // the REDUCE_AXIS now reduces the red dim and the unrolled one
  UOp red = opt.src(0).src(1);
  ASSERT_EQ(red.op(), Ops::REDUCE_AXIS);
  EXPECT_EQ(red.arg<ReduceArg>().axes, (std::vector<int64_t>{2, 4}));
}

TEST(KernelOpts, Rejected) {
  struct Case {
    Opt opt;
    std::string msg;
  };
  std::vector<Case> cases{
      {{OptOps::UPCAST, 2, 4}, "upcast is for non-reduce"},
      {{OptOps::UPCAST, 0, 5}, "no longer valid shift self.full_shape[axis]=16, amt=5"},
      {{OptOps::UPCAST, 0, 1}, "shift/padto of amt=1, 1 or symbolic amount is meaningless"},
      {{OptOps::UPCAST, 7, 4}, "invalid axis"},
      {{OptOps::UNROLL, 1, 4}, "invalid axis"},
      {{OptOps::LOCAL, 0, 4}, "target does not support local"},
      {{OptOps::GROUP, 0, 4}, "target does not support local or shared mem"},
      {{OptOps::NOLOCALS, std::nullopt, {}},
       "NOLOCALS is meaningless if target does not support local or already not using locals"},
      {{OptOps::SWAP, 1, 0}, "swap is only for globals with axis < amt, getting amt=0, axis=1, self.global_dims=2"},
      {{OptOps::TC, 0, std::tuple{-1, 0, 1}}, "must have tensor cores"},
      {{OptOps::PADTO, 0, 16}, "nothing was padded"},
      {{OptOps::PADTO, 0, 128}, "pad adds more than quadruple the work st.shape[axis]=16 > amt//4=32"},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.opt.repr());
    Kernel k(matmul(16));
    try {
      k.apply_opt(c.opt);
      ADD_FAILURE() << "no error";
    } catch (const KernelOptError& e) {
      EXPECT_EQ(std::string(e.what()), c.msg);
    }
    EXPECT_TRUE(k.applied_opts.empty());
    EXPECT_EQ(k.full_shape(), (Shape{16, 16, 16}));
  }
  Kernel k(matmul(16));
  k.apply_opt({OptOps::UNROLL, 0, 32 / 2});
  EXPECT_THROW(k.apply_opt({OptOps::UNROLL, 0, 4}), KernelOptError);  // nothing left to unroll
  Kernel big(sum16({0, 1}));
  EXPECT_THROW(big.apply_opt({OptOps::UNROLL, 0, 64}), KernelOptError);  // don't unroll more than 32
  // more than 16 (the reference's limit; the CPU takes 64 for its vector tiles: a packed int8 weight's 64 rows)
  EXPECT_THROW(Kernel(naming_case("ew_1024")[0], RenderOpts::generic()).apply_opt({OptOps::UPCAST, 0, 32}),
               KernelOptError);
  EXPECT_THROW(Kernel(naming_case("ew_1024")[0]).apply_opt({OptOps::UPCAST, 0, 128}), KernelOptError);
}

TEST(KernelOpts, UpcastTopAndThread) {
  // UPCASTTOP upcasts the outer part of an axis: its lanes are the axis's size / amount apart, where UPCAST's are
  // neighbours. matmul(16): the output's strides (16, 1, 0) on (m, n, k)
  Kernel up(matmul(16)), top(matmul(16));
  up.apply_opt({OptOps::UPCAST, 0, 4});
  top.apply_opt({OptOps::UPCASTTOP, 0, 4});
  EXPECT_EQ(up.full_shape(), (Shape{4, 16, 16, 4}));
  EXPECT_EQ(top.full_shape(), (Shape{4, 16, 16, 4}));
  EXPECT_EQ(strides_str(real_strides(up.sts[0])), "(64, 1, 0, 16)");
  EXPECT_EQ(strides_str(real_strides(top.sts[0])), "(16, 1, 0, 64)");
  EXPECT_EQ(top.colors(), up.colors());
  EXPECT_EQ(top.applied_opts[0].repr(), "Opt(op=OptOps.UPCASTTOP, axis=0, arg=4)");
  // THREAD splits the outer part of an axis off as the outermost loop (the one a CPU's threads share)
  RenderOpts cpu = Kernel(matmul(16)).opts;
  cpu.threads = 2;
  Kernel th(matmul(16), cpu);
  th.apply_opt({OptOps::THREAD, 1, 4});
  EXPECT_EQ(th.full_shape(), (Shape{4, 16, 4, 16}));
  EXPECT_EQ(strides_str(real_strides(th.sts[0])), "(4, 16, 1, 0)");  // n's outer part first, m, then n's rest
  EXPECT_EQ(th.first_reduce(), 3);
  std::vector<std::pair<Opt, std::string>> bad{
      {{OptOps::THREAD, 0, 2}, "already threaded"},
      {{OptOps::THREAD, 3, 2}, "thread is for non-reduce"},
  };
  for (auto& [opt, msg] : bad) {
    try {
      th.apply_opt(opt);
      ADD_FAILURE() << opt.repr();
    } catch (const KernelOptError& e) {
      EXPECT_EQ(std::string(e.what()), msg);
    }
  }
  cpu.threads = 0;
  try {
    Kernel(matmul(16), cpu).apply_opt({OptOps::THREAD, 0, 2});
    ADD_FAILURE() << "no error";
  } catch (const KernelOptError& e) {
    EXPECT_EQ(std::string(e.what()), "target does not support threads");
  }
  // (their results: CpuTile.BigSumsGetVectorAccumulators, whose row sums take both)
}

TEST(KernelOpts, Swap) {
  Kernel k(naming_case("permute_copy")[0]);
  k.apply_opt({OptOps::SWAP, 0, 1});
  EXPECT_EQ(strides_str(real_strides(k.sts[0])), "(1, 16)");
  EXPECT_EQ(strides_str(real_strides(k.sts[1])), "(16, 1)");
}

TEST(KernelOpts, PadToMasksConsts) {
  reset_kernel_cnt();
  Kernel k(naming_case("ew_3x5")[0]);
  k.apply_opt({OptOps::PADTO, 0, 16});
  EXPECT_EQ(k.full_shape(), (Shape{16}));
  k.apply_opt({OptOps::UPCAST, 0, 4});
  EXPECT_EQ(to_function_name(k.name()), "E_4_4");
  UOp add = k.get_optimized_ast().src(0).src(1);
  ASSERT_EQ(add.op(), Ops::ADD);
  // the padded CONST is gated by a VALID: VALID(st).where(1.0, 0.0)
  UOp w = add.src(1);
  ASSERT_EQ(w.op(), Ops::WHERE);
  EXPECT_EQ(w.src(0).op(), Ops::VALID);
  const ShapeTracker* vst = get_st(w.src(0).src(0).arg());
  ASSERT_NE(vst, nullptr);
  EXPECT_TRUE(std::any_of(vst->views.begin(), vst->views.end(), [](const View& v) { return v.mask.has_value(); }));
  EXPECT_EQ(vst->shape(), (Shape{4, 4}));
  EXPECT_EQ(w.src(2).arg<ConstValue>(), ConstValue(0.0));
}

// *** a target with locals and shared memory: LOCAL, GROUP, NOLOCALS ***

TEST(KernelOpts, LocalsAndGroups) {
  RenderOpts gpu;
  gpu.device = "GPU";
  Kernel k(naming_case("ew16x16")[0], gpu);
  k.apply_opt({OptOps::LOCAL, 0, 16});
  EXPECT_EQ(k.colors(), (std::vector<std::string>{"blue", "cyan"}));
  EXPECT_EQ(as_kernel_info(k.get_optimized_ast(std::string("x")).arg())->local_dims, 1);
  EXPECT_THROW(k.apply_opt({OptOps::NOLOCALS, std::nullopt, {}}), KernelOptError);  // can't have no locals with locals

  Kernel n(naming_case("ew16x16")[0], gpu);
  n.apply_opt({OptOps::NOLOCALS, std::nullopt, {}});
  EXPECT_EQ(n.colors(), (std::vector<std::string>{"BLUE"}));
  EXPECT_THROW(n.apply_opt({OptOps::LOCAL, 0, 16}), KernelOptError);  // not using locals

  Kernel g(sum16({0, 1}), gpu);
  g.apply_opt({OptOps::GROUPTOP, 0, 16});
  EXPECT_EQ(g.group_for_reduces, 1);
  EXPECT_EQ(g.colors(), (std::vector<std::string>{"green", "red"}));
  UOp opt = g.get_optimized_ast(std::string("g"));
  bool has_local = false;
  for (const UOp& u : opt.toposort()) has_local = has_local || u.op() == Ops::DEFINE_LOCAL;
  EXPECT_TRUE(has_local);
  // shared memory is bounded
  Kernel big(sum16({0, 1}), gpu);
  big.opts.shared_max = 32;
  EXPECT_THROW(big.apply_opt({OptOps::GROUP, 0, 16}), KernelOptError);

  // the heuristic on a GPU-like target picks locals (no golden: a sanity check that it applies cleanly)
  Kernel h(matmul(16), gpu);
  auto opts = hand_coded_optimizations(h);
  EXPECT_FALSE(opts.empty());
  h.apply_opts(opts);
  EXPECT_GT(h.local_dims + h.group_for_reduces, 0);
}

TEST(KernelHeuristic, MaskedAxisUpcast) {
  // a (3,4) output whose input is padded on the leading axis: the masked axis of size 3 gets UPCAST arg 0
  UOp x = load(global(1, dtypes::float32, 8), st({2, 4}).pad({{0, 1}, {0, 0}}));
  UOp ast = UOp::sink({store(global(0, dtypes::float32, 12), st({3, 4}), x)});
  Kernel k(ast);
  auto opts = hand_coded_optimizations(k);
  EXPECT_EQ(opts_repr(opts), "[Opt(op=OptOps.UPCAST, axis=0, arg=0)]");
}

TEST(KernelHeuristic, SmallReduceUnroll) {
  // a reduce over (2, 3) that merges into one dim of 6: fully unrolled
  UOp r = rsum(load(global(1, dtypes::float32, 24), st({4, 2, 3})), {1, 2});
  Kernel k(UOp::sink({store(global(0, dtypes::float32, 4), st({4, 1, 1}), r)}));
  EXPECT_EQ(k.full_shape(), (Shape{4, 6}));  // the two reduce dims merged
  EXPECT_EQ(opts_repr(hand_coded_optimizations(k)), "[Opt(op=OptOps.UNROLL, axis=0, arg=0)]");
  // strides that do not merge: the last reduce dim (3) is unrolled, and being tiny, the next one (2) too
  UOp r2 = rsum(load(global(1, dtypes::float32, 24), st({4, 2, 3}, Shape{1, 4, 8})), {1, 2});
  Kernel k2(UOp::sink({store(global(0, dtypes::float32, 4), st({4, 1, 1}), r2)}));
  EXPECT_EQ(k2.full_shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(opts_repr(hand_coded_optimizations(k2)),
            "[Opt(op=OptOps.UNROLL, axis=1, arg=0), Opt(op=OptOps.UNROLL, axis=0, arg=0)]");
}
