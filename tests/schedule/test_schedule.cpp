// kernelize, schedule and memory planner against the reference (tinygrad 2025-06-12): the t+3+4 graphs of
// golden/uop_repr/graphs.out C3-C7, kernel counts and metadata of golden/naming and golden/debug
#include <gtest/gtest.h>

#include <regex>

#include "scoped_env.h"
#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/runtime/device.h"
#include "tg/schedule/grouper_util.h"
#include "tg/schedule/schedule.h"
#include "tg/tensor/tensor.h"

namespace tg {
namespace {

// *** helpers ***

// the map's image of big_sink = UOp::sink(roots): roots kernelized, in order
std::vector<UOp> kernelize(const std::vector<Tensor>& ts) {
  std::vector<UOp> roots;
  for (const Tensor& t : ts) roots.push_back(t.uop());
  UOp sink = UOp::sink(roots);
  for (auto& [k, v] : get_kernelize_map(sink))
    if (k == sink) return v.src();
  ADD_FAILURE() << "big_sink not in the kernelize map";
  return {};
}
UOp kernelized(const Tensor& t) { return kernelize({t}).at(0); }
std::vector<UOp> kernels(const UOp& g) {
  std::vector<UOp> ks;
  for (const UOp& u : g.toposort())
    if (u.op() == Ops::KERNEL) ks.push_back(u);
  return ks;
}
// compiled kernels only (COPY kernels left out)
size_t count_sink_kernels(const Tensor& t) {
  size_t n = 0;
  for (const UOp& k : kernels(kernelized(t))) n += get_kernel(k).ast.op() == Ops::SINK;
  return n;
}
std::string kernel_reprs(const Tensor& t) {
  std::string out;
  for (const UOp& k : kernels(kernelized(t))) out += (out.empty() ? "" : " ") + get_kernel(k).repr();
  return out;
}
// UNIQUE numbers depend on what the process made before: number them in order of appearance
std::string normalize_unique(const std::string& s) {
  static const std::regex re(R"(UOp\(Ops\.UNIQUE, dtypes\.void, arg=\d+)");
  return std::regex_replace(s, re, "UOp(Ops.UNIQUE, dtypes.void, arg=N");
}
Tensor mat(int64_t n, int64_t m, int64_t off = 0) {  // naming_case.py's mat()
  std::vector<float> v;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) v.push_back(static_cast<float>((i * m + j + off) % 7 - 3));
  return Tensor(v, {n, m});
}
Tensor softmax(const Tensor& x, int64_t axis) {  // tinygrad's Tensor.softmax
  MetadataScope s("softmax");
  Tensor m = x - x.max(axis, true).detach();
  Tensor e = m.exp();
  return e.div(e.sum(axis, true));
}
Tensor matmul(const Tensor& a, const Tensor& b) {  // a @ b: the reference names it __matmul__
  MetadataScope s("__matmul__");
  return a.matmul(b);
}
std::vector<std::string> names(const std::vector<const Metadata*>& m) {
  std::vector<std::string> out;
  for (const Metadata* x : m) out.push_back(x->name);
  return out;
}

// *** t+3+4: graphs.out C3, C5, C6, C7 ***

const char* kC3 = R"(UOp(Ops.ASSIGN, dtypes.int, arg=None, src=(
  x0:=UOp(Ops.BUFFER, dtypes.int, arg=4, src=(
    UOp(Ops.UNIQUE, dtypes.void, arg=4, src=()),
    x2:=UOp(Ops.DEVICE, dtypes.void, arg='CPU', src=()),)),
  UOp(Ops.KERNEL, dtypes.void, arg=<Kernel 12 SINK(<Ops.STORE: 48>,) (__add__,)>, src=(
     x0,
    UOp(Ops.ASSIGN, dtypes.int, arg=None, src=(
      x5:=UOp(Ops.BUFFER, dtypes.int, arg=4, src=(
        UOp(Ops.UNIQUE, dtypes.void, arg=3, src=()),
         x2,)),
      UOp(Ops.KERNEL, dtypes.void, arg=<Kernel 5 <Ops.COPY: 7> ()>, src=(
         x5,
        UOp(Ops.BUFFER, dtypes.int, arg=4, src=(
          UOp(Ops.UNIQUE, dtypes.void, arg=2, src=()),
          UOp(Ops.DEVICE, dtypes.void, arg='PYTHON', src=()),)),)),)),)),)))";

const char* kC7 = R"(UOp(Ops.SINK, dtypes.void, arg=None, src=(
  UOp(Ops.STORE, dtypes.void, arg=None, src=(
    UOp(Ops.VIEW, dtypes.int.ptr(4), arg=ShapeTracker(views=(View(shape=(4,), strides=(1,), offset=0, mask=None, contiguous=True),)), src=(
      UOp(Ops.DEFINE_GLOBAL, dtypes.int.ptr(4), arg=0, src=()),)),
    UOp(Ops.ADD, dtypes.int, arg=None, src=(
      UOp(Ops.ADD, dtypes.int, arg=None, src=(
        UOp(Ops.LOAD, dtypes.int, arg=None, src=(
          UOp(Ops.VIEW, dtypes.int.ptr(4), arg=ShapeTracker(views=(View(shape=(4,), strides=(1,), offset=0, mask=None, contiguous=True),)), src=(
            UOp(Ops.DEFINE_GLOBAL, dtypes.int.ptr(4), arg=1, src=()),)),)),
        UOp(Ops.CONST, dtypes.int, arg=3, src=(
          x9:=UOp(Ops.VIEW, dtypes.void, arg=ShapeTracker(views=(View(shape=(4,), strides=(0,), offset=0, mask=None, contiguous=False),)), src=()),)),)),
      UOp(Ops.CONST, dtypes.int, arg=4, src=(
         x9,)),)),)),)))";

TEST(Kernelize, T347Graph) {
  Tensor u({1, 2, 3, 4});
  Tensor s = u + 3 + 4;
  UOp k = kernelized(s);
  EXPECT_EQ(normalize_unique(k.repr()), normalize_unique(kC3));
  ASSERT_EQ(k.op(), Ops::ASSIGN);
  EXPECT_EQ(get_kernel(k.src(1)).repr(), "<Kernel 12 SINK(<Ops.STORE: 48>,) (__add__,)>");  // C5
  EXPECT_EQ(get_kernel(k.src(1).src(1).src(1)).repr(), "<Kernel 5 <Ops.COPY: 7> ()>");      // C6
  EXPECT_EQ(get_kernel(k.src(1)).ast.repr(), kC7);                                          // C7
}

TEST(Kernelize, T347UniqueNumbers) {
  // the new buffers take the next numbers of the process-wide counter: output kernel first, as the reference
  Tensor u({1, 2, 3, 4});
  UOp in = u.uop().src(0).src(0);
  ASSERT_EQ(in.op(), Ops::UNIQUE);
  int64_t n = as_int(in.arg<ConstValue>());
  UOp k = kernelized(u + 3 + 4);
  EXPECT_EQ(as_int(k.src(0).src(0).arg<ConstValue>()), n + 2);
  EXPECT_EQ(as_int(k.src(1).src(1).src(0).src(0).arg<ConstValue>()), n + 1);
}

// *** kernel counts: the fusion contract ***

TEST(Kernelize, ElementwiseChainIsOneKernel) {
  Tensor a = Tensor::empty({4, 4});
  EXPECT_EQ(count_sink_kernels(((((a + 1) * 2 - 3).exp() + 1).sqrt() * 5)), 1u);
}
TEST(Kernelize, ReduceWithEpilogueIsOneKernel) {
  Tensor a = Tensor::empty({4, 4});
  EXPECT_EQ(kernel_reprs((a * 2 + 1).sum(1) * 3 + 1),
            "<Kernel 18 SINK(<Ops.STORE: 48>,) (__add__, __mul__, sum, empty)>");
}
TEST(Kernelize, Softmax) {
  Tensor x = Tensor::empty({4, 16});
  EXPECT_EQ(kernel_reprs(softmax(x, -1)),  // the reference: 3 kernels
            "<Kernel 8 SINK(<Ops.STORE: 48>,) (softmax, empty)> <Kernel 19 SINK(<Ops.STORE: 48>,) (softmax, empty)> "
            "<Kernel 21 SINK(<Ops.STORE: 48>,) (softmax, empty)>");
}
TEST(Kernelize, MatmulReluSum) {
  Tensor a = mat(4, 4), b = mat(4, 4, 5);
  EXPECT_EQ(kernel_reprs(matmul(a, b).relu().sum().contiguous()),
            "<Kernel 5 <Ops.COPY: 7> ()> <Kernel 5 <Ops.COPY: 7> ()> <Kernel 12 SINK(<Ops.STORE: 48>,) (__matmul__,)> "
            "<Kernel 12 SINK(<Ops.STORE: 48>,) (sum, relu, __matmul__)>");
}

// the reference's kernel repr for each case (ref: tinygrad on the same graph, see the helpers above)
struct Case {
  const char* name;
  Tensor (*make)();
  const char* reprs;
};
const Case kCases[] = {
    {"sum0", [] { return mat(4, 4).sum(0); }, "<Kernel 5 <Ops.COPY: 7> ()> <Kernel 8 SINK(<Ops.STORE: 48>,) ()>"},
    {"sumall", [] { return mat(4, 4).sum(); }, "<Kernel 5 <Ops.COPY: 7> ()> <Kernel 8 SINK(<Ops.STORE: 48>,) ()>"},
    {"permute",
     [] {
       return mat(4, 4).permute({1, 0}).contiguous();
     },
     "<Kernel 5 <Ops.COPY: 7> ()> <Kernel 7 SINK(<Ops.STORE: 48>,) (permute,)>"},
    {"reduce_expand",
     [] {
       Tensor a = mat(4, 4);
       return a.sum(1, true) + a;
     },
     "<Kernel 5 <Ops.COPY: 7> ()> <Kernel 8 SINK(<Ops.STORE: 48>,) ()> <Kernel 11 SINK(<Ops.STORE: 48>,) (__add__,)>"},
    {"max_expand",
     [] {
       Tensor a = mat(4, 4);
       return a.max(1, true).exp() * a;
     },
     "<Kernel 5 <Ops.COPY: 7> ()> <Kernel 12 SINK(<Ops.STORE: 48>,) (exp, max)> "
     "<Kernel 11 SINK(<Ops.STORE: 48>,) (__mul__,)>"},
    {"const_sum",
     [] {
       return Tensor::ones({4, 4}).sum(1);
     },
     ""},
    {"pad_sum",
     [] {
       return mat(4, 4).pad({{1, 1}, {1, 1}}).sum();
     },
     "<Kernel 5 <Ops.COPY: 7> ()> <Kernel 8 SINK(<Ops.STORE: 48>,) (pad,)>"},
    {"exp_pad",
     [] {
       return mat(4, 4).exp().pad({{1, 1}, {1, 1}});
     },
     "<Kernel 5 <Ops.COPY: 7> ()> <Kernel 11 SINK(<Ops.STORE: 48>,) (exp,)>"},
    {"shrink",
     [] {
       return mat(4, 4).reshape({16}).shrink({{2, 10}}) + 1;
     },
     "<Kernel 5 <Ops.COPY: 7> (reshape,)> <Kernel 10 SINK(<Ops.STORE: 48>,) (shrink, __add__)>"},
    {"split_reduce",
     [] {
       return Tensor::empty({256, 256}).sum();
     },
     "<Kernel 8 SINK(<Ops.STORE: 48>,) ()> <Kernel 8 SINK(<Ops.STORE: 48>,) ()>"},
    {"contig_T", [] { return mat(4, 4).contiguous().T().contiguous(); },
     "<Kernel 5 <Ops.COPY: 7> ()> <Kernel 7 SINK(<Ops.STORE: 48>,) ()> <Kernel 7 SINK(<Ops.STORE: 48>,) (transpose,)>"},
};
TEST(Kernelize, ReferenceCases) {
  for (const Case& c : kCases) EXPECT_EQ(kernel_reprs(c.make()), c.reprs) << c.name;
}

// the outputs of each compiled kernel, in order
std::vector<int64_t> kernel_outputs(const Tensor& t) {
  std::vector<int64_t> outs;
  for (const UOp& k : kernels(kernelized(t)))
    if (UOp ast = get_kernel(k).ast; ast.op() == Ops::SINK) outs.push_back(prod(Kernel(ast).output_shape()));
  return outs;
}

// A reduce big enough to split is split once on a device without local memory (the CPU): its first stage's 256
// outputs each read one contiguous run of 65,536 floats, enough rows for the cores. The reference splits that stage
// again (65,536 outputs of 256, for a GPU's occupancy), as a device with locals (PYTHON) still does, and so does the
// CPU where the runs are strided.
TEST(Kernelize, SplitReduceOnceOnCpuWhereRowsAreLong) {
  const int64_t n = int64_t(1) << 24;
  EXPECT_EQ(kernel_outputs(Tensor::empty({n}, {.device = "CPU"}).sum()), (std::vector<int64_t>{256, 1}));
  EXPECT_EQ(kernel_outputs(Tensor::empty({4096, 4096}, {.device = "CPU"}).sum()), (std::vector<int64_t>{256, 1}));
  EXPECT_EQ(kernel_outputs(Tensor::empty({n}, {.device = "PYTHON"}).sum()), (std::vector<int64_t>{65536, 256, 1}));
  // each output of the column sum's first stage reads a strided column: the reference's split
  EXPECT_EQ(kernel_outputs(Tensor::empty({65536, 256}, {.device = "CPU"}).sum(0)), (std::vector<int64_t>{65536, 256}));
  // a small split is the reference's on every device
  EXPECT_EQ(kernel_outputs(Tensor::empty({256, 256}, {.device = "CPU"}).sum()), (std::vector<int64_t>{256, 1}));
}

// A big matmul on the CPU copies its B into panels of the tile's vector width P first (pack_matmul_operand): a kernel
// of K x N more, and the matmul reads B one panel at a time, contiguous along K. Not where B is under 32 panels wide,
// where few rows of x reuse it, on a device without CPU tiles, or with CPU_PACK=0.
// A value read by two nodes and so computed in two kernels, from more than 3 buffers, realizes once (as tinygrad's
// newer scheduler keeps such a buffer): a residual stream r_{i+1} = r_i + a_i * b_i whose every r_i is also summed (a
// layernorm's statistics) realizes every other r_i, where each kernel recomputed the stream from its start (the last
// one read 17 buffers). A smaller stream (under 1M elements) is recomputed, as the reference does it
TEST(Kernelize, AValueTwoKernelsReadFromManyBuffersRealizesOnce) {
  auto widest_kernel = [](int64_t n) {
    Tensor r = Tensor::empty({n, n}, {.device = "CPU"});
    std::vector<Tensor> outs;
    for (int i = 0; i < 8; i++) {
      r = r + Tensor::empty({n, n}, {.device = "CPU"}) * Tensor::empty({n, n}, {.device = "CPU"});
      outs.push_back(r.sum(1));
    }
    outs.push_back(r);
    size_t widest = 0;
    for (const UOp& k : kernels(UOp::sink(kernelize(outs)))) widest = std::max(widest, k.src().size());
    return widest;
  };
  EXPECT_LE(widest_kernel(1024), 7u);
  EXPECT_EQ(widest_kernel(512), 18u);  // 17 inputs and the output
  // a concatenation of 8 buffers read by two kernels (a fused optimizer's gradients, read by its m and v updates):
  // the whole realizes once, not each of the partial sums it is made of (each read by one node)
  std::vector<Tensor> parts;
  for (int i = 0; i < 7; i++) parts.push_back(Tensor::empty({256, 1024}, {.device = "CPU"}));
  Tensor whole = Tensor::empty({256, 1024}, {.device = "CPU"}).cat(parts);
  EXPECT_EQ(kernels(UOp::sink(kernelize({whole + 1.0f, whole * 3.0f}))).size(), 3u);
}

TEST(Kernelize, PackMatmulOperandOnCpu) {
  auto mm = [](int64_t m, int64_t k, int64_t n, const char* dev) {
    return Tensor::empty({m, k}, {.device = dev}).matmul(Tensor::empty({k, n}, {.device = dev}));
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(kernel_outputs(mm(1024, 64, 1024, "CPU")), (V{64 * 1024, 1024 * 1024}));
  // a batch of x's rows reuses B too; a batch of Bs packs each
  EXPECT_EQ(kernel_outputs(
                Tensor::empty({4, 128, 64}, {.device = "CPU"}).matmul(Tensor::empty({64, 2048}, {.device = "CPU"}))),
            (V{64 * 2048, 4 * 128 * 2048}));
  EXPECT_EQ(kernel_outputs(
                Tensor::empty({2, 512, 64}, {.device = "CPU"}).matmul(Tensor::empty({2, 64, 1024}, {.device = "CPU"}))),
            (V{2 * 64 * 1024, 2 * 512 * 1024}));
  const int64_t P = cpu_tile_lanes(*Device::get("CPU").renderer) / 8;  // 32 with AVX-512, 16 with AVX2
  // with 32 registers a B from 32 panels wide (rows 4 KB apart); with 16 (AVX2, SSE), where the unpacked tile spills,
  // from 16 (AVX2: 1 KB, a GPT's input gradient dY @ W with W's rows 384 floats long)
  EXPECT_EQ(kernel_outputs(mm(1024, 64, 16 * P, "CPU")), (P <= 16 ? V{64 * 16 * P, 1024 * 16 * P} : V{1024 * 16 * P}));
  {
    tg::test::ScopedEnv sixteen("CPU_TILE_LANES", "128");
    EXPECT_EQ(kernel_outputs(mm(1024, 80, 384, "CPU")), (V{80 * 384, 1024 * 384}));
    EXPECT_EQ(kernel_outputs(mm(1024, 80, 128, "CPU")), (V{1024 * 128}));  // 8 panels
    tg::test::ScopedEnv thirty_two("CPU_TILE_LANES", "256");
    EXPECT_EQ(kernel_outputs(mm(1024, 88, 384, "CPU")), (V{1024 * 384}));
  }
  EXPECT_EQ(kernel_outputs(mm(256, 64, 1024, "CPU")), (V{256 * 1024}));    // 256 rows of x
  EXPECT_EQ(kernel_outputs(mm(1024, 32, 1024, "CPU")), (V{1024 * 1024}));  // K of 32
  EXPECT_EQ(kernel_outputs(mm(1024, 64, 1024, "PYTHON")), (V{1024 * 1024}));
  {
    tg::test::ScopedEnv off("CPU_PACK", "0");
    EXPECT_EQ(kernel_outputs(mm(1024, 64, 1024, "CPU")), (V{1024 * 1024}));
  }
  // a reduce of 4096 or more in blocks of 1024: the pack, four block matmuls, their sum; not below 4096, nor with
  // CPU_KSPLIT=0
  EXPECT_EQ(kernel_outputs(mm(512, 4096, 1024, "CPU")),
            (V{4096 * 1024, 512 * 1024, 512 * 1024, 512 * 1024, 512 * 1024, 512 * 1024}));
  EXPECT_EQ(kernel_outputs(mm(512, 2048, 1024, "CPU")), (V{2048 * 1024, 512 * 1024}));
  // a reduce of 4096 or more that 1024 doesn't divide is not in blocks, and so packed only for 512 rows: once (the
  // rule fired on its own output without end, TinyLlama's FFN of 5632 prefilling 129 tokens)
  EXPECT_EQ(kernel_outputs(mm(129, 5632, 2048, "CPU")), (V{129 * 2048}));
  EXPECT_EQ(kernel_outputs(mm(512, 5632, 2048, "CPU")), (V{5632 * 2048, 512 * 2048}));
  {
    tg::test::ScopedEnv whole("CPU_KSPLIT", "0");
    EXPECT_EQ(kernel_outputs(mm(512, 4096, 1024, "CPU")), (V{4096 * 1024, 512 * 1024}));
  }
  // a B stored transposed (a linear layer's x @ w.T, w of (N, K)) is packed too, whatever its row stride
  Tensor w = Tensor::empty({1024, 64}, {.device = "CPU"}), xin = Tensor::empty({1024, 64}, {.device = "CPU"});
  EXPECT_EQ(kernel_outputs(xin.matmul(w.T())), (V{64 * 1024, 1024 * 1024}));
  // a weight's gradient: g.T @ x summed over batch and positions (two reduce axes, merged into one of 4096), x packed
  // along its columns for the reduce's blocks: the pack, four blocks, their sum
  // (with 16 registers, where x's 64 columns are 4 panels, g, the operand read across its rows, is copied first,
  // transposed: its rows of the tile then run along the reduce)
  Tensor g = Tensor::empty({4, 1024, 1024}, {.device = "CPU"}), xb = Tensor::empty({4, 1024, 64}, {.device = "CPU"});
  V blocks{4096 * 64, 1024 * 64, 1024 * 64, 1024 * 64, 1024 * 64, 1024 * 64};
  if (P <= 16) blocks.insert(blocks.begin(), 4096 * 1024);
  EXPECT_EQ(kernel_outputs((g.unsqueeze(3) * xb.unsqueeze(2)).sum({0, 1})), blocks);
  EXPECT_EQ(kernel_outputs((g.unsqueeze(3) * xb.unsqueeze(2)).sum({0, 2})), (V{1024 * 64}));  // axes that don't merge
  // with a reduce in blocks, fewer rows pay for the copy: a 384-wide layer's weight gradient (not so at 32 rows)
  Tensor g384 = Tensor::empty({4, 1024, 384}, {.device = "CPU"}),
         xw = Tensor::empty({4, 1024, 1024}, {.device = "CPU"});
  EXPECT_EQ(kernel_outputs((g384.unsqueeze(3) * xw.unsqueeze(2)).sum({0, 1})),
            (V{4096 * 384, 4096 * 1024, 384 * 1024, 384 * 1024, 384 * 1024, 384 * 1024, 384 * 1024}));
  // a B whose reduce axes don't merge in its view (attention's heads (4, 6, 256, 64) read as (4, 256, 384) by the
  // projection's weight gradient) is copied with them innermost, and packed from that copy's source: g's transpose,
  // the pack, the matmul
  Tensor heads = Tensor::empty({4, 6, 256, 64}, {.device = "CPU"}).permute({0, 2, 1, 3}).reshape({4, 256, 384});
  Tensor gp = Tensor::empty({4, 256, 384}, {.device = "CPU"});
  EXPECT_EQ(kernel_outputs((gp.unsqueeze(3) * heads.unsqueeze(2)).sum({0, 1})), (V{1024 * 384, 1024 * 384, 384 * 384}));
  Tensor g32 = Tensor::empty({4, 1024, 32}, {.device = "CPU"});
  EXPECT_EQ(kernel_outputs((g32.unsqueeze(3) * xw.unsqueeze(2)).sum({0, 1})).size(), 1u);
  // the matmul reads the packed B as panels: stride 1 along a column's lanes, the panel width along K
  auto reads_panels = [&](const Tensor& t) {
    std::vector<UOp> ks = kernels(kernelized(t));
    Kernel k(get_kernel(ks.back()).ast);
    for (size_t i = 1; i < k.sts.size(); i++) {
      auto strides = real_strides(k.sts[i]);
      if (strides.back() == sint(P) && std::find(strides.begin(), strides.end(), sint(1)) != strides.end()) return true;
    }
    return false;
  };
  EXPECT_TRUE(reads_panels(mm(1024, 64, 1024, "CPU")));
  EXPECT_FALSE(reads_panels(mm(256, 64, 1024, "CPU")));
  // a B computed for the matmul (a half weight cast to float; or such a cast copied first, as the LLM's prefill copies
  // its dequantized weights) is written into panels where it would have been computed or copied anyway: 16 rows of x
  // pay for it, and the copy is the pack (one kernel for both); 8 rows don't
  Tensor wh = Tensor::empty({2048, 256}, {.device = "CPU", .dtype = dtypes::float16});
  auto rows = [&](int64_t m) { return Tensor::empty({m, 256}, {.device = "CPU"}); };
  Tensor cast16 = rows(16).matmul(wh.cast(dtypes::float32).T()),
         copied16 = rows(16).matmul(wh.cast(dtypes::float32).contiguous().T()),
         copied8 = rows(8).matmul(wh.cast(dtypes::float32).contiguous().T());
  EXPECT_EQ(kernel_outputs(cast16), (V{256 * 2048, 16 * 2048}));
  EXPECT_EQ(kernel_outputs(copied16), (V{256 * 2048, 16 * 2048}));
  EXPECT_TRUE(reads_panels(cast16) && reads_panels(copied16));
  EXPECT_EQ(kernel_outputs(copied8), (V{2048 * 256, 8 * 2048}));
  EXPECT_FALSE(reads_panels(copied8));
  EXPECT_EQ(kernel_outputs(rows(16).matmul(Tensor::empty({2048, 256}, {.device = "CPU"}).T())), (V{16 * 2048}));
  // columns that no 8 lanes divide (a classifier's 6625 characters) leave the tile no vector axis: B is packed into
  // panels padded with zero columns from 16 rows of x on, the padded product realized and its padding dropped after
  // (the next kernel reads a shrunk view); 8 rows don't pay for the copy, and 6624 columns (8 divides) need no panels
  const int64_t NP = (6625 + P - 1) / P * P;
  EXPECT_EQ(kernel_outputs(mm(40, 120, 6625, "CPU") + 1), (V{120 * NP, 40 * NP, 40 * 6625}));
  EXPECT_TRUE(reads_panels(mm(40, 120, 6625, "CPU")));
  EXPECT_EQ(kernel_outputs(mm(8, 120, 6625, "CPU")), (V{8 * 6625}));
  EXPECT_EQ(kernel_outputs(mm(40, 120, 6624, "CPU")), (V{40 * 6624}));
}

// the packed forms compute what the unpacked ones do (the values, not just the kernels)
TEST(Kernelize, PackedMatmulsMatchUnpacked) {
  auto run = [](bool pack) {
    tg::test::ScopedEnv env("CPU_PACK", pack ? "1" : "0");
    Tensor::manual_seed(5);
    Tensor x = Tensor::randn({2, 256, 96}, {.device = "CPU"}), w = Tensor::randn({512, 96}, {.device = "CPU"});
    Tensor g = Tensor::randn({4, 1024, 512}, {.device = "CPU"}), xw = Tensor::randn({4, 1024, 96}, {.device = "CPU"});
    Tensor wr = Tensor::randn({96, 1001}, {.device = "CPU"});  // ragged columns: padded panels
    Tensor fwd = x.matmul(w.T()), wgrad = (g.unsqueeze(3) * xw.unsqueeze(2)).sum({0, 1}), ragged = x.matmul(wr);
    Tensor::realize({fwd, wgrad, ragged});
    std::vector<float> f = fwd.tolist<float>(), r = ragged.tolist<float>();
    f.insert(f.end(), r.begin(), r.end());
    return std::make_pair(f, wgrad.tolist<float>());
  };
  auto [f1, w1] = run(true);
  auto [f0, w0] = run(false);
  ASSERT_EQ(f1.size(), f0.size());
  ASSERT_EQ(w1.size(), w0.size());
  for (size_t i = 0; i < f1.size(); i++) ASSERT_NEAR(f1[i], f0[i], 1e-3f * (1 + std::abs(f0[i]))) << i;
  for (size_t i = 0; i < w1.size(); i++) ASSERT_NEAR(w1[i], w0[i], 1e-3f * (1 + std::abs(w0[i]))) << i;
}

// golden/naming/summary.txt: the compiled kernels of each case (its inputs are realized first there)
TEST(Kernelize, NamingCaseCounts) {
  struct N {
    const char* name;
    Tensor (*make)();
    size_t kernels;
  };
  const N cases[] = {
      {"ew4",
       [] {
         return Tensor({1, 2, 3, 4}) + 3 + 4;
       },
       1},
      {"ew16x16", [] { return mat(16, 16) * 2 + 1; }, 1},
      {"sum_axis0_16x16", [] { return mat(16, 16).sum(0); }, 1},
      {"sum_axis1_16x16", [] { return mat(16, 16).sum(1); }, 1},
      {"sum_all_16x16", [] { return mat(16, 16).sum(); }, 1},
      {"matmul16", [] { return matmul(mat(16, 16), mat(16, 16, 5)); }, 1},
      {"matmul16_relu_sum", [] { return matmul(mat(16, 16), mat(16, 16, 5)).relu().sum(); }, 2},
      {"permute_copy",
       [] {
         return mat(16, 16).permute({1, 0}).contiguous();
       },
       1},
      {"ew_3x5", [] { return mat(3, 5) + 1; }, 1},
      {"ew_1024", [] { return Tensor::empty({1024}) * 2; }, 1},
      {"scalar", [] { return Tensor({2.0f}) * 3 + 1; }, 1},
  };
  for (const N& c : cases) EXPECT_EQ(count_sink_kernels(c.make()), c.kernels) << c.name;
}

TEST(Kernelize, MapCoversTheGraph) {
  // every node of the input graph is a key, so apply_map_to_tensors can repoint any live Tensor
  Tensor a = mat(4, 4);
  Tensor b = a.sum(1, true);
  Tensor c = b + a;
  UOp sink = UOp::sink({c.uop()});
  auto m = get_kernelize_map(sink);
  UOpMap map;
  for (auto& [k, v] : m) map.set(k, v);
  for (const UOp& u : sink.toposort()) EXPECT_NE(map.get(u), nullptr) << u.op();
  // b is realized by its own kernel: its image is a buffer ASSIGN
  EXPECT_EQ(uop_base(map.at(b.uop())).op(), Ops::ASSIGN);
}

// *** the kernelize cache: a graph that differs from an earlier one only in its buffers reuses its map ***

TEST(KernelizeCache, AHitIsTheMapOfAMiss) {
  // three matmuls of one shape on three pairs of buffers: without the cache, then a miss (or a hit of an earlier
  // test's), then a hit; the images are the same graph but for the UNIQUE numbers, and a hit's new buffers are new
  auto mm = [] { return matmul(Tensor::empty({5, 7}), Tensor::empty({7, 3})).relu(); };
  std::string uncached;
  {
    test::ScopedEnv off("SCACHE", "0");
    uncached = normalize_unique(uop_base(kernelized(mm())).repr());
  }
  UOp first = uop_base(kernelized(mm())), second = uop_base(kernelized(mm()));
  EXPECT_EQ(normalize_unique(first.repr()), uncached);
  EXPECT_EQ(normalize_unique(second.repr()), uncached);
  ASSERT_EQ(second.op(), Ops::ASSIGN);
  EXPECT_NE(first.src(0), second.src(0));  // the output buffer
  EXPECT_EQ(names(get_kernel(second.src(1)).metadata), (std::vector<std::string>{"relu", "__matmul__"}));
}

TEST(KernelizeCache, NewBuffersAreNumberedAsOnAMiss) {
  // T347UniqueNumbers on a hit: the output kernel's buffer first
  for (int round = 0; round < 3; round++) {
    Tensor u({1, 2, 3, 4});
    int64_t n = as_int(u.uop().src(0).src(0).arg<ConstValue>());
    UOp k = kernelized(u + 3 + 4);
    EXPECT_EQ(as_int(k.src(0).src(0).arg<ConstValue>()), n + 2) << round;
    EXPECT_EQ(as_int(k.src(1).src(1).src(0).src(0).arg<ConstValue>()), n + 1) << round;
  }
}

TEST(KernelizeCache, KeyedOnMetadataAndEnv) {
  // the same graph made by another method names its kernel by that method
  Tensor a = Tensor::empty({6, 5}), b = Tensor::empty({5, 2});
  kernelized(matmul(a, b));
  UOp d;
  {
    MetadataScope s("dot");
    d = uop_base(kernelized(a.matmul(b)));
  }
  EXPECT_EQ(names(get_kernel(d.src(1)).metadata), (std::vector<std::string>{"dot"}));
  // the grouper's env vars: SPLIT_REDUCEOP=0 sums in one kernel
  auto big_sum = [] { return Tensor::empty({int64_t(1) << 22}, {.device = "CPU"}).sum(); };
  EXPECT_EQ(kernel_outputs(big_sum()).size(), 2u);
  {
    test::ScopedEnv no_split("SPLIT_REDUCEOP", "0");
    EXPECT_EQ(kernel_outputs(big_sum()).size(), 1u);
  }
  EXPECT_EQ(kernel_outputs(big_sum()).size(), 2u);
  // and the CPU tile's lanes, which size the panels a matmul's B is packed in: a B 512 wide is 16 panels of 32
  // (not packed) with AVX-512's budget, 64 panels of 8 with SSE's
  auto mm = [] {
    return Tensor::empty({1024, 64}, {.device = "CPU"}).matmul(Tensor::empty({64, 512}, {.device = "CPU"}));
  };
  for (const char* lanes : {"256", "64", "256"}) {
    test::ScopedEnv budget("CPU_TILE_LANES", lanes);
    EXPECT_EQ(kernel_outputs(mm()).size(), std::string(lanes) == "64" ? 2u : 1u) << lanes;
  }
}

TEST(KernelizeCache, RealizesReadTheirOwnBuffers) {
  // hits realize: each product of its own inputs, into its own buffer; an assign repeated on a hit accumulates
  for (int i = 1; i <= 3; i++) {
    Tensor x = Tensor::full({3, 4}, float(i)).contiguous().realize(), y = Tensor::full({4, 2}, 2.0f).contiguous();
    EXPECT_EQ(matmul(x, y).tolist<float>(), std::vector<float>(6, 8.0f * float(i))) << i;
  }
  Tensor w = Tensor::zeros({4}).contiguous().realize();
  for (int i = 0; i < 3; i++) w.assign(w + 1).realize();
  EXPECT_EQ(w.tolist<float>(), std::vector<float>(4, 3.0f));
}

// *** schedule ***

TEST(Schedule, MatmulReluSum) {
  Tensor a = mat(4, 4), b = mat(4, 4, 5);
  UOp sched_sink = UOp::sink(kernelize({matmul(a, b).relu().sum().contiguous()}));
  auto [sched, vars] = create_schedule_with_vars(sched_sink);
  EXPECT_TRUE(vars.empty());
  ASSERT_EQ(sched.size(), 4u);  // golden/debug/mm_relu_sum.DEBUG2: copy, copy, r_4_4_4, r_16
  EXPECT_EQ(sched[0].ast.op(), Ops::COPY);
  EXPECT_EQ(sched[1].ast.op(), Ops::COPY);
  EXPECT_EQ(sched[2].ast.op(), Ops::SINK);
  EXPECT_EQ(sched[3].ast.op(), Ops::SINK);
  EXPECT_EQ(sched[0].bufs.size(), 2u);  // "arg  2"
  EXPECT_EQ(sched[1].bufs.size(), 2u);
  EXPECT_EQ(sched[2].bufs.size(), 3u);  // "arg  3"
  EXPECT_EQ(sched[3].bufs.size(), 2u);
  EXPECT_EQ(sched[0].bufs[1].device(), "PYTHON");
  EXPECT_EQ(sched[0].bufs[0].device(), "CPU");
  EXPECT_EQ(sched[2].bufs[0].size(), 16);
  EXPECT_EQ(sched[3].bufs[0].size(), 1);
  EXPECT_EQ(sched[3].bufs[1], sched[2].bufs[0]);  // the matmul's output feeds the sum
  EXPECT_TRUE(names(sched[0].metadata).empty());
  EXPECT_EQ(names(sched[2].metadata), (std::vector<std::string>{"__matmul__"}));
  EXPECT_EQ(names(sched[3].metadata), (std::vector<std::string>{"sum", "relu", "__matmul__"}));
}

// Tensor.square names its kernel as the reference does (tinygrad's square is a method of its own: ['square'], not
// ['__mul__'])
TEST(Schedule, SquareHasItsOwnMetadata) {
  Tensor u({1.0f, 2.0f, 3.0f});
  auto [sched, vars] = create_schedule_with_vars(UOp::sink(kernelize({u.square()})));
  ASSERT_FALSE(sched.empty());
  EXPECT_EQ(names(sched.back().metadata), (std::vector<std::string>{"square"}));
}

TEST(Schedule, T347) {
  Tensor u({1, 2, 3, 4});
  UOp sched_sink = UOp::sink(kernelize({u + 3 + 4}));
  auto [sched, vars] = create_schedule_with_vars(sched_sink);
  ASSERT_EQ(sched.size(), 2u);
  EXPECT_EQ(sched[0].ast.op(), Ops::COPY);
  EXPECT_EQ(sched[1].ast.repr(), kC7);
  EXPECT_EQ(sched[1].bufs[1], sched[0].bufs[0]);
  EXPECT_EQ(names(sched[1].metadata), (std::vector<std::string>{"__add__"}));
}

// *** assign into a view of a buffer ***

// reference: t = Tensor.zeros(4, 3).contiguous().realize(); a = t[1].assign(Tensor.ones(3)); a.schedule(): one item
// over t's buffer, storing through the row's view; a realized is a BUFFER_VIEW, and (a + 1).schedule() first
// makes its Buffer a view of t's (base + 12 bytes) with a BUFFER_VIEW item
TEST(Schedule, AssignToARowIsABufferView) {
  Tensor t = Tensor::zeros({4, 3}).contiguous().realize();
  Tensor a = t.index({1}).assign(Tensor::ones({3}));
  UOp sink = UOp::sink(kernelize({a}));
  EXPECT_EQ(sink.src(0).op(), Ops::ASSIGN);
  EXPECT_EQ(sink.src(0).src(0).repr(), UOp::make(Ops::BUFFER_VIEW, dtypes::float32, {t.uop().src(0)},
                                                 Tuple{ConstValue(int64_t(3)), ConstValue(int64_t(3))})
                                           .repr());
  EXPECT_EQ(uop_shape(sink.src(0)), (Shape{3}));
  auto [sched, vars] = create_schedule_with_vars(sink);
  ASSERT_EQ(sched.size(), 1u);
  ASSERT_EQ(sched[0].bufs.size(), 1u);
  EXPECT_EQ(sched[0].bufs[0].repr(), "<buf real:True device:CPU size:12 dtype:dtypes.float>");
  EXPECT_EQ(sched[0].ast.repr(), R"(UOp(Ops.SINK, dtypes.void, arg=None, src=(
  UOp(Ops.STORE, dtypes.void, arg=None, src=(
    UOp(Ops.VIEW, dtypes.float.ptr(12), arg=ShapeTracker(views=(View(shape=(3,), strides=(1,), offset=3, mask=None, contiguous=False),)), src=(
      UOp(Ops.DEFINE_GLOBAL, dtypes.float.ptr(12), arg=0, src=()),)),
    UOp(Ops.CONST, dtypes.float, arg=1.0, src=(
      UOp(Ops.VIEW, dtypes.void, arg=ShapeTracker(views=(View(shape=(3,), strides=(0,), offset=0, mask=None, contiguous=False),)), src=()),)),)),)))");
  sched.clear();
  sink = UOp();
  a.realize();
  ASSERT_EQ(a.uop().op(), Ops::BUFFER_VIEW);
  EXPECT_EQ(uop_shape(a.uop()), (Shape{3}));
  EXPECT_EQ(uop_size(a.uop()), 3);
  auto [s2, v2] = create_schedule_with_vars(UOp::sink(kernelize({a + 1})));
  ASSERT_EQ(s2.size(), 2u);
  EXPECT_EQ(s2[0].ast.repr(), R"(UOp(Ops.BUFFER_VIEW, dtypes.float, arg=(3, 3), src=(
  UOp(Ops.LOAD, dtypes.float, arg=None, src=(
    UOp(Ops.VIEW, dtypes.float.ptr(12), arg=ShapeTracker(views=(View(shape=(12,), strides=(1,), offset=0, mask=None, contiguous=True),)), src=(
      UOp(Ops.DEFINE_GLOBAL, dtypes.float.ptr(12), arg=1, src=()),)),)),)))");
  ASSERT_EQ(s2[0].bufs.size(), 2u);
  EXPECT_EQ(s2[0].bufs[0].repr(), "<buf real:False device:CPU size:3 dtype:dtypes.float offset:12>");
  EXPECT_EQ(s2[0].bufs[1].repr(), "<buf real:True device:CPU size:12 dtype:dtypes.float>");
  EXPECT_EQ(s2[0].bufs[0].base(), s2[0].bufs[1]);
  EXPECT_EQ(s2[1].bufs[1], s2[0].bufs[0]);  // the add reads the view
}

// *** memory planner ***

std::vector<Tensor> chain4() {
  Tensor a = Tensor::empty({64, 64});
  Tensor b = (a + 1).contiguous();
  Tensor c = (b * 2).contiguous();
  Tensor d = (c + 3).contiguous();
  return {(d * 4).contiguous()};
}

TEST(MemoryPlanner, LeavesBuffersOfLiveUOpsAlone) {
  // as in the reference, a BUFFER node's Buffer holds an lb_refcount: the schedule of live tensors is unchanged
  UOp sched_sink = UOp::sink(kernelize(chain4()));
  auto [sched, vars] = create_schedule_with_vars(sched_sink);
  ASSERT_EQ(sched.size(), 4u);
  auto planned = memory_planner(sched);
  for (size_t i = 0; i < sched.size(); i++) EXPECT_EQ(planned[i].bufs, sched[i].bufs);
}

TEST(MemoryPlanner, ChainReusesIntermediates) {
  // the same chain on buffers nobody else holds: b1 [0,1], b2 [1,2], b3 [2,3]; b3 takes b1's place
  UOp sched_sink = UOp::sink(kernelize(chain4()));
  auto [sched, vars] = create_schedule_with_vars(sched_sink);
  ASSERT_EQ(sched.size(), 4u);
  std::vector<Buffer> b;
  for (int i = 0; i < 5; i++) b.emplace_back("CPU", 64 * 64, dtypes::float32);
  for (size_t i = 0; i < 4; i++) sched[i].bufs = {b[i + 1], b[i]};
  auto planned = memory_planner(sched, {b[0], b[4]});
  EXPECT_EQ(planned[0].bufs[1], b[0]);  // kept: the input and the output
  EXPECT_EQ(planned[3].bufs[0], b[4]);
  Buffer p1 = planned[0].bufs[0], p2 = planned[1].bufs[0], p3 = planned[2].bufs[0];
  EXPECT_EQ(planned[1].bufs[1], p1);  // each use of a buffer gets the same replacement
  EXPECT_EQ(planned[2].bufs[1], p2);
  EXPECT_EQ(planned[3].bufs[1], p3);
  ASSERT_TRUE(p1.is_view() && p2.is_view() && p3.is_view());
  EXPECT_EQ(p1.base(), p2.base());  // one arena
  EXPECT_EQ(p1.base(), p3.base());
  EXPECT_EQ(p1.offset(), p3.offset());  // b1 is dead when b3 is born: same memory
  EXPECT_NE(p1.offset(), p2.offset());  // b1 and b2 live together
  EXPECT_GE(p1.base().nbytes(), 2 * 64 * 64 * 4);
  EXPECT_LT(p1.base().nbytes(), 3 * 64 * 64 * 4);
  EXPECT_EQ(p2.size(), 64 * 64);
  EXPECT_EQ(p2.dtype(), dtypes::float32);
}

TEST(MemoryPlanner, NoMemoryPlannerForCopies) {
  Tensor u({1, 2, 3, 4});
  UOp sched_sink = UOp::sink(kernelize({u + 3 + 4}));
  auto [sched, vars] = create_schedule_with_vars(sched_sink);
  std::vector<Buffer> b;
  for (int i = 0; i < 3; i++) b.emplace_back("CPU", 4, dtypes::int32);
  sched[0].bufs = {b[1], b[0]};
  sched[1].bufs = {b[2], b[1]};
  auto planned = memory_planner(sched, {b[2]});
  EXPECT_EQ(planned[0].bufs, sched[0].bufs);  // buffers of a COPY are left alone
  EXPECT_EQ(planned[1].bufs, sched[1].bufs);
}

}  // namespace
}  // namespace tg
