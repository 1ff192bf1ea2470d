#pragma once
// runtime: the CPU device (tinygrad's ops_cpu.py): C source -> a shared object built by the system C compiler ->
// dlopen'ed. tinygrad instead links the object itself and jumps into an mmap'ed page; a shared object does the
// relocation for us and shows up by name in perf and gdb.
//
// CALLING CONVENTION (the contract with the C renderer): the source holds, besides the kernel, an entry shim
//   void tg_entry_<name>(void** bufs, const long long* vars);
// that casts bufs[i] to the kernel's i-th pointer parameter type and passes vars[j] as its j-th int parameter,
// in the kernel's parameter order. CPUProgram(name, lib) finds tg_entry_<name> and calls it with the buffers'
// host pointers and the variables' values.
// A kernel compiled to run on several cores (ClangRenderer::render_threaded) also defines
//   void tg_entry_threads_<name>(void** bufs, const long long* vars, int core, int ncores);
// which runs core's share of the kernel; called with global_size[0] > 1, the program runs that many shares at once
// on the thread pool (tinygrad's CPU device likewise launches global_size[0] threads). A program made with
// max_threads > 0 (what the CPU device's build does for a kernel it split) picks its cores itself: at most
// max_threads, at most the pool's.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "tg/renderer/renderer.h"
#include "tg/runtime/device.h"

namespace tg {

// The ISA the CPU devices (CPU, LLVM) compile kernels for: CPU_ARCH, a -march name (x86-64-v3 for AVX2, x86-64-v2
// for SSE4.2, skylake-avx512, znver3 ...), default native; what it has is read from the C compiler's predefined
// macros for it ($CC -march=ARCH -dM -E), so an AVX-512 machine can build and measure the AVX2 path. The vector
// width and register count give the CPU tiles' lane budget (RenderOpts::simd_lanes). An ISA this machine can't run,
// or a name the compiler doesn't know, is an error naming it.
struct CpuTarget {
  std::string arch;      // the -march value: "native" or CPU_ARCH
  std::string isa;       // "AVX-512", "AVX2", "SSE", "NEON" (the widest the target has)
  int vector_bytes = 0;  // 64, 32, 16
  int registers = 0;     // vector registers: 32 (AVX-512, NEON) or 16
  int tile_lanes = 0;    // float lanes a CPU tile may take: 256 AVX-512, 128 AVX2 and NEON, 64 SSE
  bool vnni = false;     // vpdpbusd (AVX512-VNNI or AVX-VNNI): 8-bit dot products whatever the bytes' values
};
const CpuTarget& cpu_target();                      // CPU_ARCH's, read once
CpuTarget cpu_target_for(const std::string& arch);  // any -march name's (throws for a bad one)

// $CC (default clang, else cc) -shared -O2 -march=$CPU_ARCH -fPIC -ffreestanding -fno-math-errno -nostdlib.
// -nostdlib: the object needs no libc; calls the compiler still emits (memset, memcpy, libm fallbacks such as
// truncf on old CPUs) resolve at dlopen time against the host process, which always has libc and libm loaded.
// -fno-math-errno: __builtin_sqrt becomes an instruction instead of a call.
class ClangCompiler : public Compiler {
 public:
  // resolves $CC now; a missing compiler is reported by compile(). extra_flags go after flags().
  explicit ClangCompiler(std::vector<std::string> extra_flags = {});
  std::string compile(const std::string& src) override;
  // the compiler's argv prefix (CC may be "ccache clang") and the flags, as run
  std::vector<std::string> command() const;

  static const std::vector<std::string>& flags();
  static inline std::atomic<int64_t> invocations{0};  // compiler processes run, for tests of the disk cache
  // a compile that runs longer is stuck on a kernel of ours (clang -O2 on megabytes of C never finished): the compiler
  // is killed with its children (its process group: clang's cc1 is one) and the compile is a CompileError naming it
  int timeout_seconds = 300;

  // The compiler for kernels written with vector ALUs (a CPU vector tile, see codegen/cpu_tiles.h): they are
  // vectorized already, so no SLP vectorizer (which turns their broadcasts into gathers), and 512-bit vectors
  // where the CPU has them (the source's vector types say how wide the work is).
  static ClangCompiler& vector_kernels();

 private:
  std::vector<std::string> cc_, extra_;
  std::string rtlib_;  // the compiler's runtime library, linked into every kernel (empty: none found)
};

// A kernel compiled for this machine, called through its entry points (the calling convention above): on the calling
// thread, or split across the thread pool. CPUProgram (a dlopen'ed shared object) and LLVMProgram (ORC) load them.
class HostProgram : public Program {
 public:
  using Entry = void (*)(void** bufs, const long long* vars);
  using Threaded = void (*)(void** bufs, const long long* vars, int core, int ncores);
  const std::string name;
  static inline std::atomic<int64_t> threaded_runs{0};  // calls split across more than one core, for tests
  // one share per slice of the outermost loop the cores split (see HostProgram::call), or the whole kernel
  std::optional<Shares> shares(std::span<const Opaque> bufs, std::span<const int64_t> vals, Dims global_size) override;

 protected:
  HostProgram(std::string name, int max_threads) : name(std::move(name)), max_threads_(max_threads) {}
  std::optional<double> call(std::span<const Opaque> bufs, std::span<const int64_t> vals, bool wait, Dims global_size,
                             std::optional<Dims> local_size) override;
  int cores(Dims global_size) const;  // how many cores a call runs on (1: on the calling thread)
  int share_count(int cores) const;
  Entry fxn_ = nullptr;
  Threaded threaded_ = nullptr;  // tg_entry_threads_<name>, when the kernel has it
  int max_threads_ = 0;
};

class CPUProgram : public HostProgram {
 public:
  // lib: the bytes of the shared object
  CPUProgram(std::string name, const std::string& lib, int max_threads = 0);
  ~CPUProgram() override;
  CPUProgram(const CPUProgram&) = delete;
  CPUProgram& operator=(const CPUProgram&) = delete;

 private:
  void release();
  void* handle_ = nullptr;
  // the loaded file stays (a memfd, or a temp file) until dlclose: glibc dedups dlopen by path, so a path must
  // not be reused while its library is loaded
  int fd_ = -1;
  std::string path_;
};

// how the CPU splits a kernel across cores: the outermost loop the cores share, and at most how many (0: the kernel
// is too small to pay for waking them, or has no such loop)
struct ThreadSplit {
  std::optional<UOp> range;
  int max_threads = 0;
};
ThreadSplit cpu_thread_split(const ProgramSpec& spec);

// the CPU device: MallocAllocator, ClangRenderer, ClangCompiler, CPUProgram; its build adds the entry shim, splits a
// kernel big enough to pay for it across cores, and compiles vector-tile kernels with vector_kernels()
std::unique_ptr<Compiled> open_cpu_device(const std::string& device);

}  // namespace tg
