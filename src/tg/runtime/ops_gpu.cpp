#include "tg/runtime/ops_gpu.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>

#include "tg/helpers/knobs.h"
#include "tg/renderer/cstyle.h"

#if TG_HAVE_OPENCL_HEADERS
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#endif

namespace tg {

#if TG_HAVE_OPENCL_HEADERS

namespace {

// the OpenCL API, loaded at run time (libOpenCL.so.1, the ICD loader)
// clang-format off
#define TG_CL_FNS(X) \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext) \
  X(clReleaseContext) X(clCreateCommandQueue) X(clReleaseCommandQueue) X(clFinish) X(clCreateBuffer) \
  X(clReleaseMemObject) X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) X(clCreateProgramWithSource) \
  X(clCreateProgramWithBinary) X(clBuildProgram) X(clGetProgramBuildInfo) X(clGetProgramInfo) X(clReleaseProgram) \
  X(clCreateKernel) X(clReleaseKernel) X(clSetKernelArg) X(clGetKernelWorkGroupInfo) X(clEnqueueNDRangeKernel) \
  X(clWaitForEvents) X(clGetEventProfilingInfo) X(clReleaseEvent)
// clang-format on

struct CLApi {
#define TG_X(f) decltype(&::f) f = nullptr;
  TG_CL_FNS(TG_X)
#undef TG_X
};

const CLApi& cl_api() {
  static const CLApi* api = []() -> const CLApi* {
    void* h = ::dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) h = ::dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return nullptr;
    auto* a = new CLApi();  // NOTE: never closed, as the programs need it until the process ends
#define TG_X(f)                                                               \
  if ((a->f = reinterpret_cast<decltype(&::f)>(::dlsym(h, #f))) == nullptr) { \
    delete a;                                                                 \
    return nullptr;                                                           \
  }
    TG_CL_FNS(TG_X)
#undef TG_X
    return a;
  }();
  TG_CHECK(api != nullptr, "no usable libOpenCL.so.1 (install ocl-icd-libopencl1 and a driver, e.g. pocl-opencl-icd)");
  return *api;
}

const char* cl_error_name(cl_int e) {
  static const std::pair<cl_int, const char*> names[] = {
      {CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND"},
      {CL_DEVICE_NOT_AVAILABLE, "CL_DEVICE_NOT_AVAILABLE"},
      {CL_COMPILER_NOT_AVAILABLE, "CL_COMPILER_NOT_AVAILABLE"},
      {CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
      {CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES"},
      {CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY"},
      {CL_PROFILING_INFO_NOT_AVAILABLE, "CL_PROFILING_INFO_NOT_AVAILABLE"},
      {CL_MEM_COPY_OVERLAP, "CL_MEM_COPY_OVERLAP"},
      {CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE"},
      {CL_INVALID_VALUE, "CL_INVALID_VALUE"},
      {CL_INVALID_DEVICE_TYPE, "CL_INVALID_DEVICE_TYPE"},
      {CL_INVALID_PLATFORM, "CL_INVALID_PLATFORM"},
      {CL_INVALID_DEVICE, "CL_INVALID_DEVICE"},
      {CL_INVALID_CONTEXT, "CL_INVALID_CONTEXT"},
      {CL_INVALID_QUEUE_PROPERTIES, "CL_INVALID_QUEUE_PROPERTIES"},
      {CL_INVALID_COMMAND_QUEUE, "CL_INVALID_COMMAND_QUEUE"},
      {CL_INVALID_HOST_PTR, "CL_INVALID_HOST_PTR"},
      {CL_INVALID_MEM_OBJECT, "CL_INVALID_MEM_OBJECT"},
      {CL_INVALID_BINARY, "CL_INVALID_BINARY"},
      {CL_INVALID_BUILD_OPTIONS, "CL_INVALID_BUILD_OPTIONS"},
      {CL_INVALID_PROGRAM, "CL_INVALID_PROGRAM"},
      {CL_INVALID_PROGRAM_EXECUTABLE, "CL_INVALID_PROGRAM_EXECUTABLE"},
      {CL_INVALID_KERNEL_NAME, "CL_INVALID_KERNEL_NAME"},
      {CL_INVALID_KERNEL, "CL_INVALID_KERNEL"},
      {CL_INVALID_ARG_INDEX, "CL_INVALID_ARG_INDEX"},
      {CL_INVALID_ARG_VALUE, "CL_INVALID_ARG_VALUE"},
      {CL_INVALID_ARG_SIZE, "CL_INVALID_ARG_SIZE"},
      {CL_INVALID_KERNEL_ARGS, "CL_INVALID_KERNEL_ARGS"},
      {CL_INVALID_WORK_DIMENSION, "CL_INVALID_WORK_DIMENSION"},
      {CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE"},
      {CL_INVALID_WORK_ITEM_SIZE, "CL_INVALID_WORK_ITEM_SIZE"},
      {CL_INVALID_GLOBAL_OFFSET, "CL_INVALID_GLOBAL_OFFSET"},
      {CL_INVALID_EVENT, "CL_INVALID_EVENT"},
      {CL_INVALID_OPERATION, "CL_INVALID_OPERATION"},
      {CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE"},
      {CL_INVALID_GLOBAL_WORK_SIZE, "CL_INVALID_GLOBAL_WORK_SIZE"},
      {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
  };
  for (const auto& [code, name] : names)
    if (code == e) return name;
  return "unknown error";
}

// an OpenCL call's status: anything but CL_SUCCESS is an Error naming the call and the error
void check(cl_int status, const char* call) {
  if (status != CL_SUCCESS) throw Error(cat("OpenCL error ", status, " (", cl_error_name(status), ") in ", call));
}
#define TG_CL(call) check(call, #call)
std::string device_info_str(const CLApi& L, cl_device_id d, cl_device_info what) {
  size_t n = 0;
  TG_CL(L.clGetDeviceInfo(d, what, 0, nullptr, &n));
  std::string s(n, '\0');
  TG_CL(L.clGetDeviceInfo(d, what, n, s.data(), nullptr));
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}
template <class T>
T device_info(const CLApi& L, cl_device_id d, cl_device_info what) {
  T v{};
  TG_CL(L.clGetDeviceInfo(d, what, sizeof(T), &v, nullptr));
  return v;
}

// PoCL keeps compiled kernels in a cache directory that processes share, and two processes building the same kernel
// at once can tear an entry there: the next load of that program then aborts inside PoCL (seen with ctest -j2). On
// PoCL, every step that writes its cache (building a program, a kernel's first launch, where it compiles the
// work-group function) holds an exclusive lock on a file in that directory, so processes take turns; other drivers
// need no lock.
class CacheLock {
 public:
  explicit CacheLock(int fd) : fd_(fd) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~CacheLock() {
    if (fd_ >= 0) ::flock(fd_, LOCK_UN);
  }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int fd_;
};

// the lock file's descriptor on PoCL (its cache directory as PoCL chooses it), -1 elsewhere
int pocl_lock_fd(const std::string& platform) {
  if (platform.find("Portable Computing Language") == std::string::npos) return -1;
  std::string dir = POCL_CACHE_DIR;
  if (dir.empty()) {
    const std::string& xdg = XDG_CACHE_HOME;
    dir = (xdg.empty() ? HOME.value() + "/.cache" : xdg) + "/pocl";
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return ::open((dir + "/tinygrad.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
}

std::string& platform_name() {  // the first platform's, set by device_ids()
  static std::string name;
  return name;
}

// the devices of the first platform: its GPUs, else all of its devices (tinygrad's CLDevice.device_ids asks for the
// default devices, one device on PoCL; all of them is PoCL's POCL_DEVICES="pthread pthread" as GPU:0 and GPU:1)
const std::vector<cl_device_id>& device_ids() {
  static std::mutex mu;
  static std::vector<cl_device_id> ids;
  std::lock_guard lock(mu);
  if (!ids.empty()) return ids;
  const CLApi& L = cl_api();
  cl_uint nplat = 0;
  cl_int st = L.clGetPlatformIDs(0, nullptr, &nplat);
  TG_CHECK(st == CL_SUCCESS && nplat > 0, "no OpenCL platform (", cl_error_name(st),
           "): install a driver, e.g. pocl-opencl-icd");
  std::vector<cl_platform_id> plats(nplat);
  TG_CL(L.clGetPlatformIDs(nplat, plats.data(), nullptr));
  char name[256] = {};
  L.clGetPlatformInfo(plats[0], CL_PLATFORM_NAME, sizeof(name) - 1, name, nullptr);
  platform_name() = name;
  for (cl_device_type type : {cl_device_type(CL_DEVICE_TYPE_GPU), cl_device_type(CL_DEVICE_TYPE_ALL)}) {
    cl_uint n = 0;
    if (L.clGetDeviceIDs(plats[0], type, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
    ids.resize(n);
    TG_CL(L.clGetDeviceIDs(plats[0], type, n, ids.data(), nullptr));
    break;
  }
  TG_CHECK(!ids.empty(), "the OpenCL platform has no devices");
  return ids;
}

struct CLContext {
  const CLApi& L;
  cl_device_id device_id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string device_name, driver_version, extensions;
  uint64_t global_mem = 0, max_alloc = 0, local_mem = 0;
  bool is_gpu = false;  // CL_DEVICE_TYPE_GPU (PoCL's devices are CL_DEVICE_TYPE_CPU)
  size_t max_work_group = 0;
  std::vector<size_t> max_item_sizes;
  std::atomic<uint64_t> allocated{0};
  int cache_lock_fd = -1;  // PoCL: see CacheLock

  explicit CLContext(const std::string& device) : L(cl_api()) {
    const auto& ids = device_ids();
    size_t colon = device.find(':');
    int64_t idx = colon == std::string::npos ? 0 : std::stoll(device.substr(colon + 1));
    TG_CHECK(idx >= 0 && static_cast<size_t>(idx) < ids.size(), "no OpenCL device ", device, ": the platform has ",
             ids.size());
    device_id = ids[static_cast<size_t>(idx)];
    cache_lock_fd = pocl_lock_fd(platform_name());
    device_name = device_info_str(L, device_id, CL_DEVICE_NAME);
    driver_version = device_info_str(L, device_id, CL_DRIVER_VERSION);
    extensions = device_info_str(L, device_id, CL_DEVICE_EXTENSIONS);
    is_gpu = (device_info<cl_device_type>(L, device_id, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) != 0;
    global_mem = device_info<cl_ulong>(L, device_id, CL_DEVICE_GLOBAL_MEM_SIZE);
    max_alloc = device_info<cl_ulong>(L, device_id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    local_mem = device_info<cl_ulong>(L, device_id, CL_DEVICE_LOCAL_MEM_SIZE);
    max_work_group = device_info<size_t>(L, device_id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    max_item_sizes.resize(device_info<cl_uint>(L, device_id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS));
    TG_CL(L.clGetDeviceInfo(device_id, CL_DEVICE_MAX_WORK_ITEM_SIZES, max_item_sizes.size() * sizeof(size_t),
                            max_item_sizes.data(), nullptr));
    if (DEBUG >= 1) std::cout << "CLDevice: opening " << device_name << " with version " << driver_version << "\n";
    cl_int st_ = CL_SUCCESS;
    context = L.clCreateContext(nullptr, 1, &device_id, nullptr, nullptr, &st_);
    check(st_, "clCreateContext");
    queue = L.clCreateCommandQueue(context, device_id, CL_QUEUE_PROFILING_ENABLE, &st_);
    if (st_ != CL_SUCCESS) L.clReleaseContext(context);
    check(st_, "clCreateCommandQueue");
  }
  ~CLContext() {
    L.clReleaseCommandQueue(queue);
    L.clReleaseContext(context);
    if (cache_lock_fd >= 0) ::close(cache_lock_fd);
  }
  CLContext(const CLContext&) = delete;
  CLContext& operator=(const CLContext&) = delete;
  bool has_extension(std::string_view e) const { return extensions.find(e) != std::string::npos; }
};

class CLAllocator : public LRUAllocator {
 public:
  CLAllocator(std::shared_ptr<CLContext> ctx, std::string device) : ctx_(std::move(ctx)), device_(std::move(device)) {}
  ~CLAllocator() override { free_cache(); }
  // host memory is no cl_mem: checked here, as Allocator::alloc hands an external pointer back without alloc_impl
  Opaque alloc(size_t nbytes, const BufferSpec& spec) override {
    TG_CHECK(spec.external_ptr == nullptr, device_, " can't use external memory");
    return LRUAllocator::alloc(nbytes, spec);
  }
  void copyin(Opaque dest, const void* src, size_t nbytes) override {
    // blocking: the host memory may go away once this returns; the in-order queue keeps it after earlier work
    TG_CL(ctx_->L.clEnqueueWriteBuffer(ctx_->queue, static_cast<cl_mem>(dest), CL_TRUE, 0, nbytes, src, 0, nullptr,
                                       nullptr));
  }
  void copyout(void* dest, Opaque src, size_t nbytes) override {
    TG_CL(ctx_->L.clEnqueueReadBuffer(ctx_->queue, static_cast<cl_mem>(src), CL_TRUE, 0, nbytes, dest, 0, nullptr,
                                      nullptr));
  }

 protected:
  Opaque alloc_impl(size_t nbytes, const BufferSpec&) override {
    // drivers allocate lazily (the failure would surface at a later launch): check what the device reports first
    const uint64_t used = ctx_->allocated.load(), total = ctx_->global_mem;
    TG_CHECK(nbytes <= ctx_->max_alloc && used + nbytes <= total, "out of memory on ", device_, ": asked for ", nbytes,
             " bytes, ", total > used ? total - used : 0, " free of ", total, " (at most ", ctx_->max_alloc,
             " in one buffer)");
    cl_int st = CL_SUCCESS;
    cl_mem m = ctx_->L.clCreateBuffer(ctx_->context, CL_MEM_READ_WRITE, nbytes, nullptr, &st);
    if (st == CL_MEM_OBJECT_ALLOCATION_FAILURE || st == CL_OUT_OF_RESOURCES || st == CL_OUT_OF_HOST_MEMORY)
      throw Error(cat("out of memory on ", device_, ": asked for ", nbytes, " bytes (", cl_error_name(st), ")"));
    check(st, "clCreateBuffer");
    ctx_->allocated += nbytes;
    return m;
  }
  void free_impl(Opaque opaque, size_t nbytes, const BufferSpec&) override {
    ctx_->L.clReleaseMemObject(static_cast<cl_mem>(opaque));
    ctx_->allocated -= nbytes;
  }

 private:
  std::shared_ptr<CLContext> ctx_;
  std::string device_;
};

// OpenCL C -> the device's binary (tinygrad's CLCompiler); a build failure is a CompileError with the build log
class CLCompiler : public Compiler {
 public:
  CLCompiler(std::shared_ptr<CLContext> ctx, const std::string& key)
      : Compiler(cat("compile_cl_", std::hex, fnv1a(key))), ctx_(std::move(ctx)) {}
  std::string compile(const std::string& src) override {
    const CLApi& L = ctx_->L;
    const char* s = src.c_str();
    cl_int st = CL_SUCCESS;
    cl_program p = L.clCreateProgramWithSource(ctx_->context, 1, &s, nullptr, &st);
    check(st, "clCreateProgramWithSource");
    {
      CacheLock lock(ctx_->cache_lock_fd);
      st = L.clBuildProgram(p, 1, &ctx_->device_id, nullptr, nullptr, nullptr);
    }
    if (st != CL_SUCCESS) {
      size_t n = 0;
      L.clGetProgramBuildInfo(p, ctx_->device_id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      L.clGetProgramBuildInfo(p, ctx_->device_id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      L.clReleaseProgram(p);
      throw CompileError(cat("OpenCL Compile Error (", cl_error_name(st), ")\n\n", log.c_str(), "\n", src));
    }
    size_t size = 0;
    std::string bin;
    try {
      TG_CL(L.clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr));
      bin.resize(size);
      unsigned char* ptr = reinterpret_cast<unsigned char*>(bin.data());
      TG_CL(L.clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr));
    } catch (...) {
      L.clReleaseProgram(p);
      throw;
    }
    L.clReleaseProgram(p);
    return bin;
  }

 private:
  std::shared_ptr<CLContext> ctx_;
};

class CLProgram : public Program {
 public:
  CLProgram(std::shared_ptr<CLContext> ctx, std::string name, const std::string& lib)
      : ctx_(std::move(ctx)), name_(std::move(name)) {
    const CLApi& L = ctx_->L;
    size_t len = lib.size();
    const auto* bin = reinterpret_cast<const unsigned char*>(lib.data());
    cl_int bst = CL_SUCCESS, st = CL_SUCCESS;
    program_ = L.clCreateProgramWithBinary(ctx_->context, 1, &ctx_->device_id, &len, &bin, &bst, &st);
    check(st, "clCreateProgramWithBinary");
    try {
      check(bst, "clCreateProgramWithBinary (binary status)");
      CacheLock lock(ctx_->cache_lock_fd);
      TG_CL(L.clBuildProgram(program_, 1, &ctx_->device_id, nullptr, nullptr, nullptr));
      kernel_ = L.clCreateKernel(program_, name_.c_str(), &st);
      check(st, "clCreateKernel");
      TG_CL(L.clGetKernelWorkGroupInfo(kernel_, ctx_->device_id, CL_KERNEL_WORK_GROUP_SIZE, sizeof(max_local_),
                                       &max_local_, nullptr));
      TG_CL(L.clGetKernelWorkGroupInfo(kernel_, ctx_->device_id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(local_mem_),
                                       &local_mem_, nullptr));
    } catch (...) {
      release();
      throw;
    }
    TG_CHECK(local_mem_ <= ctx_->local_mem, "kernel ", name_, " needs ", local_mem_,
             " bytes of local memory, the device has ", ctx_->local_mem);
  }
  ~CLProgram() override { release(); }
  CLProgram(const CLProgram&) = delete;
  CLProgram& operator=(const CLProgram&) = delete;

 protected:
  std::optional<double> call(std::span<const Opaque> bufs, std::span<const int64_t> vals, bool wait, Dims global,
                             std::optional<Dims> local) override {
    const CLApi& L = ctx_->L;
    std::array<size_t, 3> g{}, l{};
    if (local) {
      size_t threads = 1;
      for (size_t i = 0; i < 3; i++) {
        TG_CHECK((*local)[i] >= 1 &&
                     (i >= ctx_->max_item_sizes.size() || static_cast<size_t>((*local)[i]) <= ctx_->max_item_sizes[i]),
                 "kernel ", name_, ": local size ", (*local)[0], "x", (*local)[1], "x", (*local)[2],
                 " exceeds the device's work-item sizes");
        threads *= static_cast<size_t>((*local)[i]);
      }
      TG_CHECK(threads <= max_local_, "kernel ", name_, ": a work-group of ", threads,
               " threads exceeds the device's limit for it (", max_local_, ")");
    }
    for (size_t i = 0; i < 3; i++) {
      TG_CHECK(global[i] >= 1, "kernel ", name_, ": global size ", global[0], "x", global[1], "x", global[2]);
      l[i] = local ? static_cast<size_t>((*local)[i]) : 1;
      g[i] = static_cast<size_t>(global[i]) * l[i];  // OpenCL counts global threads, not groups
    }
    std::lock_guard lock(mu_);  // kernel arguments are the kernel object's state
    for (size_t i = 0; i < bufs.size(); i++) {
      cl_mem m = static_cast<cl_mem>(bufs[i]);
      TG_CL(L.clSetKernelArg(kernel_, static_cast<cl_uint>(i), sizeof(m), &m));
    }
    for (size_t i = 0; i < vals.size(); i++) {
      cl_int v = static_cast<cl_int>(vals[i]);
      TG_CL(L.clSetKernelArg(kernel_, static_cast<cl_uint>(bufs.size() + i), sizeof(v), &v));
    }
    cl_event ev = nullptr;
    // PoCL compiles the work-group function at a local size's first launch: that launch holds the cache lock
    const bool first = ctx_->cache_lock_fd >= 0 && launched_.insert(l).second;
    {
      CacheLock lock(first ? ctx_->cache_lock_fd : -1);
      TG_CL(L.clEnqueueNDRangeKernel(ctx_->queue, kernel_, 3, nullptr, g.data(), local ? l.data() : nullptr, 0, nullptr,
                                     wait ? &ev : nullptr));
      if (first) TG_CL(L.clFinish(ctx_->queue));
    }
    if (!wait) return std::nullopt;
    cl_ulong start = 0, end = 0;
    cl_int st = L.clWaitForEvents(1, &ev);
    if (st == CL_SUCCESS)
      st = L.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr);
    if (st == CL_SUCCESS) st = L.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
    L.clReleaseEvent(ev);
    check(st, "clWaitForEvents/clGetEventProfilingInfo");
    return static_cast<double>(end - start) * 1e-9;
  }

 private:
  void release() {
    if (kernel_ != nullptr) ctx_->L.clReleaseKernel(kernel_);
    if (program_ != nullptr) ctx_->L.clReleaseProgram(program_);
    kernel_ = nullptr, program_ = nullptr;
  }
  std::shared_ptr<CLContext> ctx_;
  std::string name_;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  size_t max_local_ = 0;
  cl_ulong local_mem_ = 0;
  std::mutex mu_;
  std::set<std::array<size_t, 3>> launched_;  // local sizes launched once (PoCL compiles a function for each)
};

class CLDevice : public Compiled {
 public:
  CLDevice(const std::string& device, const std::shared_ptr<CLContext>& ctx)
      : Compiled(device, std::make_shared<CLAllocator>(ctx, device), std::make_shared<OpenCLRenderer>(),
                 std::make_shared<CLCompiler>(ctx, ctx->device_name + ctx->driver_version),
                 [ctx](const std::string& name, const std::string& lib) -> std::unique_ptr<Program> {
                   return std::make_unique<CLProgram>(ctx, name, lib);
                 }),
        ctx_(ctx) {
    renderer->local_max = std::vector<int64_t>(ctx->max_item_sizes.begin(), ctx->max_item_sizes.end());
    renderer->local_max->resize(3, 1);
    renderer->shared_max = static_cast<int64_t>(ctx->local_mem);
    pick_by_default = ctx->is_gpu;
  }
  void synchronize() override { TG_CL(ctx_->L.clFinish(ctx_->queue)); }
  bool supports_dtype(DType dtype) const override {
    if (!Compiled::supports_dtype(dtype)) return false;
    DType s = dtype.scalar();
    if (s == dtypes::half) return ctx_->has_extension("cl_khr_fp16");
    if (s == dtypes::float64) return ctx_->has_extension("cl_khr_fp64");
    return true;
  }

 private:
  std::shared_ptr<CLContext> ctx_;
};

}  // namespace

std::unique_ptr<Compiled> open_gpu_device(const std::string& device) {
  return std::make_unique<CLDevice>(device, std::make_shared<CLContext>(device));
}

bool gpu_may_be_default() {
  namespace fs = std::filesystem;
  std::string vendors = OCL_ICD_VENDORS;  // ocl-icd's: a folder of .icd files, or one file
  fs::path where = vendors.empty() ? fs::path("/etc/OpenCL/vendors") : fs::path(vendors);
  std::vector<fs::path> icds;
  std::error_code ec;
  if (fs::is_directory(where, ec)) {
    for (const auto& e : fs::directory_iterator(where, ec))
      if (e.path().extension() == ".icd") icds.push_back(e.path());
  } else if (fs::exists(where, ec)) {
    icds.push_back(where);
  }
  for (const fs::path& icd : icds) {
    std::ifstream f(icd);
    std::string lib((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (lib.find("pocl") == std::string::npos) return true;  // a driver that may be a real GPU's
  }
  return false;
}

#else

std::unique_ptr<Compiled> open_gpu_device(const std::string&) {
  throw Error("this build has no OpenCL headers (apt install opencl-headers, then rebuild)");
}
bool gpu_may_be_default() { return false; }

#endif

}  // namespace tg
