// Tensor cores: the TC opt (tinygrad's Kernel.apply_tensor_cores), the WMMA it puts in the kernel, and what the WMMA
// computes. CUDA's mma.sync can't run here, so the numbers come from the PYTHON device with EMULATE_CUDA=1, which
// takes CUDA's sm_80 tensor cores and runs each WMMA with the instruction's per-thread layout (the reference's
// ops_python models): a wrong swizzle, upcast axis or accumulate gives wrong numbers here. The CUDA text itself is
// checked against the reference in tests/renderer/test_gpu_golden.cpp and compiled by NVRTC in tests/runtime.
#include <gtest/gtest.h>

#include <cmath>

#include "error_of.h"
#include "scoped_env.h"
#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/codegen/program.h"
#include "tg/engine/realize.h"
#include "tg/renderer/cstyle.h"
#include "tg/runtime/ops_python.h"
#include "tg/tensor/tensor.h"
#include "tg/uop/wmma_arg.h"

namespace tg {
namespace {

using test::error_of;
using test::ScopedEnv;

std::vector<float> values(size_t n, int seed) {  // small values with exact halves: the products are exact in float
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<float>(static_cast<int>((i * 37 + size_t(seed) * 11) % 17) - 8) / 8;
  return v;
}

ScheduleItem kernel_item(const Tensor& t) {
  for (const ScheduleItem& si : Tensor::schedule_with_vars({t}).first)
    if (si.ast.op() == Ops::SINK) return si;
  throw Error("no kernel in the schedule");
}

std::vector<std::string> opt_strs(const Kernel& k) {
  std::vector<std::string> r;
  for (const Opt& o : k.applied_opts) r.push_back(o.repr());
  return r;
}

int count_ops(const std::vector<UOp>& uops, Ops op) {
  int n = 0;
  for (const UOp& u : uops) n += u.op() == op;
  return n;
}

TEST(TensorCores, CudaHasTheReferenceShapesPerArchitecture) {
  std::vector<std::string> names;
  for (const TensorCore& tc : CUDARenderer("sm_90").tensor_cores) names.push_back(tc.str());
  EXPECT_EQ(names,
            (std::vector<std::string>{"WMMA_8_16_16_half_float", "WMMA_8_16_16___bf16_float", "WMMA_8_16_16_half_half",
                                      "WMMA_8_16_8_half_float", "WMMA_8_16_8_half_half"}));
  EXPECT_EQ(CUDARenderer("sm_75").tensor_cores.size(), 2u);  // turing: m16n8k8 in half only
  EXPECT_TRUE(CUDARenderer("sm_70").tensor_cores.empty());
  EXPECT_TRUE(OpenCLRenderer().tensor_cores.empty());
  {
    ScopedEnv tf32("ALLOW_TF32", "1");
    EXPECT_EQ(CUDARenderer("sm_80").tensor_cores.back().str(), "WMMA_8_16_8_float_float");
  }
  const TensorCore tc = CUDARenderer("sm_80").tensor_cores[0];
  EXPECT_EQ(tc.reduce_axes(), 4);  // K=16: four unrolls of 2
  EXPECT_EQ(tc.local_opts().size(), 5u);
  EXPECT_EQ(tc.upcast_opts().size(), 2u);
}

TEST(TensorCores, AHalfMatmulGetsTheReferenceOptsAndOneWmmaPerTile) {
  CUDARenderer r("sm_90");
  Tensor a = Tensor::empty({256, 256}, {.device = "PYTHON", .dtype = dtypes::half});
  Tensor b = Tensor::empty({256, 256}, {.device = "PYTHON", .dtype = dtypes::half});
  Kernel k(kernel_item(a.matmul(b)).ast, r);
  ASSERT_TRUE(k.apply_tensor_cores(1));
  EXPECT_EQ(opt_strs(k), (std::vector<std::string>{
                             "Opt(op=OptOps.TC, axis=0, arg=(-1, 0, 1))", "Opt(op=OptOps.UPCAST, axis=0, arg=4)",
                             "Opt(op=OptOps.UPCAST, axis=1, arg=4)", "Opt(op=OptOps.LOCAL, axis=1, arg=4)"}));
  ASSERT_TRUE(k.tensor_core.has_value());
  EXPECT_EQ(k.tensor_core->str(), "WMMA_8_16_16_half_float");
  ProgramSpec p = to_program(k, r, true, "CUDA");
  EXPECT_EQ(count_ops(p.uops, Ops::WMMA), 16);  // 4x4 upcast tiles of one m16n8k16 each
  EXPECT_EQ(p.local_size, (LaunchSize{16, 2, 4}));
  const WmmaArg* w = nullptr;
  for (const UOp& u : p.uops)
    if (u.op() == Ops::WMMA) w = &as_wmma_arg(u.arg());
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->repr().rfind("('WMMA_8_16_16_half_float', (8, 16, 16), dtypes.half, dtypes.float, 'CUDA', 32, ", 0), 0u)
      << w->repr();
  // 2 * N * M * K per warp, counted per thread: the flops of a 256^3 matmul
  EXPECT_EQ(p.estimates.ops, 2LL * 256 * 256 * 256);
}

TEST(TensorCores, TheOptIsCheckedLikeAnyOther) {
  CUDARenderer r("sm_90");
  auto half = [](const Shape& s) { return Tensor::empty(s, {.device = "PYTHON", .dtype = dtypes::half}); };
  const UOp mm = kernel_item(half({64, 64}).matmul(half({64, 64}))).ast;
  auto err = [&](std::vector<Opt> opts, const RenderOpts& ro) {
    Kernel k(mm, ro);
    try {
      k.apply_opts(opts);
    } catch (const KernelOptError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  using T3 = std::tuple<int, int, int>;
  EXPECT_NE(err({{OptOps::UPCAST, 0, 4}, {OptOps::TC, 0, T3{-1, 0, 1}}}, r).find("tensor core opts must be first"),
            std::string::npos);
  EXPECT_NE(err({{OptOps::TC, 0, T3{-1, 0, 1}}}, OpenCLRenderer()).find("must have tensor cores"), std::string::npos);
  EXPECT_NE(err({{OptOps::TC, 0, T3{5, 0, 1}}}, r).find("valid tc_select"), std::string::npos);
  EXPECT_NE(err({{OptOps::TC, 0, T3{-1, 3, 1}}}, r).find("valid tc_opt"), std::string::npos);
  EXPECT_NE(err({{OptOps::TC, 0, T3{-1, 0, 0}}}, r).find("use_tensor_cores value is not valid"), std::string::npos);
  EXPECT_NE(err({{OptOps::TC, 0, 4}}, r).find("tensor core opts must have valid arg"), std::string::npos);
  EXPECT_NE(err({{OptOps::TC, 99, T3{-1, 0, 1}}}, r).find("no tensor core available"), std::string::npos);
  EXPECT_NE(err({{OptOps::TC, 0, T3{-1, 0, 1}}, {OptOps::GROUP, 0, 2}}, r).find("can't group with tensor cores"),
            std::string::npos);
  EXPECT_NE(err({{OptOps::TC, 0, T3{-1, 0, 1}}, {OptOps::UPCAST, 2, 2}}, r).find("can't upcast TC locals"),
            std::string::npos);
  // float32 has no tensor core unless ALLOW_TF32; a failed TC leaves the kernel as it was
  Tensor f = Tensor::empty({64, 64}, {.device = "PYTHON"});
  Kernel k(kernel_item(f.matmul(f)).ast, r);
  const Shape before = k.full_shape();
  EXPECT_FALSE(k.apply_tensor_cores(1));
  EXPECT_EQ(k.full_shape(), before);
  EXPECT_TRUE(k.applied_opts.empty());
  // sizes that aren't multiples of the tensor core's need tc_opt 2 (PADTO)
  const UOp odd = kernel_item(half({60, 56}).matmul(half({56, 40}))).ast;
  EXPECT_FALSE(Kernel(odd, r).apply_tensor_cores(1, std::nullopt, 0, -1, 0));
  Kernel kp(odd, r);
  EXPECT_TRUE(kp.apply_tensor_cores(1, std::nullopt, 0, -1, 2));
}

// a (M, K) @ b (K, N) of dtype `in` on PYTHON, accumulated in `acc`, with the TC opt rendered by an EMULATE_CUDA
// PythonRenderer; returns the output as doubles
std::vector<double> emulated_tc_matmul(DType in, DType acc, int M, int N, int K, int use_tc, int tc_opt,
                                       const std::optional<std::vector<Opt>>& extra = std::nullopt,
                                       int* wmmas = nullptr) {
  ScopedEnv emulate("EMULATE_CUDA", "1");
  PythonRenderer r;
  EXPECT_EQ(r.device, "CUDA");
  auto mk = [&](int rows, int cols, int seed) {
    return Tensor(values(size_t(rows * cols), seed), {rows, cols}, {.device = "PYTHON"}).cast(in).realize();
  };
  Tensor a = mk(M, K, 1), b = mk(K, N, 2);
  ScheduleItem si = kernel_item(a.matmul(b, acc));
  Kernel k(si.ast, r);
  EXPECT_TRUE(k.apply_tensor_cores(use_tc, extra, 0, -1, tc_opt)) << "no tensor core for " << in.repr();
  auto runner = compile_kernel(k, r, true, "PYTHON");
  if (wmmas) *wmmas = count_ops(runner->p.uops, Ops::WMMA);
  std::vector<Buffer> bufs;
  for (int64_t g : runner->p.globals) bufs.push_back(si.bufs.at(static_cast<size_t>(g)).ensure_allocated());
  (*runner)(bufs, {}, true);
  const Buffer& out = si.bufs[0];
  const DType od = out.dtype();
  std::vector<uint8_t> raw(static_cast<size_t>(M * N * od.itemsize()));
  out.copyout(raw.data(), raw.size());
  std::vector<double> ret;
  for (int i = 0; i < M * N; i++) ret.push_back(as_double(read_value(raw.data() + i * od.itemsize(), od)));
  return ret;
}

void expect_matmul(const std::vector<double>& got, int M, int N, int K, double tol) {
  const std::vector<float> a = values(size_t(M * K), 1), b = values(size_t(K * N), 2);
  ASSERT_EQ(got.size(), size_t(M * N));
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double want = 0;
      for (int k = 0; k < K; k++) want += double(a[size_t(i * K + k)]) * b[size_t(k * N + j)];
      ASSERT_NEAR(got[size_t(i * N + j)], want, tol) << "at (" << i << ", " << j << ")";
    }
}

TEST(TensorCores, EmulatedCudaWmmaComputesTheMatmul) {
  int wmmas = 0;
  // m16n8k16, half in, float accumulate: the reference's hand-coded opts around it (two K loop trips)
  expect_matmul(emulated_tc_matmul(dtypes::half, dtypes::float32, 64, 64, 32, 1, 0, std::nullopt, &wmmas), 64, 64, 32,
                1e-6);
  EXPECT_GT(wmmas, 0);
  // bfloat16 in, float accumulate
  expect_matmul(emulated_tc_matmul(dtypes::bfloat16, dtypes::float32, 32, 16, 48, 1, 0), 32, 16, 48, 1e-6);
  {  // float32 through tf32's m16n8k8 (ALLOW_TF32=1; these values are exact in tf32's 10-bit mantissa)
    ScopedEnv tf32("ALLOW_TF32", "1");
    expect_matmul(emulated_tc_matmul(dtypes::float32, dtypes::float32, 32, 16, 16, 1, 0, std::nullopt, &wmmas), 32, 16,
                  16, 1e-6);
    EXPECT_GT(wmmas, 0);
  }
  // half in, half accumulate (the values are small multiples of 1/64: exact in half)
  expect_matmul(emulated_tc_matmul(dtypes::half, dtypes::half, 16, 16, 16, 1, 0), 16, 16, 16, 1e-6);
}

TEST(TensorCores, EmulatedCudaWithTheTensorCoreOnlyAndNoExtraOpts) {
  int wmmas = 0;
  // no hand-coded opts around it: one WMMA per K step
  expect_matmul(emulated_tc_matmul(dtypes::half, dtypes::float32, 16, 8, 32, 1, 0, std::vector<Opt>{}, &wmmas), 16, 8,
                32, 1e-6);
  EXPECT_EQ(wmmas, 1);
  // m16n8k8 (sm_75's shape), chosen by tc_select 3
  {
    ScopedEnv emulate("EMULATE_CUDA", "1");
    PythonRenderer r;
    Tensor a = Tensor(values(16 * 8, 1), {16, 8}, {.device = "PYTHON"}).cast(dtypes::half).realize();
    Tensor b = Tensor(values(8 * 8, 2), {8, 8}, {.device = "PYTHON"}).cast(dtypes::half).realize();
    ScheduleItem si = kernel_item(a.matmul(b, dtypes::float32));
    Kernel k(si.ast, r);
    ASSERT_TRUE(k.apply_tensor_cores(1, std::vector<Opt>{}, 0, 3, 0));
    EXPECT_EQ(k.tensor_core->str(), "WMMA_8_16_8_half_float");
    auto runner = compile_kernel(k, r, true, "PYTHON");
    std::vector<Buffer> bufs;
    for (int64_t g : runner->p.globals) bufs.push_back(si.bufs.at(static_cast<size_t>(g)).ensure_allocated());
    (*runner)(bufs, {}, true);
    std::vector<float> out(16 * 8);
    si.bufs[0].copyout(out.data(), out.size() * sizeof(float));
    std::vector<double> got(out.begin(), out.end());
    expect_matmul(got, 16, 8, 8, 1e-6);
  }
}

TEST(TensorCores, PaddedAndShapeOnlyAndSharedMemoryVariants) {
  // tc_opt 2 pads N, M and K up to the tensor core's multiples
  expect_matmul(emulated_tc_matmul(dtypes::half, dtypes::float32, 20, 12, 24, 1, 2), 20, 12, 24, 1e-6);
  // TC=2: the tensor core's shape without the WMMA; TC=3: emulated with shared memory
  for (int use : {2, 3}) {
    int wmmas = -1;
    expect_matmul(emulated_tc_matmul(dtypes::half, dtypes::float32, 32, 16, 32, use, 0, std::nullopt, &wmmas), 32, 16,
                  32, 1e-6);
    EXPECT_EQ(wmmas, 0) << "TC=" << use;
  }
}

TEST(TensorCores, NoTensorCoreWhereTheKernelIsNoMatmul) {
  CUDARenderer r("sm_90");
  auto half = [](const Shape& s) { return Tensor::empty(s, {.device = "PYTHON", .dtype = dtypes::half}); };
  for (const Tensor& t : {half({64, 64}).sum(1), half({64, 64}) + half({64, 64}), half({64, 64}).max(1)}) {
    Kernel k(kernel_item(t).ast, r);
    EXPECT_FALSE(k.apply_tensor_cores(1));
    EXPECT_TRUE(k.applied_opts.empty());
  }
}

}  // namespace
}  // namespace tg
