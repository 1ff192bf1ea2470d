// CUDARenderer (tinygrad's renderer/cstyle.py CUDARenderer): CUDA C, its half and bfloat16 functions, and the
// tensor cores as mma.sync device functions
#include <algorithm>
#include <array>
#include <charconv>

#include "tg/helpers/knobs.h"
#include "tg/renderer/cstyle.h"
#include "tg/uop/wmma_arg.h"

namespace tg {

// *** CUDARenderer ***

// the mma.sync shapes with M=16 N=8 (PTX ISA: warp-level matrix multiply-accumulate), as the reference lists them
static std::vector<TensorCore> cuda_tensor_cores(int sm) {
  using Perm = std::pair<std::vector<int64_t>, std::vector<int64_t>>;
  const std::vector<std::string> tc_opts = {"u0", "l0", "l0", "l1", "l1", "l1", "u1"};
  std::vector<TensorCore> ret;
  auto add = [&](std::array<int, 3> dims, std::array<int, 3> ept, DType in, DType out, Perm a, Perm b) {
    ret.push_back({dims, 32, ept, in, out, tc_opts, {a, b}});
  };
  if (sm >= 80)
    for (auto [in, out] :
         {std::pair{dtypes::half, dtypes::float32}, {dtypes::bfloat16, dtypes::float32}, {dtypes::half, dtypes::half}})
      add({8, 16, 16}, {8, 4, 4}, in, out, {{6, 7, 2, 3, 4}, {0, 1, 9, 5, 10, 8}},
          {{6, 7, 9, 0, 1}, {2, 3, 4, 10, 5, 8}});
  if (sm >= 75) {
    for (auto [in, out] : {std::pair{dtypes::half, dtypes::float32}, {dtypes::half, dtypes::half}})
      add({8, 16, 8}, {4, 2, 4}, in, out, {{6, 7, 2, 3, 4}, {0, 1, 8, 5, 9}}, {{6, 7, 8, 0, 1}, {2, 3, 4, 9, 5}});
    if (sm >= 80 && ALLOW_TF32)
      add({8, 16, 8}, {4, 2, 4}, dtypes::float32, dtypes::float32, {{5, 6, 2, 3, 4}, {0, 1, 8, 9, 7}},
          {{5, 6, 8, 0, 1}, {2, 3, 4, 9, 7}});
  }
  return ret;
}

std::vector<TensorCore> CUDARenderer::tc_sm80() { return cuda_tensor_cores(80); }

CUDARenderer::CUDARenderer(std::string arch_) : arch(std::move(arch_)) {
  device = "CUDA";
  global_max = std::vector<int64_t>{2147483647, 65535, 65535};
  local_max = std::vector<int64_t>{1024, 1024, 64};
  shared_max = 49152;
  {  // sm_XX: tensor cores from sm_75 (turing), more shapes and dtypes from sm_80 (ampere)
    int sm = 0;
    if (arch.rfind("sm_", 0) == 0) std::from_chars(arch.data() + 3, arch.data() + arch.size(), sm);
    tensor_cores = cuda_tensor_cores(sm);
  }
  kernel_typedef = "extern \"C\" __global__ void __launch_bounds__({launch_bounds})";
  smem_prefix = "__shared__ __align__(16) ";
  smem_prefix_for_cast = false;
  barrier = "__syncthreads();";
  float4 = "make_float4";
  gep_arr_threshold = 8;
  type_map = {{dtypes::bfloat16, "nv_bfloat16"}};
}

Str CUDARenderer::render_op(Ops op, const std::vector<std::string>& a, DType dtype) const {
  const bool h = dtype == dtypes::half || dtype == dtypes::bfloat16;  // half and bfloat16 have h* functions
  if (h) {
    switch (op) {
      case Ops::SIN: return cat("hsin(", a[0], ")");
      case Ops::LOG2: return cat("hlog2(", a[0], ")");
      case Ops::EXP2: return cat("hexp2(", a[0], ")");
      case Ops::SQRT: return cat("hsqrt(", a[0], ")");
      case Ops::RECIP: return cat("hrcp(", a[0], ")");
      default: break;
    }
  }
  return CStyleLanguage::render_op(op, a, dtype);
}

Str CUDARenderer::code_for_workitem(char kind, const std::string& dim) const {
  const char d = static_cast<char>('x' + std::stoi(dim));
  switch (kind) {
    case 'g': return cat("blockIdx.", d);
    case 'l': return cat("threadIdx.", d);
    case 'i': return cat("(blockIdx.", d, "*blockDim.", d, "+threadIdx.", d, ")");
    default: return std::nullopt;
  }
}

std::string CUDARenderer::render_vector_prefix(DType dt) const {
  static constexpr std::string_view nms = "xyzwabcdefghijkl";
  const std::string vec = render_dtype(dt), scal = render_dtype(dt.scalar());
  std::vector<std::string> elems, header;
  for (int64_t i = 0; i < dt.count(); i++) {
    elems.emplace_back(1, nms[static_cast<size_t>(i)]);
    header.push_back(cat(scal, " ", nms[static_cast<size_t>(i)]));
  }
  const std::string e = join(elems, ", ");
  return cat("struct __align__(", dt.itemsize(), ") ", vec, " { ", scal, " ", e, "; }; __device__ ", vec, " make_", vec,
             "(", join(header, ", "), ") { ", vec, " r={", e, "}; return r; }");
}

std::string CUDARenderer::render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                                        const std::vector<KernelParam>& bufs, const std::vector<UOp>& uops,
                                        const std::optional<std::vector<std::string>>&) const {
  std::vector<std::string> prefix{"#define INFINITY (__int_as_float(0x7f800000))",
                                  "#define NAN (__int_as_float(0x7fffffff))"};
  const std::vector<DType> used = uops_to_dtypes(uops);
  auto uses = [&](DType s) { return std::any_of(used.begin(), used.end(), [&](DType d) { return d.scalar() == s; }); };
  if (uses(dtypes::half)) prefix.emplace_back("#include <cuda_fp16.h>");
  if (uses(dtypes::bfloat16)) prefix.emplace_back("#include <cuda_bf16.h>");
  for (DType dt : used)
    if ((dt.count() == 4 || dt.count() == 8) && (dt.scalar() == dtypes::half || dt.scalar() == dtypes::bfloat16))
      prefix.push_back(render_vector_prefix(dt));
  // one device function per tensor core shape: mma.sync with the operands packed in 32-bit registers, {c} {a} {b} {c}
  std::vector<const WmmaArg*> seen;
  for (const UOp& u : uops) {
    if (u.op() != Ops::WMMA) continue;
    const WmmaArg& w = as_wmma_arg(u.arg());
    if (std::any_of(seen.begin(), seen.end(), [&](const WmmaArg* s) { return s->equals(w); })) continue;
    seen.push_back(&w);
    auto ptx_in = [](DType d) { return d == dtypes::float32 ? "tf32" : d == dtypes::half ? "f16" : "bf16"; };
    auto ptx_out = [](DType d) { return d == dtypes::float32 ? "f32" : "f16"; };
    const std::array<DType, 3> dts{w.dtype_in, w.dtype_in, w.dtype_out};
    std::array<std::string, 3> vt;
    std::array<int64_t, 3> nregs{};  // the 4-byte registers of a, b and c
    for (int i = 0; i < 3; i++) {
      int64_t sz = w.upcast_size(i);
      vt[static_cast<size_t>(i)] = render_dtype(dts[static_cast<size_t>(i)].vec(static_cast<int>(sz)));
      nregs[static_cast<size_t>(i)] = sz * dts[static_cast<size_t>(i)].itemsize() / 4;
    }
    auto regs = [](int64_t from, int64_t n) {
      std::vector<std::string> r;
      for (int64_t i = from; i < from + n; i++) r.push_back(cat("%", i));
      return "{" + join(r, ", ") + "}";
    };
    auto constraints = [](const char* c, const char* arr, int64_t n) {
      std::vector<std::string> r;
      for (int64_t i = 0; i < n; i++) r.push_back(cat("\"", c, "\"(", arr, "[", i, "])"));
      return join(r, ", ");
    };
    const int64_t na = nregs[0], nb = nregs[1], nc = nregs[2];
    prefix.push_back(
        cat("__device__ ", vt[2], " __", w.name, "(", vt[0], " a, ", vt[1], " b, ", vt[2], " c){\n",
            "  int *a_pk = (int *)(&a), *b_pk = (int *)(&b), *c_pk = (int *)(&c);\n", "  asm(\"mma.sync.aligned.m",
            w.dims[1], "n", w.dims[0], "k", w.dims[2], ".row.col.", ptx_out(w.dtype_out), ".", ptx_in(w.dtype_in), ".",
            ptx_in(w.dtype_in), ".", ptx_out(w.dtype_out), "\"\n", "      \"", regs(0, nc), ", ", regs(nc, na), ",\"\n",
            "      \"", regs(nc + na, nb), ", ", regs(0, nc), ";\"\n", "    : ", constraints("+r", "c_pk", nc), "\n",
            "    : ", constraints("r", "a_pk", na), ", ", constraints("r", "b_pk", nb), ");\n", "  return c;\n}"));
  }
  return CStyleLanguage::render_kernel(function_name, kernel, bufs, uops, prefix);
}

}  // namespace tg
