#include "tg/renderer/renderer.h"

#include <algorithm>
#include <bit>
#include <unordered_set>

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/uop/wmma_arg.h"

namespace tg {

// *** Estimates ***

static int64_t range_size(const UOp& end) {  // NOTE: symbolic ends count with their upper bound
  return end.op() == Ops::CONST ? as_int(end.const_arg()) : as_int(end.vmax());
}

// *** TensorCore ***

int TensorCore::reduce_axes() const { return std::countr_zero(static_cast<unsigned>(dims[2])); }  // K is 2^n
static std::vector<std::string> opts_of_kind(const std::vector<std::string>& opts, char kind) {
  std::vector<std::string> r;
  for (const std::string& o : opts)
    if (o[0] == kind) r.push_back(o);
  return r;
}
std::vector<std::string> TensorCore::upcast_opts() const { return opts_of_kind(opts, 'u'); }
std::vector<std::string> TensorCore::local_opts() const { return opts_of_kind(opts, 'l'); }
std::string TensorCore::str() const {
  return cat("WMMA_", dims[0], "_", dims[1], "_", dims[2], "_", dtype_in.name(), "_", dtype_out.name());
}

Estimates Estimates::from_uops(const std::vector<UOp>& uops, bool ignore_indexing) {
  std::unordered_set<const UOpNode*> dont_count;
  auto skip_all = [&](const UOp& root) {
    for (const UOp& x : root.toposort()) dont_count.insert(x.get());
  };
  if (ignore_indexing) {
    for (const UOp& u : uops) {
      if (u.op() == Ops::LOAD || u.op() == Ops::STORE) {
        skip_all(u.src(0));
        if (u.src().size() > 2) skip_all(u.src(2));
      } else if (u.op() == Ops::IF) {
        skip_all(u.src(0));
      }
    }
  }
  int64_t flops = 0, lds = 0, mults = 1;
  std::vector<int64_t> mult_stack;
  for (const UOp& u : uops) {
    if (u.op() == Ops::RANGE) {
      mult_stack.push_back(mults);
      mults *= range_size(u.src(0));
    } else if (u.op() == Ops::ENDRANGE) {
      mults = mult_stack.back();
      mult_stack.pop_back();
    } else if (u.op() == Ops::SPECIAL) {
      mults *= u.arg<SpecialArg>().size;  // SPECIALs are never ended
    } else if (u.op() == Ops::LOAD) {
      lds += u.dtype().itemsize() * mults;
    } else if (u.op() == Ops::STORE) {
      lds += u.src(1).dtype().itemsize() * mults;
    } else if (GroupOp::ALU.has(u.op()) && !dont_count.contains(u.get())) {
      flops += mults * (u.op() == Ops::MULACC ? 2 : 1) * u.dtype().count();
    } else if (u.op() == Ops::WMMA && !dont_count.contains(u.get())) {
      const WmmaArg& w = as_wmma_arg(u.arg());
      flops += 2 * int64_t{w.dims[0]} * w.dims[1] * w.dims[2] / w.threads * mults;
    }
  }
  return {flops, lds, lds};  // TODO: properly track memory, lds is always a high estimate
}

// *** ProgramSpec ***

void set_var_indices(std::vector<KernelParam>& params) {
  std::vector<std::string> var_names;  // sorted: a var's index is its position in ProgramSpec::vars
  for (const KernelParam& p : params)
    if (!p.is_buffer) var_names.push_back(p.name);
  std::sort(var_names.begin(), var_names.end());
  for (KernelParam& p : params)
    if (!p.is_buffer) p.index = std::find(var_names.begin(), var_names.end(), p.name) - var_names.begin();
}

std::vector<KernelParam> kernel_params(const std::vector<UOp>& uops) {
  std::vector<KernelParam> params;
  for (const UOp& u : uops) {
    if (u.op() == Ops::DEFINE_GLOBAL)
      params.push_back({cat("data", as_int(u.arg<ConstValue>())), u.dtype(), true, false, as_int(u.arg<ConstValue>())});
    if (u.op() == Ops::DEFINE_VAR) params.push_back({u.arg<VarArg>().name, u.dtype(), false, false, 0});
    if (u.op() == Ops::STORE) {  // mark buffers that we store to writable
      for (const UOp& up : u.src(0).toposort()) {
        if (up.op() != Ops::DEFINE_GLOBAL) continue;
        for (KernelParam& p : params)
          if (p.is_buffer && p.index == as_int(up.arg<ConstValue>())) p.is_mutable = true;
      }
    }
  }
  set_var_indices(params);
  return params;
}

static bool var_less(const UOp& a, const UOp& b) {  // sorted(key=lambda v: v.arg): (name, min, max)
  const VarArg &x = a.arg<VarArg>(), &y = b.arg<VarArg>();
  if (x.name != y.name) return x.name < y.name;
  if (!const_eq_numeric(x.min, y.min)) return as_double(x.min) < as_double(y.min);
  return as_double(x.max) < as_double(y.max);
}

static void sorted_dedup(std::vector<int64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

ProgramSpec ProgramSpec::from_uops(std::string name, std::string src, std::string device, UOp ast,
                                   std::vector<UOp> uops, std::optional<LaunchSize> global_size,
                                   std::optional<LaunchSize> local_size, int64_t mem_estimate) {
  ProgramSpec p;
  p.name = std::move(name), p.src = std::move(src), p.device = std::move(device), p.ast = std::move(ast);
  p.uops = std::move(uops), p.mem_estimate = mem_estimate, p.global_size = global_size, p.local_size = local_size;
  auto buffers_of = [](const UOp& root, std::vector<int64_t>& out) {
    for (const UOp& x : root.toposort())
      if (x.op() == Ops::DEFINE_GLOBAL) out.push_back(as_int(x.arg<ConstValue>()));
  };
  for (const UOp& u : p.uops) {  // a single pass through the uops
    if (u.op() == Ops::DEFINE_VAR) p.vars.push_back(u);
    if (u.op() == Ops::DEFINE_GLOBAL) p.globals.push_back(as_int(u.arg<ConstValue>()));
    if (u.op() == Ops::STORE) buffers_of(u.src(0), p.outs);
    if (u.op() == Ops::LOAD) buffers_of(u.src(0), p.ins);
    if (u.op() == Ops::SPECIAL) {
      // NOTE: local_size and global_size start at the base [1,1,1], passed in
      const SpecialArg& s = u.arg<SpecialArg>();
      if (s.name[0] == 'i') p.local_size = std::nullopt;
      std::optional<LaunchSize>& size = s.name[0] == 'l' ? p.local_size : p.global_size;
      if (size) (*size)[static_cast<size_t>(s.name.back() - '0')] = s.size;
      if (s.sym && s.name[0] != 'l') p.global_sym[static_cast<size_t>(s.name.back() - '0')] = special_size(u);
    }
  }
  std::sort(p.vars.begin(), p.vars.end(), var_less);
  sorted_dedup(p.outs);
  sorted_dedup(p.ins);
  p.params = kernel_params(p.uops);
  p.estimates = Estimates::from_uops(p.uops, true);
  p.estimates.mem = mem_estimate;
  return p;
}

std::optional<LaunchSize> ProgramSpec::launch_global(const VarVals& vars) const {
  std::optional<LaunchSize> ret = global_size;
  for (size_t d = 0; d < 3; d++)
    if (global_sym[d] && ret) (*ret)[d] = sym_infer(sint(global_sym[d]), vars);
  return ret;
}

int cpu_tile_lanes(const RenderOpts& opts) {
  if (opts.simd_lanes <= 0) return 0;  // the target takes no tiles
  if (int64_t v = CPU_TILE_LANES) {
    TG_CHECK(v == 64 || v == 128 || v == 256, "CPU_TILE_LANES=", v,
             ": the CPU tiles take 64 (SSE), 128 (AVX2) or 256 (AVX-512) lanes");
    return static_cast<int>(v);
  }
  return opts.simd_lanes;
}

bool unaligned_vector_loads(const RenderOpts& opts, DType scalar) {
  return opts.simd_lanes > 0 && ((dtypes::is_int(scalar) && scalar.itemsize() <= 2) || scalar == dtypes::float16);
}

int cpu_register_width(const RenderOpts& opts, DType scalar) {
  return opts.simd_lanes > 0 ? opts.simd_lanes / 4 / static_cast<int>(scalar.itemsize()) : 0;
}

bool unaligned_vector_type(const RenderOpts& opts, DType vec) {
  DType s = vec.scalar();
  if (unaligned_vector_loads(opts, s)) return true;
  return s == dtypes::float32 && vec.count() > 4 && vec.count() <= cpu_register_width(opts, s);
}

}  // namespace tg
