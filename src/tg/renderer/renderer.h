#pragma once
// Renderer and ProgramSpec (tinygrad's renderer/__init__.py): a Renderer turns a linearized uop list into source text;
// a ProgramSpec is that text plus what the runtime needs to launch it (buffers, vars, launch sizes, the parameter
// list).
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tg/shape/sint.h"
#include "tg/uop/ops.h"
#include "tg/uop/uop.h"
#include "tg/uop/upat.h"

namespace tg {

using LaunchSize = std::array<int64_t, 3>;  // (x, y, z)

// flops and bytes of a kernel. NOTE: tinygrad keeps these symbolic (sint); a symbolic range counts with its vmax here
struct Estimates {
  int64_t ops = 0;  // FLOPs
  int64_t lds = 0;  // bytes accessed by loads and stores
  int64_t mem = 0;  // bytes accessed, each counted once (lds is a high estimate of it)
  Estimates operator+(const Estimates& o) const { return {ops + o.ops, lds + o.lds, mem + o.mem}; }
  static Estimates from_uops(const std::vector<UOp>& uops, bool ignore_indexing = false);
};

// one parameter of the rendered kernel, in signature order: a buffer (DEFINE_GLOBAL) or a variable (DEFINE_VAR)
struct KernelParam {
  std::string name;  // data0, or the variable's name
  DType dtype;       // the pointer dtype of a buffer, the dtype of a variable
  bool is_buffer = true;
  bool is_mutable = false;  // the kernel stores to this buffer
  int64_t index = 0;        // buffer: the DEFINE_GLOBAL arg; variable: its position in ProgramSpec::vars
};

struct ProgramSpec {
  std::string name;  // the kernel's function name (a C identifier, KernelInfo.name)
  std::string src;   // the rendered source, exactly as the renderer printed it
  std::string device;
  UOp ast;  // the base ast (the method cache key)
  std::vector<UOp> uops;
  int64_t mem_estimate = 0;

  // filled in from uops by from_uops (tinygrad's __post_init__)
  std::optional<LaunchSize> global_size, local_size;
  std::array<UOp, 3> global_sym;    // a symbolic global size's expression (global_size holds its largest value)
  std::vector<UOp> vars;            // DEFINE_VARs, sorted by arg: the order of the runtime's var values
  std::vector<int64_t> globals;     // DEFINE_GLOBAL args, in uop order
  std::vector<int64_t> outs, ins;   // buffers stored to / loaded from, sorted and deduplicated
  std::vector<KernelParam> params;  // the kernel's signature, in order
  Estimates estimates;              // from the uops, ignoring indexing; mem = mem_estimate

  // what the Kernel knew, for a device's build (set by the engine)
  int64_t first_reduce = 0;  // the kernel's output axes: loops over them may be shared across cores
  bool vector_alus = false;  // written with vector ALUs (a CPU vector tile, devectorize 0)

  static ProgramSpec from_uops(std::string name, std::string src, std::string device, UOp ast, std::vector<UOp> uops,
                               std::optional<LaunchSize> global_size = LaunchSize{1, 1, 1},
                               std::optional<LaunchSize> local_size = LaunchSize{1, 1, 1}, int64_t mem_estimate = 0);
  // the global size with the Variables at their values (tinygrad's launch_dims)
  std::optional<LaunchSize> launch_global(const VarVals& vars) const;
};

// the parameters of a kernel, in signature order (DEFINE_GLOBAL and DEFINE_VAR as they come in the uops)
std::vector<KernelParam> kernel_params(const std::vector<UOp>& uops);
void set_var_indices(std::vector<KernelParam>& params);  // a variable's index: its rank by name (ProgramSpec::vars)

// One tensor core: D = A * B + C over a warp, A (M x K), B (K x N), C and D (M x N) (tinygrad's TensorCore).
struct TensorCore {
  std::array<int, 3> dims;                 // N, M, K
  int threads;                             // the threads that make up the warp
  std::array<int, 3> elements_per_thread;  // per thread, of A, B and C
  DType dtype_in, dtype_out;               // A and B, C and D
  // the kernel opts that lay the warp out, in order: "u<d>" upcasts dim d (0: N, 1: M) by 2, "l<d>" makes it local
  std::vector<std::string> opts;
  // per input (A, B), the (local, upcast) permutation that puts each thread's elements where the instruction wants
  // them; empty when the input needs none
  std::array<std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>>, 2> swizzle;

  int reduce_axes() const;                       // log2(K) unrolls of 2 of the reduce dim
  std::vector<std::string> upcast_opts() const;  // get_upcast_axes: the "u" opts
  std::vector<std::string> local_opts() const;   // get_local_axes: the "l" opts
  std::string str() const;                       // WMMA_8_16_16_half_float
};

// What the codegen and the Kernel opts read about a target (tinygrad's Renderer class attributes): a plain value,
// so a Kernel (and its copies in the heuristic and BEAM) does not hold on to the renderer.
struct RenderOpts {
  std::string device;  // "" for the generic Renderer(), "CPU" for clang
  std::string suffix;
  bool supports_float4 = true;  // loads/stores may be grouped into float4/half4 ...
  bool has_local = true;        // global/local dims become SPECIAL, else RANGE loops
  bool has_shared = true;
  // (x, y, z) order, as the max_sizes argument of get_grouped_dims; nullopt: no limit (no such dims)
  std::optional<std::vector<int64_t>> global_max = std::vector<int64_t>(3, 0x8FFFFFFF);
  std::optional<std::vector<int64_t>> local_max = std::vector<int64_t>(3, 0x8FFFFFFF);
  int64_t shared_max = 32768;
  // the most one UPCAST may take (tinygrad's 16; its DSP takes more). The CPU takes 32: the vector tiles' lane axis
  // spans two AVX-512 registers (codegen/cpu_tiles.cpp)
  int64_t upcast_max = 16;
  // the float lanes of the target's vector register tiles (its vector registers: codegen/cpu_tiles.h); 0: it takes
  // none, its kernels get the reference's opts (GPUs, PYTHON). The CPU devices set it from CPU_ARCH
  int simd_lanes = 0;
  // the threads that share a kernel's outermost loop (the CPU devices' CPU_THREADS; THREAD opts); 0: none
  int threads = 0;
  OpSet code_for_op;  // ALU ops rendered natively (the keys of tinygrad's code_for_op); the rest get decomposed
  const PatternMatcher<UOp>* pre_matcher = nullptr;    // run by the codegen before the final rewrite
  const PatternMatcher<UOp>* extra_matcher = nullptr;  // appended to the codegen's final rewrite
  // the target's rewrites of a tensor graph's reduces before kernelize cuts it into kernels (the CPU's matmul packing,
  // runtime/cpu_kernelize.h): tried on each REDUCE_AXIS of this device, in kernelize's simplification
  const PatternMatcher<UOp>* kernelize_matcher = nullptr;
  std::vector<TensorCore> tensor_cores;  // in the order TC's tc_select counts them
  // the device's compiler vectorizes plain loops itself (clang/gcc -O2; not our light LLVM pipeline)
  bool loop_vectorizer = false;
  // the renderer makes a sum of four 8-bit integer products one lane of a dot-product instruction (the ClangRenderer's
  // helper, renderer/cpu_dot4.cpp): the CPU tile of a packed int8 weight sums its blocks as integers only there (the
  // same vectors' products as plain IR took LLVM 18 s a kernel to compile)
  bool dot_products = false;

  static const RenderOpts& generic();  // Renderer(): has_local, no native ops, no matchers
  static const RenderOpts& cpu();      // the ClangRenderer's
};

class Renderer : public RenderOpts {
 public:
  Renderer() = default;
  Renderer(const Renderer& o) : RenderOpts(o) {}
  Renderer& operator=(const Renderer& o) {
    RenderOpts::operator=(o);
    return *this;
  }
  virtual ~Renderer() = default;

  virtual std::string render(const std::vector<UOp>& uops) = 0;
  // A renderer holds one kernel's state while it renders it: whoever may render from several threads (the kernels of
  // a schedule compile in parallel) holds this lock around render() and a device's render_threaded()
  std::mutex mu;
};

// the tiles' register budget in float lanes: the target's (RenderOpts::simd_lanes, set by the CPU devices from
// CPU_ARCH: 256 = 16 of the 32 AVX-512 registers; 128 = all 16 of AVX2's, whose 8x16 tile spills a little but keeps
// more multiply-adds per load than a 4x16 one, which measured slower (x86-64-v3 on a Zen 4: 1024^2 sgemm 90 against
// 64-93 GFLOP/s, 2048^2 70 against 37); 64 for SSE); 0 where it takes none;
// CPU_TILE_LANES=64, 128 or 256 overrides it
int cpu_tile_lanes(const RenderOpts& opts);

// ours: on targets with vector register tiles (the CPU), loads of 1- and 2-byte integers and of halves group into
// vectors of up to a register's width at any address (a quantized weight's blocks of 18 or 34 bytes; the 16 rows'
// scales of a packed int8 weight, one vcvtph2ps where they were four-half loads put together by word inserts), so
// their vector types are unaligned
bool unaligned_vector_loads(const RenderOpts& opts, DType scalar);

// ours: the most lanes of `scalar` one CPU vector register holds (simd_lanes / 4 bytes: 16 floats on AVX-512, 8 on
// AVX2); 0 on a target without tiles. float32 loads and stores fold up to it where the index divides the width
int cpu_register_width(const RenderOpts& opts, DType scalar);

// whether the renderer's type for the vector `vec` assumes only its scalar's alignment: the unaligned loads above, and
// float32 vectors wider than 4 up to a register's width (a CPU vector tile's loads and stores: a weight mapped from a
// GGUF file starts 32 bytes aligned, not at a 64-byte register's)
bool unaligned_vector_type(const RenderOpts& opts, DType vec);

}  // namespace tg
