// GFLOP/s of an N x N matmul on a GPU device (default CUDA), for float32, float16 and bfloat16 (float32
// accumulation, as the reference's half matmul), against the GPU's peak for that dtype where the device name is
// known and, where libcublas is installed, cuBLAS on the same buffers (cublasSgemm / cublasGemmEx).
//
//   ./bench_gpu_matmul [--n 4096] [--iters 20] [--device CUDA] [--gpu "NVIDIA H200"]
// --gpu: the GPU's name (nvidia-smi's), to look up its peak
// Each figure is the median of iters runs after 3 warm-up runs; a run is one kernel, timed from launch to
// synchronize.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tg/engine/realize.h"
#include "tg/runtime/buffers.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor.h"

using namespace tg;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double time_median(int iters, const std::string& device, F run) {
  for (int i = 0; i < 3; i++) run();
  Device::get(device).synchronize();
  std::vector<double> ts;
  for (int i = 0; i < iters; i++) {
    auto st = std::chrono::steady_clock::now();
    run();
    Device::get(device).synchronize();
    ts.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count());
  }
  return median(ts);
}

// dense peak TFLOP/s (no sparsity) from the vendors' data sheets, for the GPUs these figures are taken on
std::optional<double> peak_tflops(const std::string& name, DType dt) {
  struct Row {
    const char* name;
    double fp32, fp16;
  };
  static const Row rows[] = {{"H200", 67, 989}, {"H100", 67, 989}, {"A100", 19.5, 312}, {"L4", 30, 121}};
  for (const Row& r : rows)
    if (name.find(r.name) != std::string::npos) return dt == dtypes::float32 ? r.fp32 : r.fp16;
  return std::nullopt;
}

// cuBLAS through dlopen: nullopt where it isn't installed
struct Cublas {
  using Create = int (*)(void**);
  using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                         const void*, void*, int, int, int, int);
  Create create = nullptr;
  GemmEx gemm = nullptr;
  void* handle = nullptr;
  static Cublas* open() {
    void* h = ::dlopen("libcublas.so", RTLD_NOW);
    for (const char* n : {"libcublas.so.13", "libcublas.so.12"})
      if (h == nullptr) h = ::dlopen(n, RTLD_NOW);
    if (h == nullptr) return nullptr;
    auto* c = new Cublas();
    c->create = reinterpret_cast<Create>(::dlsym(h, "cublasCreate_v2"));
    c->gemm = reinterpret_cast<GemmEx>(::dlsym(h, "cublasGemmEx"));
    if (c->create == nullptr || c->gemm == nullptr || c->create(&c->handle) != 0) return nullptr;
    return c;
  }
  // C = A @ B for row-major n x n buffers: column-major cuBLAS computes B^T-major, so the operands swap
  bool matmul(int n, DType dt, void* a, void* b, void* c) const {
    // cudaDataType: 0 R_32F, 2 R_16F, 14 R_16BF; cublasComputeType_t: 68 COMPUTE_32F; 0 OP_N; -1 GEMM_DEFAULT
    int type = dt == dtypes::float32 ? 0 : dt == dtypes::half ? 2 : 14;
    float alpha = 1, beta = 0;
    return gemm(handle, 0, 0, n, n, n, &alpha, b, type, n, a, type, n, &beta, c, type, n, 68, -1) == 0;
  }
};

}  // namespace

int main(int argc, char** argv) {
  int n = 4096, iters = 20;
  std::string device = "CUDA", gpu;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--n") n = std::atoi(argv[i + 1]);
    if (a == "--iters") iters = std::atoi(argv[i + 1]);
    if (a == "--device") device = argv[i + 1];
    if (a == "--gpu") gpu = argv[i + 1];
  }
  try {
    Device::get(device);
  } catch (const Error& e) {
    std::printf("bench_gpu_matmul: %s\n", e.what());
    return 0;  // no GPU here: nothing to measure
  }
  Cublas* cublas = device == "CUDA" ? Cublas::open() : nullptr;
  const double flops = 2.0 * n * n * n;
  std::printf("matmul %dx%d on %s%s\n", n, n, device.c_str(), cublas ? " (cuBLAS for comparison)" : "");
  std::printf("%-9s %12s %12s %10s %12s %10s\n", "dtype", "ms", "GFLOP/s", "of peak", "cuBLAS GF/s", "ratio");
  for (DType dt : {DType(dtypes::float32), DType(dtypes::half), DType(dtypes::bfloat16)}) {
    if (!is_dtype_supported(dt, device)) continue;
    Tensor a = Tensor::rand({n, n}, {.device = device}).cast(dt).realize();
    Tensor b = Tensor::rand({n, n}, {.device = device}).cast(dt).realize();
    // one kernel per run: the schedule of a @ b, lowered once and run again on the same buffers
    Tensor c = a.matmul(b, dt == dtypes::float32 ? std::nullopt : std::optional<DType>(dtypes::float32)).cast(dt);
    auto sched = Tensor::schedule_with_vars({c}).first;
    std::vector<ExecItem> eis;
    for (const ScheduleItem& si : sched) {
      for (Buffer buf : si.bufs) buf.ensure_allocated();  // a handle: the copy allocates the shared buffer
      eis.push_back(lower_schedule_item(si));
    }
    double t = time_median(iters, device, [&] {
      for (ExecItem& ei : eis) ei.run({}, false, false);
    });
    double gf = flops / t * 1e-9;
    std::string peak = "-", cub = "-", ratio = "-";
    if (auto p = peak_tflops(gpu, dt)) peak = cat(static_cast<int>(100 * gf / (*p * 1e3) + 0.5), "%");
    if (cublas) {
      Buffer out(device, int64_t(n) * n, dt, true);
      void *pa = uop_buffer(a.uop()).opaque(), *pb = uop_buffer(b.uop()).opaque(), *pc = out.opaque();
      if (cublas->matmul(n, dt, pa, pb, pc)) {
        double tc = time_median(iters, device, [&] { cublas->matmul(n, dt, pa, pb, pc); });
        cub = cat(static_cast<int64_t>(flops / tc * 1e-9)), ratio = cat(static_cast<int>(100 * tc / t + 0.5), "%");
      }
    }
    std::printf("%-9s %12.3f %12.0f %10s %12s %10s\n", dt.name().c_str(), t * 1e3, gf, peak.c_str(), cub.c_str(),
                ratio.c_str());
  }
  return 0;
}
