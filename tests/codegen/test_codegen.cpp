// the codegen pipeline against the reference's printed graphs and linearized uop lists
// (tests/data/codegen/: graphs.out C7-C12, mm_relu_sum.DEBUG6.out, t347.DEBUG6.out)
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "tg/codegen/devectorizer.h"
#include "tg/codegen/kernel.h"
#include "tg/codegen/pipeline.h"
#include "tg/renderer/cstyle.h"
#include "tg/shape/shapetracker.h"
#include "tg/uop/kernel_info.h"

using namespace tg;

namespace {

std::string read_file(const std::string& name) {
  std::ifstream f(std::string(TG_TEST_DATA) + "/codegen/" + name);
  EXPECT_TRUE(f.good()) << "missing " << name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// graphs.out: "#### C8 ..." label -> the text up to the next label, without the trailing newline
std::string graph_case(const std::string& label) {
  static const std::map<std::string, std::string> cases = [] {
    std::map<std::string, std::string> out;
    std::istringstream f(read_file("graphs.out"));
    std::string cur;
    for (std::string line; std::getline(f, line);) {
      if (line.rfind("#### ", 0) == 0) {
        cur = line.substr(5, line.find(' ', 5) - 5);
        out[cur];
      } else if (!cur.empty()) {
        out[cur] += (out[cur].empty() ? "" : "\n") + line;
      }
    }
    return out;
  }();
  auto it = cases.find(label);
  EXPECT_NE(it, cases.end()) << "no case " << label;
  return it == cases.end() ? "" : it->second;
}

// every maximal run of print_uops lines ("   0 Ops.DEFINE_GLOBAL ...") in a DEBUG6 log, one string per kernel
std::vector<std::string> uop_lists(const std::string& file) {
  static const std::regex row(R"(^ {0,3}\d+ Ops\.)");
  std::vector<std::string> out;
  std::istringstream f(read_file(file));
  bool in = false;
  for (std::string line; std::getline(f, line);) {
    bool r = std::regex_search(line, row);
    if (r && !in) out.emplace_back();
    if (r) out.back() += line + "\n";
    in = r;
  }
  return out;
}

// reference_uops.out (generated with the reference tinygrad, see its header): "#### name", the optimized AST,
// "----", then print_uops of full_rewrite(ast, ClangRenderer())
std::pair<std::string, std::string> reference_case(const std::string& name) {
  static const std::map<std::string, std::pair<std::string, std::string>> cases = [] {
    std::map<std::string, std::pair<std::string, std::string>> out;
    std::istringstream f(read_file("reference_uops.out"));
    std::string cur;
    bool uops = false;
    for (std::string line; std::getline(f, line);) {
      if (line.rfind("#### ", 0) == 0) {
        cur = line.substr(5), uops = false;
      } else if (line == "----") {
        uops = true;
      } else if (!cur.empty()) {
        auto& [a, u] = out[cur];
        if (uops)
          u += line + "\n";
        else
          a += (a.empty() ? "" : "\n") + line;
      }
    }
    return out;
  }();
  auto it = cases.find(name);
  EXPECT_NE(it, cases.end()) << "no case " << name;
  return it == cases.end() ? std::pair<std::string, std::string>{} : it->second;
}

std::string print(const std::vector<UOp>& uops) {
  std::ostringstream os;
  print_uops(uops, os);
  return os.str();
}

// *** AST builders ***

UOp global(DType ptr, int64_t i) { return UOp::make(Ops::DEFINE_GLOBAL, ptr, {}, ConstValue(i)); }
UOp view(const UOp& buf, const Shape& shape, std::optional<Shape> strides = {}) {
  return UOp::make(Ops::VIEW, buf.dtype(), {buf}, st_arg(ShapeTracker::from_shape(shape, std::move(strides))));
}
UOp load(const UOp& v) { return UOp::make(Ops::LOAD, v.dtype().base(), {v}); }
UOp store(const UOp& v, const UOp& val) { return UOp::make(Ops::STORE, dtypes::void_, {v, val}); }
UOp const_view(DType dt, ConstValue c, const Shape& shape) {
  Shape zeros(shape.size(), 0);
  return UOp::make(Ops::CONST, dt, {ShapeTracker::from_shape(shape, zeros).to_uop()}, c);
}
UOp reduce_axis(const UOp& x, Ops op, std::vector<int64_t> axes) {
  return UOp::make(Ops::REDUCE_AXIS, x.dtype(), {x}, ReduceArg{op, std::move(axes)});
}

// C7 (and C10 with a KernelInfo): out[i] = in[i] + 3 + 4 over (4,) ints
UOp ast_add34(Arg sink_arg = {}) {
  DType p = dtypes::int32.ptr(4);
  UOp in = load(view(global(p, 1), {4}));
  UOp sum = UOp::make(Ops::ADD, dtypes::int32,
                      {UOp::make(Ops::ADD, dtypes::int32, {in, const_view(dtypes::int32, int64_t(3), {4})}),
                       const_view(dtypes::int32, int64_t(4), {4})});
  return UOp::sink({store(view(global(p, 0), {4}), sum)}, std::move(sink_arg));
}

// the 4x4 matmul of mm_relu_sum: out(4,4,1) = sum over axis 2 of a(4,4,4)*b(4,4,4)
UOp ast_matmul4(Arg sink_arg = {}) {
  DType p = dtypes::float32.ptr(16);
  UOp a = load(view(global(p, 1), {4, 4, 4}, Shape{4, 0, 1}));
  UOp b = load(view(global(p, 2), {4, 4, 4}, Shape{0, 1, 4}));
  UOp r = reduce_axis(UOp::make(Ops::MUL, dtypes::float32, {a, b}), Ops::ADD, {2});
  return UOp::sink({store(view(global(p, 0), {4, 4, 1}), r)}, std::move(sink_arg));
}

// relu + sum of 16 floats (mm_relu_sum's second kernel, after its opts): sum((0<x)?x:0)
UOp ast_relu_sum16(Arg sink_arg = {}) {
  UOp x = load(view(global(dtypes::float32.ptr(16), 1), {16}));
  UOp zero = const_view(dtypes::float32, 0.0, {16});
  UOp w = UOp::make(Ops::WHERE, dtypes::float32, {UOp::make(Ops::CMPLT, dtypes::bool_, {zero, x}), x, zero});
  return UOp::sink({store(view(global(dtypes::float32.ptr(1), 0), {1}, Shape{0}), reduce_axis(w, Ops::ADD, {0}))},
                   std::move(sink_arg));
}

// sum of 256 floats, NOOPT (r_256)
UOp ast_sum256(Arg sink_arg = {}) {
  UOp x = load(view(global(dtypes::float32.ptr(256), 1), {256}));
  return UOp::sink({store(view(global(dtypes::float32.ptr(1), 0), {1}, Shape{0}), reduce_axis(x, Ops::ADD, {0}))},
                   std::move(sink_arg));
}

// a VIEW over buf with one View(shape, strides, offset, mask)
UOp view_masked(const UOp& buf, const Shape& shape, const Shape& strides, sint offset, std::optional<Mask> mask) {
  return UOp::make(Ops::VIEW, buf.dtype(), {buf},
                   st_arg(ShapeTracker{{View::create(shape, strides, offset, std::move(mask))}}));
}

// the 16x16 reduce of row or column: out(16,1) = reduce over axis 1 of in(16,16) with the given strides
UOp ast_reduce16x16(Ops op, const Shape& strides, Arg sink_arg) {
  UOp x = load(view(global(dtypes::float32.ptr(256), 1), {16, 16}, strides));
  return UOp::sink({store(view(global(dtypes::float32.ptr(16), 0), {16, 1}), reduce_axis(x, op, {1}))},
                   std::move(sink_arg));
}

// out = x + 1.0 for float buffers: out over out_view, x over in_view
UOp ast_add1(const UOp& out_view, const UOp& in_view, const Shape& shape, Arg sink_arg) {
  UOp sum = UOp::make(Ops::ADD, dtypes::float32, {load(in_view), const_view(dtypes::float32, 1.0, shape)});
  return UOp::sink({store(out_view, sum)}, std::move(sink_arg));
}

// checks the hand-built AST against the reference's, then the linearized uops
void check_reference(const std::string& name, const UOp& ast) {
  auto [want_ast, want_uops] = reference_case(name);
  EXPECT_EQ(ast.repr(), want_ast) << name;
  EXPECT_EQ(print(full_rewrite(ast, &RenderOpts::cpu())), want_uops) << name;
}

}  // namespace

// *** the golden graphs ***

TEST(Codegen, AstMatchesC7) { EXPECT_EQ(ast_add34().repr(), graph_case("C7")); }

TEST(Codegen, FullRewriteGenericRendererC8) { EXPECT_EQ(full_rewrite_to_sink(ast_add34()).repr(), graph_case("C8")); }

TEST(Codegen, FullRewriteCpuRendererC9) {
  EXPECT_EQ(full_rewrite_to_sink(ast_add34(), &RenderOpts::cpu()).repr(), graph_case("C9"));
}

TEST(Codegen, OptimizedAstC10) {
  std::string c10 = graph_case("C10");
  EXPECT_EQ(ast_add34(kernel_info("E_4", 0, 1)).repr(), c10.substr(c10.find('\n') + 1));  // after the opts line
}

TEST(Codegen, UpcastedRewriteC11) {
  EXPECT_EQ(full_rewrite_to_sink(ast_add34(kernel_info("E_4", 0, 1)), &RenderOpts::cpu()).repr(), graph_case("C11"));
}

TEST(Codegen, LinearizedC12) {
  EXPECT_EQ(print(full_rewrite(ast_add34(kernel_info("E_4", 0, 1)), &RenderOpts::cpu())), graph_case("C12") + "\n");
}

// *** DEBUG=6 uop lists ***

TEST(Codegen, T347Debug6) {
  auto lists = uop_lists("t347.DEBUG6.out");
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_EQ(print(full_rewrite(ast_add34(kernel_info("E_4", 0, 1)), &RenderOpts::cpu())), lists[0]);
}

TEST(Codegen, MatmulUnrolledDebug6) {
  auto lists = uop_lists("mm_relu_sum.DEBUG6.out");
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(print(full_rewrite(ast_matmul4(kernel_info("r_4_4_4", 0, 1)), &RenderOpts::cpu())), lists[0]);
}

TEST(Codegen, ReluSumUnrolledDebug6) {
  auto lists = uop_lists("mm_relu_sum.DEBUG6.out");
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(print(full_rewrite(ast_relu_sum16(kernel_info("r_16", 0, 1)), &RenderOpts::cpu())), lists[1]);
}

// *** NOOPT reduce kernels ***

TEST(Codegen, Sum256Noopt) { check_reference("r_256", ast_sum256(kernel_info("r_256"))); }
TEST(Codegen, Matmul4Noopt) { check_reference("r_4_4_4", ast_matmul4(kernel_info("r_4_4_4"))); }
TEST(Codegen, SumAxis0Noopt) {
  check_reference("r_16_16_axis0", ast_reduce16x16(Ops::ADD, {1, 16}, kernel_info("r_16_16")));
}
TEST(Codegen, MaxAxis1Noopt) {
  check_reference("max_axis1", ast_reduce16x16(Ops::MAX, {16, 1}, kernel_info("r_16_16n1")));
}

// *** masked loads and upcasts ***

TEST(Codegen, PadMaskedLoadNoopt) {
  UOp out = view(global(dtypes::float32.ptr(24), 0), {6, 4});
  UOp in = view_masked(global(dtypes::float32.ptr(16), 1), {6, 4}, {4, 1}, -4, Mask{{1, 5}, {0, 4}});
  check_reference("pad", ast_add1(out, in, {6, 4}, kernel_info("E_6_4")));
}

TEST(Codegen, Float4UpcastOpt) {
  UOp out = view(global(dtypes::float32.ptr(256), 0), {64, 4});
  UOp in = view(global(dtypes::float32.ptr(256), 1), {64, 4});
  check_reference("ew16x16_opt", ast_add1(out, in, {64, 4}, kernel_info("E_64_4", 0, 1)));
}

TEST(Codegen, PadUpcastMaskedOpt) {
  UOp out = view(global(dtypes::float32.ptr(24), 0), {4, 6}, Shape{1, 4});
  UOp in = view_masked(global(dtypes::float32.ptr(16), 1), {4, 6}, {1, 4}, -4, Mask{{0, 4}, {1, 5}});
  check_reference("pad_opt", ast_add1(out, in, {4, 6}, kernel_info("E_4_6", 0, 1)));
}

// *** a Renderer instance gives the same pipeline as its RenderOpts ***

TEST(Codegen, ClangRendererInstance) {
  ClangRenderer r;
  UOp ast = ast_matmul4(kernel_info("r_4_4_4", 0, 1));
  EXPECT_EQ(print(full_rewrite(ast, r)), print(full_rewrite(ast, &RenderOpts::cpu())));
  EXPECT_EQ(full_rewrite_to_sink(ast_add34(), r).repr(), graph_case("C9"));
}

// *** reduce_collapse: an arange is a REDUCE without loads, folded to closed form ***

TEST(Codegen, ArangeCollapsed) {
  ShapeTracker st{
      {View::create({17, 31}, Shape{0, 0}, 0, Mask{{0, 17}, {15, 31}}), View::create({16, 16}, Shape{1, 32})}};
  UOp valid = UOp::make(Ops::VALID, dtypes::bool_, {st.to_uop()});
  UOp ones = UOp::make(
      Ops::WHERE, dtypes::int32,
      {valid, const_view(dtypes::int32, int64_t(1), {16, 16}), const_view(dtypes::int32, int64_t(0), {16, 16})});
  UOp sum = UOp::make(Ops::ADD, dtypes::int32,
                      {reduce_axis(ones, Ops::ADD, {1}), const_view(dtypes::int32, int64_t(-1), {16, 1})});
  UOp ast = UOp::sink({store(view(global(dtypes::int32.ptr(16), 0), {16, 1}), sum)}, kernel_info("r_16_16n2"));
  check_reference("arange", ast);
}

// the same arange, 1024 long, upcast and unrolled by 4 as the heuristic does for Tensor.rand's counter: the REDUCE of
// a vector is split into scalar REDUCEs first, so it still folds: one loop (the output's), not 1024 x 1024 steps
TEST(Codegen, UnrolledArangeCollapsed) {
  sint n = 1024;
  ShapeTracker st{{View::create({n + 1, 2 * n - 1}, Shape{0, 0}, 0, Mask{{0, n + 1}, {n - 1, 2 * n - 1}}),
                   View::create({n, n}, Shape{1, 2 * n})}};
  UOp valid = UOp::make(Ops::VALID, dtypes::bool_, {st.to_uop()});
  UOp ones =
      UOp::make(Ops::WHERE, dtypes::int32,
                {valid, const_view(dtypes::int32, int64_t(1), {n, n}), const_view(dtypes::int32, int64_t(0), {n, n})});
  UOp ast = UOp::sink({store(view(global(dtypes::int32.ptr(n), 0), {n, 1}), reduce_axis(ones, Ops::ADD, {1}))},
                      kernel_info("r_1024_1024"));
  Kernel k(ast, RenderOpts::cpu());
  k.apply_opt({OptOps::UPCAST, 0, 4});
  k.apply_opt({OptOps::UNROLL, 0, 4});
  int ranges = 0;
  for (const UOp& u : full_rewrite(k.get_optimized_ast("r"), RenderOpts::cpu())) ranges += u.op() == Ops::RANGE;
  EXPECT_EQ(ranges, 1);
}

TEST(LateRewrites, AMultiplyByASelectOfAPowerOfTwoIsAShiftSelected) {
  // x*(c?2**32:0) -> c?(x<<32):0: threefry's 64-bit word from two halves, the high one padded (a cat of counters),
  // where AVX2 has no 64-bit vector multiply; a select of another constant, or of a nonzero one, stays a multiply
  ClangRenderer r;
  const PatternMatcher<UOp, const RenderOpts> pm = get_late_rewrite_patterns(r.code_for_op);
  const UOp x = UOp::variable("x", 0, 1000).cast(dtypes::uint64), c = UOp::variable("i", 0, 15) < 8;
  auto rewrite = [&](const UOp& u) {
    const RenderOpts& opts = r;
    return graph_rewrite(u, pm, opts);
  };
  EXPECT_EQ(rewrite(x * c.where(x.const_like(int64_t(1) << 32), x.const_like(0))),
            c.where(x << int64_t(32), x.const_like(0)));
  for (const UOp& odd : {x * c.where(x.const_like(3), x.const_like(0)), x * c.where(x.const_like(4), x.const_like(1))})
    EXPECT_EQ(rewrite(odd).op(), Ops::MUL) << rewrite(odd).repr();
}
