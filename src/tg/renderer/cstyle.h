#pragma once
// CStyleLanguage and ClangRenderer (tinygrad's renderer/cstyle.py). Rendering is a walk over the linearized uops in
// order: each uop is named (val0, alu0, acc0, ridx0, ...), then rendered by the first rule of string_rewrite() that
// matches, and either inlined into its users or written out as a line of the kernel body.
// OpenCLRenderer and CUDARenderer, declared here too, are defined in opencl.cpp and cuda.cpp.
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tg/renderer/renderer.h"

namespace tg {

using Str = std::optional<std::string>;
class CStyleLanguage;
using StringRewrite = PatternMatcher<Str, CStyleLanguage>;

const StringRewrite& base_rewrite();    // uop -> C text, shared by every C-like language
const PatternMatcher<UOp>& extra_pm();  // uop -> uop rewrites every C-like language needs before rendering
const PatternMatcher<UOp>& clang_extra_matcher();
// A sum of four GEPs of one int32 product vector, lanes k, k+4, ... (the devectorizer's grouped integer products),
// whose factors fit 8 bits: a CUSTOM call of the ClangRenderer's dot-product helper (cpu_dot4.cpp). nullopt otherwise
std::optional<UOp> clang_dot4(const UOp& root);  // ClangRenderer's: double->half via float, scalar SQRT, extra_pm
// A sum of the slices of one such call's lanes (and other terms): one call of a helper that accumulates the slices in
// the dot-product instructions (vpdpbusd's first operand), the other terms its start. nullopt otherwise
std::optional<UOp> clang_dot4_sum(const UOp& root);
// the vector types the dot helpers of these uops use (a sum's helper: the whole product's, which no uop may have)
std::vector<DType> dot4_dtypes(const std::vector<UOp>& uops);
// bfloat16 in software: stored as its 16 bits, computed in float, casts rounding to nearest even (for targets
// without bf16 arithmetic: clang 14's C on x86, LLVM IR without compiler-rt's __truncsfbf2)
const PatternMatcher<UOp>& software_bf16();
std::string strip_parens(const std::string& s);  // "(a+b)" -> "a+b", but "(a)+(b)" stays (helpers.strip_parens)
// the value dtypes of the uops (not pointers or images), deduplicated in order (tinygrad's uops_to_dtypes)
std::vector<DType> uops_to_dtypes(const std::vector<UOp>& uops);

class CStyleLanguage : public Renderer {
 public:
  CStyleLanguage();

  // *** language options (tinygrad's class attributes) ***
  std::string kernel_typedef = "void";  // "{launch_bounds}" in it is replaced by the product of the local sizes
  std::string buffer_prefix, buffer_suffix, smem_align, smem_prefix;
  bool smem_prefix_for_cast = true;
  std::string arg_int_prefix = "const int";
  std::string barrier;
  std::vector<std::string> extra_args;
  std::optional<std::string> float4;  // the vector constructor, "(float4)"; "float4" in it becomes the vector type
  std::pair<std::string, std::string> float4_style = {"(", ")"};
  int gep_arr_threshold = 4;  // vectors wider than this are indexed as v[i], narrower ones as v.x
  std::vector<std::pair<DType, std::string>> type_map;  // C names that differ from DType::name()
  std::string infinity = "INFINITY", nan = "NAN";

  // code_for_op[op](*operands, dtype): nullopt when op is not in code_for_op
  virtual Str render_op(Ops op, const std::vector<std::string>& operands, DType dtype) const;
  // code_for_workitem[kind](dim), kind is 'g', 'l' or 'i': nullopt when the language has no such index
  virtual Str code_for_workitem(char kind, const std::string& dim) const;
  virtual const StringRewrite& string_rewrite() const { return base_rewrite(); }

  virtual std::string render_cast(DType dt, const std::string& val) const;   // (float)(val)
  virtual std::string render_dtype(DType dt, bool is_mutable = true) const;  // float, float4, float*
  virtual std::string render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                                    const std::vector<KernelParam>& bufs, const std::vector<UOp>& uops,
                                    const std::optional<std::vector<std::string>>& prefix = std::nullopt) const;

  // tinygrad's _render: (name, body lines, parameters)
  struct Rendered {
    std::string name;
    std::vector<std::string> kernel;
    std::vector<KernelParam> bufs;
  };
  Rendered render_uops(const std::vector<UOp>& uops);
  std::string render(const std::vector<UOp>& uops) override;

  // r[u]: the variable name or inline text of a uop rendered earlier in this render() (for rules)
  const std::string& operator[](const UOp& u) const;
  bool rendering_threaded() const { return split_range_ != nullptr; }
  // an accumulator's update (acc0 = (acc0+val0);) in a kernel whose reduces may be reordered
  // (Lowering::reassociate_reduces): as it is here; clang's gets the permission its loop vectorizer needs
  virtual std::string render_reassociated(const std::string& statement) const { return statement; }
  bool reassociating() const { return reassociate_; }

 protected:
  const UOpNode* split_range_ = nullptr;  // set while rendering ClangRenderer::render_threaded

 private:
  std::unordered_map<const UOpNode*, std::string> r_;
  bool reassociate_ = false;  // this render's kernel's Lowering::reassociate_reduces
};

class ClangRenderer : public CStyleLanguage {
 public:
  ClangRenderer();
  Str render_op(Ops op, const std::vector<std::string>& operands, DType dtype) const override;
  // { _Pragma("clang fp reassociate(on)") acc0 = (acc0+val0); }: that add alone may be reordered
  std::string render_reassociated(const std::string& statement) const override;
  // typedef float float4 __attribute__((aligned(16),vector_size(16)));
  std::string render_vector_prefix(DType dt) const;
  std::vector<std::string> render_defines(const std::vector<UOp>& uops) const;
  // the helpers clang_dot4's CUSTOMs call (cpu_dot4.cpp), one per name
  std::vector<std::string> render_dot4_defines(const std::vector<UOp>& uops) const;
  std::string render_dot4(const std::string& name, int64_t n) const;
  std::string render_dot4_sum(const std::string& name, int64_t n, int64_t m) const;
  std::string render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                            const std::vector<KernelParam>& bufs, const std::vector<UOp>& uops,
                            const std::optional<std::vector<std::string>>& prefix = std::nullopt) const override;

  // The C text appended to the source before compiling it, never printed: one entry point of one fixed signature,
  //   void tg_entry_NAME(void** bufs, const long long* vars) { NAME((float*)bufs[0], (int)vars[0]); }
  // Buffers come in signature order (bufs[k] is the k-th buffer parameter, as tinygrad passes them positionally);
  // variables come in ProgramSpec::vars order (sorted), as tinygrad passes var values.
  // threaded (for render_threaded's kernel): also
  //   void tg_entry_threads_NAME(void** bufs, const long long* vars, int core, int ncores)
  // and tg_entry_NAME runs the whole loop (core 0 of 1).
  std::string entry_shim(const std::string& function_name, const std::vector<KernelParam>& params,
                         bool threaded = false) const;

  // *** CPU threads (never printed: DEBUG shows render()'s source, as the reference renders it) ***
  // The outermost loop of a linearized kernel when its iterations can run on separate cores: a RANGE of a global axis
  // (arg < global_axes), with nothing but pure ops and loads of buffers the kernel does not write before it, and
  // nothing after it. nullopt when the kernel has no such loop.
  static std::optional<UOp> thread_split_range(const std::vector<UOp>& uops, int64_t global_axes);
  // the kernel as render() writes it, with two more int parameters (tg_core, tg_ncores) and split_range running only
  // iterations [N*tg_core/tg_ncores, N*(tg_core+1)/tg_ncores) of its N
  std::string render_threaded(const std::vector<UOp>& uops, const UOp& split_range);
};

}  // namespace tg

namespace tg {

// OpenCL C (tinygrad's OpenCLRenderer): __kernel, __global/__local, barrier(), get_group_id/get_local_id, as_T()
// bitcasts, half through cl_khr_fp16
class OpenCLRenderer : public CStyleLanguage {
 public:
  OpenCLRenderer();
  Str code_for_workitem(char kind, const std::string& dim) const override;
  const StringRewrite& string_rewrite() const override;
  std::string render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                            const std::vector<KernelParam>& bufs, const std::vector<UOp>& uops,
                            const std::optional<std::vector<std::string>>& prefix = std::nullopt) const override;
};

// CUDA C for NVRTC (tinygrad's CUDARenderer): extern "C" __global__ with __launch_bounds__, __shared__,
// __syncthreads(), blockIdx/threadIdx, half (cuda_fp16.h) and nv_bfloat16 (cuda_bf16.h) with their h* functions,
// structs for half4/half8 vectors. arch: "sm_90"
class CUDARenderer : public CStyleLanguage {
 public:
  explicit CUDARenderer(std::string arch);
  Str render_op(Ops op, const std::vector<std::string>& operands, DType dtype) const override;
  Str code_for_workitem(char kind, const std::string& dim) const override;
  std::string render_vector_prefix(DType dt) const;  // struct __align__(8) half4 { half x, y, z, w; }; make_half4
  std::string render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                            const std::vector<KernelParam>& bufs, const std::vector<UOp>& uops,
                            const std::optional<std::vector<std::string>>& prefix = std::nullopt) const override;
  static std::vector<TensorCore> tc_sm80();  // the sm_80 tensor cores (the PYTHON device's EMULATE_CUDA)
  const std::string arch;
};

}  // namespace tg
