// The GPU devices: OpenCL (GPU, run for real wherever an OpenCL driver is installed: PoCL in CI) and CUDA (compiled
// by NVRTC for sm_90 without a GPU; run only where a driver is). Tests that need a device skip cleanly without it.
#include <gtest/gtest.h>

#include <cmath>

#include "error_of.h"
#include "scoped_env.h"
#include "tg/codegen/heuristic.h"
#include "tg/codegen/kernel.h"
#include "tg/codegen/program.h"
#include "tg/engine/realize.h"
#include "tg/renderer/cstyle.h"
#include "tg/runtime/device.h"
#include "tg/tensor/jit.h"
#include "tg/tensor/tensor.h"

namespace tg {
namespace {

using test::error_of;
using test::ScopedEnv;

#define NEED_GPU()                                           \
  do {                                                       \
    try {                                                    \
      Device::get("GPU");                                    \
    } catch (const Error& e) {                               \
      GTEST_SKIP() << "no OpenCL device here: " << e.what(); \
    }                                                        \
  } while (0)

UOp kernel_ast(const Tensor& t) {
  for (const ScheduleItem& si : Tensor::schedule_with_vars({t}).first)
    if (si.ast.op() == Ops::SINK) return si.ast;
  throw Error("no kernel in the schedule");
}

std::vector<float> values(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<float>((i * 7919 + size_t(seed) * 104729) % 1000) / 500.f - 1.f;
  return v;
}

// *** OpenCL ***

TEST(OpenCL, TutorialAddIsOneKernelOfOpenCLC) {
  NEED_GPU();
  // PoCL (OpenCL on this CPU) is used when named, never chosen as the default over the CPU device
  if (!Device::get("GPU").pick_by_default) {
    ScopedEnv dev("DEV", nullptr), cpu("CPU", nullptr), gpu("GPU", nullptr);
    Device::DEFAULT.reset();
    EXPECT_NE(Device::DEFAULT.str(), "GPU");
    Device::DEFAULT.reset();
  }
  Tensor t = Tensor({1.f, 2.f, 3.f, 4.f}, {.device = "GPU"}) + 3 + 4;
  EXPECT_EQ(t.device(), "GPU");
  EXPECT_EQ(t.tolist<float>(), (std::vector<float>{8, 9, 10, 11}));
  auto r = get_runner("GPU", kernel_ast(Tensor({1.f, 2.f, 3.f, 4.f}, {.device = "GPU"}) + 3 + 4));
  EXPECT_NE(r->p.src.find("__kernel void E_4(__global float* data0, __global float* data1)"), std::string::npos)
      << r->p.src;
  EXPECT_EQ(Device::canonicalize("cl"), "GPU");  // OpenCL's later name
}

TEST(OpenCL, MatmulWithLocalsAndGroupedReducesMatchTheCpu) {
  NEED_GPU();
  std::vector<float> av = values(64 * 48, 1), bv = values(48 * 40, 2);
  auto mm = [&](const char* d) {
    return Tensor(av, {64, 48}, {.device = d}).matmul(Tensor(bv, {48, 40}, {.device = d})).tolist<float>();
  };
  std::vector<float> g = mm("GPU"), c = mm("CPU");
  ASSERT_EQ(g.size(), c.size());
  for (size_t i = 0; i < g.size(); i++) EXPECT_NEAR(g[i], c[i], 1e-4f) << i;
  // a long reduce goes through local memory and a barrier (GROUPTOP), as the reference's heuristic does on GPUs
  std::vector<float> v = values(1 << 16, 3);
  Tensor x(v, {1 << 16}, {.device = "GPU"});
  auto r = get_runner("GPU", kernel_ast(Tensor::empty({1 << 16}, {.device = "GPU"}).sum()));
  EXPECT_NE(r->p.src.find("barrier(CLK_LOCAL_MEM_FENCE);"), std::string::npos) << r->p.src;
  EXPECT_NE(r->p.src.find("__local float temp0["), std::string::npos) << r->p.src;
  double want = 0;
  for (float f : v) want += f;
  EXPECT_NEAR(x.sum().item<float>(), want, 1e-2);
  Tensor sm = Tensor(av, {64, 48}, {.device = "GPU"}).softmax(-1).sum(-1);
  for (float s : sm.tolist<float>()) EXPECT_NEAR(s, 1.0f, 1e-5f);
}

TEST(OpenCL, CopiesAndMixedDevices) {
  NEED_GPU();
  std::vector<float> v = values(1000, 4);
  Tensor cpu(v, {1000}, {.device = "CPU"}), gpu = cpu.to("GPU");
  EXPECT_EQ(gpu.device(), "GPU");
  EXPECT_EQ(gpu.tolist<float>(), v);
  EXPECT_EQ(gpu.to("PYTHON").tolist<float>(), v);  // GPU -> host -> PYTHON
  Tensor mixed = (gpu * 2).to("CPU") + cpu;        // a copy back, then a CPU kernel
  std::vector<float> got = mixed.tolist<float>();
  for (size_t i = 0; i < v.size(); i++) EXPECT_FLOAT_EQ(got[i], 3 * v[i]);
  // a gradient on the GPU
  Tensor w = Tensor(v, {1000}, {.device = "GPU", .requires_grad = true});
  (w * w).sum().backward();
  std::vector<float> grad = w.grad()->tolist<float>();
  for (size_t i = 0; i < v.size(); i++) EXPECT_FLOAT_EQ(grad[i], 2 * v[i]);
}

TEST(OpenCL, TinyJitCapturesAndReplays) {
  NEED_GPU();
  TinyJit jit([](const Tensor& a, const Tensor& b) { return (a * b + 1).sum(0).realize(); });
  for (int i = 0; i < 4; i++) {
    std::vector<float> av = values(256, i), bv = values(256, i + 10);
    Tensor a(av, {16, 16}, {.device = "GPU"}), b(bv, {16, 16}, {.device = "GPU"});
    std::vector<float> got = jit(a.realize(), b.realize()).tolist<float>();
    for (int c = 0; c < 16; c++) {
      double want = 0;
      for (int r = 0; r < 16; r++) want += av[size_t(r * 16 + c)] * bv[size_t(r * 16 + c)] + 1;
      EXPECT_NEAR(got[size_t(c)], want, 1e-4) << i;
    }
  }
}

TEST(OpenCL, BeamSearchesLocalsAndGroupsThere) {
  NEED_GPU();
  ScopedEnv beam("BEAM", "1"), ignore("IGNORE_BEAM_CACHE", "1");
  std::vector<float> v = values(64 * 256, 5);
  Tensor x(v, {64, 256}, {.device = "GPU"});
  std::vector<float> got = x.sum(1).tolist<float>();
  for (int r = 0; r < 64; r++) {
    double want = 0;
    for (int c = 0; c < 256; c++) want += v[size_t(r * 256 + c)];
    EXPECT_NEAR(got[size_t(r)], want, 1e-3);
  }
}

TEST(OpenCL, BadInputNamesTheProblem) {
  NEED_GPU();
  Compiled& dev = Device::get("GPU");
  // out of device memory: the bytes asked for and free
  std::string oom = error_of([] { Buffer("GPU", int64_t(1) << 50, dtypes::float32, true); });
  EXPECT_NE(oom.find("out of memory on GPU: asked for 4503599627370496 bytes"), std::string::npos) << oom;
  EXPECT_NE(oom.find(" free of "), std::string::npos) << oom;
  // host memory (Tensor.from_blob's) can't be a cl_mem: an error, not a crash at the first copy
  float host[4] = {1, 2, 3, 4};
  EXPECT_EQ(error_of([&] { Buffer("GPU", 4, dtypes::float32, BufferSpec{.external_ptr = host}, true); }),
            "GPU can't use external memory");
  // a compile error carries the driver's build log and the source
  try {
    dev.compiler->compile("__kernel void broken(__global float* x) { x[0] = y; }");
    ADD_FAILURE() << "no CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("OpenCL Compile Error"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("broken"), std::string::npos) << e.what();
  }
  // a driver error names the call and the error
  std::string bad = error_of([&] { dev.runtime("k", "not a binary"); });
  EXPECT_NE(bad.find("OpenCL error"), std::string::npos) << bad;
  EXPECT_NE(bad.find("clCreateProgramWithBinary"), std::string::npos) << bad;
  // a work-group larger than the device allows is caught before the launch
  const std::string lib = dev.compiler->compile("__kernel void one(__global float* x) { x[get_global_id(0)] = 1; }");
  std::unique_ptr<Program> prg = dev.runtime("one", lib);
  Buffer out("GPU", 1 << 20, dtypes::float32, true);
  std::vector<Opaque> bufs{out.opaque()};
  std::string big = error_of([&] { (*prg)(bufs, {}, true, {1, 1, 1}, Program::Dims{1 << 20, 1, 1}); });
  EXPECT_NE(big.find("kernel one: local size 1048576x1x1 exceeds"), std::string::npos) << big;
  EXPECT_GE((*prg)(bufs, {}, true, {4, 1, 1}, Program::Dims{8, 1, 1}).value_or(-1), 0.0);  // a good launch is timed
}

// *** CUDA ***

TEST(Cuda, WithoutADriverTheDeviceSaysWhy) {
  std::string why = error_of([] { Device::get("CUDA"); });
  if (why == "(no error)") GTEST_SKIP() << "a CUDA device opened here";
  EXPECT_NE(why.find("device 'CUDA' is unavailable"), std::string::npos) << why;
  EXPECT_TRUE(why.find("libcuda") != std::string::npos || why.find("CUDA error") != std::string::npos) << why;
}

// the NVRTC toolchain, or a skip where the toolkit's library is missing
#define NEED_NVRTC(tc)                             \
  Toolchain tc;                                    \
  try {                                            \
    tc = Device::toolchain("CUDA:sm_90");          \
  } catch (const Error& e) {                       \
    GTEST_SKIP() << "no NVRTC here: " << e.what(); \
  }

TEST(Cuda, NvrtcCompilesForSm90WithoutAGpu) {
  NEED_NVRTC(tc);
  EXPECT_EQ(tc.renderer->device, "CUDA");
  Tensor a = Tensor::empty({256, 256}), b = Tensor::empty({256, 256});
  for (const Tensor& t : {a.matmul(b), a.softmax(-1), (a.half() * 2).exp2().float_(), a.sum()}) {
    Kernel k(kernel_ast(t), *tc.renderer);
    apply_default_opts(k);
    ProgramSpec p = to_program(k, *tc.renderer, true, "CUDA");
    EXPECT_NE(p.src.find("extern \"C\" __global__ void __launch_bounds__("), std::string::npos) << p.src;
    std::string cubin = tc.compiler->compile(p.src);
    ASSERT_GE(cubin.size(), 4u);
    EXPECT_EQ(cubin.substr(0, 4),
              "\x7f"
              "ELF");  // a cubin is an ELF file
  }
  try {
    tc.compiler->compile("extern \"C\" __global__ void broken(float* x) { x[0] = y; }");
    ADD_FAILURE() << "no CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("NVRTC compile error for sm_90"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("identifier \"y\" is undefined"), std::string::npos) << e.what();
  }
}

TEST(Cuda, NvrtcCompilesEveryTensorCoreForSm90) {
  NEED_NVRTC(tc);
  ScopedEnv tf32("ALLOW_TF32", "1");
  CUDARenderer r("sm_90");  // with the tf32 one
  for (int sel = 0; sel < static_cast<int>(r.tensor_cores.size()); sel++) {
    const TensorCore& t = r.tensor_cores[static_cast<size_t>(sel)];
    Tensor a = Tensor::empty({64, 64}, {.dtype = t.dtype_in}), b = Tensor::empty({64, 64}, {.dtype = t.dtype_in});
    Kernel k(kernel_ast(a.matmul(b, t.dtype_out)), r);
    ASSERT_TRUE(k.apply_tensor_cores(1, std::nullopt, 0, sel, 1)) << t.str();
    ProgramSpec p = to_program(k, r, true, "CUDA");
    EXPECT_NE(p.src.find("__device__"), std::string::npos) << p.src;
    EXPECT_NE(p.src.find("mma.sync.aligned.m16n8k" + std::to_string(t.dims[2])), std::string::npos) << p.src;
    std::string cubin = tc.compiler->compile(p.src);
    EXPECT_EQ(cubin.substr(0, 4),
              "\x7f"
              "ELF")
        << t.str();
  }
}

TEST(Cuda, ToolchainsAreNamedByDevice) {
  EXPECT_NE(error_of([] { Device::toolchain("CPU"); }).find("device 'CPU' has no toolchain to cross-compile with"),
            std::string::npos);
  NEED_NVRTC(tc);
  EXPECT_NE(error_of([] { Device::toolchain("CUDA:90"); }).find("a CUDA target is sm_NN"), std::string::npos);
}

}  // namespace
}  // namespace tg
