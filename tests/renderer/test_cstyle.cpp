// ClangRenderer against the reference: linearized uop lists (uop_lists.h) must render to the reference's C text byte
// for byte (tests/data/renderer/*.c), and that text must compile as C.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tg/renderer/cstyle.h"
#include "uop_lists.h"

namespace tg {
namespace {

using namespace render_cases;

std::string read_data(const std::string& name) {
  std::ifstream f(std::string(TG_TEST_DATA) + "/renderer/" + name, std::ios::binary);
  EXPECT_TRUE(f.good()) << "missing test data " << name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// *** compiling the rendered C: clang as tinygrad's CPU device does, else cc; skipped when neither exists ***

std::string c_compiler() {
  static const std::string cc = [] {
    if (std::system("command -v clang >/dev/null 2>&1") == 0) return std::string("clang");
    if (std::system("command -v cc >/dev/null 2>&1") == 0) return std::string("cc");
    return std::string();
  }();
  return cc;
}

// empty when it compiles, else the compiler's output
std::string compile_c(const std::string& src, const std::string& tag) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tg_test_renderer_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path c = dir / (tag + ".c"), o = dir / (tag + ".o"), log = dir / (tag + ".log");
  std::ofstream(c, std::ios::binary) << src;
  // the flags of tinygrad's ClangJITCompiler, minus the target triple
  std::string cmd =
      c_compiler() +
      " -c -x c -O2 -fPIC -ffreestanding -fno-math-errno -nostdlib -Werror=implicit-function-declaration " +
      c.string() + " -o " + o.string() + " >" + log.string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::stringstream ss;
  ss << std::ifstream(log).rdbuf();
  fs::remove_all(dir);
  return rc == 0 ? std::string() : ss.str() + "\n" + src;
}

// renders the rows with a fresh ClangRenderer, compares with the expected file, and compiles it with its entry shim
void check_render(const std::vector<Row>& rows, const std::string& expected_file, bool compile = true) {
  std::vector<UOp> uops = build(rows);
  ClangRenderer renderer;
  std::string out = renderer.render(uops);
  std::string expected = read_data(expected_file);
  EXPECT_EQ(out, expected) << "Output:\n" << out << "\nExpected:\n" << expected;
  if (!compile || c_compiler().empty()) return;
  ProgramSpec p = ProgramSpec::from_uops("k", out, "CPU", UOp{}, uops);
  std::string name = renderer.render_uops(uops).name;
  std::string err = compile_c(out + renderer.entry_shim(name, p.params), expected_file);
  EXPECT_EQ(err, "") << "rendered kernel does not compile";
}

// *** the reference's kernels (reference/golden), byte for byte ***

TEST(ClangRenderer, E4Upcast) { check_render(E_4_upcast, "E_4.upcast.c"); }        // t+3+4: 4 unrolled loads/stores
TEST(ClangRenderer, E4Noopt) { check_render(E_4_noopt, "E_4.noopt.c"); }           // NOOPT: one RANGE loop
TEST(ClangRenderer, R256NooptAcc) { check_render(r_256_noopt, "r_256.noopt.c"); }  // sum: DEFINE_ACC/ASSIGN
TEST(ClangRenderer, R444Float4) { check_render(r_4_4_4, "r_4_4_4.c"); }  // matmul: float4 load, GEP, nested loops
TEST(ClangRenderer, R16ReluFloat4) { check_render(r_16, "r_16.c"); }     // relu+sum: WHERE, long ADD chain
TEST(ClangRenderer, R444NooptAcc) { check_render(r_4_4_4_noopt, "r_4_4_4.noopt.c"); }  // acc inside two loops
TEST(ClangRenderer, R16ReluNoopt) { check_render(r_16_noopt, "r_16.noopt.c"); }
TEST(ClangRenderer, E644Vectorize) { check_render(E_64_4, "E_64_4.c"); }  // float4 store of a VECTORIZE
TEST(ClangRenderer, R644AccFloat4) { check_render(r_64_4, "r_64_4.c"); }
TEST(ClangRenderer, E1644PermuteCopy) { check_render(E_16_4_4, "E_16_4_4.c"); }
TEST(ClangRenderer, EScalar) { check_render(E_scalar, "E_.c"); }

// *** hand-made lists, rendered by the reference's ClangRenderer ***

// inf, nan, suffixes, casts: the reference's text (ref.E_consts.c) but for bfloat16, which is unsigned short here
// with a const rendered as its bits (clang 14 has no __bf16 on x86: the reference's kernel doesn't compile there)
TEST(ClangRenderer, ConstsOfEveryDtype) { check_render(ref_consts, "E_consts.c"); }
TEST(ClangRenderer, AluOps) { check_render(ref_alu, "ref.r_alu.c"); }  // every code_for_op, bitcast, var
TEST(ClangRenderer, GatedLoadIfVars) {
  check_render(ref_gated_if_vars, "ref.gated_if_vars.c");
}  // no KernelInfo: "test"
// half vectors are storage-only in C: compiled only by the reference, not here
TEST(ClangRenderer, Vectors) { check_render(ref_vectors, "ref.E_vec.c", false); }

// *** pieces ***

TEST(ClangRenderer, StripParens) {
  EXPECT_EQ(strip_parens("(a+b)"), "a+b");
  EXPECT_EQ(strip_parens("(a+b)+(c)"), "(a+b)+(c)");  // would not be one group: kept
  EXPECT_EQ(strip_parens("(a)+(b)"), "(a)+(b)");
  EXPECT_EQ(strip_parens("((a+b)*c)"), "(a+b)*c");
  EXPECT_EQ(strip_parens("a+b"), "a+b");
  EXPECT_EQ(strip_parens("(a"), "(a");
}

TEST(ClangRenderer, RenderDtype) {
  ClangRenderer r;
  EXPECT_EQ(r.render_dtype(dtypes::float32), "float");
  EXPECT_EQ(r.render_dtype(dtypes::bool_), "_Bool");
  EXPECT_EQ(r.render_dtype(dtypes::half), "__fp16");
  EXPECT_EQ(r.render_dtype(dtypes::uint8.vec(4)), "unsigned_char4");
  EXPECT_EQ(r.render_dtype(dtypes::float32.vec(4).ptr(16)), "float4*");
  EXPECT_EQ(r.render_dtype(dtypes::int64), "long");
  EXPECT_EQ(r.render_cast(dtypes::half, "x"), "(__fp16)(x)");
  EXPECT_EQ(r.render_vector_prefix(dtypes::float32.vec(3)),
            "typedef float float3 __attribute__((aligned(8),vector_size(12)));");  // aligned: rounded down to 2**n
  CStyleLanguage base;
  EXPECT_EQ(base.render_dtype(dtypes::bool_), "bool");
  EXPECT_TRUE(base.code_for_op.has(Ops::EXP2));
  // exp2, log2, sin decomposed into polynomials, as tinygrad's ClangRenderer
  EXPECT_FALSE(r.code_for_op.has(Ops::EXP2) || r.code_for_op.has(Ops::LOG2) || r.code_for_op.has(Ops::SIN));
  EXPECT_FALSE(r.code_for_op.has(Ops::MAX));  // MAX becomes CMPLT+WHERE (extra_matcher)
}

TEST(ClangRenderer, Options) {
  ClangRenderer r;
  EXPECT_EQ(r.device, "CPU");
  EXPECT_FALSE(r.has_local);
  EXPECT_TRUE(r.has_shared);
  EXPECT_TRUE(r.supports_float4);
  EXPECT_FALSE(r.global_max.has_value());
  ASSERT_TRUE(r.local_max.has_value());
  EXPECT_EQ((*r.local_max)[0], 0x8FFFFFFF);
  EXPECT_EQ(r.shared_max, 32768);
}

TEST(ClangRenderer, NotRenderable) {  // a uop no rule renders is an InternalError, as tinygrad's assert
  ClangRenderer r;
  UOp g = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(4), {}, ConstValue(int64_t(0)));
  UOp x = UOp::make(Ops::THREEFRY, dtypes::float32, {UOp::const_(dtypes::float32, 1.0)});  // never rendered
  UOp st = UOp::make(Ops::STORE, dtypes::void_, {g.index(UOp::const_(dtypes::int32, 0)), x});
  std::vector<UOp> uops = {g, x.src(0), st.src(0).src(1), st.src(0), x, st, UOp::sink({st})};
  EXPECT_THROW(r.render(uops), InternalError);
}

// *** extra_matcher: the uop rewrites before linearizing ***

TEST(ClangRenderer, ExtraMatcherMax) {  // max(a,b) -> (a<b)?b:a
  ClangRenderer r;
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  UOp out = graph_rewrite(a.maximum(b), *r.extra_matcher);
  EXPECT_EQ(out, (a < b).where(b, a));
}

TEST(ClangRenderer, ExtraMatcherBitcastNoop) {  // bitcast(x) -> bitcast(noop(x))
  ClangRenderer r;
  UOp a = UOp::variable("a", 0, 10);
  UOp out = graph_rewrite(a.bitcast(dtypes::float32), *r.extra_matcher);
  ASSERT_EQ(out.op(), Ops::BITCAST);
  EXPECT_EQ(out.src(0).op(), Ops::NOOP);
  EXPECT_EQ(out.src(0).src(0), a);
}

TEST(ClangRenderer, ExtraMatcherDevectorizesWhere) {  // where on float4 -> VECTORIZE of 4 scalar wheres
  ClangRenderer r;
  UOp g = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.vec(4).ptr(4), {}, ConstValue(int64_t(0)));
  UOp v = g.index(UOp::const_(dtypes::int32, 0)).load();
  UOp c = UOp::make(Ops::DEFINE_GLOBAL, dtypes::bool_.vec(4).ptr(4), {}, ConstValue(int64_t(1)))
              .index(UOp::const_(dtypes::int32, 0))
              .load();
  UOp w = UOp::make(Ops::WHERE, dtypes::float32.vec(4), {c, v, v});
  UOp out = graph_rewrite(w, *r.extra_matcher);
  ASSERT_EQ(out.op(), Ops::VECTORIZE);
  ASSERT_EQ(out.src().size(), 4u);
  EXPECT_EQ(out.src(2).op(), Ops::WHERE);
  EXPECT_EQ(out.src(2).dtype(), dtypes::float32);
  EXPECT_EQ(out.src(2).src(1), v.gep(2));
}

// 4 lanes of `scalar` loaded from buffer `arg`
UOp load4(DType scalar, int64_t arg) {
  return UOp::make(Ops::DEFINE_GLOBAL, scalar.vec(4).ptr(4), {}, ConstValue(arg))
      .index(UOp::const_(dtypes::int32, 0))
      .load();
}

// ours: a select of float lanes by a comparison of 32-bit lanes -> a blend of masks, (m & a) | (~m & b), with m the
// comparison as C gives it for vectors (0 / -1 ints); a condition the same in every lane keeps C's ?: of whole vectors
TEST(ClangRenderer, ExtraMatcherSelectsByMasks) {
  ClangRenderer r;
  UOp a = load4(dtypes::float32, 0), b = load4(dtypes::float32, 1);
  UOp out = graph_rewrite((a < b).where(b, a), *r.extra_matcher);
  const DType m4 = dtypes::int32.vec(4);
  ASSERT_EQ(out.op(), Ops::BITCAST);
  EXPECT_EQ(out.dtype(), dtypes::float32.vec(4));
  UOp blend = out.src(0).op() == Ops::NOOP ? out.src(0).src(0) : out.src(0);
  ASSERT_EQ(blend.op(), Ops::OR);
  EXPECT_EQ(blend.dtype(), m4);
  UOp m = blend.src(0).src(0);
  EXPECT_EQ(m.op(), Ops::CMPLT);
  EXPECT_EQ(m.dtype(), m4);
  EXPECT_EQ(m.src(0), a);
  EXPECT_EQ(m.src(1), b);
  // the same in every lane: one scalar condition
  UOp s = UOp::variable("s", 0, 10).cast(dtypes::float32);
  UOp same =
      graph_rewrite((s.broadcast(4) < UOp::const_(dtypes::float32, 1.0).broadcast(4)).where(a, b), *r.extra_matcher);
  EXPECT_EQ(same.op(), Ops::WHERE);
  EXPECT_EQ(same.src(0).dtype(), dtypes::bool_);
}

TEST(ClangRenderer, ExtraMatcherDoubleToHalf) {  // (half)double -> (half)(float)double
  ClangRenderer r;
  UOp d = UOp::variable("d", 0, 10).cast(dtypes::float64);
  UOp out = graph_rewrite(d.cast(dtypes::half), *r.extra_matcher);
  EXPECT_EQ(out, d.cast(dtypes::float32).cast(dtypes::half));
}

// ours: halves put together from two whole loaded vectors, widened -> each vector widened, the floats put together
// (one vcvtph2ps each, where clang built the halves' vector a word insert per lane); a lane out of order keeps the cast
TEST(ClangRenderer, ExtraMatcherWidensHalvesByPiece) {
  ClangRenderer r;
  UOp a = load4(dtypes::float16, 0), b = load4(dtypes::float16, 1);
  std::vector<UOp> lanes;
  for (const UOp& v : {a, b})
    for (int64_t i = 0; i < 4; i++) lanes.push_back(v.gep(i));
  UOp out = graph_rewrite(UOp::make(Ops::VECTORIZE, dtypes::float16.vec(8), lanes).cast(dtypes::float32.vec(8)),
                          *r.extra_matcher);
  ASSERT_EQ(out.op(), Ops::VECTORIZE);
  EXPECT_EQ(out.src(1), a.cast(dtypes::float32.vec(4)).gep(1));
  EXPECT_EQ(out.src(6), b.cast(dtypes::float32.vec(4)).gep(2));
  std::swap(lanes[0], lanes[1]);
  UOp kept = graph_rewrite(UOp::make(Ops::VECTORIZE, dtypes::float16.vec(8), lanes).cast(dtypes::float32.vec(8)),
                           *r.extra_matcher);
  EXPECT_EQ(kept.op(), Ops::CAST);
}

// ours: lanes of vectors converted between half and float one by one, put together again (a devectorized kernel's
// casts feeding a vector store) -> each vector converted once, the lanes taken (clang converted lane by lane: a 46 MB
// half-to-float copy 12 -> 2.6 ms); another cast, or a lane of something else, keeps them
TEST(ClangRenderer, ExtraMatcherConvertsWholeVectorsBetweenHalfAndFloat) {
  ClangRenderer r;
  UOp h = load4(dtypes::float16, 0), f = load4(dtypes::float32, 1);
  auto lanes = [](const UOp& v, DType to, std::vector<int64_t> idx) {
    std::vector<UOp> out;
    for (int64_t i : idx) out.push_back(v.gep(i).cast(to));
    return UOp::make(Ops::VECTORIZE, to.vec(static_cast<int>(idx.size())), out);
  };
  EXPECT_EQ(graph_rewrite(lanes(h, dtypes::float32, {0, 1, 2, 3}), *r.extra_matcher), h.cast(dtypes::float32.vec(4)));
  EXPECT_EQ(graph_rewrite(lanes(f, dtypes::float16, {0, 1, 2, 3}), *r.extra_matcher), f.cast(dtypes::float16.vec(4)));
  UOp part = graph_rewrite(lanes(h, dtypes::float32, {2, 3}), *r.extra_matcher);
  ASSERT_EQ(part.op(), Ops::VECTORIZE);
  EXPECT_EQ(part.src(0), h.cast(dtypes::float32.vec(4)).gep(2));
  EXPECT_EQ(part.src(1), h.cast(dtypes::float32.vec(4)).gep(3));
  // lanes of several vectors (a transposed copy's): each vector converted whole
  UOp h2 = load4(dtypes::float16, 2);
  UOp two = graph_rewrite(UOp::make(Ops::VECTORIZE, dtypes::float32.vec(2),
                                    {h.gep(1).cast(dtypes::float32), h2.gep(1).cast(dtypes::float32)}),
                          *r.extra_matcher);
  ASSERT_EQ(two.op(), Ops::VECTORIZE);
  EXPECT_EQ(two.src(0), h.cast(dtypes::float32.vec(4)).gep(1));
  EXPECT_EQ(two.src(1), h2.cast(dtypes::float32.vec(4)).gep(1));
  // a lane that is not such a cast keeps them all
  UOp mixed = UOp::make(Ops::VECTORIZE, dtypes::float32.vec(2), {h.gep(0).cast(dtypes::float32), f.gep(0)});
  EXPECT_EQ(graph_rewrite(mixed, *r.extra_matcher), mixed);
  UOp ints = lanes(h, dtypes::int32, {0, 1});
  EXPECT_EQ(graph_rewrite(ints, *r.extra_matcher), ints);
}

// *** ProgramSpec and the entry shim ***

TEST(ProgramSpec, FromUops) {
  std::vector<UOp> uops = build(ref_gated_if_vars);
  ClangRenderer r;
  ProgramSpec p = ProgramSpec::from_uops("test", r.render(uops), "CPU", UOp{}, uops);
  EXPECT_EQ(p.globals, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(p.outs, (std::vector<int64_t>{0}));
  EXPECT_EQ(p.ins, (std::vector<int64_t>{1}));
  ASSERT_EQ(p.vars.size(), 2u);
  EXPECT_EQ(p.vars[0].arg<VarArg>().name, "a");  // sorted by arg
  EXPECT_EQ(p.vars[1].arg<VarArg>().name, "b");
  ASSERT_EQ(p.params.size(), 4u);  // signature order: data0, data1, b, a
  EXPECT_EQ(p.params[0].name, "data0");
  EXPECT_TRUE(p.params[0].is_mutable);
  EXPECT_FALSE(p.params[1].is_mutable);
  EXPECT_EQ(p.params[2].name, "b");
  EXPECT_EQ(p.params[2].index, 1);  // b is vars[1]
  EXPECT_EQ(p.params[3].index, 0);
  EXPECT_EQ(p.global_size, (LaunchSize{1, 1, 1}));
  EXPECT_EQ(p.local_size, (LaunchSize{1, 1, 1}));
  // 16 iterations: loads 4 bytes, stores 4 bytes; the ADD and both CMPLTs are indexing, not counted
  EXPECT_EQ(p.estimates.ops, 0);
  EXPECT_EQ(p.estimates.lds, 16 * 8);
  EXPECT_EQ(r.entry_shim("test", p.params),
            "void tg_entry_test(void** bufs, const long long* vars) { test((float*)bufs[0], (float*)bufs[1], "
            "(int)vars[1], (int)vars[0]); }\n");
}

TEST(ProgramSpec, EstimatesE4) {  // 4 adds, 4 int loads and 4 int stores
  std::vector<UOp> uops = build(E_4_upcast);
  ProgramSpec p = ProgramSpec::from_uops("E_4", "", "CPU", UOp{}, uops);
  EXPECT_EQ(p.estimates.ops, 4);
  EXPECT_EQ(p.estimates.lds, 32);
  EXPECT_EQ(p.estimates.mem, 0);  // mem_estimate
  EXPECT_EQ(ClangRenderer().entry_shim("E_4", p.params),
            "void tg_entry_E_4(void** bufs, const long long* vars) { E_4((int*)bufs[0], (int*)bufs[1]); }\n");
}

TEST(ProgramSpec, EstimatesLoop) {  // r_256: 256 iterations of one load and one add; one store
  ProgramSpec p = ProgramSpec::from_uops("r_256", "", "CPU", UOp{}, build(r_256_noopt));
  EXPECT_EQ(p.estimates.ops, 256);
  EXPECT_EQ(p.estimates.lds, 256 * 4 + 4);
}

}  // namespace
}  // namespace tg
