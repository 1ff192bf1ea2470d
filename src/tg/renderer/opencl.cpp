// OpenCLRenderer (tinygrad's renderer/cstyle.py OpenCLRenderer): the C-style language with OpenCL's qualifiers,
// work-item functions and as_<type> bitcasts
#include <algorithm>

#include "tg/renderer/cstyle.h"

namespace tg {

using R = CStyleLanguage;  // the rules' ctx: the renderer

// *** OpenCLRenderer ***

static const PatternMatcher<UOp>& opencl_extra_matcher() {
  static const PatternMatcher<UOp> pm = software_bf16() + extra_pm();
  return pm;
}

OpenCLRenderer::OpenCLRenderer() {
  device = "GPU";
  kernel_typedef = "__kernel void";
  buffer_prefix = "__global ";
  smem_align = "__attribute__ ((aligned (16))) ";
  smem_prefix = "__local ";
  barrier = "barrier(CLK_LOCAL_MEM_FENCE);";
  float4 = "(float4)";
  // NOTE: the reference has no bfloat16 on OpenCL; here it is stored as ushort and computed in float
  extra_matcher = &opencl_extra_matcher();
  type_map = {{dtypes::int8, "char"},     {dtypes::uint8, "uchar"},  {dtypes::uint32, "uint"},
              {dtypes::uint16, "ushort"}, {dtypes::uint64, "ulong"}, {dtypes::bfloat16, "ushort"}};
}

Str OpenCLRenderer::code_for_workitem(char kind, const std::string& dim) const {
  switch (kind) {
    case 'g': return cat("get_group_id(", dim, ")");
    case 'l': return cat("get_local_id(", dim, ")");
    case 'i': return cat("get_global_id(", dim, ")");
    default: return std::nullopt;
  }
}

const StringRewrite& OpenCLRenderer::string_rewrite() const {
  static const StringRewrite pm =
      StringRewrite{
          {op(Ops::BITCAST).named("x"),
           [](M m, R& ctx) -> Str {  // as_float(v)
             UOp x = m["x"];
             return cat("as_", ctx.render_dtype(x.dtype()), "(", ctx[x.src(0)], ")");
           }},
      } +
      base_rewrite();
  return pm;
}

std::string OpenCLRenderer::render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                                          const std::vector<KernelParam>& bufs, const std::vector<UOp>& uops,
                                          const std::optional<std::vector<std::string>>& prefix) const {
  bool half = std::any_of(uops.begin(), uops.end(), [](const UOp& u) { return u.dtype().base() == dtypes::half; });
  if (!half) return CStyleLanguage::render_kernel(function_name, kernel, bufs, uops, prefix);
  std::vector<std::string> pre{"#pragma OPENCL EXTENSION cl_khr_fp16 : enable"};
  if (prefix) pre.insert(pre.end(), prefix->begin(), prefix->end());
  return CStyleLanguage::render_kernel(function_name, kernel, bufs, uops, pre);
}

}  // namespace tg
