#include "tg/runtime/device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "tg/helpers/knobs.h"
#include "tg/renderer/renderer.h"
#include "tg/runtime/diskcache.h"
#include "tg/runtime/ops_cpu.h"
#include "tg/runtime/ops_cuda.h"
#include "tg/runtime/ops_disk.h"
#include "tg/runtime/ops_gpu.h"
#include "tg/runtime/ops_llvm.h"
#include "tg/runtime/ops_null.h"
#include "tg/runtime/ops_python.h"

namespace tg {

void GlobalCounters::reset() { global_ops = 0, global_mem = 0, kernel_count = 0, time_sum_s = 0.0; }

// *** allocators ***

Opaque Allocator::alloc(size_t nbytes, const BufferSpec& spec) {
  TG_CHECK(nbytes > 0, "alloc size must be positive, getting ", nbytes);
  if (spec.external_ptr != nullptr) return spec.external_ptr;
  TG_CHECK(spec.file.empty() || maps_files(), "this device's memory can't map a file (", py_str_repr(spec.file),
           "): map it on the CPU, or copy it from DISK");
  return alloc_impl(nbytes, spec);
}
void Allocator::free(Opaque opaque, size_t nbytes, const BufferSpec& spec) {
  if (spec.external_ptr == nullptr) free_impl(opaque, nbytes, spec);
}
Opaque Allocator::offset(Opaque, size_t, size_t) {
  throw_internal(__FILE__, __LINE__, "offset function required for view");
}

Opaque LRUAllocator::alloc(size_t nbytes, const BufferSpec& spec) {
  if (!(spec == BufferSpec{})) return Allocator::alloc(nbytes, spec);
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(nbytes);
    if (it != cache_.end() && !it->second.empty()) {
      Opaque ret = it->second.back();
      it->second.pop_back();
      return ret;
    }
  }
  try {
    return Allocator::alloc(nbytes);
  } catch (const Error&) {  // out of memory: give the cached buffers back and try once more
    free_cache();
    return Allocator::alloc(nbytes);
  }
}

void LRUAllocator::free(Opaque opaque, size_t nbytes, const BufferSpec& spec) {
  if (LRU == 0 || !(spec == BufferSpec{})) return Allocator::free(opaque, nbytes, spec);
  std::lock_guard lock(mu_);
  cache_[nbytes].push_back(opaque);
}

void LRUAllocator::free_cache() {
  std::map<size_t, std::vector<Opaque>> cache;
  {
    std::lock_guard lock(mu_);
    cache.swap(cache_);
  }
  for (auto& [nbytes, opaques] : cache)
    for (Opaque o : opaques) Allocator::free(o, nbytes);
}

size_t LRUAllocator::cached_bytes() {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (auto& [nbytes, opaques] : cache_) n += nbytes * opaques.size();
  return n;
}

void free_cached_memory(const std::string& device) {
  if (auto* lru = dynamic_cast<LRUAllocator*>(Device::get(device).allocator.get())) lru->free_cache();
}

// more bytes than the machine has is an error, not an allocation (a sanitizer aborts on one; malloc may overcommit)
static void check_host_bytes(size_t nbytes, const char* what) {
  static const size_t total = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  TG_CHECK(nbytes <= total, "out of host memory ", what, " ", nbytes, " bytes (the machine has ", total, ")");
}

// Buffers of 4 MiB and more are aligned to 2 MiB and asked to be backed by huge pages (MADV_HUGEPAGE, as numpy does
// from 4 MiB; MADVISE_HUGEPAGE=0 turns it off): a kernel streaming through 64 MB then takes a TLB miss every 2 MiB,
// not every 4 KiB, which on a virtual machine (a two-level page walk for each miss) halves a memory-bound kernel's
// time. The kernel gives huge pages where it has them; the advice is ignored where it hasn't.
Opaque MallocAllocator::alloc_impl(size_t nbytes, const BufferSpec& spec) {
  if (!spec.file.empty()) return map_file(spec.file, nbytes);
  constexpr size_t kHuge = size_t(2) << 20;
  const bool huge = MADVISE_HUGEPAGE != 0;
  check_host_bytes(nbytes, "allocating");
  const size_t align = huge && nbytes >= 2 * kHuge ? kHuge : 64;
  // aligned_alloc wants a size that is a multiple of the alignment
  const size_t size = (nbytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, size);
  TG_CHECK(p != nullptr, "out of host memory allocating ", nbytes, " bytes");
#ifdef MADV_HUGEPAGE
  if (align == kHuge) ::madvise(p, size, MADV_HUGEPAGE);  // advice only: a failure leaves normal pages
#endif
  return p;
}
void MallocAllocator::free_impl(Opaque opaque, size_t nbytes, const BufferSpec& spec) {
  if (spec.file.empty()) return std::free(opaque);
  ::munmap(opaque, nbytes);
}

// a file's first nbytes, mapped privately (copy-on-write) and writable: the page cache's pages until written
Opaque MallocAllocator::map_file(const std::string& path, size_t nbytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  TG_CHECK(fd >= 0, "can't open ", py_str_repr(path), " to map it: ", std::strerror(errno));
  return tg::map_file(fd, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, false, cat("mapping ", py_str_repr(path)));
}
void MallocAllocator::release_file_pages(Opaque opaque, size_t offset, size_t nbytes, const BufferSpec& spec) {
  if (spec.file.empty()) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<uintptr_t>(opaque) + offset, hi = lo + nbytes;
  const uintptr_t a = (lo + page - 1) / page * page, b = hi / page * page;
  if (a < b) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);  // advice: a failure keeps the pages
}
void MallocAllocator::copyin(Opaque dest, const void* src, size_t nbytes) { std::memcpy(dest, src, nbytes); }
void MallocAllocator::copyout(void* dest, Opaque src, size_t nbytes) { std::memcpy(dest, src, nbytes); }
Opaque MallocAllocator::offset(Opaque buf, size_t, size_t offset) { return static_cast<char*>(buf) + offset; }

std::shared_ptr<MallocAllocator> MallocAllocator::instance() {
  static auto* ret = new std::shared_ptr<MallocAllocator>(std::make_shared<MallocAllocator>());
  return *ret;
}

// *** compilers ***

std::string Compiler::compile_cached(const std::string& src) {
  bool cached = !cachekey.empty() && DISABLE_COMPILER_CACHE == 0;
  // the salt is length-prefixed so no (salt, src) pair can spell another pair
  std::string key = cat(cache_salt.size(), ":", cache_salt, src);
  if (cached) {
    if (auto lib = diskcache_get(cachekey, key)) return *lib;
  }
  TG_CHECK(ASSERT_COMPILE == 0, "tried to compile with ASSERT_COMPILE set\n", src);
  std::string lib = compile(src);
  if (cached) diskcache_put(cachekey, key, lib);
  return lib;
}

// *** devices ***

Compiled::Compiled(std::string device, std::shared_ptr<Allocator> allocator, std::shared_ptr<Renderer> renderer,
                   std::shared_ptr<Compiler> compiler, ProgramFactory runtime)
    : device(std::move(device)),
      allocator(std::move(allocator)),
      renderer(std::move(renderer)),
      compiler(compiler ? std::move(compiler) : std::make_shared<Compiler>()),
      runtime(std::move(runtime)) {
  TG_ASSERT(this->allocator != nullptr && this->renderer != nullptr, "device ", this->device,
            " needs an allocator and a renderer");
}
Compiled::~Compiled() = default;

BuiltProgram Compiled::build(const ProgramSpec& spec) {
  BuiltProgram ret;
  ret.lib = compiler->compile_cached(spec.src);
  ret.program = runtime(spec.name, ret.lib);
  return ret;
}

bool Compiled::supports_dtype(DType dtype) const {
  // the fp8s have no arithmetic on any device yet (as the reference at this version)
  return dtype.scalar() != dtypes::fp8e4m3 && dtype.scalar() != dtypes::fp8e5m2;
}

bool is_dtype_supported(DType dtype, std::string_view device) {
  std::string name;
  try {
    name = device.empty() ? Device::DEFAULT.str() : std::string(device);
  } catch (const Error&) {
    return false;  // no default device
  }
  const Compiled* dev = Device::find(name);
  return dev != nullptr && dev->supports_dtype(dtype);
}

// *** the registry ***

namespace {

struct Registry {
  std::recursive_mutex mu;  // recursive: a device's factory may open another device
  std::map<std::string, DeviceFactory> factories;
  std::map<std::string, ToolchainFactory> toolchains;
  // asked before Device::DEFAULT's search opens a device: false skips it without opening it
  std::map<std::string, std::function<bool()>> default_probes;
  std::map<std::string, std::unique_ptr<Compiled>> opened;
  std::vector<std::string> open_order;
};

Registry& registry() {
  // leaked on purpose: devices outlive every static that may still hold programs or buffers at exit
  static Registry* r = [] {
    auto* r = new Registry();
    r->factories["CPU"] = open_cpu_device;
    r->factories["DISK"] = open_disk_device;
    r->factories["CUDA"] = open_cuda_device;
    r->factories["GPU"] = open_gpu_device;
    r->toolchains["CUDA"] = cuda_toolchain;
    r->default_probes["GPU"] = gpu_may_be_default;
    r->factories["LLVM"] = open_llvm_device;
    r->factories["NULL"] = open_null_device;
    r->factories["PYTHON"] = open_python_device;
    std::atexit([] {
      Registry& reg = registry();
      std::lock_guard lock(reg.mu);
      for (auto& name : reg.open_order) reg.opened.at(name)->finalize();
    });
    return r;
  }();
  return *r;
}

std::string device_prefix(std::string_view device) { return std::string(device.substr(0, device.find(':'))); }
Compiled* open_device(const std::string& name, std::string& why);

// device names set to 1 in the env; lenient: a non-integer value (GPU=nvidia) is not 1 rather than an error
std::vector<std::string> devices_from_env() {
  std::vector<std::string> ret;
  for (const auto& d : Device::known_devices()) {
    if (d == "DISK" || d == "NPY") continue;
    std::string v = knob_text(d);
    char* end = nullptr;
    if (!v.empty() && std::strtoll(v.c_str(), &end, 10) == 1 && *end == '\0') ret.push_back(d);
  }
  return ret;
}

std::string choose_default() {
  if (std::string dev = DEV; !dev.empty()) return Device::canonicalize(dev);
  auto from_env = devices_from_env();
  if (from_env.size() >= 2) {
    std::vector<std::string> reprs;
    for (auto& d : from_env) reprs.push_back(py_str_repr(d));
    throw Error(cat("multiple devices set in env: [", join(reprs, ", "), "]"));
  }
  if (from_env.size() == 1) return Device::canonicalize(from_env[0]);
  // NOTE: tinygrad also sets <NAME>=1 in os.environ here for spawned children; we spawn none that need it
  std::vector<std::string> whys;
  for (const auto& d : Device::all_devices()) {
    std::string why;
    std::function<bool()> probe;
    {
      Registry& reg = registry();
      std::lock_guard lock(reg.mu);
      if (auto it = reg.default_probes.find(d); it != reg.default_probes.end()) probe = it->second;
    }
    if (probe && !probe()) continue;
    if (Compiled* dev = open_device(d, why)) {
      if (dev->pick_by_default) return dev->device;
      continue;
    }
    if (why.find("not available in this build") == std::string::npos) whys.push_back(why);  // the ones built
  }
  throw Error(cat("no usable devices (", join(whys, "; "), ")"));
}

}  // namespace

const std::string& DefaultDevice::str() const {
  std::lock_guard lock(mu_);
  if (!value_) value_ = choose_default();
  return *value_;
}
DefaultDevice& DefaultDevice::operator=(std::string_view device) {
  std::lock_guard lock(mu_);
  value_ = Device::canonicalize(device);
  return *this;
}
void DefaultDevice::reset() {
  std::lock_guard lock(mu_);
  value_.reset();
}
std::ostream& operator<<(std::ostream& os, const DefaultDevice& d) { return os << d.str(); }

const std::vector<std::string>& Device::all_devices() {
  static const std::vector<std::string> ret{"METAL", "AMD", "NV",   "CUDA", "QCOM",
                                            "GPU",   "CPU", "LLVM", "DSP",  "WEBGPU"};
  return ret;
}
const std::vector<std::string>& Device::known_devices() {
  static const std::vector<std::string> ret{"AMD",   "CL",  "CPU",  "CUDA", "DISK",   "DSP",  "GPU",    "HIP",   "LLVM",
                                            "METAL", "NPY", "NULL", "NV",   "PYTHON", "QCOM", "REMOTE", "WEBGPU"};
  return ret;
}

std::string Device::canonicalize(std::string_view device) {
  // upper-case the name before ':', keep the rest, and drop a trailing ":0" (tinygrad's re.sub(r":0$", ...))
  std::string prefix = device_prefix(device), ret;
  for (char c : prefix) ret += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (ret == "CL") ret = "GPU";  // OpenCL's later name in tinygrad
  ret += device.substr(prefix.size());
  if (ret.size() >= 2 && ret.ends_with(":0")) ret.resize(ret.size() - 2);
  return ret;
}

std::vector<std::string> Device::get_available_devices() {
  std::vector<std::string> order = all_devices(), ret;
  order.push_back("PYTHON"), order.push_back("NULL");
  std::string why;
  for (const auto& d : order)
    if (Compiled* dev = open_device(d, why)) ret.push_back(dev->device);
  return ret;
}

namespace {
// the opened device, or nullptr with why set; never builds the "available" list (that opens devices)
Compiled* open_device(const std::string& name, std::string& why) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mu);
  if (auto it = reg.opened.find(name); it != reg.opened.end()) return it->second.get();
  std::string prefix = device_prefix(name);
  auto fit = reg.factories.find(prefix);
  if (fit == reg.factories.end()) {
    const auto& known = Device::known_devices();
    why = std::find(known.begin(), known.end(), prefix) != known.end()
              ? cat("device ", py_str_repr(name), " is not available in this build")
              : cat("unknown device ", py_str_repr(name));
    return nullptr;
  }
  std::unique_ptr<Compiled> dev;
  try {
    dev = fit->second(name);
  } catch (const Error& e) {
    why = cat("device ", py_str_repr(name), " is unavailable: ", e.what());
    return nullptr;
  }
  TG_ASSERT(dev != nullptr, "factory for ", name, " returned null");
  if (DEBUG >= 1) std::cout << "opened device " << name << " from pid:" << ::getpid() << std::endl;
  Compiled* ret = dev.get();
  reg.opened.emplace(name, std::move(dev));
  reg.open_order.push_back(name);
  return ret;
}
}  // namespace

Compiled* Device::find(std::string_view device) {
  std::string why;
  return open_device(canonicalize(device), why);
}

Compiled& Device::get(std::string_view device) {
  std::string name = canonicalize(device), why;
  if (Compiled* ret = open_device(name, why)) return *ret;
  throw Error(cat(why, "; available: ", join(get_available_devices(), ", ")));
}

Toolchain Device::toolchain(std::string_view spec) {
  // the name before ':' canonicalized, the target after it as written (sm_90)
  const size_t colon = spec.find(':');
  const std::string prefix = canonicalize(spec.substr(0, colon));
  const std::string target = colon == std::string_view::npos ? "" : std::string(spec.substr(colon + 1));
  ToolchainFactory f;
  {
    Registry& reg = registry();
    std::lock_guard lock(reg.mu);
    auto it = reg.toolchains.find(prefix);
    if (it == reg.toolchains.end()) {
      std::vector<std::string> names;
      for (auto& [n, _] : reg.toolchains) names.push_back(n);
      throw Error(cat("device ", py_str_repr(prefix),
                      " has no toolchain to cross-compile with; these do: ", join(names, ", ")));
    }
    f = it->second;
  }
  return f(target);
}

void Device::register_device(const std::string& name, DeviceFactory factory) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mu);
  reg.factories[canonicalize(name)] = std::move(factory);
}

// *** Buffer ***

struct BufferData {
  std::string device;
  int64_t size;
  DType dtype;
  BufferSpec spec;
  int64_t offset = 0;
  std::shared_ptr<BufferData> base;      // set for views
  std::shared_ptr<Allocator> allocator;  // set while allocated; keeps the allocator alive as long as the memory
  Opaque buf = nullptr;
  bool allocated = false;
  int64_t lb_refcount = 0, allocated_views = 0;
  std::atomic<uint64_t> version = 0;  // on the base (Buffer::version)

  int64_t nbytes() const { return size * dtype.itemsize(); }
  void deallocate() {
    TG_CHECK(allocated, "buffer must be allocated to deallocate");
    if (DEBUG >= 7) std::cout << "buffer: deallocate " << nbytes() << " bytes on " << device << std::endl;
    if (base == nullptr) {
      if (!device.starts_with("DISK")) GlobalCounters::mem_used -= nbytes();  // a file's bytes aren't memory
      allocator->free(buf, static_cast<size_t>(nbytes()), spec);
    } else {
      base->allocated_views--;
    }
    buf = nullptr, allocated = false, allocator.reset();
  }
  ~BufferData() {
    if (allocated) deallocate();
  }
};

Buffer::Buffer(std::string device, int64_t size, DType dtype, bool preallocate)
    : Buffer(std::move(device), size, dtype, BufferSpec{}, preallocate) {}
Buffer::Buffer(std::string device, int64_t size, DType dtype, BufferSpec spec, bool preallocate) {
  TG_CHECK(size >= 0, "buffer size must not be negative, got ", size);
  TG_CHECK(!dtype.is_ptr(), "a buffer holds values, not pointers: ", dtype.repr());
  d_ = std::make_shared<BufferData>();
  d_->device = std::move(device), d_->size = size, d_->dtype = dtype, d_->spec = spec;
  if (preallocate) allocate();
}

BufferData& Buffer::data() const {
  TG_ASSERT(d_ != nullptr, "use of a null Buffer");
  return *d_;
}

Buffer Buffer::view(int64_t size, DType dtype, int64_t offset) const {
  BufferData& d = data();
  TG_CHECK(offset >= 0 && offset < d.nbytes(), "offset must be less than nbytes: ", offset, " vs ", d.nbytes());
  auto v = std::make_shared<BufferData>();
  v->device = d.device, v->size = size, v->dtype = dtype;
  v->base = d.base ? d.base : d_;  // a view of a view points at the one base
  v->offset = d.base ? d.offset + offset : offset;
  TG_CHECK(v->offset + v->nbytes() <= v->base->nbytes(), "view of ", v->nbytes(), " bytes at offset ", v->offset,
           " exceeds its base of ", v->base->nbytes(), " bytes");
  return Buffer(std::move(v));
}

const std::string& Buffer::device() const { return data().device; }
int64_t Buffer::size() const { return data().size; }
DType Buffer::dtype() const { return data().dtype; }
const BufferSpec& Buffer::spec() const { return data().base ? data().base->spec : data().spec; }
int64_t Buffer::nbytes() const { return data().nbytes(); }
int64_t Buffer::offset() const { return data().offset; }
Buffer Buffer::base() const { return data().base ? Buffer(data().base) : *this; }
bool Buffer::is_view() const { return data().base != nullptr; }
bool Buffer::is_allocated() const { return data().allocated; }

Buffer& Buffer::allocate() {
  BufferData& d = data();
  TG_CHECK(!d.allocated, "can't allocate already allocated buffer");
  if (DEBUG >= 7) std::cout << "buffer: allocate " << d.nbytes() << " bytes on " << d.device << std::endl;
  if (int64_t mbs = MAX_BUFFER_SIZE; mbs > 0 && d.size > mbs)
    throw Error(cat("buffer of size ", d.size, " is too large (MAX_BUFFER_SIZE=", mbs, ")"));
  std::shared_ptr<Allocator> allocator = Device::get(d.device).allocator;
  if (d.base) {
    Buffer(d.base).ensure_allocated();
    TG_ASSERT(allocator->supports_offset(), "offset function required for view on ", d.device);
    d.buf = allocator->offset(d.base->buf, static_cast<size_t>(d.nbytes()), static_cast<size_t>(d.offset));
    d.base->allocated_views++;
  } else {
    d.buf = allocator->alloc(static_cast<size_t>(d.nbytes()), d.spec);
    if (!d.device.starts_with("DISK")) GlobalCounters::mem_used += d.nbytes();
  }
  d.allocator = std::move(allocator), d.allocated = true;
  return *this;
}
Buffer& Buffer::ensure_allocated() { return is_allocated() ? *this : allocate(); }
void Buffer::deallocate() {
  TG_CHECK(data().allocated_views == 0, "can't deallocate a buffer while ", data().allocated_views, " views use it");
  data().deallocate();
}

Opaque Buffer::opaque() const {
  TG_CHECK(is_allocated(), "buffer is not allocated: ", repr());
  return data().buf;
}

Buffer& Buffer::copyin(const void* src, size_t nbytes) {
  BufferData& d = data();
  TG_CHECK(static_cast<int64_t>(nbytes) == d.nbytes(), "size mismatch, ", nbytes, " != ", d.nbytes(), " bytes of ",
           repr());
  TG_CHECK(d.allocated, "can't copyin to unallocated buffer");
  d.allocator->copyin(d.buf, src, nbytes);
  mark_written();
  return *this;
}
void Buffer::copyout(void* dest, size_t nbytes) const {
  BufferData& d = data();
  TG_CHECK(static_cast<int64_t>(nbytes) == d.nbytes(), "size mismatch, ", nbytes, " != ", d.nbytes(), " bytes of ",
           repr());
  TG_CHECK(d.allocated, "can't copyout unallocated buffer");
  d.allocator->copyout(dest, d.buf, nbytes);
}
Buffer& Buffer::copy_from(const Buffer& src) {
  TG_CHECK(src.nbytes() == nbytes(), "buffer copy size mismatch: ", src.repr(), " is ", src.nbytes(), " bytes, ",
           repr(), " is ", nbytes());
  ensure_allocated();
  BufferData &d = data(), &s = src.data();
  TG_CHECK(s.allocated, "can't copy from an unallocated buffer ", src.repr());
  mark_written();
  if (d.nbytes() == 0) return *this;
  const auto n = static_cast<size_t>(d.nbytes());
  if (d.allocator->transfer(d.buf, s.buf, n, *s.allocator)) return *this;
  if (void* from = s.allocator->host_ptr(s.buf)) return copyin(from, n);
  if (void* to = d.allocator->host_ptr(d.buf)) return src.copyout(to, n), *this;
  std::vector<uint8_t> staging = src.as_bytes();
  return copyin(staging.data(), staging.size());
}

std::vector<uint8_t> Buffer::as_bytes() const {
  check_host_bytes(static_cast<size_t>(nbytes()), "reading");
  std::vector<uint8_t> ret(static_cast<size_t>(nbytes()));
  copyout(ret.data(), ret.size());
  return ret;
}

uint64_t Buffer::version() const { return base().data().version.load(std::memory_order_relaxed); }
void Buffer::mark_written() const { base().data().version.fetch_add(1, std::memory_order_relaxed); }

void* Buffer::host_ptr() const {
  const BufferData& d = data();
  return d.allocated ? d.allocator->host_ptr(d.buf) : nullptr;
}

void Buffer::release_file_pages() const {
  const BufferData& d = data();
  const BufferData& b = d.base ? *d.base : d;  // a view's pages are its base's
  if (!b.allocated) return;
  b.allocator->release_file_pages(b.buf, static_cast<size_t>(d.offset), static_cast<size_t>(d.nbytes()), b.spec);
}

int64_t Buffer::lb_refcount() const { return base().data().lb_refcount; }
Buffer& Buffer::ref(int64_t cnt) {
  base().data().lb_refcount += cnt;
  return *this;
}

std::string Buffer::repr() const {
  const BufferData& d = data();
  return cat("<buf real:", d.allocated ? "True" : "False", " device:", d.device, " size:", d.size,
             " dtype:", d.dtype.repr(), d.base ? cat(" offset:", d.offset) : "", ">");
}
std::ostream& operator<<(std::ostream& os, const Buffer& b) { return os << b.repr(); }

}  // namespace tg
