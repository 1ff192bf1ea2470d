#include "tg/runtime/ops_cuda.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <mutex>
#include <vector>

#include "tg/helpers/knobs.h"
#include "tg/renderer/cstyle.h"

#if TG_HAVE_CUDA_HEADERS
#include <cuda.h>
#include <nvrtc.h>
#endif

namespace tg {

#if TG_HAVE_CUDA_HEADERS

namespace {

// clang-format off
// NOTE: the _v2 names are spelled out: cuda.h #defines the plain names to them, and dlsym needs the real symbol
#define TG_CU_FNS(X) \
  X(cuInit) X(cuGetErrorString) X(cuGetErrorName) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) \
  X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease_v2) X(cuCtxSetCurrent) \
  X(cuCtxSynchronize) X(cuMemAlloc_v2) X(cuMemFree_v2) X(cuMemGetInfo_v2) X(cuMemcpyDtoH_v2) \
  X(cuMemcpyHtoDAsync_v2) X(cuMemHostAlloc) X(cuMemFreeHost) X(cuEventQuery) \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuLaunchKernel) \
  X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime_v2) X(cuEventDestroy_v2)
#define TG_NVRTC_FNS(X) \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) \
  X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcDestroyProgram)
// clang-format on

struct CuApi {
#define TG_X(f) decltype(&::f) f = nullptr;
  TG_CU_FNS(TG_X)
#undef TG_X
};
struct NvrtcApi {
#define TG_X(f) decltype(&::f) f = nullptr;
  TG_NVRTC_FNS(TG_X)
#undef TG_X
  int major = 0, minor = 0;
};

// the first of names that loads and has every function of Api; nullptr (with why) otherwise
template <class Api, class Fill>
Api* load_api(const std::vector<std::string>& names, std::string& why, Fill fill) {
  for (const std::string& n : names) {
    void* h = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) continue;
    auto* a = new Api();
    if (std::string missing = fill(*a, h); !missing.empty()) {
      why += cat(" ", n, " lacks ", missing, ";");
      delete a;
      ::dlclose(h);
      continue;
    }
    return a;  // NOTE: never closed: loaded modules live as long as the process
  }
  return nullptr;
}

const CuApi& cu_api() {
  static std::string why;
  static const CuApi* api = load_api<CuApi>({"libcuda.so.1", "libcuda.so"}, why, [](CuApi& a, void* h) {
#define TG_X(f) \
  if ((a.f = reinterpret_cast<decltype(&::f)>(::dlsym(h, #f))) == nullptr) return std::string(#f);
    TG_CU_FNS(TG_X)
#undef TG_X
    return std::string();
  });
  TG_CHECK(api != nullptr, "no usable libcuda.so.1 (the NVIDIA driver):", why.empty() ? " not found" : why);
  return *api;
}

const NvrtcApi& nvrtc_api() {
  static std::string why;
  static const NvrtcApi* api = [] {
    std::vector<std::string> names;
    if (std::string env = NVRTC_LIBRARY; !env.empty()) names.push_back(env);
    for (int v = 13; v >= 11; v--) names.push_back(cat("libnvrtc.so.", v));
    names.push_back("libnvrtc.so");
    for (const char* dir : {"/usr/local/cuda/lib64/", "/usr/local/cuda/lib/"}) names.push_back(cat(dir, "libnvrtc.so"));
    auto* a = load_api<NvrtcApi>(names, why, [](NvrtcApi& a, void* h) {
#define TG_X(f) \
  if ((a.f = reinterpret_cast<decltype(&::f)>(::dlsym(h, #f))) == nullptr) return std::string(#f);
      TG_NVRTC_FNS(TG_X)
#undef TG_X
      return std::string();
    });
    if (a != nullptr) a->nvrtcVersion(&a->major, &a->minor);
    return static_cast<const NvrtcApi*>(a);
  }();
  TG_CHECK(api != nullptr, "no usable libnvrtc (the CUDA toolkit's NVRTC; NVRTC_LIBRARY names another):",
           why.empty() ? " not found" : why);
  return *api;
}

// a driver call's status: anything but CUDA_SUCCESS is an Error naming the call and the driver's words for it
void check(CUresult st, const char* call) {
  if (st == CUDA_SUCCESS) return;
  const char *name = nullptr, *str = nullptr;
  const CuApi& L = cu_api();
  L.cuGetErrorName(st, &name);
  L.cuGetErrorString(st, &str);
  throw Error(
      cat("CUDA error ", static_cast<int>(st), " (", name ? name : "?", ": ", str ? str : "unknown", ") in ", call));
}
#define TG_CU(call) check(call, #call)

struct CudaContext {
  const CuApi& L;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  std::string name, arch;
  int max_threads = 0, max_shared = 0;
  std::array<int, 3> max_block{}, max_grid{};

  explicit CudaContext(const std::string& device) : L(cu_api()) {
    TG_CU(L.cuInit(0));
    size_t colon = device.find(':');
    int idx = colon == std::string::npos ? 0 : std::stoi(device.substr(colon + 1)), count = 0;
    TG_CU(L.cuDeviceGetCount(&count));
    TG_CHECK(idx >= 0 && idx < count, "no CUDA device ", device, ": the driver sees ", count);
    TG_CU(L.cuDeviceGet(&dev, idx));
    char buf[256] = {};
    TG_CU(L.cuDeviceGetName(buf, sizeof(buf), dev));
    name = buf;
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      TG_CU(L.cuDeviceGetAttribute(&v, a, dev));
      return v;
    };
    arch = cat("sm_", attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
               attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    max_threads = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    max_shared = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    max_block = {attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X), attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                 attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
    max_grid = {attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
    TG_CU(L.cuDevicePrimaryCtxRetain(&ctx, dev));
    if (DEBUG >= 1) std::cout << "CUDADevice: opening " << name << " (" << arch << ")\n";
  }
  ~CudaContext() {
    if (L.cuCtxSetCurrent(ctx) == CUDA_SUCCESS && L.cuCtxSynchronize() == CUDA_SUCCESS)
      for (Staging& s : staging_) L.cuEventDestroy_v2(s.done), L.cuMemFreeHost(s.ptr);
    L.cuDevicePrimaryCtxRelease_v2(dev);
  }
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;
  void make_current() const { TG_CU(L.cuCtxSetCurrent(ctx)); }

  // Host to device copies go through pinned staging buffers, so the caller's memory is free again at once and the
  // copy itself runs on the stream, in order with the kernels (as the reference's CUDA allocator). A buffer is reused
  // once its copy's event has completed; at most kStagingBytes are kept, past that the oldest copy is waited for.
  void copyin_async(CUdeviceptr dest, const void* src, size_t nbytes) {
    std::lock_guard lock(staging_mu_);
    make_current();
    Staging& s = free_staging(nbytes);
    std::memcpy(s.ptr, src, nbytes);
    TG_CU(L.cuMemcpyHtoDAsync_v2(dest, s.ptr, nbytes, nullptr));
    TG_CU(L.cuEventRecord(s.done, nullptr));
  }

 private:
  struct Staging {
    void* ptr;
    size_t size;
    CUevent done;
  };
  static constexpr size_t kStagingBytes = size_t(1) << 29;  // 512 MiB of pinned memory at most
  std::vector<Staging> staging_;
  std::mutex staging_mu_;

  Staging& free_staging(size_t nbytes) {
    for (Staging& s : staging_)
      if (s.size >= nbytes && L.cuEventQuery(s.done) == CUDA_SUCCESS) return s;
    size_t held = 0;
    for (const Staging& s : staging_) held += s.size;
    while (!staging_.empty() && held + nbytes > kStagingBytes) {  // wait for the oldest copy and let its buffer go
      Staging old = staging_.front();
      TG_CU(L.cuEventSynchronize(old.done));
      L.cuEventDestroy_v2(old.done), L.cuMemFreeHost(old.ptr);
      held -= old.size;
      staging_.erase(staging_.begin());
    }
    Staging s{nullptr, std::max<size_t>(nbytes, size_t(1) << 20), nullptr};
    CUresult st = L.cuMemHostAlloc(&s.ptr, s.size, 0);
    if (st == CUDA_ERROR_OUT_OF_MEMORY)
      throw Error(cat("out of pinned host memory for a copy to ", name, ": asked for ", s.size, " bytes"));
    check(st, "cuMemHostAlloc");
    st = L.cuEventCreate(&s.done, CU_EVENT_DISABLE_TIMING);
    if (st != CUDA_SUCCESS) L.cuMemFreeHost(s.ptr);
    check(st, "cuEventCreate");
    return staging_.emplace_back(s);
  }
};

class CudaAllocator : public LRUAllocator {
 public:
  CudaAllocator(std::shared_ptr<CudaContext> c, std::string device) : c_(std::move(c)), device_(std::move(device)) {}
  ~CudaAllocator() override { free_cache(); }
  void copyin(Opaque dest, const void* src, size_t nbytes) override {
    c_->copyin_async(reinterpret_cast<CUdeviceptr>(dest), src, nbytes);
  }
  void copyout(void* dest, Opaque src, size_t nbytes) override {
    c_->make_current();
    TG_CU(c_->L.cuCtxSynchronize());
    TG_CU(c_->L.cuMemcpyDtoH_v2(dest, reinterpret_cast<CUdeviceptr>(src), nbytes));
  }
  bool supports_offset() const override { return true; }
  Opaque offset(Opaque buf, size_t, size_t off) override { return static_cast<char*>(buf) + off; }

 protected:
  Opaque alloc_impl(size_t nbytes, const BufferSpec& spec) override {
    if (spec.external_ptr != nullptr) return spec.external_ptr;
    c_->make_current();
    CUdeviceptr p = 0;
    CUresult st = c_->L.cuMemAlloc_v2(&p, nbytes);
    if (st == CUDA_ERROR_OUT_OF_MEMORY) {
      size_t free = 0, total = 0;
      c_->L.cuMemGetInfo_v2(&free, &total);
      throw Error(cat("out of memory on ", device_, ": asked for ", nbytes, " bytes, ", free, " free of ", total));
    }
    check(st, "cuMemAlloc");
    return reinterpret_cast<Opaque>(p);
  }
  void free_impl(Opaque opaque, size_t, const BufferSpec& spec) override {
    if (spec.external_ptr != nullptr) return;
    c_->make_current();
    c_->L.cuMemFree_v2(reinterpret_cast<CUdeviceptr>(opaque));
  }

 private:
  std::shared_ptr<CudaContext> c_;
  std::string device_;
};

class CudaProgram : public Program {
 public:
  CudaProgram(std::shared_ptr<CudaContext> c, std::string name, const std::string& lib)
      : c_(std::move(c)), name_(std::move(name)) {
    const CuApi& L = c_->L;
    c_->make_current();
    TG_CU(L.cuModuleLoadData(&module_, lib.data()));
    try {
      TG_CU(L.cuModuleGetFunction(&fn_, module_, name_.c_str()));
      TG_CU(L.cuFuncGetAttribute(&max_threads_, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn_));
      int smem = 0;
      TG_CU(L.cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn_));
      TG_CHECK(smem <= c_->max_shared, "kernel ", name_, " needs ", smem, " bytes of shared memory, the device has ",
               c_->max_shared);
    } catch (...) {
      L.cuModuleUnload(module_);
      throw;
    }
  }
  ~CudaProgram() override {
    c_->L.cuCtxSetCurrent(c_->ctx);
    c_->L.cuModuleUnload(module_);
  }
  CudaProgram(const CudaProgram&) = delete;
  CudaProgram& operator=(const CudaProgram&) = delete;

 protected:
  std::optional<double> call(std::span<const Opaque> bufs, std::span<const int64_t> vals, bool wait, Dims global,
                             std::optional<Dims> local) override {
    const CuApi& L = c_->L;
    Dims l = local.value_or(Dims{1, 1, 1});
    TG_CHECK(l[0] * l[1] * l[2] <= max_threads_, "kernel ", name_, ": a block of ", l[0], "x", l[1], "x", l[2],
             " threads exceeds its limit of ", max_threads_);
    for (size_t i = 0; i < 3; i++) {
      TG_CHECK(l[i] >= 1 && l[i] <= c_->max_block[i], "kernel ", name_, ": block dim ", i, " of ", l[i],
               " exceeds the device's ", c_->max_block[i]);
      TG_CHECK(global[i] >= 1 && global[i] <= c_->max_grid[i], "kernel ", name_, ": grid dim ", i, " of ", global[i],
               " exceeds the device's ", c_->max_grid[i]);
    }
    std::vector<CUdeviceptr> ptrs(bufs.size());
    std::vector<int> ints(vals.size());
    std::vector<void*> params;
    for (size_t i = 0; i < bufs.size(); i++)
      ptrs[i] = reinterpret_cast<CUdeviceptr>(bufs[i]), params.push_back(&ptrs[i]);
    for (size_t i = 0; i < vals.size(); i++) ints[i] = static_cast<int>(vals[i]), params.push_back(&ints[i]);
    c_->make_current();
    CUevent ev[2] = {nullptr, nullptr};
    if (wait) {
      TG_CU(L.cuEventCreate(&ev[0], 0));
      TG_CU(L.cuEventCreate(&ev[1], 0));
      TG_CU(L.cuEventRecord(ev[0], nullptr));
    }
    auto u = [](int64_t v) { return static_cast<unsigned>(v); };
    CUresult st = L.cuLaunchKernel(fn_, u(global[0]), u(global[1]), u(global[2]), u(l[0]), u(l[1]), u(l[2]), 0, nullptr,
                                   params.data(), nullptr);
    if (!wait) {
      check(st, "cuLaunchKernel");
      return std::nullopt;
    }
    float ms = 0;
    if (st == CUDA_SUCCESS) st = L.cuEventRecord(ev[1], nullptr);
    if (st == CUDA_SUCCESS) st = L.cuEventSynchronize(ev[1]);
    if (st == CUDA_SUCCESS) st = L.cuEventElapsedTime_v2(&ms, ev[0], ev[1]);
    L.cuEventDestroy_v2(ev[0]), L.cuEventDestroy_v2(ev[1]);
    check(st, "cuLaunchKernel/cuEventElapsedTime");
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  std::shared_ptr<CudaContext> c_;
  std::string name_;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
  int max_threads_ = 0;
};

class CudaDevice : public Compiled {
 public:
  CudaDevice(const std::string& device, const std::shared_ptr<CudaContext>& c)
      : Compiled(device, std::make_shared<CudaAllocator>(c, device), std::make_shared<CUDARenderer>(c->arch),
                 std::make_shared<NVRTCCompiler>(c->arch),
                 [c](const std::string& name, const std::string& lib) -> std::unique_ptr<Program> {
                   return std::make_unique<CudaProgram>(c, name, lib);
                 }),
        c_(c) {}
  void synchronize() override {
    c_->make_current();
    TG_CU(c_->L.cuCtxSynchronize());
  }
  bool supports_dtype(DType dtype) const override {
    if (!Compiled::supports_dtype(dtype)) return false;
    // bfloat16 arithmetic needs sm_80 (cuda_bf16.h's operators)
    return dtype.scalar() != dtypes::bfloat16 || std::stoi(c_->arch.substr(3)) >= 80;
  }

 private:
  std::shared_ptr<CudaContext> c_;
};

}  // namespace

NVRTCCompiler::NVRTCCompiler(std::string arch_) : Compiler(cat("compile_cuda_", arch_)), arch(std::move(arch_)) {
  const NvrtcApi& N = nvrtc_api();
  cache_salt = cat("nvrtc", N.major, ".", N.minor);
  options_ = {cat("--gpu-architecture=", arch)};
  std::string cuda_path = CUDA_PATH;
  for (const std::string& d : cuda_path.empty() ? std::vector<std::string>{"/usr/local/cuda/include", "/usr/include"}
                                                : std::vector<std::string>{cuda_path + "/include"})
    options_.push_back("-I" + d);
  if (N.major > 12 || (N.major == 12 && N.minor >= 4)) options_.emplace_back("--minimal");
}

std::string NVRTCCompiler::compile(const std::string& src) {
  const NvrtcApi& N = nvrtc_api();
  nvrtcProgram prog = nullptr;
  nvrtcResult st = N.nvrtcCreateProgram(&prog, src.c_str(), "<null>", 0, nullptr, nullptr);
  TG_CHECK(st == NVRTC_SUCCESS, "nvrtcCreateProgram: ", N.nvrtcGetErrorString(st));
  std::vector<const char*> opts;
  for (const std::string& o : options_) opts.push_back(o.c_str());
  st = N.nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  std::string out;
  if (st != NVRTC_SUCCESS) {
    size_t n = 0;
    N.nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    N.nvrtcGetProgramLog(prog, log.data());
    N.nvrtcDestroyProgram(&prog);
    throw CompileError(
        cat("NVRTC compile error for ", arch, " (", N.nvrtcGetErrorString(st), ")\n\n", log.c_str(), "\n", src));
  }
  size_t n = 0;
  st = N.nvrtcGetCUBINSize(prog, &n);
  if (st == NVRTC_SUCCESS) {
    out.resize(n);
    st = N.nvrtcGetCUBIN(prog, out.data());
  }
  N.nvrtcDestroyProgram(&prog);
  TG_CHECK(st == NVRTC_SUCCESS, "nvrtcGetCUBIN: ", N.nvrtcGetErrorString(st));
  return out;
}

std::unique_ptr<Compiled> open_cuda_device(const std::string& device) {
  return std::make_unique<CudaDevice>(device, std::make_shared<CudaContext>(device));
}

Toolchain cuda_toolchain(const std::string& arch) {
  std::string a = arch.empty() ? "sm_90" : arch;
  TG_CHECK_AS(ValueError, a.starts_with("sm_") && a.size() >= 5, "a CUDA target is sm_NN (sm_90), not ",
              py_str_repr(a));
  return {std::make_shared<CUDARenderer>(a), std::make_shared<NVRTCCompiler>(a)};
}

#else

[[noreturn]] static void no_cuda_headers() {
  throw Error("this build has no CUDA headers (the CUDA toolkit's cuda.h and nvrtc.h; set CUDA_PATH and rebuild)");
}
NVRTCCompiler::NVRTCCompiler(std::string arch_) : arch(std::move(arch_)) { no_cuda_headers(); }
std::string NVRTCCompiler::compile(const std::string&) { no_cuda_headers(); }
std::unique_ptr<Compiled> open_cuda_device(const std::string&) { no_cuda_headers(); }
Toolchain cuda_toolchain(const std::string&) { no_cuda_headers(); }

#endif

}  // namespace tg
