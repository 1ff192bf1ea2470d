// The CPU vector tiles (codegen/heuristic.h cpu_vector_tile): which opts a big matmul / conv kernel gets, that small
// kernels and GPU-like targets keep the reference's heuristic, and how a tile renders (vector accumulators, the
// lanes of a reduce tile summed after its loop). Their results are checked in tests/runtime/test_threads.cpp and
// tests/ops (the kernels a Tensor program compiles).
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <tuple>

#include "kernel_asts.h"
#include "scoped_env.h"
#include "small_ints.h"
#include "tg/codegen/cpu_tiles.h"
#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/codegen/pipeline.h"
#include "tg/engine/realize.h"
#include "tg/nn/gguf.h"
#include "tg/renderer/cstyle.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"
#include "tg/uop/kernel_info.h"

using namespace tg;
using namespace tg::test;

namespace {

// conv2d forward, batch b, 32 -> 32 channels, 5x5 on 24x24 (the second conv of the MNIST model)
UOp conv_forward(sint b) {
  return sum_of_products({b, 32, 20, 20, 32, 5, 5}, {b, 32, 20, 20, 1, 1, 1}, {18432, 0, 24, 1, 576, 24, 1}, b * 18432,
                         {0, 800, 0, 0, 25, 5, 1}, 25600, {4, 5, 6});
}
// the weight gradient of that conv, as the scheduler splits its reduce over the batch: (co, ci, ky, kx, b/4) summing
// (b%4, oy, ox) of grad_out[b, co, oy, ox] * x[b, ci, oy+ky, ox+kx]
UOp conv_weight_grad() {
  return sum_of_products({32, 32, 5, 5, 128, 4, 20, 20}, {32, 32, 5, 5, 128, 1, 1, 1},
                         {400, 0, 0, 0, 51200, 12800, 20, 1}, 6553600, {0, 576, 24, 1, 73728, 18432, 24, 1}, 9437184,
                         {5, 6, 7});
}

std::string opts_of(const std::optional<CpuTile>& t) { return t ? opts_repr(t->opts) : "nullopt"; }

// the lane budget of the default device's target (CPU_ARCH's, as the kernels below see it)
int lanes() { return cpu_tile_lanes(Kernel(matmul(128)).opts); }

// the lanes (the product of the UPCASTs) of k's tile
int64_t upcast_lanes(const Kernel& k) {
  std::optional<CpuTile> t = cpu_vector_tile(k);
  EXPECT_TRUE(t.has_value());
  int64_t n = 1;
  for (const Opt& o : t ? t->opts : std::vector<Opt>{})
    if (o.op == OptOps::UPCAST) n *= std::get<int>(o.arg);
  return n;
}
int64_t upcast_lanes(const UOp& ast) { return upcast_lanes(Kernel(ast)); }

// the tile of ast with each lane budget, pinned (the same on every host): 256 (32 registers) and 128 (16)
void expect_tiles(const UOp& ast, const std::string& with256, const std::string& with128) {
  {
    ScopedEnv budget("CPU_TILE_LANES", "256");
    EXPECT_EQ(opts_of(cpu_vector_tile(Kernel(ast))), with256);
  }
  ScopedEnv budget("CPU_TILE_LANES", "128");
  EXPECT_EQ(opts_of(cpu_vector_tile(Kernel(ast))), with128);
}

// the tile applied to k as the heuristic applies it: its opts and its Lowering (vector ALUs kept)
void apply_tile(Kernel& k, const CpuTile& t) {
  k.apply_opts(t.opts);
  k.lowering = t.lowering();
}

// renders k, a tile applied, with its vector ALUs (the Lowering its optimized AST's KernelInfo carries)
std::string render_tile(Kernel& k) {
  EXPECT_TRUE(k.lowering.vector_alus);
  ClangRenderer r;
  return r.render(full_rewrite(k.get_optimized_ast("tile"), r));
}

// the kernel of y = x @ W.T
UOp matvec_of(const Tensor& w) {
  Tensor x = Tensor::ones({1, w.shape()[1]}).contiguous().realize();
  auto [sched, vars] = Tensor::schedule_with_vars({x.matmul(w.T())});
  EXPECT_EQ(sched.size(), 1u);
  return sched.at(0).ast;
}
// W (rows, cols) dequantized from GGUF blocks of `type` (any bytes: only the kernel counts)
UOp packed_matvec(uint32_t type, int64_t rows, int64_t cols) {
  nn::GGMLTypeTraits tr = *nn::ggml_type_traits(type);
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * cols / tr.block_size * tr.type_size), 1);
  Tensor raw = Tensor(bytes, {static_cast<int64_t>(bytes.size())}).realize();
  return matvec_of(nn::ggml_data_to_tensor(raw, rows * cols, type).reshape({rows, cols}));
}
// k rendered by its device's renderer (with the target's capabilities: unaligned vector loads of bytes)
std::string render_on_device(Kernel& k) {
  Renderer& r = *Device::get().renderer;
  return r.render(full_rewrite(k.get_optimized_ast("tile"), r));
}

// the sources of the kernels t's schedule runs, in order ("(not compiled)" for a step that is no kernel)
std::vector<std::string> kernel_sources(const Tensor& t) {
  auto [schedule, vars] = Tensor::schedule_with_vars({t});
  std::vector<std::string> out;
  for (const ScheduleItem& si : schedule) {
    auto runner = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(si).prg);
    out.push_back(runner ? runner->p.src : std::string("(not compiled)"));
  }
  return out;
}
// the source of the last kernel t's schedule runs (what realizing t compiles last)
std::string last_kernel_source(const Tensor& t) {
  std::vector<std::string> all = kernel_sources(t);
  return all.empty() ? std::string("(no kernel)") : all.back();
}

}  // namespace

TEST(CpuTile, MatmulOutputLanes) {
  // j (contiguous in b, broadcast in a) takes the inner lanes (two AVX-512 registers: 32), i (b repeats along it) 8
  // more; k is not unrolled (ARegisterTileBroadcastsOneReduceStepAtATime). With 16 registers a's 16K floats stay in
  // cache: j takes one register (8 AVX2 lanes), so the 8 x 8 accumulators leave registers for the operands
  // (SmallBroadcastInputHalvesSixteenRegisters)
  const bool wide = lanes() == 256;
  const int tile = wide ? lanes() : lanes() / 2;
  Kernel k(matmul(128));
  std::optional<CpuTile> t = cpu_vector_tile(k);
  EXPECT_EQ(opts_of(t),
            cat("[Opt(op=OptOps.UPCAST, axis=0, arg=8), Opt(op=OptOps.UPCAST, axis=1, arg=", tile / 8, ")]"));
  EXPECT_FALSE(t->reduce_lanes);
  EXPECT_EQ(opts_repr(hand_coded_optimizations(k)), opts_repr(t->opts));  // the heuristic takes it
  apply_tile(k, *t);
  std::string src = render_tile(k);
  // one accumulator of 8x32 (8x8) lanes
  EXPECT_NE(src.find(cat("float", tile, " acc0 = ")), std::string::npos) << src;
  EXPECT_NE(src.find(wide ? "for (int ridx1 = 0; ridx1 < 4; ridx1++)" : "for (int ridx0 = 0; ridx0 < 16; ridx0++)"),
            std::string::npos)
      << src;
}

TEST(CpuTile, ConvForwardFillsSixteenLanes) {
  // ox (20) gives 4 lanes; oy fills them to 16 (rows of x, w broadcast); co takes the outer lanes (x repeats along
  // it): 16 of a 256-lane budget; a 16-register target (128 lanes) holds half as many of a conv's accumulators: 4
  Kernel k(conv_forward(8));
  EXPECT_EQ(opts_of(cpu_vector_tile(k)), cat("[Opt(op=OptOps.UPCAST, axis=1, arg=", lanes() == 256 ? 16 : lanes() / 32,
                                             "), Opt(op=OptOps.UPCAST, axis=2, arg=4), "
                                             "Opt(op=OptOps.UPCAST, axis=3, arg=4)]"));
}

TEST(CpuTile, WholeAxisLanes) {
  // a channels-last weight gradient, (co, ci) summing (b, oy, ox) of g[b, oy, ox, co] * x[b, oy, ox, ci]: ci (32) is
  // the lane axis and, with the AVX-512 budget, upcast whole; co's 8 lanes still find their axis after that.
  // Both budgets are pinned, so the test means the same on every host; (b, oy, ox) merge into one reduce axis
  UOp ast = sum_of_products({32, 32, 64, 20, 20}, {32, 32, 1, 1, 1}, {1, 0, 12800, 640, 32}, 64 * 12800,
                            {0, 1, 12800, 640, 32}, 64 * 12800, {2, 3, 4});
  for (const char* lanes : {"256", "128"}) {
    ScopedEnv budget("CPU_TILE_LANES", lanes);
    std::optional<CpuTile> t = cpu_vector_tile(Kernel(ast));
    ASSERT_TRUE(t.has_value()) << lanes;
    EXPECT_FALSE(t->reduce_lanes) << lanes;
    // with 128 lanes ci splits in two, and that half (2 blocks 64 B apart) goes inside co's blocks (8 floats apart)
    EXPECT_EQ(opts_of(t), std::string(lanes) == "256"
                              ? "[Opt(op=OptOps.UPCAST, axis=0, arg=8), Opt(op=OptOps.UPCAST, axis=1, arg=32)]"
                              : "[Opt(op=OptOps.UPCAST, axis=0, arg=8), Opt(op=OptOps.UPCAST, axis=1, arg=16), "
                                "Opt(op=OptOps.SWAP, axis=0, arg=1)]")
        << lanes;
  }
}

TEST(CpuTile, WeightGradReduceLanesAndLoopOrder) {
  // no output axis is contiguous in an input: the lanes run along (oy, ox), 4x4 per accumulator, for a 4x4 tile of
  // (co, ci); the batch blocks (where both inputs move farthest) become the outermost loop
  Kernel k(conv_weight_grad());
  std::optional<CpuTile> t = cpu_vector_tile(k);
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->reduce_lanes);
  EXPECT_EQ(opts_of(t),
            "[Opt(op=OptOps.UPCAST, axis=0, arg=4), Opt(op=OptOps.UPCAST, axis=1, arg=4), "
            "Opt(op=OptOps.UNROLL, axis=1, arg=4), Opt(op=OptOps.UNROLL, axis=2, arg=4), "
            "Opt(op=OptOps.SWAP, axis=0, arg=4), Opt(op=OptOps.SWAP, axis=2, arg=4), "
            "Opt(op=OptOps.SWAP, axis=3, arg=4)]");
  apply_tile(k, *t);
  EXPECT_EQ(shape_str(k.full_shape()), "(128, 8, 8, 5, 5, 4, 5, 5, 4, 4, 4, 4)");
  std::string src = render_tile(k);
  // 16 outputs of 16 lanes each, summed once after the reduce loops, each output's 16 lanes in halvings (8 lanes
  // onto 8, then 4 onto 4, ...) though the 16 outputs store apart
  EXPECT_NE(src.find("float256 acc0 = "), std::string::npos) << src;
  EXPECT_NE(src.find("((float8){acc0[0],acc0[1],acc0[2],acc0[3],acc0[4],acc0[5],acc0[6],acc0[7]}+(float8){acc0[8],"),
            std::string::npos)
      << src;
  EXPECT_EQ(src.find("acc0[0]+acc0[1]+acc0[2]"), std::string::npos) << src;
}

TEST(CpuTile, LoadsAfterTheReduceDontChooseLanes) {
  // a matmul whose result is multiplied by a third buffer after the reduce (a fused relu mask of a conv's input
  // gradient): that load runs once per output, so it takes the same tile as the bare matmul
  sint n = 128;
  Shape full{n, n, n};
  UOp prod = load(global(1, n * n), st(full, Shape{n, 0, 1})) * load(global(2, n * n), st(full, Shape{0, 1, n}));
  UOp red = UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {prod}, ReduceArg{Ops::ADD, {2}});
  UOp masked = red * load(global(3, n * n), st({n, n, 1}, Shape{n, 1, 0}));
  UOp out = UOp::make(Ops::STORE, dtypes::void_, {view_of(global(0, n * n), st({n, n, 1})), masked});
  EXPECT_EQ(opts_of(cpu_vector_tile(Kernel(UOp::sink({out})))), opts_of(cpu_vector_tile(Kernel(matmul(n)))));
}

TEST(CpuTile, TheLoweringTravelsWithTheOptsItCameWith) {
  // the heuristic records what it chose beyond opts on the Kernel (a tile: its vector ALUs), the optimized AST's
  // KernelInfo carries it to the codegen, and another opt applied after drops it
  Kernel k(matmul(128));
  apply_hand_coded(k);
  EXPECT_EQ(opts_repr(k.applied_opts), opts_of(cpu_vector_tile(Kernel(matmul(128)))));
  EXPECT_EQ(k.lowering, (Lowering{.vector_alus = true}));
  UOp ast = k.get_optimized_ast("tile");
  EXPECT_EQ(lowering_of(ast), k.lowering);
  EXPECT_NE(arg_repr(ast.arg()).find("lowering=(vector_alus=True"), std::string::npos) << arg_repr(ast.arg());
  Kernel more = k.copy();
  more.apply_opt({OptOps::UNROLL, 0, 2});
  EXPECT_EQ(more.lowering, Lowering{});
  EXPECT_EQ(lowering_of(more.get_optimized_ast("more")), Lowering{});
  // a renderer without tiles: the reference's opts, no lowering, and KernelInfo's repr is the reference's
  Kernel plain(matmul(128), RenderOpts::cpu());
  apply_hand_coded(plain);
  EXPECT_EQ(plain.lowering, Lowering{});
  EXPECT_EQ(arg_repr(plain.get_optimized_ast("plain").arg()).find("lowering"), std::string::npos);
}

TEST(CpuTile, OnlyBigFloatSumsOfProductsOnTheCpu) {
  EXPECT_EQ(opts_of(cpu_vector_tile(Kernel(matmul(16)))), "nullopt");  // small: the reference's opts and code
  EXPECT_EQ(opts_of(cpu_vector_tile(Kernel(matmul(128), RenderOpts::generic()))), "nullopt");  // has locals
  UOp max_reduce =
      sum_of_products({128, 128, 128}, {128, 128, 1}, {128, 0, 1}, 16384, {0, 1, 128}, 16384, {2}, Ops::MAX);
  EXPECT_EQ(opts_of(cpu_vector_tile(Kernel(max_reduce))), "nullopt");
  Kernel applied(matmul(128));
  applied.apply_opt({OptOps::UPCAST, 0, 4});
  EXPECT_EQ(opts_of(cpu_vector_tile(applied)), "nullopt");                                 // opts already applied
  EXPECT_EQ(opts_of(cpu_vector_tile(Kernel(matmul(128), RenderOpts::cpu()))), "nullopt");  // a renderer without tiles
}

TEST(CpuTile, DisabledByEnv) {
  Context ctx{{"CPU_VECTOR_TILE", 0}};
  Kernel k(matmul(128));
  std::string opts = opts_repr(hand_coded_optimizations(k));
  EXPECT_EQ(opts.find("arg=16"), std::string::npos) << opts;  // the reference's heuristic
}

namespace {

// the first stage of a per-channel sum of an NCHW (512, 32, 20, 20) tensor, as the scheduler splits it: (c, p)
// summing (n%2, y, x) of x[2p + n%2, c, y, x]
UOp channel_partial_sums(sint batch) {
  Shape full{32, batch / 2, 2, 20, 20}, out{32, batch / 2, 1, 1, 1};
  UOp x = load(global(1, batch * 12800), st(full, Shape{400, 25600, 12800, 20, 1}));
  UOp red = UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {x}, ReduceArg{Ops::ADD, {2, 3, 4}});
  return UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {view_of(global(0, prod(out)), st(out)), red})});
}

}  // namespace

TEST(CpuLoopOrder, BigReducesWalkTheirInputsInOrder) {
  // the batch blocks (where the input moves farthest) become the outer loop, so the inner one walks memory in order
  std::string big = opts_repr(hand_coded_optimizations(Kernel(channel_partial_sums(512))));
  EXPECT_NE(big.find("Opt(op=OptOps.SWAP, axis=0, arg=1)"), std::string::npos) << big;
  // small kernels keep the reference's opts, and the order of their loops
  std::string small = opts_repr(hand_coded_optimizations(Kernel(channel_partial_sums(8))));
  EXPECT_EQ(small.find("SWAP"), std::string::npos) << small;
  {
    ScopedEnv off("CPU_LOOP_ORDER", "0");
    std::string plain = opts_repr(hand_coded_optimizations(Kernel(channel_partial_sums(512))));
    EXPECT_EQ(plain.find("SWAP"), std::string::npos) << plain;
  }
}

TEST(CpuLoopOrder, ATileKeepsWhatItRereadsInCache) {
  // (4096, 1536) @ (1536, 384), both row-major, in tiles of 8 rows by 32 columns: with the row blocks outermost (the
  // stride order: A moves farthest along them) each row block re-reads all 2.4 MB of B, more than an L2 holds; with
  // the 12 column blocks outermost a 196 KB strip of B stays in cache and A streams 12 times (a quarter of the bytes:
  // the GPT step's projection gradient 32 -> 17 ms on a Xeon). With K = 128 the whole of B (196 KB) stays in cache
  // either way, and the stride order stands
  auto rows_by_cols = [](sint m, sint n, sint kk) {  // (m, kk) @ (kk, n)
    return sum_of_products({m, n, kk}, {m, n, 1}, {kk, 0, 1}, m * kk, {0, 1, n}, kk * n, {2});
  };
  ScopedEnv budget("CPU_TILE_LANES", "256");
  auto outer = [](const UOp& ast) {
    Kernel k(ast);
    std::optional<CpuTile> t = cpu_vector_tile(k);
    EXPECT_TRUE(t.has_value());
    if (t) k.apply_opts(t->opts);
    return k.full_shape().at(0);
  };
  EXPECT_EQ(outer(rows_by_cols(4096, 384, 1536)), 12);
  EXPECT_EQ(outer(rows_by_cols(4096, 384, 128)), 512);
  ScopedEnv off("CPU_LOOP_ORDER", "0");  // no order at all: the kernel's own (rows first)
  EXPECT_EQ(outer(rows_by_cols(4096, 384, 1536)), 512);
}

TEST(CpuLoopOrder, ReorderedSumsAreRight) {
  // a batchnorm's per-channel sum over a (512, 32, 20, 20) input, with its loops reordered, against the host's
  std::vector<float> v(512 * 32 * 400);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i % 7) - 3.0f;
  std::vector<float> got = Tensor(v, {512, 32, 20, 20}).sum({0, 2, 3}).tolist<float>();
  ASSERT_EQ(got.size(), 32u);
  for (size_t c = 0; c < 32; c++) {
    double want = 0;
    for (size_t n = 0; n < 512; n++)
      for (size_t j = 0; j < 400; j++) want += v[(n * 32 + c) * 400 + j];
    EXPECT_NEAR(got[c], want, 1e-3) << c;
  }
}

TEST(CpuRowUpcast, BigKernelsUpcastTheirOutputRows) {
  // x[n, c, y, x] * scale[c] over (n, 32, 10, 10), x read from rows of 12: after the reference's upcast of n (scale
  // repeats along it), the row (x, contiguous in the output) is upcast by 5 too; small kernels and CPU_ROW_UPCAST=0
  // keep the reference's opts
  auto scaled = [](sint n) {
    Shape full{n, 32, 10, 10};
    UOp prod =
        load(global(1, n * 4608), st(full, Shape{4608, 144, 12, 1})) * load(global(2, 32), st(full, Shape{0, 1, 0, 0}));
    return UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {view_of(global(0, n * 3200), st(full)), prod})});
  };
  std::string big = opts_repr(hand_coded_optimizations(Kernel(scaled(512))));
  EXPECT_NE(big.find("Opt(op=OptOps.UPCAST, axis=3, arg=5)"), std::string::npos) << big;
  std::string small = opts_repr(hand_coded_optimizations(Kernel(scaled(4))));
  EXPECT_EQ(small.find("arg=5"), std::string::npos) << small;
  ScopedEnv off("CPU_ROW_UPCAST", "0");
  std::string plain = opts_repr(hand_coded_optimizations(Kernel(scaled(512))));
  EXPECT_EQ(plain.find("arg=5"), std::string::npos) << plain;
}

TEST(CpuRowUpcast, AnUpcastPartOfARowTakesTheRest) {
  // g (n, 64, 8, 8) padded to rows of 12 along x (ConvGrad's row split): the reference upcasts 3 of a row (its
  // masked axis); the rest of the row (4, output stride 3) is upcast too, 12 floats per iteration, where the kernel
  // ran a 4-step loop of masked loads (0.6 -> 0.13 ms on 512 images)
  auto padded = [](sint n) {
    Shape full{n * 512, 12};
    UOp x = load(global(1, n * 512 * 8),
                 ShapeTracker{{View::create({n * 512, 12}, Shape{8, 1}, -2, Mask{{0, n * 512}, {2, 10}})}});
    return UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {view_of(global(0, n * 6144), st(full)), x})});
  };
  std::string big = opts_repr(hand_coded_optimizations(Kernel(padded(512))));
  EXPECT_EQ(big, "[Opt(op=OptOps.UPCAST, axis=1, arg=3), Opt(op=OptOps.UPCAST, axis=1, arg=4)]");
  ScopedEnv off("CPU_ROW_UPCAST", "0");
  EXPECT_EQ(opts_repr(hand_coded_optimizations(Kernel(padded(512)))), "[Opt(op=OptOps.UPCAST, axis=1, arg=3)]");
}

TEST(CpuRowUpcast, BigMaxPoolIsRight) {
  // max_pool2d of a (512, 32, 20, 20) input (its kernel takes the row upcast) against the host's
  std::vector<float> v(512 * 32 * 400);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>((i * 2654435761u) % 1000);
  std::vector<float> got = Tensor(v, {512, 32, 20, 20}).max_pool2d().tolist<float>();
  ASSERT_EQ(got.size(), 512u * 32 * 100);
  for (size_t nc = 0; nc < 512 * 32; nc++)
    for (size_t y = 0; y < 10; y++)
      for (size_t x = 0; x < 10; x++) {
        const float* p = &v[nc * 400 + y * 40 + x * 2];
        float want = std::max(std::max(p[0], p[1]), std::max(p[20], p[21]));
        ASSERT_EQ(got[nc * 100 + y * 10 + x], want) << nc << "," << y << "," << x;
      }
}

TEST(CpuTile, OuterLanesShareCacheLines) {
  // the conv forward with its weight stored output-channels-last: co takes the inner lanes (the weight loads them
  // contiguously); the outer lanes go to ox, then oy, along which x's loads of one reduce step share cache lines,
  // not to the batch (images 18 KB apart). Both lane budgets, pinned: with 128 (16 registers) a conv's tile holds 8
  // accumulators, 16 lanes of co by 4 of ox (16 spill: conv2's forward on AVX2 161 -> 65 ms), and co's 16 lanes
  // leave a second block of co, which the loop order puts outside the rows
  UOp ast = sum_of_products({8, 32, 20, 20, 32, 5, 5}, {8, 32, 20, 20, 1, 1, 1}, {18432, 0, 24, 1, 576, 24, 1},
                            8 * 18432, {0, 1, 0, 0, 800, 160, 32}, 25600, {4, 5, 6});
  expect_tiles(ast,
               "[Opt(op=OptOps.UPCAST, axis=2, arg=2), Opt(op=OptOps.UPCAST, axis=3, arg=4), "
               "Opt(op=OptOps.UPCAST, axis=1, arg=32)]",
               "[Opt(op=OptOps.UPCAST, axis=3, arg=4), Opt(op=OptOps.UPCAST, axis=1, arg=16), "
               "Opt(op=OptOps.SWAP, axis=1, arg=2)]");
}

TEST(CpuTile, SmallPlanesTakeAThirdOuterAxis) {
  // a conv's input gradient on 10x10 planes (the MNIST model's 3x3 conv: (b, ci, y, x) summing (co, ky, kx) of the
  // padded output gradient g[b, co, y+ky, x+kx] times the weight stored ci-last): ci takes the inner 32 lanes, and a
  // row of 10 gives only 2 outer lanes, so with 256 lanes x, y and the batch take 2 each (16 accumulators, not 8);
  // with 128 lanes (a conv's 96: 16 of ci by 6) the row takes 5, its largest divisor that fits (10 accumulators)
  UOp dx = sum_of_products({8, 32, 10, 10, 64, 3, 3}, {8, 32, 10, 10, 1, 1, 1}, {9216, 0, 12, 1, 144, 12, 1}, 8 * 9216,
                           {0, 1, 0, 0, 288, 96, 32}, 18432, {4, 5, 6});
  expect_tiles(dx,
               "[Opt(op=OptOps.UPCAST, axis=0, arg=2), Opt(op=OptOps.UPCAST, axis=2, arg=2), "
               "Opt(op=OptOps.UPCAST, axis=3, arg=2), Opt(op=OptOps.UPCAST, axis=1, arg=32)]",
               "[Opt(op=OptOps.UPCAST, axis=3, arg=5), Opt(op=OptOps.UPCAST, axis=1, arg=16)]");
}

// the MNIST model's 3x3 conv on 8x8 inputs, forward: (b, co, oy, ox) summing (ci, ky, kx) of x[b, ci, oy+ky, ox+kx]
// times the weight stored co-last; 6x6 outputs
UOp conv_forward_6x6(sint b) {
  return sum_of_products({b, 64, 6, 6, 64, 3, 3}, {b, 64, 6, 6, 1, 1, 1}, {4096, 0, 8, 1, 64, 8, 1}, b * 4096,
                         {0, 1, 0, 0, 576, 192, 64}, 36864, {4, 5, 6});
}

TEST(CpuTile, SixteenRegistersTakeASmallPlanesWholeRow) {
  // a row of 6 gives 2 lanes as a power of two: with 16 registers it takes all 6 (12 accumulators of 16 lanes of co);
  // with 32, three axes of 2 (16 accumulators of 32 lanes)
  expect_tiles(conv_forward_6x6(8),
               "[Opt(op=OptOps.UPCAST, axis=0, arg=2), Opt(op=OptOps.UPCAST, axis=2, arg=2), "
               "Opt(op=OptOps.UPCAST, axis=3, arg=2), Opt(op=OptOps.UPCAST, axis=1, arg=32)]",
               "[Opt(op=OptOps.UPCAST, axis=3, arg=6), Opt(op=OptOps.UPCAST, axis=1, arg=16)]");
  // its 96 lanes render as three accumulators of 32 (split_odd_vectors): a float96 the C compiler would widen to 128
  // lanes and shuffle element by element
  ScopedEnv budget("CPU_TILE_LANES", "128");
  Kernel k(conv_forward_6x6(8));
  apply_tile(k, *cpu_vector_tile(k));
  std::string src = render_tile(k);
  EXPECT_EQ(src.find("float96"), std::string::npos) << src;
  EXPECT_NE(src.find("float32 acc2 = "), std::string::npos) << src;
}

TEST(CpuTile, SixteenRegistersTakeTheAxisWithTheMostLanes) {
  // ConvGrad's row sums of the 3x3 conv on 8x8 inputs: (b, a*ci, y, x) summing (co, kx) of g padded along x, rows of
  // 10, times the kernel rows stored a*ci-last; 6 rows of 8: with 16 registers the rows take 6 lanes (12
  // accumulators) before the columns would take 4; with 32 the nearest axis (x) goes first, as ever
  UOp rows = sum_of_products({8, 192, 6, 8, 64, 3}, {8, 192, 6, 8, 1, 1}, {3840, 0, 10, 1, 60, 1}, 8 * 3840,
                             {0, 1, 0, 0, 576, 192}, 36864, {4, 5});
  expect_tiles(rows, "[Opt(op=OptOps.UPCAST, axis=3, arg=8), Opt(op=OptOps.UPCAST, axis=1, arg=32)]",
               "[Opt(op=OptOps.UPCAST, axis=2, arg=6), Opt(op=OptOps.UPCAST, axis=1, arg=16)]");
}

TEST(CpuTile, SmallPlaneConvsAreRight) {
  // the 3x3 conv on 8x8 inputs (6x6 outputs) and its gradients with each lane budget (12 accumulators of 6 lanes
  // with 128) against float64 loops; small integers, so every sum is exact
  const int64_t B = 16, C = 64, H = 8, O = 6;
  std::vector<float> xv(B * C * H * H), wv(C * C * 9), gv(B * C * O * O);
  xv = small_ints(xv.size(), 37, 7);
  wv = small_ints(wv.size(), 53, 5);
  gv = small_ints(gv.size(), 29, 3);
  std::vector<float> out(B * C * O * O, 0.0f), dx(xv.size(), 0.0f), dw(wv.size(), 0.0f);
  for (int64_t b = 0; b < B; b++)
    for (int64_t co = 0; co < C; co++)
      for (int64_t ci = 0; ci < C; ci++)
        for (int64_t y = 0; y < O; y++)
          for (int64_t x = 0; x < O; x++)
            for (int64_t ky = 0; ky < 3; ky++)
              for (int64_t kx = 0; kx < 3; kx++) {
                auto xi = static_cast<size_t>(((b * C + ci) * H + y + ky) * H + x + kx);
                auto wi = static_cast<size_t>(((co * C + ci) * 3 + ky) * 3 + kx);
                auto oi = static_cast<size_t>(((b * C + co) * O + y) * O + x);
                out[oi] += xv[xi] * wv[wi];
                dx[xi] += gv[oi] * wv[wi];
                dw[wi] += gv[oi] * xv[xi];
              }
  for (const char* lanes : {"128", "256"}) {
    ScopedEnv e("CPU_TILE_LANES", lanes);
    Tensor x = Tensor(xv, {B, C, H, H}, {.requires_grad = true}), w = Tensor(wv, {C, C, 3, 3}, {.requires_grad = true});
    Tensor y = x.conv2d(w);
    auto grads = (y * Tensor(gv, {B, C, O, O})).sum().gradient({x, w});
    EXPECT_EQ(y.tolist<float>(), out) << lanes;
    EXPECT_EQ(grads[0].tolist<float>(), dx) << lanes;
    EXPECT_EQ(grads[1].tolist<float>(), dw) << lanes;
  }
}

TEST(CpuTile, SixteenRegistersHoldEightAccumulatorsOfAConv) {
  // with 16 vector registers (128 lanes) a conv's tile (its reduce over a window: more than one reduce axis) takes
  // 64 lanes, a big matmul's (one reduce axis) all 128; with 32 registers both take 256
  UOp conv = sum_of_products({8, 32, 20, 20, 32, 5, 5}, {8, 32, 20, 20, 1, 1, 1}, {18432, 0, 24, 1, 576, 24, 1},
                             8 * 18432, {0, 1, 0, 0, 800, 160, 32}, 25600, {4, 5, 6});
  {
    ScopedEnv budget("CPU_TILE_LANES", "128");
    EXPECT_EQ(upcast_lanes(conv), 64);
    EXPECT_EQ(upcast_lanes(matmul(1024)), 128);
  }
  ScopedEnv budget("CPU_TILE_LANES", "256");
  EXPECT_EQ(upcast_lanes(conv), 256);
  EXPECT_EQ(upcast_lanes(matmul(128)), 256);
}

TEST(CpuTile, PackedMatmulTakesHalfOfSixteenRegisters) {
  // a matmul whose B the scheduler packed in panels of 16 (pack_matmul_operand: full shape (i, j/16, j%16, k), B at
  // strides (0, 16k, 1, 16)) keeps its panel in L2: with 16 registers its tile takes 64 lanes, an unpacked one 128;
  // with 32 registers both take 256
  const UOp packed = packed_matmul(256);
  {
    ScopedEnv budget("CPU_TILE_LANES", "128");
    EXPECT_EQ(upcast_lanes(packed), 64);
    EXPECT_EQ(upcast_lanes(matmul(1024)), 128);  // unpacked, its A too big for L2
  }
  ScopedEnv budget("CPU_TILE_LANES", "256");
  EXPECT_EQ(upcast_lanes(packed), 256);
}

TEST(CpuTile, ARegisterTileBroadcastsOneReduceStepAtATime) {
  // A matmul's register tile, packed or not, with 16 or 32 registers, doesn't unroll its reduce: unrolled by 2, the
  // kernel loaded each of A's rows as a pair (a float2) whose lanes the C compiler splats with register shuffles, on
  // Intel's AVX-512 cores the second FMA unit's port (sgemm at ~65% of the peak), with 16 registers an index register
  // that made the accumulators spill. One step loads each of A's rows as a scalar, broadcast from memory
  const UOp packed = packed_matmul(256);
  for (const char* lanes : {"128", "256"}) {
    ScopedEnv budget("CPU_TILE_LANES", lanes);
    for (const UOp& ast : {packed, matmul(1024)}) {
      Kernel k(ast);
      std::optional<CpuTile> t = cpu_vector_tile(k);
      ASSERT_TRUE(t.has_value()) << lanes;
      EXPECT_FALSE(t->reduce_lanes) << lanes;
      EXPECT_EQ(opts_repr(t->opts).find("UNROLL"), std::string::npos) << lanes << " " << opts_repr(t->opts);
      apply_tile(k, *t);
      std::string src = render_tile(k);
      EXPECT_EQ(src.find("float2 "), std::string::npos) << lanes << "\n" << src;
    }
  }
}

TEST(CpuTile, LoadsAndStoresWholeRegisters) {
  // a tile's float32 loads and stores fold to a register's width (16 floats with 32 registers' budget, 8 with 16's),
  // so its epilogue computes whole registers, not float4 quarters; those vector types assume only a float's
  // alignment (a weight mapped from a GGUF file starts 32 bytes aligned: tests/nn GGUF.MappedWeightsThatStartOff
  // ARegisterMultiply). A kernel on the reference's opts keeps
  // the reference's float4s (tests/debug: the golden transcripts)
  for (auto [lanes, wide] : {std::pair{"256", 16}, std::pair{"128", 8}}) {
    ScopedEnv budget("CPU_TILE_LANES", lanes);
    Kernel k(matmul(256));
    std::optional<CpuTile> t = cpu_vector_tile(k);
    ASSERT_TRUE(t.has_value()) << lanes;
    apply_tile(k, *t);
    // the renderer's register width is the target's (simd_lanes), not the tile budget's
    ClangRenderer r;
    r.simd_lanes = std::stoi(lanes);
    std::string src = r.render(full_rewrite(k.get_optimized_ast("tile"), r));
    EXPECT_NE(src.find(cat("typedef float float", wide, " __attribute__((aligned(4),vector_size(", 4 * wide, ")))")),
              std::string::npos)
        << lanes << "\n"
        << src;
    EXPECT_NE(src.find(cat("*((float", wide, "*)((data0+")), std::string::npos) << lanes << "\n" << src;
    EXPECT_EQ(src.find("float4"), std::string::npos) << lanes << "\n" << src;
  }
}

TEST(CpuTile, SmallBroadcastInputHalvesSixteenRegisters) {
  // an unpacked matmul whose broadcast input (A: the rows, a 1x1 convolution's weights) stays in L2 takes 8 x 8 lanes
  // with 16 registers, where 8 x 16 fill the register file and spill in the inner loop; from 256K floats of A on it
  // keeps 8 x 16 (its rows come from memory: reading them twice as often costs more than the spills). With 32
  // registers nothing changes
  auto rows_by_cols = [](sint m, sint n, sint kk) {  // (m, kk) @ (kk, n)
    return sum_of_products({m, n, kk}, {m, n, 1}, {kk, 0, 1}, m * kk, {0, 1, n}, kk * n, {2});
  };
  ScopedEnv budget("CPU_TILE_LANES", "128");
  EXPECT_EQ(upcast_lanes(rows_by_cols(240, 1920, 240)), 64);  // the recognizer's 1x1 conv: A 57,600 floats
  EXPECT_EQ(upcast_lanes(rows_by_cols(1024, 1920, 240)), 64);
  EXPECT_EQ(upcast_lanes(rows_by_cols(2048, 1920, 256)), 128);  // A 512K floats
  ScopedEnv wide("CPU_TILE_LANES", "256");
  EXPECT_EQ(upcast_lanes(rows_by_cols(240, 1920, 240)), 256);
}

TEST(CpuTile, PackedMatmulRowBlocksWithSixteenRegisters) {
  // with 16 registers and threads, a packed matmul's rows go in blocks of 128K floats of A (1024 rows of K=128
  // here: 8 blocks of 8192), the block loop first (THREAD), so a block stays in L2 while it sweeps every panel of B
  const sint m = 8192, n = 256, kk = 128;
  UOp packed =
      sum_of_products({m, n / 16, 16, kk}, {m, n / 16, 16, 1}, {kk, 0, 0, 1}, m * kk, {0, 16 * kk, 1, 16}, n * kk, {3});
  auto first_opt = [&](int threads) {
    RenderOpts ro = Kernel(packed).opts;
    ro.threads = threads;
    std::optional<CpuTile> t = cpu_vector_tile(Kernel(packed, ro));
    return t && !t->opts.empty() ? opts_repr({t->opts.front()}) : std::string("none");
  };
  {
    ScopedEnv budget("CPU_TILE_LANES", "128");
    EXPECT_EQ(first_opt(2), "[Opt(op=OptOps.THREAD, axis=0, arg=8)]");
    EXPECT_EQ(first_opt(16), "[Opt(op=OptOps.THREAD, axis=0, arg=8)]");
    EXPECT_EQ(first_opt(1).find("THREAD"), std::string::npos);  // no threads: the reference's loop order
    ScopedEnv off("CPU_ROW_BLOCKS", "0");
    EXPECT_EQ(first_opt(2).find("THREAD"), std::string::npos);
  }
  ScopedEnv budget("CPU_TILE_LANES", "256");  // 32 registers: a panel twice as wide, A read half as often
  EXPECT_EQ(first_opt(2).find("THREAD"), std::string::npos);
}

TEST(CpuTile, AReshapedPermutedOperandIsReadAlongSplitDims) {
  // (B*T, 3*H*D) @ W, the left side q/k/v gradients stored (B, 3, H, T, D) read through a permute and a reshape (the
  // GPT's attention input gradient): the reduce's 1152 indexes the buffer with divisions and modulos, so the kernel
  // splits it into (3, H, D), along which every index is a stride (Kernel::split_unaffine_dims); the product is the
  // one of the contiguous operand. Off the tiles (CPU_VECTOR_TILE=0) the kernel keeps the reference's dims
  const int64_t B = 4, T = 256, H = 6, D = 64, K = 3 * H * D, N = 32;
  std::vector<float> gv = small_ints(B * 3 * H * T * D, 37, 11), wv = small_ints(K * N, 53, 7);
  Tensor g = Tensor(gv, {B, 3, H, T, D}).realize(), w = Tensor(wv, {K, N}).realize();
  auto product = [&] { return g.permute({0, 3, 1, 2, 4}).reshape({B * T, K}).matmul(w); };
  auto full_shape = [&] {
    auto [sched, vars] = Tensor::schedule_with_vars({product()});
    EXPECT_EQ(sched.size(), 1u);
    return Kernel(sched.at(0).ast).full_shape();
  };
  Shape split = full_shape();
  EXPECT_NE(std::find(split.begin(), split.end(), sint(D)), split.end()) << shape_str(split);
  EXPECT_EQ(std::find(split.begin(), split.end(), sint(K)), split.end()) << shape_str(split);
  std::vector<float> want = g.permute({0, 3, 1, 2, 4}).contiguous().reshape({B * T, K}).matmul(w).tolist<float>();
  EXPECT_EQ(product().tolist<float>(), want);
  ScopedEnv off("CPU_VECTOR_TILE", "0");
  Shape plain = full_shape();
  EXPECT_NE(std::find(plain.begin(), plain.end(), sint(K)), plain.end()) << shape_str(plain);
}

TEST(CpuTile, AHugeUnaffineDimIsLeftWhole) {
  // fuzz_api's seed 1 session 134: a repeat of 2^40 read through a second repeat makes a dim of 2^41 whose index
  // divides; trying each of its sizes for a split hung the kernel's construction. Dims over 2^24 stay whole
  Tensor t = Tensor(std::vector<float>(24, 1.0f), {3, 2, 4}).realize();
  Tensor big = t.repeat({1, int64_t(1) << 40, 1}).repeat({2, 3, 2, 1}).contiguous();
  auto [sched, vars] = Tensor::schedule_with_vars({big});
  ASSERT_FALSE(sched.empty());
  for (const ScheduleItem& si : sched)
    if (si.ast.op() == Ops::SINK) {
      EXPECT_GT(Kernel(si.ast).shape_len(), 0);
    }
}

TEST(CpuTile, PackedMatmulComputesItsProduct) {
  // x (520, 72) @ w (72, 1024), and a batch of 2 x's against one w: the scheduler packs w in panels of 16 or 32
  // (tests/schedule: Kernelize.PackMatmulOperandOnCpu); small integers, so every sum is exact
  const int64_t M = 520, K = 72, N = 1024;
  std::vector<float> xv = small_ints(2 * M * K, 37, 11), wv = small_ints(K * N, 53, 7);
  std::vector<float> want = host_matmul(xv, wv, 2 * M, K, N);  // the batch's rows one after the other
  for (const char* lanes : {"128", "256"}) {
    ScopedEnv e("CPU_TILE_LANES", lanes);
    Tensor w(wv, {K, N});
    EXPECT_EQ(Tensor(xv, {2, M, K}).matmul(w).tolist<float>(), want) << lanes;
    std::vector<float> first =
        Tensor(std::vector<float>(xv.begin(), xv.begin() + M * K), {M, K}).matmul(w).tolist<float>();
    EXPECT_TRUE(std::equal(first.begin(), first.end(), want.begin())) << lanes;
  }
}

TEST(CpuTile, AnEpiloguesSelectsAreBlendsOfMasks) {
  // a matmul's output clamped and leaky (MAX is a WHERE of a CMPLT): in the tile's epilogue each select of a vector
  // is one blend of masks (ClangRenderer: ExtraMatcherSelectsByMasks), not a ?: per lane; the values as the host's
  const int64_t M = 256, K = 64, N = 256;
  std::vector<float> xv(M * K), wv(K * N), want(M * N, 0.0f);
  xv = small_ints(xv.size(), 37, 11);
  wv = small_ints(wv.size(), 53, 7);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      float acc = 0;
      for (int64_t k = 0; k < K; k++) acc += xv[static_cast<size_t>(i * K + k)] * wv[static_cast<size_t>(k * N + j)];
      acc = std::min(std::max(acc, -40.0f), 40.0f);
      want[static_cast<size_t>(i * N + j)] = acc < 0 ? acc * 0.5f : acc;
    }
  auto program = [&] {
    Tensor y = Tensor(xv, {M, K}).matmul(Tensor(wv, {K, N})).maximum(Tensor(-40.0f)).minimum(Tensor(40.0f));
    return (y < 0.0f).where(y * 0.5f, y);
  };
  for (const char* lanes : {"128", "256"}) {
    ScopedEnv e("CPU_TILE_LANES", lanes);
    EXPECT_EQ(program().tolist<float>(), want) << lanes;
    auto [sched, vars] = Tensor::schedule_with_vars({program()});
    Kernel k(sched.back().ast);
    apply_hand_coded(k);
    std::string src = render_on_device(k);
    EXPECT_FALSE(std::regex_search(src, std::regex(R"(\?[a-z]+[0-9]+\[)"))) << lanes << "\n" << src;
    EXPECT_TRUE(std::regex_search(src, std::regex(R"(int[0-9]+ alu[0-9]+ = \(.*<)"))) << lanes << "\n" << src;
  }
}

TEST(CpuTile, ASumAcrossRowsTakesItsOutputsInLanes) {
  // a (4096, 1536) matrix summed over its rows (a bias's gradient), and dy * x summed so (a layernorm weight's): the
  // 1536 outputs in vector lanes, two registers' worth, the rows' reduce unrolled by 4 (but the product with 32
  // registers: it takes a matmul's tile, whose reduce is one step at a time); the sums as the host's
  auto tile_of = [](const Tensor& t) {
    auto [sched, vars] = Tensor::schedule_with_vars({t});
    return opts_of(cpu_vector_tile(Kernel(sched.back().ast)));
  };
  const int64_t R = 4096, C = 1536;
  for (const char* lanes : {"128", "256"}) {
    ScopedEnv e("CPU_TILE_LANES", lanes);
    const std::string up = cat("Opt(op=OptOps.UPCAST, axis=0, arg=", std::stoi(lanes) / 8, ")");
    const std::string sum = tile_of(Tensor::empty({R, C}).sum(0)),
                      product = tile_of((Tensor::empty({R, C}) * Tensor::empty({R, C})).sum(0));
    for (const std::string& t : {sum, product}) EXPECT_NE(t.find(up), std::string::npos) << lanes << " " << t;
    const std::string unroll = "Opt(op=OptOps.UNROLL, axis=0, arg=4)";
    EXPECT_NE(sum.find(unroll), std::string::npos) << lanes << " " << sum;
    EXPECT_EQ(product.find(unroll) != std::string::npos, std::string(lanes) == "128") << lanes << " " << product;
  }
  std::vector<float> xv(static_cast<size_t>(R * C));
  std::vector<float> want(static_cast<size_t>(C), 0.0f);
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) {
      const float v = static_cast<float>((i * 7 + j * 3) % 5 - 2);
      xv[static_cast<size_t>(i * C + j)] = v;
      want[static_cast<size_t>(j)] += v * v;
    }
  Tensor x(xv, {R, C});
  EXPECT_EQ((x * x).sum(0).tolist<float>(), want);
}

TEST(CpuTile, BlockedReduceMatmulComputesItsProduct) {
  // x (512, 4096) @ w (4096, 1024): the scheduler sums the reduce in four blocks of 1024 (tests/schedule:
  // Kernelize.PackMatmulOperandOnCpu). w[k, j] = f(k) g(j), so the host's answer is g(j) times x's rows dotted with
  // f; a block missed, doubled or shifted changes every dot product. Small integers: every sum is exact
  const int64_t M = 512, K = 4096, N = 1024;
  std::vector<float> xv(M * K), wv(K * N), want(M * N);
  auto f = [](int64_t k) { return static_cast<float>((k * 7) % 5 - 2); };
  auto g = [](int64_t j) { return static_cast<float>((j * 3) % 7 - 3); };
  xv = small_ints(xv.size(), 37, 7);
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++) wv[static_cast<size_t>(k * N + j)] = f(k) * g(j);
  for (int64_t i = 0; i < M; i++) {
    float dot = 0;
    for (int64_t k = 0; k < K; k++) dot += xv[static_cast<size_t>(i * K + k)] * f(k);
    for (int64_t j = 0; j < N; j++) want[static_cast<size_t>(i * N + j)] = dot * g(j);
  }
  for (const char* lanes : {"128", "256"}) {  // with 16 registers also in blocks of 128 rows
    ScopedEnv e("CPU_TILE_LANES", lanes);
    EXPECT_EQ(Tensor(xv, {M, K}).matmul(Tensor(wv, {K, N})).tolist<float>(), want) << lanes;
  }
}

TEST(CpuTile, ThreadedRenderAddsIndexConstantsToThePointer) {
  // the threaded variant renders (data1+alu0+4), the plain one tinygrad's (data1+(alu0+4)): with the outer loop's
  // bound known only at run time, clang would not merge the int-indexed float4 loads into one wide load (a big
  // matmul: two registers of lanes on every target)
  Kernel k(matmul(1024));
  apply_tile(k, *cpu_vector_tile(k));
  ClangRenderer r;
  std::vector<UOp> uops = full_rewrite(k.get_optimized_ast("tile"), r);
  std::string plain = r.render(uops);
  std::optional<UOp> split = r.thread_split_range(uops, k.global_dims());
  ASSERT_TRUE(split.has_value());
  std::string threaded = r.render_threaded(uops, *split);
  EXPECT_NE(plain.find("*((float4*)((data2+(alu2+4))))"), std::string::npos) << plain;
  EXPECT_NE(threaded.find("*((float4*)((data2+alu2+4)))"), std::string::npos) << threaded;
  EXPECT_EQ(threaded.find("+(alu2+4))"), std::string::npos) << threaded;
}

TEST(CpuTile, OneOutputAxisTakesMoreAccumulators) {
  // the weight gradient of a conv with one input channel, in batch chunks of 8: (chunk, co, ky, kx) summing
  // (n%8, oy, ox) of g[n, co, oy, ox] * x[n, oy+ky, ox+kx]. Only co is broadcast by an input (x), so it takes the
  // outputs of two axes of 4 (16 accumulators on an AVX-512 host, 8 on AVX2)
  UOp ast = sum_of_products({64, 32, 5, 5, 8, 24, 24}, {64, 32, 5, 5, 1, 1, 1}, {147456, 576, 0, 0, 18432, 24, 1},
                            512 * 18432, {6272, 0, 28, 1, 784, 28, 1}, 512 * 784, {4, 5, 6});
  std::optional<CpuTile> t = cpu_vector_tile(Kernel(ast));
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->reduce_lanes);
  std::string opts = opts_of(t);
  EXPECT_NE(opts.find(cat("Opt(op=OptOps.UPCAST, axis=1, arg=", lanes() / 16, ")")), std::string::npos) << opts;
}

TEST(CpuTile, BothLaneBudgetsComputeTheSame) {
  // the AVX2 budget (128 lanes, 16-lane axes) and the AVX-512 one (256, 32-lane axes) pick different tiles for a
  // conv's forward and derivatives, and compute the same numbers
  auto run = [](const char* lanes) {
    ScopedEnv e("CPU_TILE_LANES", lanes);
    std::vector<float> xv(8 * 32 * 12 * 12), wv(32 * 32 * 3 * 3);
    for (size_t i = 0; i < xv.size(); i++) xv[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
    for (size_t i = 0; i < wv.size(); i++) wv[i] = static_cast<float>((i * 53) % 97) / 48.0f - 1.0f;
    Tensor x = Tensor(xv, {8, 32, 12, 12}, {.requires_grad = true}),
           w = Tensor(wv, {32, 32, 3, 3}, {.requires_grad = true});
    Tensor y = x.conv2d(w);
    std::vector<Tensor> g = (y * y).sum().gradient({x, w});
    return std::vector<std::vector<float>>{y.tolist<float>(), g[0].tolist<float>(), g[1].tolist<float>()};
  };
  auto narrow = run("128"), wide = run("256");
  for (size_t t = 0; t < 3; t++) {
    ASSERT_EQ(narrow[t].size(), wide[t].size());
    for (size_t i = 0; i < narrow[t].size(); i++)
      ASSERT_NEAR(narrow[t][i], wide[t][i], 1e-4 * (1 + std::abs(wide[t][i]))) << t << ":" << i;
  }
  std::string opts128, opts256;
  {
    ScopedEnv e("CPU_TILE_LANES", "128");
    opts128 = opts_of(cpu_vector_tile(Kernel(matmul(128))));
  }
  {
    ScopedEnv e("CPU_TILE_LANES", "256");
    opts256 = opts_of(cpu_vector_tile(Kernel(matmul(128))));
  }
  EXPECT_NE(opts128, opts256);
  ScopedEnv bad("CPU_TILE_LANES", "100");
  EXPECT_ANY_THROW(cpu_tile_lanes(Kernel(matmul(128)).opts));
}

TEST(CpuTile, LanesFollowTheTarget) {  // RenderOpts::simd_lanes (the CPU devices set it from CPU_ARCH) sizes the tile
  auto lanes_for = [](int simd_lanes) {
    RenderOpts ro = RenderOpts::cpu();
    ro.simd_lanes = simd_lanes;
    return upcast_lanes(Kernel(matmul(1024), ro));
  };
  EXPECT_EQ(lanes_for(64), 64);  // SSE: 16 xmm registers
  EXPECT_EQ(lanes_for(128), 128);
  EXPECT_EQ(lanes_for(256), 256);
}

// *** big sums and elementwise transcendentals ***

TEST(CpuTile, BigSumsGetVectorAccumulators) {
  // a row sum of (4096, 4096): four rows, each a vector accumulator of two registers along the row, summed after.
  // The rows are far apart: each thread share's block of rows (THREAD: 4 shares a thread, a power of two) in four
  // quarters (UPCASTTOP), one stream through memory each
  auto row_sum = [](sint n) {
    UOp red =
        UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {load(global(1, n * n), st({n, n}))}, ReduceArg{Ops::ADD, {1}});
    return UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {view_of(global(0, n), st({n, 1})), red})});
  };
  const std::string unroll = cat("Opt(op=OptOps.UNROLL, axis=0, arg=", lanes() / 8, ")]");
  for (int threads : {0, 1, 2, 3, 16}) {
    RenderOpts ro = Kernel(row_sum(4096)).opts;
    ro.threads = threads;
    std::optional<CpuTile> t = cpu_vector_tile(Kernel(row_sum(4096), ro));
    ASSERT_TRUE(t.has_value());
    EXPECT_TRUE(t->reduce_lanes);
    EXPECT_EQ(opts_of(t), threads < 2 ? "[Opt(op=OptOps.UPCASTTOP, axis=0, arg=4), " + unroll
                                      : cat("[Opt(op=OptOps.THREAD, axis=0, arg=",
                                            threads == 2   ? 8
                                            : threads == 3 ? 16
                                                           : 64,
                                            "), Opt(op=OptOps.UPCASTTOP, axis=1, arg=4), ", unroll))
        << threads;
  }
  // the rows' axis is the one along which the input moves farthest: here the four quarters of the rows, 4 outputs
  // apart in the result, are already an axis; too short to split for threads as well
  UOp quarters = UOp::make(Ops::REDUCE_AXIS, dtypes::float32,
                           {load(global(1, 4096 * 4096), st({1024, 4, 4096}, Shape{4096, 1024 * 4096, 1}))},
                           ReduceArg{Ops::ADD, {2}});
  RenderOpts two = Kernel(row_sum(4096)).opts;
  two.threads = 2;
  EXPECT_EQ(
      opts_of(cpu_vector_tile(Kernel(
          UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {view_of(global(0, 4096), st({1024, 4, 1})), quarters})}),
          two))),
      "[Opt(op=OptOps.UPCASTTOP, axis=1, arg=4), " + unroll);
  std::optional<CpuTile> tile = cpu_vector_tile(Kernel(row_sum(4096)));
  ASSERT_TRUE(tile.has_value());
  EXPECT_EQ(opts_of(cpu_vector_tile(Kernel(row_sum(64)))), "nullopt");  // small: the reference's opts
  // a sum takes the tile from 64K elements (a full sum's second stage, 256 rows of 256)
  EXPECT_NE(opts_of(cpu_vector_tile(Kernel(row_sum(256)))), "nullopt");
  EXPECT_EQ(opts_of(cpu_vector_tile(Kernel(matmul(64)))), "nullopt");  // a matmul of 256K multiply-adds doesn't
  // each row's lanes are summed in halvings after the loop (first whole registers, then halves of them), not by
  // gathering one lane at a time, though the four rows store apart
  Kernel k(row_sum(4096));
  apply_tile(k, *tile);
  std::string src = render_tile(k);
  const int half = lanes() / 16;  // a row's lanes after the first halving
  EXPECT_EQ(src.find("acc0[0]+acc0[1]"), std::string::npos) << src;
  EXPECT_NE(src.find(cat("float", half, " alu")), std::string::npos) << src;
  EXPECT_EQ(src.find("(float4){acc0[") == std::string::npos, half > 4) << src;
  EXPECT_EQ(src.find("(float4){alu") == std::string::npos, half < 8) << src;
  // and the sums are right (integers: exact in float32 whatever the order)
  std::vector<float> v(4096 * 4096);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i % 7);
  std::vector<float> got = Tensor(v, {4096, 4096}).sum(1).tolist<float>();
  for (size_t r = 0; r < 4096; r++) {
    double want = 0;
    for (size_t c = 0; c < 4096; c++) want += v[r * 4096 + c];
    ASSERT_EQ(got[r], static_cast<float>(want)) << r;
  }
  // the full sum's partials are exact; its last adds round (2^24 < total): 21 per 7 elements, 16M = 7k + 1
  EXPECT_NEAR(Tensor(v, {4096 * 4096}).sum().item<float>(), 3.0 * 4096 * 4096 - 3, 8);
}

TEST(CpuVectorLoop, BigElementwiseTranscendentalsArePlainPolynomialLoops) {
  // on the CPU device a kernel of 64K iterations or more with exp2/log2/sin keeps no opts (one element per iteration),
  // which clang vectorizes; a small one keeps the reference's opts. Both compute the polynomial (no libm call), as the
  // reference's clang renderer: every kernel gets the same bits
  const int64_t n = int64_t(1) << 20;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(static_cast<double>(i) / n * 40.0 - 20.0);
  Tensor x = Tensor(v, {n}, {.device = "CPU"}).realize();
  std::string big = last_kernel_source(x.exp2() + 1);
  EXPECT_NE(big.find("void E_1048576("), std::string::npos) << big.substr(0, 200);
  EXPECT_EQ(big.find("exp2"), std::string::npos);
  std::string small = last_kernel_source(x.shrink({{0, 64}}).exp2() + 1);
  EXPECT_NE(small.find("void E_16_4("), std::string::npos) << small;
  EXPECT_EQ(small.find("exp2"), std::string::npos) << small;
  // the polynomial's results: within a few ulp of the host's libm
  std::vector<float> got = x.exp2().tolist<float>(), lg = (x.abs() + 1e-3f).log2().tolist<float>();
  for (size_t i = 0; i < v.size(); i += 97) {
    ASSERT_NEAR(got[i], std::exp2(v[i]), std::exp2(v[i]) * 4e-7) << v[i];
    float a = std::abs(v[i]) + 1e-3f;
    ASSERT_NEAR(lg[i], std::log2(a), std::max(1e-6, std::abs(std::log2(a)) * 4e-7)) << a;
  }
  ScopedEnv off("CPU_VECTOR_TILE", "0");  // the switch for our CPU opts turns this off too: the reference's opts
  EXPECT_EQ(last_kernel_source(x.exp2() * 3).find("void E_1048576("), std::string::npos);
}

TEST(CpuVectorLoop, CopiesBetweenHalfAndFloatConvertWholeVectors) {
  // a float16 weight copied to float32 (a prefill's matmul on an F16 GGUF) and back: the kernel loads 16 halves (or
  // floats) and stores them 4 at a time; each loaded vector is converted whole (one vcvtph2ps / vcvtps2ph), where the
  // lanes were converted one by one (a 46 MB copy: 12 -> 2.6 ms). The values are the host's conversions, exactly
  const int64_t n = int64_t(1) << 20;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(static_cast<int64_t>((i * 7919) % 4001) - 2000) / 64;
  Tensor f = Tensor(v, {1024, 1024}, {.device = "CPU"}).realize();
  Tensor h = f.cast(dtypes::float16).contiguous().realize();
  auto expect_whole = [](const std::string& src, const std::string& to) {
    std::regex whole("__builtin_convertvector\\(val[0-9]+, " + to + "[0-9]+\\)");
    EXPECT_TRUE(std::regex_search(src, whole)) << src;
    EXPECT_EQ(src.find("((" + to + ")(val"), std::string::npos) << src;  // no lane converted on its own
  };
  expect_whole(last_kernel_source(h.cast(dtypes::float32).contiguous()), "float");
  expect_whole(last_kernel_source(f.cast(dtypes::float16).contiguous()), "__fp16");
  std::vector<float> back = h.cast(dtypes::float32).contiguous().tolist<float>();
  for (size_t i = 0; i < v.size(); i++) ASSERT_EQ(back[i], v[i]) << i;  // 1/64 steps within a half's precision
  // the copy a matmul of many rows makes of a half weight, in 4 x 4 blocks transposed into the matmul's layout: each
  // loaded vector converted whole, the floats put together
  Tensor x = Tensor::ones({64, 1024}, {.device = "CPU"});
  int copies = 0;
  for (const std::string& src : kernel_sources(x.matmul(h.cast(dtypes::float32).contiguous().T())))
    if (src.find("void E_") != std::string::npos) copies++, expect_whole(src, "float");
  EXPECT_EQ(copies, 1);
}

TEST(CpuVectorLoop, SumOfExpAlongOddRowsIsAPlainReassociatedLoop) {
  // a softmax's denominator over rows no power of two divides (PaddleOCR's 6625 characters): no tile takes the rows,
  // so the kernel is a plain loop whose exp is the polynomial and whose accumulating add alone may be reordered (the
  // pragma), which clang's loop vectorizer needs to sum in vector lanes; the sums are the float64 loop's
  const int64_t rows = 40, n = 6625;
  std::vector<float> v(static_cast<size_t>(rows * n));
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(static_cast<int64_t>((i * 7919) % 2001) - 1000) / 250;
  Tensor x = Tensor(v, {rows, n}, {.device = "CPU"}).realize();
  Tensor s = x.exp().sum(1);
  auto [schedule, vars] = Tensor::schedule_with_vars({s});
  auto runner = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(schedule.back()).prg);
  ASSERT_TRUE(runner);
  const std::string& src = runner->p.src;
  EXPECT_NE(src.find("void r_40_6625("), std::string::npos) << src;
  EXPECT_EQ(src.find("exp2"), std::string::npos) << src;
  EXPECT_NE(src.find("{ _Pragma(\"clang fp reassociate(on)\") acc0 = (acc0+"), std::string::npos) << src;
  std::vector<float> got = x.exp().sum(1).tolist<float>();  // (s's schedule was taken, not run)
  for (int64_t r = 0; r < rows; r++) {
    double want = 0;
    for (int64_t i = 0; i < n; i++) want += std::exp(static_cast<double>(v[static_cast<size_t>(r * n + i)]));
    ASSERT_NEAR(got[static_cast<size_t>(r)], want, want * 1e-5) << r;
  }
  // a max (not an add) keeps the reference's code
  auto [mx, mvars] = Tensor::schedule_with_vars({(x.exp() * 2).max(1)});
  auto mr = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(mx.back()).prg);
  ASSERT_TRUE(mr);
  EXPECT_EQ(mr->p.src.find("_Pragma"), std::string::npos) << mr->p.src;
  // a sum that compares a value an exp computed with another kernel's (a max pool's backward finds the forward's max
  // among its recomputed inputs): the same polynomial in both kernels, so the max is found in every row
  Tensor m = x.exp().max(1, true).realize();
  std::vector<float> found = x.exp().eq(m).cast(dtypes::float32).sum(1).tolist<float>();
  for (int64_t r = 0; r < rows; r++) ASSERT_GE(found[static_cast<size_t>(r)], 1.0f) << r;
}

TEST(CpuVectorLoop, APadsCopyIsAPlainLoopOfMaskedLoads) {
  // a conv's padded input (64 channels of 24 x 160, padded by 1): one load gated along the stored row, 64K..1M
  // elements: no opts, so clang's loop vectorizer loads each row's inside with masked vector loads (the upcast form
  // loaded lane by lane). A concatenation of two padded inputs (two gated loads) and a copy over 1M elements keep
  // the reference's opts. Every element is the plain loop's
  const int64_t c = 64, h = 24, w = 160;
  std::vector<float> v(static_cast<size_t>(c * h * w));
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i % 1009) - 500.0f;
  Tensor x = Tensor(v, {c, h, w}, {.device = "CPU"}).realize();
  const Mask pad1 = {{0, 0}, {1, 1}, {1, 1}};
  std::string src = last_kernel_source(x.pad(pad1).contiguous());
  EXPECT_NE(src.find("void E_64_26_162("), std::string::npos) << src;
  EXPECT_EQ(last_kernel_source(x.pad(pad1).cat({(x * 2).pad(pad1)}, 0).contiguous()).find("void E_128_26_162("),
            std::string::npos);
  Tensor big = Tensor::ones({32, 320, 320}, {.device = "CPU"}).contiguous().realize();
  EXPECT_EQ(last_kernel_source(big.pad(pad1).contiguous()).find("void E_32_322_322("), std::string::npos);
  std::vector<float> got = x.pad(pad1).tolist<float>();
  ASSERT_EQ(got.size(), static_cast<size_t>(c * (h + 2) * (w + 2)));
  for (int64_t ci = 0; ci < c; ci++)
    for (int64_t y = 0; y < h + 2; y++)
      for (int64_t xi = 0; xi < w + 2; xi++) {
        const bool inside = y >= 1 && y <= h && xi >= 1 && xi <= w;
        const float want = inside ? v[static_cast<size_t>((ci * h + y - 1) * w + xi - 1)] : 0.0f;
        ASSERT_EQ(got[static_cast<size_t>((ci * (h + 2) + y) * (w + 2) + xi)], want) << ci << " " << y << " " << xi;
      }
}

TEST(CpuVectorLoop, RandomBitsOverAConcatenationAreAPlainLoop) {
  // a dropout's mask, Tensor.rand's bits compared: the kernel that hashes the first half of the counters and loads the
  // second half's bits (rand's two halves concatenated: loads gated along the outer axis only) is a plain loop, no
  // opts, which clang vectorizes; the bits are those of the reference's opts (CPU_VECTOR_TILE=0), every one
  auto mask = [] {
    Tensor::manual_seed(3);
    return Tensor::rand({4096, 384}, {.device = "CPU"}, false) >= 0.1f;
  };
  auto [schedule, vars] = Tensor::schedule_with_vars({mask()});
  ASSERT_FALSE(schedule.empty());
  auto runner = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(schedule.back()).prg);
  ASSERT_TRUE(runner);
  EXPECT_NE(runner->p.src.find("void E_4096_384("), std::string::npos) << runner->p.src;
  std::vector<bool> plain = mask().tolist<bool>(), reference;
  {
    ScopedEnv off("CPU_VECTOR_TILE", "0");
    reference = mask().tolist<bool>();
  }
  EXPECT_EQ(plain, reference);
  EXPECT_NEAR(static_cast<double>(std::count(plain.begin(), plain.end(), true)) / plain.size(), 0.9, 0.01);
}

TEST(CpuSymbolicTile, DecodeAttentionOverAVariableLengthTakesTheTile) {
  // decode's attention over the positions so far: 4 key heads of 8 query heads each, 64 wide, S = start_pos + 1 keys
  // (a Variable), the caches a head's positions after another (1, KVH, context, hd, as the LLM keeps them). Its scores
  // (a dot product along the 64) and their weighted sum of the values (a sum over S) take the tile chosen for a
  // stand-in length that no opt divides, their symbolic axes loops of their own; the weighted sum's lanes a whole row
  // of 64 (a value row read once, not in halves); at every length (1 included) the results are the plain loops'
  const int64_t kvh = 4, g = 8, hd = 64, ctx = 1024;
  auto fill = [](size_t n, int seed) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; i++) v[i] = static_cast<float>(static_cast<int64_t>((i * 7919 + seed) % 201) - 100) / 64;
    return v;
  };
  const std::vector<float> qv = fill(kvh * g * hd, 1), kv = fill(ctx * kvh * hd, 2), vv = fill(ctx * kvh * hd, 3);
  Tensor q = Tensor(qv, {kvh, g, hd}, {.device = "CPU"}).realize();
  Tensor ck = Tensor(kv, {kvh, ctx, hd}, {.device = "CPU"}).realize();
  Tensor cv = Tensor(vv, {kvh, ctx, hd}, {.device = "CPU"}).realize();
  UOp var = UOp::variable("start_pos", 0, ctx - 1);
  for (int64_t pos : {int64_t(0), int64_t(5), int64_t(300), ctx - 1}) {
    const sint S = sint(var.bind(pos)) + 1;
    auto attention = [&]() {                                                 // (scores (kvh, g, S), out (kvh, g, hd))
      Tensor keys = ck.shrink({{0, kvh}, {0, S}, {0, hd}}).transpose(1, 2);  // (kvh, hd, S)
      Tensor values = cv.shrink({{0, kvh}, {0, S}, {0, hd}});                // (kvh, S, hd)
      Tensor scores = q.matmul(keys);
      return std::make_pair(scores, scores.matmul(values));
    };
    auto [sched_scores, sched_out] = attention();  // their schedules are taken, not run: the values come anew
    for (const Tensor& t : {sched_scores, sched_out}) {
      auto [schedule, vars] = Tensor::schedule_with_vars({t});
      ASSERT_FALSE(schedule.empty());
      auto runner = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(schedule.back()).prg);
      ASSERT_TRUE(runner);
      EXPECT_TRUE(runner->p.vector_alus) << runner->p.src;
      EXPECT_NE(runner->p.src.find("start_pos"), std::string::npos) << runner->p.src;
      if (t.uop() == sched_out.uop()) {  // the row's 64 lanes, the last upcast (SSE's 16 registers: 32 of them)
        const bool sse = cpu_tile_lanes(*Device::get("CPU").renderer) < 128;
        EXPECT_TRUE(std::regex_search(runner->p.name, std::regex(sse ? "_32(n[0-9]+)?$" : "_64(n[0-9]+)?$")))
            << runner->p.name;
      }
    }
    auto [scores, out] = attention();
    // the outputs of concrete shape: the weighted sums, and the scores' sums and sums of squares over S
    const int64_t n = pos + 1;
    std::vector<float> o = out.reshape({kvh * g * hd}).tolist<float>();
    std::vector<float> s1 = scores.sum(2).reshape({kvh * g}).tolist<float>();
    std::vector<float> s2 = (scores * scores).sum(2).reshape({kvh * g}).tolist<float>();
    for (int64_t h = 0; h < kvh; h++)
      for (int64_t j = 0; j < g; j++) {
        std::vector<double> sc(static_cast<size_t>(n));
        double sum = 0, sq = 0;
        for (int64_t t = 0; t < n; t++) {
          for (int64_t d = 0; d < hd; d++)
            sc[static_cast<size_t>(t)] += static_cast<double>(qv[static_cast<size_t>((h * g + j) * hd + d)]) *
                                          kv[static_cast<size_t>((h * ctx + t) * hd + d)];
          sum += sc[static_cast<size_t>(t)], sq += sc[static_cast<size_t>(t)] * sc[static_cast<size_t>(t)];
        }
        const size_t hj = static_cast<size_t>(h * g + j);
        ASSERT_NEAR(s1[hj], sum, 1e-4 * (n + std::abs(sum))) << pos << " " << h << " " << j;
        ASSERT_NEAR(s2[hj], sq, 1e-4 * (1 + sq)) << pos << " " << h << " " << j;
        for (int64_t d = 0; d < hd; d++) {
          double w = 0;
          for (int64_t t = 0; t < n; t++)
            w += sc[static_cast<size_t>(t)] * vv[static_cast<size_t>((h * ctx + t) * hd + d)];
          ASSERT_NEAR(o[hj * hd + static_cast<size_t>(d)], w, 1e-4 * (n + std::abs(w))) << pos << " " << d;
        }
      }
  }
  ScopedEnv off("CPU_VECTOR_TILE", "0");  // the switch for our CPU opts: the reference's opts, no vector ALUs
  const sint S = sint(var.bind(300)) + 1;
  auto [schedule, vars] =
      Tensor::schedule_with_vars({q.matmul(ck.shrink({{0, kvh}, {0, S}, {0, hd}}).transpose(1, 2))});
  auto runner = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(schedule.back()).prg);
  ASSERT_TRUE(runner);
  EXPECT_FALSE(runner->p.vector_alus);
}

TEST(CpuSymbolicTile, SoftmaxOverAVariableLengthVectorizes) {
  // decode's softmax over the positions so far (32 heads' scores, S = start_pos + 1 of them): the sum of exp is a
  // plain loop that the C compiler vectorizes along S (reassociated, as a plain loop's sum of a concrete size is),
  // where the reference's opts left one scalar chain; the max takes 8 heads at once. Each length's probabilities are
  // the exact ones within float rounding, and sum to 1. (A plain loop takes 64K iterations at the Variable's largest:
  // 32 x 2048 here; a shorter one's sum takes 8 heads at once as the max does)
  const int64_t H = 32, ctx = 2048;
  std::vector<float> sv(H * ctx);
  for (size_t i = 0; i < sv.size(); i++)
    sv[i] = static_cast<float>(static_cast<int64_t>((i * 7919 + 3) % 401) - 200) / 16;
  Tensor scores = Tensor(sv, {H, ctx}, {.device = "CPU"}).realize();
  UOp var = UOp::variable("start_pos", 0, ctx - 1);
  for (int64_t pos : {int64_t(0), int64_t(6), int64_t(515), ctx - 1}) {
    const sint S = sint(var.bind(pos)) + 1;
    Tensor p = scores.shrink({{0, H}, {0, S}}).softmax(-1);
    auto [schedule, vars] = Tensor::schedule_with_vars({p});
    std::vector<std::string> names;
    bool loop = false;
    for (const ScheduleItem& si : schedule) {
      auto runner = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(si).prg);
      ASSERT_TRUE(runner);
      names.push_back(runner->p.name);
      const bool exp = runner->p.src.find("1.44269504") != std::string::npos;  // x * log2(e): an exp
      if (!exp && runner->p.name.starts_with("r_")) {
        // the max: 8 heads' chains (the name's last upcast; nN tells apart kernels of one name in a process)
        EXPECT_TRUE(std::regex_search(runner->p.name, std::regex("_8(n[0-9]+)?$"))) << runner->p.name;
      }
      if (runner->p.name.starts_with("r_") && lowering_of(runner->p.uops.back()).reassociate_reduces) loop = true;
    }
    EXPECT_TRUE(loop) << join(names, " ");
    const int64_t n = pos + 1;
    std::vector<float> got = scores.shrink({{0, H}, {0, S}}).softmax(-1).pad({{0, 0}, {0, ctx - S}}).tolist<float>();
    for (int64_t h = 0; h < H; h++) {
      double m = -1e30, z = 0, total = 0;
      for (int64_t t = 0; t < n; t++) m = std::max<double>(m, sv[static_cast<size_t>(h * ctx + t)]);
      for (int64_t t = 0; t < n; t++) z += std::exp(static_cast<double>(sv[static_cast<size_t>(h * ctx + t)]) - m);
      for (int64_t t = 0; t < n; t++) {
        const double want = std::exp(static_cast<double>(sv[static_cast<size_t>(h * ctx + t)]) - m) / z;
        const float g = got[static_cast<size_t>(h * ctx + t)];
        ASSERT_NEAR(g, want, 1e-5 * (1 + want)) << pos << " " << h << " " << t;
        total += g;
      }
      ASSERT_NEAR(total, 1.0, 1e-4) << pos << " " << h;
    }
  }
}

TEST(CpuWindowLoop, DepthwiseConvRunsAlongItsRows) {
  // a depthwise 5x5 conv (one input channel per output channel, its input padded in memory: PaddleOCR's recognizer)
  // is a sum of 25 terms that no tile takes: its window is unrolled whole (no upcast), so the innermost loop runs along
  // the output row and clang vectorizes it; the values are the loops' (small integers: every sum exact)
  const int64_t C = 24, H = 12, W = 80, K = 5;
  std::vector<float> xv(C * (H + 4) * (W + 4), 0.0f), wv(C * K * K);
  for (int64_t c = 0; c < C; c++)
    for (int64_t y = 2; y < H + 2; y++)
      for (int64_t x = 2; x < W + 2; x++)
        xv[static_cast<size_t>((c * (H + 4) + y) * (W + 4) + x)] = static_cast<float>((c * 7 + y * 5 + x * 3) % 9) - 4;
  wv = small_ints(wv.size(), 53, 5);
  Tensor xp = Tensor(xv, {1, C, H + 4, W + 4}, {.device = "CPU"}).realize(),
         w = Tensor(wv, {C, 1, K, K}, {.device = "CPU"}).realize();
  // (times a constant: a constant's view, of stride 0 along the row, is among the kernel's buffers)
  Tensor y = xp.conv2d(w, std::nullopt, {.groups = C}) * 2;
  std::string src = last_kernel_source(y);
  EXPECT_NE(src.find("void r_24_12_80_5_5("), std::string::npos) << src.substr(0, 300);
  std::vector<float> got = (xp.conv2d(w, std::nullopt, {.groups = C}) * 2).tolist<float>();  // (y's was taken)
  ASSERT_EQ(got.size(), static_cast<size_t>(C * H * W));
  for (int64_t c = 0; c < C; c++)
    for (int64_t oy = 0; oy < H; oy++)
      for (int64_t ox = 0; ox < W; ox++) {
        float want = 0;
        for (int64_t ky = 0; ky < K; ky++)
          for (int64_t kx = 0; kx < K; kx++)
            want += xv[static_cast<size_t>((c * (H + 4) + oy + ky) * (W + 4) + ox + kx)] *
                    wv[static_cast<size_t>((c * K + ky) * K + kx)];
        ASSERT_EQ(got[static_cast<size_t>((c * H + oy) * W + ox)], 2 * want) << c << " " << oy << " " << ox;
      }
  // not one: a window of more than 64 terms (9x9), a kernel under 64K iterations, and CPU_VECTOR_TILE=0
  Tensor w9 = Tensor::ones({C, 1, 9, 9}, {.device = "CPU"});
  EXPECT_EQ(last_kernel_source(xp.conv2d(w9, std::nullopt, {.groups = C})).find("_9_9("), std::string::npos);
  Tensor small = xp.shrink({{0, 1}, {0, 2}, {0, 16}, {0, 20}});
  Tensor ws = w.shrink({{0, 2}, {0, 1}, {0, 5}, {0, 5}});
  std::string small_src = last_kernel_source(small.conv2d(ws, std::nullopt, {.groups = 2}));
  ScopedEnv off("CPU_VECTOR_TILE", "0");
  EXPECT_EQ(last_kernel_source(xp.conv2d(w, std::nullopt, {.groups = C})).find("void r_24_12_80_5_5("),
            std::string::npos);
  std::string ref_src = last_kernel_source(small.conv2d(ws, std::nullopt, {.groups = 2}));  // the reference's opts
  EXPECT_EQ(ref_src.substr(ref_src.find('(')), small_src.substr(small_src.find('(')));
}

TEST(CpuWindowLoop, PaddedDepthwiseConvReadsItsPaddedInputFromMemory) {
  // a depthwise conv with padding too small for the tiles (PaddleOCR's classifier: 24 channels of 3 x 96, 5x5) gets
  // its padded input in memory as the tiled convs do, so the window loop takes it (a masked window is not one); the
  // values are the loops'
  const int64_t C = 24, H = 3, W = 96, K = 5;
  std::vector<float> xv(C * H * W), wv(C * K * K);
  xv = small_ints(xv.size(), 37, 7);
  wv = small_ints(wv.size(), 53, 5);
  Tensor x = Tensor(xv, {1, C, H, W}, {.device = "CPU"}).realize(), w = Tensor(wv, {C, 1, K, K}, {.device = "CPU"});
  w.realize();
  auto [schedule, vars] = Tensor::schedule_with_vars({x.conv2d(w, std::nullopt, {.groups = C, .padding = {2}})});
  ASSERT_EQ(schedule.size(), 2u);  // the padded copy, the conv
  auto runner = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(schedule.back()).prg);
  ASSERT_TRUE(runner);
  EXPECT_NE(runner->p.src.find("void r_24_3_96_5_5("), std::string::npos) << runner->p.src.substr(0, 300);
  EXPECT_EQ(runner->p.src.find("?*("), std::string::npos) << runner->p.src;  // no gated load
  std::vector<float> got = x.conv2d(w, std::nullopt, {.groups = C, .padding = {2}}).tolist<float>();
  for (int64_t c = 0; c < C; c++)
    for (int64_t oy = 0; oy < H; oy++)
      for (int64_t ox = 0; ox < W; ox++) {
        float want = 0;
        for (int64_t ky = 0; ky < K; ky++)
          for (int64_t kx = 0; kx < K; kx++) {
            int64_t iy = oy + ky - 2, ix = ox + kx - 2;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            want += xv[static_cast<size_t>((c * H + iy) * W + ix)] * wv[static_cast<size_t>((c * K + ky) * K + kx)];
          }
        ASSERT_EQ(got[static_cast<size_t>((c * H + oy) * W + ox)], want) << c << " " << oy << " " << ox;
      }
}

TEST(CpuTile, PackedMatvecUnrollsABlock) {
  // a matvec over Q4_0 (blocks of 32 weights), F16 or Q4_K (super-blocks of 256) weights: the reduce unrolled by one
  // block of 32, each lane accumulating apart; 8 rows of blocks, 4 of super-blocks, half as many within 16 registers,
  // taken far apart (UPCASTTOP: each lane one long run of consecutive rows through memory)
  for (auto [type, budget_lanes, rows] :
       {std::tuple{2u, "256", 8}, {2u, "128", 4}, {1u, "128", 4}, {12u, "256", 4}, {12u, "128", 2}}) {
    ScopedEnv budget("CPU_TILE_LANES", budget_lanes);
    std::optional<CpuTile> t = cpu_vector_tile(Kernel(packed_matvec(type, 64, 1024)));
    EXPECT_EQ(opts_of(t),
              cat("[Opt(op=OptOps.UPCASTTOP, axis=0, arg=", rows, "), Opt(op=OptOps.UNROLL, axis=0, arg=32)]"))
        << type << " " << budget_lanes;
    EXPECT_TRUE(t && t->reduce_lanes) << type;
  }
  Tensor f32 = Tensor::ones({64, 1024}).contiguous().realize();  // float32 weights are not packed
  EXPECT_EQ(opts_of(cpu_packed_matvec_tile(Kernel(matvec_of(f32)))), "nullopt");
  EXPECT_EQ(opts_of(cpu_packed_matvec_tile(Kernel(packed_matvec(2, 64, 1024), RenderOpts::cpu()))), "nullopt");

  // rendered: a Q4_0 block's 16 bytes load as one vector wherever the block starts (an unaligned type), and every
  // nibble select folds to its lane's shift: no ?: is left
  Kernel k(packed_matvec(2, 64, 1024));
  apply_hand_coded(k);
  std::string src = render_on_device(k);
  EXPECT_NE(src.find("typedef unsigned char unsigned_char16 __attribute__((aligned(1),vector_size(16)));"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("unsigned_char16 val"), std::string::npos) << src;
  EXPECT_EQ(src.find('?'), std::string::npos) << src;
  // Q4_K: what differs between the sub-blocks of a super-block is one condition for all lanes, a select of whole
  // vectors; never a select per lane
  Kernel kq(packed_matvec(12, 64, 1024));
  apply_hand_coded(kq);
  src = render_on_device(kq);
  EXPECT_NE(src.find('?'), std::string::npos) << src;
  EXPECT_FALSE(std::regex_search(src, std::regex(R"(\?[a-z]+[0-9]+\[)"))) << src;
}

TEST(CpuTile, PackedMatvecOfAnOddNumberOfSixteensUnrollsSixteen) {
  // a row of 176 packed values (Q4_K's mins, one a block: TinyLlama's ffn_down has 176 blocks a row) is no whole
  // number of 32s: the tile unrolls 16 of them (it took the reference's opts: ~6x slower); 32s still take 32
  std::vector<uint8_t> bytes(512 * 176);
  for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<uint8_t>(i * 37 % 64);
  Tensor m = Tensor(bytes, {512, 176}).realize();
  std::optional<CpuTile> t = cpu_vector_tile(Kernel(matvec_of(m.cast(dtypes::float32))));
  EXPECT_NE(opts_of(t).find("Opt(op=OptOps.UNROLL, axis=0, arg=16)"), std::string::npos) << opts_of(t);
  EXPECT_TRUE(t && t->reduce_lanes);
  t = cpu_vector_tile(Kernel(matvec_of(m.shrink({{0, 512}, {0, 160}}).contiguous().realize().cast(dtypes::float32))));
  EXPECT_NE(opts_of(t).find("Opt(op=OptOps.UNROLL, axis=0, arg=32)"), std::string::npos) << opts_of(t);
  // and computes the sums
  std::vector<float> ramp(176);
  for (size_t i = 0; i < ramp.size(); i++) ramp[i] = static_cast<float>(i % 13) * 0.25f - 1.5f;
  Tensor x = Tensor(ramp, {1, 176}).realize();
  std::vector<float> got = x.matmul(m.cast(dtypes::float32).T()).tolist<float>();
  std::vector<float> xv = x.tolist<float>();
  for (int64_t r = 0; r < 512; r++) {
    double want = 0;
    for (int64_t i = 0; i < 176; i++) want += double(xv[size_t(i)]) * bytes[size_t(r * 176 + i)];
    EXPECT_NEAR(got[size_t(r)], want, 1e-4 * std::fabs(want) + 1e-3) << r;
  }
}

TEST(CpuTile, PaddedConvReadsItsInputUnmasked) {
  // a tiled conv with padding gets its padded input in memory (a kernel of its own here: the input is a buffer), so
  // the conv's kernel loads rows without a mask (a masked row is read a lane at a time); the values are the loops'
  // (small integers: every sum exact), and the gradients still flow through the copy
  const int64_t C = 32, H = 40, CO = 16;
  std::vector<float> xv(C * H * H), wv(CO * C * 9);
  xv = small_ints(xv.size(), 37, 7);
  wv = small_ints(wv.size(), 53, 5);
  std::vector<float> out(CO * H * H, 0.0f), dx(xv.size(), 0.0f);
  for (int64_t co = 0; co < CO; co++)
    for (int64_t ci = 0; ci < C; ci++)
      for (int64_t y = 0; y < H; y++)
        for (int64_t x = 0; x < H; x++)
          for (int64_t ky = 0; ky < 3; ky++)
            for (int64_t kx = 0; kx < 3; kx++) {
              int64_t iy = y + ky - 1, ix = x + kx - 1;
              if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
              auto xi = static_cast<size_t>((ci * H + iy) * H + ix);
              out[static_cast<size_t>((co * H + y) * H + x)] +=
                  xv[xi] * wv[static_cast<size_t>(((co * C + ci) * 3 + ky) * 3 + kx)];
              dx[xi] += wv[static_cast<size_t>(((co * C + ci) * 3 + ky) * 3 + kx)];
            }
  Tensor x = Tensor(xv, {1, C, H, H}, {.device = "CPU", .requires_grad = true}).realize(),
         w = Tensor(wv, {CO, C, 3, 3}, {.device = "CPU"}).realize();
  Tensor y = x.conv2d(w, std::nullopt, {.padding = {1}});
  auto [schedule, vars] = Tensor::schedule_with_vars({y});
  ASSERT_EQ(schedule.size(), 3u);  // the padded copy, the weight's output-channels-last copy, the conv
  auto runner = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(schedule.back()).prg);
  ASSERT_TRUE(runner);
  EXPECT_EQ(runner->p.src.find("?*("), std::string::npos) << runner->p.src;  // no gated load
  Tensor y2 = x.conv2d(w, std::nullopt, {.padding = {1}}), g = y2.sum().gradient({x})[0];
  EXPECT_EQ(y2.tolist<float>(), out);
  EXPECT_EQ(g.tolist<float>(), dx);
}

TEST(CpuTile, ATransposeMovesWholeRegisters) {
  // a big copy that transposes (a weight gradient's x, copied so its rows run along the reduce) takes a square of a
  // register's width of both axes: each row of it one vector load, each column one vector store, the transposition
  // the C compiler's shuffles; where the reference's upcast of the stored axis loaded each float alone from rows far
  // apart. The values as the host's
  const int64_t R = 1024, C = 1536;
  std::vector<float> v = small_ints(static_cast<size_t>(R * C), 37, 1001);
  Tensor x = Tensor(v, {R, C}).to("CPU").realize();
  const int w = cpu_register_width(*Device::get("CPU").renderer, dtypes::float32);
  const std::string src = last_kernel_source(x.T().contiguous());  // (a schedule taken is not run: t is made anew)
  Tensor t = x.T().contiguous();
  EXPECT_NE(src.find(cat("*((float", w, "*)((data1+")), std::string::npos) << src;
  EXPECT_NE(src.find(cat("*((float", w, "*)((data0+")), std::string::npos) << src;
  std::vector<float> got = t.tolist<float>();
  ASSERT_EQ(got.size(), v.size());
  for (int64_t i = 0; i < C; i++)
    for (int64_t j = 0; j < R; j++)
      ASSERT_EQ(got[static_cast<size_t>(i * R + j)], v[static_cast<size_t>(j * C + i)]) << i << ", " << j;
  // a small one keeps the reference's opts
  auto [small, vars] = Tensor::schedule_with_vars({Tensor::empty({64, 64}, {.device = "CPU"}).T().contiguous()});
  ASSERT_FALSE(small.empty());
  EXPECT_FALSE(cpu_transpose_tile(Kernel(small.back().ast)));
}

TEST(CpuTile, SplattedRowsOfAVectorLoadLoadAlone) {
  // x.T @ g unpacked (CPU_PACK=0): the tile's rows of A, x's columns, lie side by side, and fold into one vector load
  // whose lanes the tile splats; each splatted lane loads alone instead, a broadcast from memory (a load port's
  // work), where splatting a register's lane past the first is a shuffle on an FMA's port. The sums as the host's
  // With SSE's 4-float registers (CPU_ARCH=x86-64-v2) the tile's 8 rows load as two float4s whose lanes the splat
  // gathers across both: the rule takes one load's lanes, so there the shuffles stay (not done)
  if (cpu_register_width(*Device::get("CPU").renderer, dtypes::float32) <= 4)
    GTEST_SKIP() << "a splat across several vector loads (SSE's tile) keeps its shuffles";
  ScopedEnv unpacked("CPU_PACK", "0");
  const int64_t K = 512, M = 256, N = 256;
  std::vector<float> xv = small_ints(static_cast<size_t>(K * M), 37, 11),
                     gv = small_ints(static_cast<size_t>(K * N), 53, 7);
  std::vector<float> xt(static_cast<size_t>(M * K));
  for (int64_t k = 0; k < K; k++)
    for (int64_t i = 0; i < M; i++) xt[static_cast<size_t>(i * K + k)] = xv[static_cast<size_t>(k * M + i)];
  auto program = [&] { return Tensor(xv, {K, M}).to("CPU").T().matmul(Tensor(gv, {K, N}).to("CPU")); };
  const std::string src = last_kernel_source(program());
  Tensor y = program();
  EXPECT_FALSE(std::regex_search(src, std::regex(R"((val[0-9]+)\[1\],\1\[1\])"))) << src;
  EXPECT_EQ(y.tolist<float>(), host_matmul(xt, gv, M, K, N));
}
