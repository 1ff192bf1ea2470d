#pragma once
// runtime: the Device registry, Buffer and the Compiled device interface (tinygrad's device.py).
// A Compiled device = an Allocator (memory), a Renderer (its codegen options and uops -> source), a Compiler (source
// -> binary, disk-cached) and a program factory (binary -> a callable Program), plus synchronize(). Each device is a
// file of its own (runtime/ops_<name>.cpp) that the registry opens by name; the engine reaches devices only through
// this interface. Opaque handles are void*: a host pointer on CPU, a CUdeviceptr or cl_mem elsewhere.
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tg/dtype/dtype.h"
#include "tg/helpers/helpers.h"

namespace tg {

class Renderer;
struct ProgramSpec;

// *** counters (tinygrad's helpers.GlobalCounters) ***

struct GlobalCounters {
  static inline std::atomic<int64_t> global_ops{0}, global_mem{0}, kernel_count{0};
  static inline std::atomic<int64_t> mem_used{0};  // bytes held by allocated buffers; NOTE: reset() keeps it
  static inline double time_sum_s = 0.0;
  static void reset();
};

// *** allocators ***

using Opaque = void*;

// how a buffer's memory is allocated (tinygrad's BufferSpec)
struct BufferSpec {
  bool host = false;        // host memory the device reaches directly (pinned, for fast copies)
  bool cpu_access = false;  // memory the host may map
  bool uncached = false;
  bool nolru = false;             // freed at once, never kept for reuse
  Opaque external_ptr = nullptr;  // memory owned by someone else: used as it is, never allocated or freed here
  // host memory only (an allocator that maps_files): the buffer is this file's first bytes, mapped copy-on-write: it
  // reads the page cache without a copy, and writes into the buffer stay in memory (what llama.cpp's mmap does; a
  // change made to the file by someone else may show in pages the buffer hasn't written)
  std::string file{};
  bool operator==(const BufferSpec&) const = default;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual Opaque alloc(size_t nbytes, const BufferSpec& spec = {});  // nbytes > 0; out of memory is an Error
  virtual void free(Opaque opaque, size_t nbytes, const BufferSpec& spec = {});
  virtual void copyin(Opaque dest, const void* src, size_t nbytes) = 0;
  virtual void copyout(void* dest, Opaque src, size_t nbytes) = 0;
  virtual bool supports_offset() const { return false; }
  // a handle to bytes [offset, offset+nbytes) of buf, for Buffer views; only where supports_offset()
  virtual Opaque offset(Opaque buf, size_t nbytes, size_t offset);
  // the host address of a buffer's bytes when the host can read and write them directly (host memory), else null:
  // a copy between two devices then needs no staging copy
  virtual void* host_ptr(Opaque) const { return nullptr; }
  // a direct copy from a buffer of another device (tinygrad's _transfer, e.g. between two GPUs of a kind); false
  // where this allocator can't reach src's memory (the copy then goes through the host)
  virtual bool transfer(Opaque, Opaque /*src*/, size_t /*nbytes*/, Allocator& /*src_allocator*/) { return false; }
  virtual bool maps_files() const { return false; }  // whether a BufferSpec's file is mapped (host memory)
  // the pages wholly inside bytes [offset, offset+nbytes) of a buffer that maps a file, given back to the system:
  // the mapping stays, and a read faults them in from the file again. Only for pages no one wrote (a written page of
  // the copy-on-write mapping would read the file's bytes again). Nothing for a buffer that maps no file
  virtual void release_file_pages(Opaque, size_t /*offset*/, size_t /*nbytes*/, const BufferSpec&) {}

 protected:
  virtual Opaque alloc_impl(size_t nbytes, const BufferSpec& spec) = 0;  // tinygrad's _alloc
  virtual void free_impl(Opaque opaque, size_t nbytes, const BufferSpec& spec) = 0;
};

// Keeps freed buffers by size and hands them out again (tinygrad's LRUAllocator; LRU=0 turns it off).
class LRUAllocator : public Allocator {
 public:
  // NOTE: a subclass calls free_cache() in its own destructor: free_impl is gone by the time this one runs.
  // Only buffers of the default spec are kept for reuse.
  Opaque alloc(size_t nbytes, const BufferSpec& spec = {}) override;
  void free(Opaque opaque, size_t nbytes, const BufferSpec& spec = {}) override;
  void free_cache();
  size_t cached_bytes();  // what the cache holds now

 private:
  std::mutex mu_;
  std::map<size_t, std::vector<Opaque>> cache_;
};

// the memory a device's allocator keeps for reuse (an LRUAllocator's cache) given back to the system
void free_cached_memory(const std::string& device);

// Host memory, 64-byte aligned (a cache line; enough for AVX-512 loads). Shared by CPU and PYTHON.
class MallocAllocator : public LRUAllocator {
 public:
  ~MallocAllocator() override { free_cache(); }
  void copyin(Opaque dest, const void* src, size_t nbytes) override;
  void copyout(void* dest, Opaque src, size_t nbytes) override;
  bool supports_offset() const override { return true; }
  Opaque offset(Opaque buf, size_t nbytes, size_t offset) override;
  void* host_ptr(Opaque buf) const override { return buf; }
  bool maps_files() const override { return true; }
  void release_file_pages(Opaque opaque, size_t offset, size_t nbytes, const BufferSpec& spec) override;
  static std::shared_ptr<MallocAllocator> instance();

 protected:
  Opaque alloc_impl(size_t nbytes, const BufferSpec& spec) override;
  void free_impl(Opaque opaque, size_t nbytes, const BufferSpec& spec) override;

 private:
  static Opaque map_file(const std::string& path, size_t nbytes);
};

// *** compilers ***

// A compile failure: the message carries the compiler's output and the source (tinygrad's CompileError).
struct CompileError : Error {
  using Error::Error;
};

class Compiler {
 public:
  // cachekey: the disk-cache table ([a-z0-9_]+), empty for "never cache"; cache_salt: what else changes the
  // output for the same source (compiler path, version, flags), folded into every cache key.
  explicit Compiler(std::string cachekey = "", std::string cache_salt = "")
      : cachekey(std::move(cachekey)), cache_salt(std::move(cache_salt)) {}
  virtual ~Compiler() = default;
  virtual std::string compile(const std::string& src) { return src; }  // NOTE: the empty compiler is the default
  // compile through the disk cache, unless DISABLE_COMPILER_CACHE=1 or no cachekey
  std::string compile_cached(const std::string& src);

  std::string cachekey, cache_salt;
};

// *** programs ***

class Program {
 public:
  using Dims = std::array<int64_t, 3>;
  virtual ~Program() = default;
  // Run with the buffers' opaque handles and the symbolic variables' values, on global_size work-groups of
  // local_size threads each (no local size: the device's own choice, one thread for devices without locals). With
  // wait, blocks until done and returns the elapsed seconds; else returns nullopt (tinygrad returns None).
  std::optional<double> operator()(std::span<const Opaque> bufs, std::span<const int64_t> vals = {}, bool wait = false,
                                   Dims global_size = {1, 1, 1}, std::optional<Dims> local_size = std::nullopt) {
    return call(bufs, vals, wait, global_size, local_size);
  }
  // A call as pieces a thread pool can run: run(0) ... run(n-1), each once, in any order and on any threads, is the
  // call; alone it would take `threads` threads. For running kernels of several devices at once on one pool (host
  // devices; the buffers and values must outlive run). nullopt: the device runs its kernels its own way (a queue).
  struct Shares {
    int n = 1, threads = 1;
    std::function<void(int)> run;
  };
  virtual std::optional<Shares> shares(std::span<const Opaque> /*bufs*/, std::span<const int64_t> /*vals*/,
                                       Dims /*global_size*/) {
    return std::nullopt;
  }

 protected:
  virtual std::optional<double> call(std::span<const Opaque> bufs, std::span<const int64_t> vals, bool wait,
                                     Dims global_size, std::optional<Dims> local_size) = 0;
};

// name (the kernel's function name), lib (the compiled binary) -> a loaded program
using ProgramFactory = std::function<std::unique_ptr<Program>(const std::string& name, const std::string& lib)>;

// *** devices ***

// a kernel built for a device: the binary (what the disk cache and DEBUG see) and the loaded program
struct BuiltProgram {
  std::string lib;
  std::unique_ptr<Program> program;
};

class Compiled {
 public:
  Compiled(std::string device, std::shared_ptr<Allocator> allocator, std::shared_ptr<Renderer> renderer,
           std::shared_ptr<Compiler> compiler, ProgramFactory runtime);
  virtual ~Compiled();
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;

  virtual void synchronize() {}  // wait for all queued work on the device
  virtual void finalize() {}     // called once at process exit
  // The one step from a rendered kernel to a program: by default spec.src compiled through the disk cache and
  // loaded by runtime. A device with steps of its own overrides it (the CPU adds its entry shim and splits big
  // kernels across cores; PYTHON runs spec.uops).
  virtual BuiltProgram build(const ProgramSpec& spec);
  // whether kernels and buffers of dtype work here (tinygrad's is_dtype_supported, asked of the device itself)
  virtual bool supports_dtype(DType dtype) const;

  const std::string device;
  // whether Device::DEFAULT may choose it when no device is named: an OpenCL device that is really this machine's
  // CPU (PoCL) is used only when asked for (GPU=1, DEV=GPU), as our own CPU device is faster there
  bool pick_by_default = true;
  std::shared_ptr<Allocator> allocator;  // shared: buffers keep their allocator alive, and CPU/PYTHON share one
  std::shared_ptr<Renderer> renderer;    // never null
  std::shared_ptr<Compiler> compiler;    // never null
  ProgramFactory runtime;
};

using DeviceFactory = std::function<std::unique_ptr<Compiled>(const std::string& device)>;

// A device's renderer and compiler without its driver or hardware: cross-compiling, e.g. CUDA's NVRTC on a machine
// without a GPU (CROSS_COMPILE=CUDA:sm_90, engine/realize.h)
struct Toolchain {
  std::shared_ptr<Renderer> renderer;
  std::shared_ptr<Compiler> compiler;
};
using ToolchainFactory = std::function<Toolchain(const std::string& target)>;

// Device::DEFAULT: a string chosen on first read (see Device), assignable in code: Device::DEFAULT = "CPU".
class DefaultDevice {
 public:
  const std::string& str() const;
  operator const std::string&() const { return str(); }  // NOLINT: reads like tinygrad's str attribute
  DefaultDevice& operator=(std::string_view device);
  void reset();  // forget the choice; the next read chooses again (tests, or after changing env vars)
  friend bool operator==(const DefaultDevice& a, std::string_view b) { return a.str() == b; }

 private:
  mutable std::mutex mu_;
  mutable std::optional<std::string> value_;
};
std::ostream& operator<<(std::ostream& os, const DefaultDevice& d);

// The registry of devices (tinygrad's Device = _Device()). Every member is static; devices open on first use and
// stay open (one Compiled per canonical name) until the process ends.
class Device {
 public:
  // DEFAULT: the device named by DEV=<NAME> (NAME:1 too), else the single device whose <NAME>=1 env var is set (two
  // set is an error), else the first that opens in ALL_DEVICES order
  static inline DefaultDevice DEFAULT;
  // tinygrad's ALL_DEVICES: the DEFAULT search order
  static const std::vector<std::string>& all_devices();
  // every device name tinygrad knows (its runtime/ops_*.py), whether or not this build has it
  static const std::vector<std::string>& known_devices();

  // "cpu" -> "CPU", "cuda:0" -> "CUDA", "gpu:1" -> "GPU:1"; no argument: DEFAULT
  static std::string canonicalize(std::string_view device);
  static std::string canonicalize() { return canonicalize(DEFAULT.str()); }
  // the opened device (opened on first use); unknown or unavailable: Error listing the available devices
  static Compiled& get(std::string_view device);
  static Compiled& get() { return get(DEFAULT.str()); }  // tinygrad's Device.default
  static Compiled& default_device() { return get(); }
  // the opened device (opened on first use), or nullptr for one that can't open here (unknown, unavailable, a tuple
  // of devices): a probe, which, unlike get's error, opens no other device to list them
  static Compiled* find(std::string_view device);
  static std::vector<std::string> get_available_devices();  // in ALL_DEVICES order, then PYTHON, NULL
  // add or replace how a device (by its name before ':') is opened; takes effect for devices not yet opened
  static void register_device(const std::string& name, DeviceFactory factory);
  // "CUDA:sm_90" -> CUDA's renderer and compiler for sm_90 (target: what follows ':', "" for the default); an Error
  // for a device without a toolchain of its own or one that can't load
  static Toolchain toolchain(std::string_view spec);
};

// whether kernels and buffers of dtype work on device (default: Device::DEFAULT); a device that can't open: false
bool is_dtype_supported(DType dtype, std::string_view device = {});

// *** Buffer ***

struct BufferData;

// A handle to device memory of size elements of dtype: refcounted, the memory is freed with the last handle.
// A view (offset in bytes into a base buffer) shares the base's memory and keeps the base alive.
class Buffer {
 public:
  Buffer() = default;  // a null handle
  Buffer(std::string device, int64_t size, DType dtype, bool preallocate = false);
  Buffer(std::string device, int64_t size, DType dtype, BufferSpec spec, bool preallocate = false);

  Buffer view(int64_t size, DType dtype, int64_t offset) const;  // offset in bytes

  const std::string& device() const;
  int64_t size() const;  // elements
  DType dtype() const;
  const BufferSpec& spec() const;  // the base's
  int64_t nbytes() const;
  int64_t offset() const;  // bytes into base(), 0 for a base buffer
  Buffer base() const;     // itself for a base buffer
  bool is_view() const;

  bool is_allocated() const;
  Buffer& allocate();  // an error if already allocated
  Buffer& ensure_allocated();
  void deallocate();
  Opaque opaque() const;  // the allocator's handle, what a Program is called with; must be allocated

  // the size of src/dest must be exactly nbytes()
  Buffer& copyin(const void* src, size_t nbytes);
  // a copy of src's bytes, from any device: a direct transfer where this device offers one, a single copy where
  // either side is host memory, else through a host staging buffer. Sizes must match (never a partial copy).
  Buffer& copy_from(const Buffer& src);
  void copyout(void* dest, size_t nbytes) const;
  std::vector<uint8_t> as_bytes() const;  // tinygrad's as_buffer: a host copy
  // the host address of its bytes when the host reaches them directly (an allocated buffer in host memory), else null
  void* host_ptr() const;
  // its pages given back where it is a view of a mapped file no one wrote (Allocator::release_file_pages): a
  // model's weights once laid out anew, read no more
  void release_file_pages() const;

  // how many times its memory (its base's) was written: by copyin, copy_from, a kernel or copy that stores into it
  // (ExecItem::run), an allreduce. A TinyJit replay skips the kernels whose inputs kept their versions (CapturedJit)
  uint64_t version() const;
  void mark_written() const;

  // the lazy-buffer refcount the scheduler/memory planner keeps (tinygrad's lb_refcount), on the base
  int64_t lb_refcount() const;
  Buffer& ref(int64_t cnt);

  std::string repr() const;  // <buf real:True device:CPU size:4 dtype:dtypes.int> (+ " offset:4" for views)
  explicit operator bool() const { return d_ != nullptr; }
  bool operator==(const Buffer& o) const { return d_ == o.d_; }  // identity
  const void* id() const { return d_.get(); }

 private:
  explicit Buffer(std::shared_ptr<BufferData> d) : d_(std::move(d)) {}
  BufferData& data() const;
  std::shared_ptr<BufferData> d_;
};
std::ostream& operator<<(std::ostream& os, const Buffer& b);

}  // namespace tg

template <>
struct std::hash<tg::Buffer> {
  size_t operator()(const tg::Buffer& b) const noexcept { return std::hash<const void*>()(b.id()); }
};
