#pragma once
// The one table of knobs (tinygrad's ContextVar): every environment variable the engine reads, declared once below
// with its type, default, meaning and what it changes. The environment is read once, at the first knob read; after
// that the process environment is never read or written for a knob. A Context overrides knobs for a scope on the
// thread that made it, and on the threads its work is handed to (the thread pool's jobs and the compile threads carry
// the knobs they were started with).
//
//   if (DEBUG >= 2) ...                                  // an int knob reads as int64_t
//   const std::string& cc = CC.value();                  // a string knob
//   { Context ctx{{"BEAM", 2}, {"NOOPT", 0}}; ... }      // scoped, RAII; nullptr gives a knob its default back
//
// Flags: CODE marks a knob that changes what a kernel compiles to (the compiled-program cache keys on every such
// knob), KERNELIZE one that changes what kernelize produces (so does the kernelize cache), STARTUP one that its
// subsystem reads once when it starts (VIZ, PROFILE, CPU_ARCH ...): a Context can't change those, it raises.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tg {

namespace knob_flag {
enum : uint8_t { CODE = 1, KERNELIZE = 2, STARTUP = 4 };
}

// I(NAME, default, flags, meaning): an integer knob; S(NAME, "default", flags, meaning): a string knob
#define TG_KNOBS(I, S)                                                                                                 \
  /* printing and checking */                                                                                          \
  I(DEBUG, 0, 0,                                                                                                       \
    "1: device opens, cache notes; 2: a line per kernel run; 3: heuristic choices; 4: kernel source; 7: buffers")      \
  I(TRACEMETA, 1, 0, "2: full metadata in DEBUG=2 lines")                                                              \
  I(DEBUGONNX, 0, 0, "1: the ONNX runner prints each node; 2: with its inputs' and outputs' shapes")                   \
  I(IGNORE_OOB, 1, 0, "0: the verifier checks index bounds")                                                           \
  I(TG_REWRITE_LIMIT, 50'000'000, 0, "rewrites one graph_rewrite may make before it calls the rewrite a loop")         \
  /* kernel optimization */                                                                                            \
  I(NOOPT, 0, knob_flag::CODE, "1: no hand-coded kernel optimizations")                                                \
  I(NOLOCALS, 0, knob_flag::CODE, "1: no local dimensions in the heuristic")                                           \
  I(MV, 1, knob_flag::CODE, "0: no matvec path in the heuristic")                                                      \
  I(MV_BLOCKSIZE, 4, knob_flag::CODE, "the matvec path's block size")                                                  \
  I(MV_THREADS_PER_ROW, 8, knob_flag::CODE, "the matvec path's threads per row")                                       \
  I(MV_ROWS_PER_THREAD, 4, knob_flag::CODE, "the matvec path's rows per thread")                                       \
  I(TC, 1, knob_flag::CODE, "tensor cores: 0 off, 1 WMMA, 2 their shape only, 3 emulated with shared memory")          \
  I(TC_SELECT, -1, knob_flag::CODE, "which tensor core (-1: the first that fits)")                                     \
  I(TC_OPT, 0, knob_flag::CODE, "0 plain matmuls, 1 casted inputs and several reduce dims, 2 padding (BEAM: 2 unset)") \
  I(ALLOW_TF32, 0, knob_flag::CODE, "1: the tf32 tensor core on CUDA sm_80+")                                          \
  I(DEVECTORIZE, 1, knob_flag::CODE, "tinygrad's devectorize modes")                                                   \
  I(TRANSCENDENTAL, 1, knob_flag::CODE, "2: exp2/log2/sin as polynomials on every device")                             \
  I(EXPAND_SSA, 0, knob_flag::CODE, "1: the C renderer writes one SSA value per line")                                 \
  I(ALIGNED, 1, knob_flag::CODE, "0: the C renderer's vector typedefs are not aligned")                                \
  I(BEAM, 0, knob_flag::CODE, "n >= 1: each kernel's opts by a beam search of width n")                                \
  I(BEAM_UPCAST_MAX, 256, knob_flag::CODE, "BEAM: the largest upcast it tries")                                        \
  I(BEAM_LOCAL_MAX, 1024, knob_flag::CODE, "BEAM: the largest local size it tries")                                    \
  I(BEAM_PADTO, 1, knob_flag::CODE, "0: BEAM tries no PADTO")                                                          \
  I(BEAM_MIN_PROGRESS, 1, knob_flag::CODE, "BEAM: the gain in hundredths of a microsecond that keeps it searching")    \
  I(BEAM_DEBUG, 0, 0, "1: BEAM prints the candidates that fail; 2: every candidate")                                   \
  I(IGNORE_BEAM_CACHE, 0, 0, "1: BEAM searches again instead of reading its disk cache")                               \
  /* the CPU's tiles */                                                                                                \
  I(CPU_VECTOR_TILE, 1, knob_flag::CODE | knob_flag::KERNELIZE, "0: no CPU vector tiles (nor matmul packing)")         \
  I(CPU_TILE_LANES, 0, knob_flag::CODE | knob_flag::KERNELIZE,                                                         \
    "the CPU tiles' register budget in float lanes (0: the target's)")                                                 \
  I(CPU_LOOP_ORDER, 1, knob_flag::CODE, "0: big CPU reduces keep the reference's loop order")                          \
  I(CPU_ROW_UPCAST, 1, knob_flag::CODE, "0: big CPU kernels get no extra upcast of their output rows")                 \
  I(CPU_ROW_BLOCKS, 1, knob_flag::CODE, "0: a packed CPU matmul on 16 registers sweeps all rows per panel of B")       \
  I(CPU_PACK, 1, knob_flag::KERNELIZE, "0: a big CPU matmul reads B in place instead of packed in panels")             \
  I(CPU_KSPLIT, 1024, knob_flag::KERNELIZE, "the block of a packed CPU matmul's reduce (0: whole)")                    \
  S(CPU_ARCH, "native", knob_flag::CODE | knob_flag::STARTUP, "the -march the CPU and LLVM devices compile for")       \
  I(CPU_THREADS, 0, knob_flag::CODE, "threads a CPU kernel is split across (0: the machine's cores)")                  \
  /* kernelize */                                                                                                      \
  I(SPLIT_REDUCEOP, 1, knob_flag::KERNELIZE, "0: large reduces are not split in two kernels")                          \
  I(REDUCEOP_SPLIT_THRESHOLD, 32768, knob_flag::KERNELIZE, "the smallest input/output ratio a split reduce has")       \
  I(REDUCEOP_SPLIT_SIZE, 22, knob_flag::KERNELIZE, "log2 of the largest first kernel of a split reduce")               \
  I(FUSE_ARANGE, 1, knob_flag::KERNELIZE, "0: an arange compared with a loaded index is realized (the reference's)")   \
  I(DONT_REALIZE_EXPAND, 0, knob_flag::KERNELIZE, "1: an expanded reduce is recomputed, not realized")                 \
  I(DONT_GROUP_REDUCES, 0, knob_flag::KERNELIZE, "1: reduces over the same input are not grouped")                     \
  I(FUSE_CONV_BW, 0, knob_flag::KERNELIZE, "1: the grouper fuses a conv's backward reduces")                           \
  I(WINO, 0, 0, "1: 3x3 stride-1 convs as Winograd's F(4x4, 3x3) (tensor/tensor_winograd.cpp)")                        \
  I(RING, 1, knob_flag::KERNELIZE, "allreduce: 0 naive, 2 ring, 1 ring on 3+ devices above the threshold")             \
  I(RING_ALLREDUCE_THRESHOLD, 256'000, knob_flag::KERNELIZE, "RING=1: the elements above which it takes the ring")     \
  I(DP, 1, knob_flag::STARTUP, "0: a process started by mpirun runs alone (no data parallelism over the ranks)")       \
  I(MPI_TIMEOUT, 300, 0, "seconds an allreduce over MPI ranks waits before naming the ranks that never arrived")       \
  I(SCACHE, 1, 0, "0: no kernelize cache")                                                                             \
  I(NO_MEMORY_PLANNER, 0, 0, "1: no buffer reuse across the schedule")                                                 \
  I(JIT, 1, 0, "0: TinyJit runs the function every call")                                                              \
  I(CAPTURING, 1, 0, "0: kernels run now are not captured by the TinyJit capturing them")                              \
  I(JIT_HOIST, 1, 0, "0: a TinyJit replay reruns the kernels whose inputs didn't change (weights' layout copies)")     \
  S(SUM_DTYPE, "float32", 0, "the accumulation dtype of float sums")                                                   \
  I(FUSE_OPTIM, 0, 0, "1: optimizers update all params in one fused kernel")                                           \
  I(LLM_INT8, 1, 0, "0: a decode step's matvecs on Q4_0/Q8_0 weights dequantize to float (1: int8 on the CPU)")        \
  I(CONST_LR, 0, 0, "1: optimizers take a constant (not tensor) learning rate")                                        \
  /* compiling and caching */                                                                                          \
  S(CC, "", knob_flag::CODE, "the CPU device's C compiler (default clang, else cc)")                                   \
  I(LLVMOPT, 1, knob_flag::STARTUP, "LLVM's passes: 0 none, 1 the light pipeline, 2 the reference's O2")               \
  S(CROSS_COMPILE, "", knob_flag::STARTUP, "CUDA:sm_90: every kernel is also compiled for that target")                \
  I(COMPILE_THREADS, 0, 0, "threads compiling a schedule's kernels (0: the CPU count)")                                \
  I(CACHELEVEL, 2, 0, "0: no disk cache")                                                                              \
  I(DISABLE_COMPILER_CACHE, 0, 0, "1: compile again instead of reading the disk cache")                                \
  I(ASSERT_COMPILE, 0, 0, "1: any compile is an error")                                                                \
  /* memory */                                                                                                         \
  I(LRU, 1, 0, "0: no allocator reuse")                                                                                \
  I(MAX_BUFFER_SIZE, 0, 0, "the largest buffer allowed, in elements (0: any)")                                         \
  I(MADVISE_HUGEPAGE, 1, 0, "0: big host buffers are not put on transparent huge pages")                               \
  /* devices */                                                                                                        \
  S(DEV, "", 0, "the default device")                                                                                  \
  I(EMULATE_CUDA, 0, 0, "1: the PYTHON device takes CUDA's sm_80 tensor cores")                                        \
  S(LLVM_LIBRARY, "", knob_flag::STARTUP, "the libLLVM the LLVM device loads")                                         \
  S(NVRTC_LIBRARY, "", knob_flag::STARTUP, "the libnvrtc the CUDA device loads")                                       \
  S(CUDA_PATH, "", 0, "where the CUDA toolkit's headers are (NVRTC's -I)")                                             \
  S(POCL_CACHE_DIR, "", 0, "PoCL's kernel cache (default ~/.cache/pocl)")                                              \
  S(OCL_ICD_VENDORS, "", 0, "ocl-icd's folder of .icd files, or one file")                                             \
  /* VIZ and PROFILE */                                                                                                \
  I(VIZ, 0, knob_flag::STARTUP, "1: record every named graph rewrite and serve the explorer at exit; -1: record only") \
  S(VIZ_TRACE, "", knob_flag::STARTUP, "VIZ's trace file (default $TMPDIR/tinygrad_viz_<pid>.trace)")                  \
  S(TINYGRAD_VIZ, "", 0, "the tinygrad-viz program VIZ=1 starts")                                                      \
  I(PROFILE, 0, knob_flag::STARTUP, "1: every kernel run and copy into a Chrome trace-event file")                     \
  S(PROFILE_TRACE, "", knob_flag::STARTUP, "PROFILE's file (default $TMPDIR/tinygrad_profile_<pid>.json)")             \
  /* the system's */                                                                                                   \
  S(CI, "", 0, "set: VIZ=1 never starts the explorer")                                                                 \
  S(HOME, "/tmp", 0, "the user's home, for ~/.cache")                                                                  \
  S(XDG_CACHE_HOME, "", 0, "the cache folder (default ~/.cache)")                                                      \
  S(TMPDIR, "/tmp", 0, "where temporary files go")                                                                     \
  S(PATH, "/usr/local/bin:/usr/bin:/bin", 0, "where the C compiler is looked for")                                     \
  I(OMPI_COMM_WORLD_SIZE, 0, 0, "set by Open MPI's mpirun: how many processes the job has")                            \
  I(PMI_SIZE, 0, 0, "set by other MPI launchers (MPICH's, Slurm's): how many processes the job has")

// the devices a `<NAME>=1` chooses as the default (Device::known_devices()); string knobs with no C++ name
// clang-format off
#define TG_DEVICE_KNOBS(D) \
  D("AMD") D("CL") D("CPU") D("CUDA") D("DSP") D("GPU") D("HIP") D("LLVM") D("METAL") D("NULL") D("NV") D("PYTHON") \
  D("QCOM") D("REMOTE") D("WEBGPU")
// clang-format on

enum class KnobKind : uint8_t { Int, Str };
struct KnobInfo {
  std::string_view name;
  KnobKind kind;
  std::string_view default_text;
  uint8_t flags;
  std::string_view meaning;
};
std::span<const KnobInfo> knob_table();
const KnobInfo* find_knob(std::string_view name);  // nullptr when no knob has that name

namespace knob_id {
#define TG_KNOB_ID(name, ...) name,
enum : uint16_t { TG_KNOBS(TG_KNOB_ID, TG_KNOB_ID) count };
#undef TG_KNOB_ID
}  // namespace knob_id

// a handle to one knob of the table; its value is the current thread's (its Context's, else the environment's)
struct IntKnob {
  uint16_t id;
  int64_t value() const;
  bool is_set() const;  // set in the environment or by a Context (some sites have their own default: BEAM's TC_OPT)
  operator int64_t() const { return value(); }
};
struct StrKnob {
  uint16_t id;
  const std::string& value() const;
  bool is_set() const;
  operator const std::string&() const { return value(); }
};

#pragma push_macro("DEBUG")  // a program built with -DDEBUG still compiles (it can't name tg::DEBUG)
#undef DEBUG
#define TG_INT_KNOB(name, ...) inline constexpr IntKnob name{knob_id::name};
#define TG_STR_KNOB(name, ...) inline constexpr StrKnob name{knob_id::name};
TG_KNOBS(TG_INT_KNOB, TG_STR_KNOB)
#undef TG_INT_KNOB
#undef TG_STR_KNOB
#pragma pop_macro("DEBUG")

// *** reading by name, and overriding ***

struct KnobSnapshot;  // every knob's value: the environment's, or a Context's
using Knobs = std::shared_ptr<const KnobSnapshot>;

// a knob's value as its text (an int knob's in decimal), by name; an unknown name is a KeyError-like tg::Error
std::string knob_text(std::string_view name);
int64_t knob_int(std::string_view name);  // an int knob's value, by name
bool knob_is_set(std::string_view name);

// the value a Context gives a knob: an integer, a text, or nullptr (the knob's default, as if unset)
struct KnobValue {
  std::optional<std::string> text;
  KnobValue(int64_t v) : text(std::to_string(v)) {}  // NOLINT: implicit, for {"BEAM", 2}
  KnobValue(int v) : text(std::to_string(v)) {}      // NOLINT
  KnobValue(bool v) : text(v ? "1" : "0") {}         // NOLINT
  KnobValue(const char* v) : text(v ? std::optional<std::string>(v) : std::nullopt) {}  // NOLINT
  KnobValue(std::string v) : text(std::move(v)) {}                                      // NOLINT
  KnobValue(std::nullptr_t) {}                                                          // NOLINT
};

// Overrides knobs until it goes out of scope, on this thread and in the work it hands to others (tinygrad's
// Context). An unknown name, a STARTUP knob or a non-integer value for an int knob is a tg::Error (ValueError).
// Contexts nest, and end in the reverse order of their making (as scopes do): each restores what was before it.
class Context {
 public:
  Context(std::initializer_list<std::pair<std::string_view, KnobValue>> settings);
  explicit Context(const std::vector<std::pair<std::string, KnobValue>>& settings);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  Knobs mine_, prev_;
};

// the current thread's knobs, to hand to another thread; KnobScope installs them there for its scope
Knobs current_knobs();
class KnobScope {
 public:
  explicit KnobScope(Knobs knobs);
  ~KnobScope();
  KnobScope(const KnobScope&) = delete;
  KnobScope& operator=(const KnobScope&) = delete;

 private:
  Knobs prev_;
};

// changes a knob's value for the whole process from now on, for threads not inside a Context (tinygrad's
// `DEBUG.value = 2`); STARTUP knobs and bad values are errors, as in a Context
void set_knob(std::string_view name, const KnobValue& value);

// the current values of every knob carrying `flag` (knob_flag::CODE or KERNELIZE), as one text: caches key on it
const std::string& knobs_key(uint8_t flag);

// *** environment variables that are not knobs: a program's own (STEPS, BS ...), read at each call ***

// tinygrad's helpers.getenv: the variable as an integer, default when unset or empty; not an integer: ValueError
int64_t getenv(const char* name, int64_t default_value = 0);
std::string getenv_str(const char* name, const std::string& default_value = "");

}  // namespace tg
