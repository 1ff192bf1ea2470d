#include "tg/runtime/ops_python.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "tg/helpers/knobs.h"
#include "tg/renderer/cstyle.h"
#include "tg/uop/uop.h"
#include "tg/uop/wmma_arg.h"

namespace tg {

// *** the renderer ***

PythonRenderer::PythonRenderer() {
  device = "PYTHON";
  has_local = true;
  has_shared = true;
  supports_float4 = true;
  // the ALUs exec_alu evaluates; the rest (THREEFRY, MAX, FDIV, POW ...) are decomposed by the codegen as for C
  code_for_op = {Ops::SQRT, Ops::RECIP, Ops::NEG,   Ops::EXP2,  Ops::LOG2,  Ops::SIN,   Ops::AND,
                 Ops::XOR,  Ops::OR,    Ops::ADD,   Ops::SUB,   Ops::MUL,   Ops::MOD,   Ops::IDIV,
                 Ops::SHR,  Ops::SHL,   Ops::CMPNE, Ops::CMPLT, Ops::WHERE, Ops::MULACC};
  // EMULATE_CUDA=1: kernels made for CUDA's (sm_80) tensor cores, their WMMAs run with the instruction's layout
  if (EMULATE_CUDA) device = "CUDA", tensor_cores = CUDARenderer::tc_sm80();
}

// *** the interpreter ***

namespace {

// a pointer value: which memory (a buffer or a DEFINE_LOCAL), which element, and whether the access is gated on
struct Ptr {
  int mem = -1;
  int64_t off = 0;
  bool gate = true;
};

struct Memory {
  uint8_t* data = nullptr;
  int64_t size = -1;  // elements; -1: unknown (an unsized pointer), not checked
  DType dtype;        // the element (scalar) dtype
};

// bfloat16 as the C renderers compute it: the float rounded to nearest even, NaN kept a NaN
double round_bf16(double x) {
  float f = static_cast<float>(x);
  if (std::isnan(f)) return x;
  uint32_t u = std::bit_cast<uint32_t>(f);
  u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u;
  return std::bit_cast<float>(u);
}

// a value into dtype d as a C cast does it; a float that no int of d holds (nan, inf, out of range) gives d's
// minimum for signed ints and 0 for unsigned ones (x86's answer), never undefined behaviour
ConstValue cast_value(const ConstValue& v, DType d) {
  DType s = d.scalar();
  if (s == dtypes::bfloat16) return round_bf16(as_double(v));
  if (dtypes::is_int(s))
    if (const double* f = std::get_if<double>(&v)) {
      const int bits = s.itemsize() * 8;
      const double lim = std::ldexp(1.0, dtypes::is_unsigned(s) ? bits : bits - 1);
      if (!std::isfinite(*f) || *f >= lim || *f <= (dtypes::is_unsigned(s) ? -1.0 : -lim - 1))
        return dtypes::is_unsigned(s) ? ConstValue(int64_t(0)) : dtypes::min(s);
    }
  return truncate(dtypes::as_const(v, s), s);
}

int lanes_of(DType d) { return d == dtypes::void_ ? 0 : d.is_ptr() ? d.vcount() : d.count(); }

}  // namespace

struct PythonProgram::Inst {
  UOp u;
  Ops op;
  DType dtype;
  std::vector<int> src;
  int lanes;       // values per thread (vector width; pointers: vcount)
  int jump = -1;   // RANGE: its ENDRANGE; ENDRANGE: its RANGE
  int param = -1;  // DEFINE_GLOBAL: which buffer; DEFINE_VAR: which value
};

PythonProgram::PythonProgram(std::string name_, const std::vector<UOp>& uops, const std::vector<UOp>& vars)
    : name(std::move(name_)) {
  std::unordered_map<const UOpNode*, int> pos;
  int globals = 0;
  for (const UOp& u : uops) {
    Inst in{u, u.op(), u.dtype(), {}, lanes_of(u.dtype())};
    // a DEFINE_ACC's ranges come after it: only its initial value is an operand
    const size_t nsrc = u.op() == Ops::DEFINE_ACC ? std::min<size_t>(1, u.src().size()) : u.src().size();
    for (size_t k = 0; k < nsrc; k++) {
      const UOp& s = u.src(k);
      auto it = pos.find(s.get());
      TG_CHECK(it != pos.end(), "PYTHON: ", name, ": ", u.op(), " uses a uop that is not in the program (", s.op(),
               ")");
      in.src.push_back(it->second);
    }
    if (in.op == Ops::DEFINE_GLOBAL) in.param = globals++;
    if (in.op == Ops::WMMA) {
      const WmmaArg& w = as_wmma_arg(u.arg());
      TG_CHECK_AS(NotImplementedError, w.device == "CUDA" && w.threads == 32 && w.dims[0] == 8 && w.dims[1] == 16,
                  "PYTHON: ", name, ": no model of the tensor core ", w.repr());
      TG_CHECK(in.src.size() == 3, "PYTHON: ", name, ": a WMMA takes (a, b, c), got ", in.src.size(), " sources");
      for (size_t k = 0; k < 3; k++)
        TG_CHECK(prog_[static_cast<size_t>(in.src[k])].lanes == w.upcast_size(static_cast<int>(k)), "PYTHON: ", name,
                 ": a WMMA operand of ", prog_[static_cast<size_t>(in.src[k])].lanes, " lanes where ", w.name,
                 " takes ", w.upcast_size(static_cast<int>(k)));
    }
    if (in.op == Ops::DEFINE_VAR) {
      auto it = std::find(vars.begin(), vars.end(), u);
      TG_CHECK(it != vars.end(), "PYTHON: ", name, ": variable ", u.arg<VarArg>().name, " is not a kernel parameter");
      in.param = static_cast<int>(it - vars.begin());
    }
    if (in.op == Ops::ENDRANGE) {
      TG_CHECK(in.src.size() == 1 && prog_[static_cast<size_t>(in.src[0])].op == Ops::RANGE, "PYTHON: ", name,
               ": an ENDRANGE must end a RANGE");
      in.jump = in.src[0];
      prog_[static_cast<size_t>(in.src[0])].jump = static_cast<int>(prog_.size());
    }
    static constexpr OpSet known =
        GroupOp::ALU | OpSet{Ops::CONST,      Ops::VCONST,    Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL, Ops::DEFINE_VAR,
                             Ops::DEFINE_ACC, Ops::SPECIAL,   Ops::RANGE,         Ops::ENDRANGE,     Ops::IF,
                             Ops::ENDIF,      Ops::BARRIER,   Ops::SINK,          Ops::NOOP,         Ops::INDEX,
                             Ops::LOAD,       Ops::STORE,     Ops::ASSIGN,        Ops::CAST,         Ops::BITCAST,
                             Ops::GEP,        Ops::VECTORIZE, Ops::CAT,           Ops::PTRCAT,       Ops::WMMA};
    TG_CHECK_AS(NotImplementedError, known.has(in.op), "PYTHON: ", name, ": the interpreter does not run ", in.op, " (",
                u.dtype().repr(), ")");
    pos.emplace(u.get(), static_cast<int>(prog_.size()));
    prog_.push_back(std::move(in));
  }
  for (const Inst& in : prog_)
    TG_CHECK(in.op != Ops::RANGE || in.jump >= 0, "PYTHON: ", name, ": a RANGE without its ENDRANGE");
}

namespace {
std::vector<UOp> program_vars(const std::vector<UOp>& uops) {
  std::vector<UOp> vars;
  for (const UOp& u : uops)
    if (u.op() == Ops::DEFINE_VAR) vars.push_back(u);
  return vars;
}
}  // namespace

PythonProgram::PythonProgram(std::string name_, const std::vector<UOp>& uops)
    : PythonProgram(std::move(name_), uops, program_vars(uops)) {}
PythonProgram::PythonProgram(std::string name_, std::string_view lib)
    : PythonProgram(name_, load_python_program(name_, lib)) {}

PythonProgram::~PythonProgram() = default;

std::optional<double> PythonProgram::call(std::span<const Opaque> bufs, std::span<const int64_t> vals, bool wait,
                                          Dims global_size, std::optional<Dims> local_size) {
  return run(bufs, {}, vals, wait, global_size, local_size);
}

std::optional<double> PythonProgram::run(std::span<void* const> bufs, std::span<const size_t> nbytes,
                                         std::span<const int64_t> vals, bool wait, Dims global_size,
                                         std::optional<Dims> local_size) {
  auto st = std::chrono::steady_clock::now();
  const Dims local = local_size.value_or(Dims{1, 1, 1});
  for (int d = 0; d < 3; d++)
    TG_CHECK(global_size[d] >= 1 && local[d] >= 1, "PYTHON: ", name, ": launch dims must be positive, got global ",
             global_size[d], " local ", local[d], " at dim ", d);
  const int64_t warp = local[0] * local[1] * local[2];
  const size_t n = prog_.size();
  auto at = [this](int i) -> const Inst& { return prog_[static_cast<size_t>(i)]; };

  // a kernel of a symbolic shape runs over buffers of other sizes than those it was made for (a TinyJit replay
  // with a new value): its accesses are not checked against the sizes in its pointer types
  bool symbolic = !vals.empty();
  for (const Inst& in : prog_) symbolic |= in.op == Ops::SPECIAL && in.u.arg<SpecialArg>().sym != nullptr;
  std::vector<Memory> mems;
  for (const Inst& in : prog_)
    if (in.op == Ops::DEFINE_GLOBAL) {
      const auto k = static_cast<size_t>(in.param);
      TG_CHECK_AS(IndexError, k < bufs.size(), "PYTHON: ", name, " takes more buffers than the ", bufs.size(),
                  " it was given");
      const DType e = in.dtype.base().scalar();
      const int64_t size = k < nbytes.size() ? static_cast<int64_t>(nbytes[k] / static_cast<size_t>(e.itemsize()))
                           : symbolic        ? -1
                                             : in.dtype.size();
      mems.push_back(Memory{static_cast<uint8_t*>(bufs[k]), size, e});
    }
  const size_t n_globals = mems.size();
  std::vector<std::vector<ConstValue>> V(n);  // V[i][t * lanes + j]: uop i's lane j on thread t
  std::vector<std::vector<Ptr>> P(n);         // the same, for pointer-valued uops
  std::vector<std::vector<uint8_t>> locals;   // this work-group's DEFINE_LOCAL memory
  std::vector<int64_t> loop(n, -1);           // a RANGE's current trip, -1 outside its loop
  std::vector<uint8_t> scratch;

  auto memory_at = [&](const Inst& in, const Ptr& p) -> uint8_t* {
    const Memory& m = mems.at(static_cast<size_t>(p.mem));
    TG_CHECK_AS(IndexError, p.off >= 0 && (m.size < 0 || p.off < m.size), "PYTHON: ", name, ": ", in.op,
                " out of bounds: element ", p.off, " of a buffer of ", m.size);
    return m.data + p.off * m.dtype.itemsize();
  };
  // operand k's lane j on thread t (a scalar operand broadcasts)
  auto val = [&](const Inst& in, size_t k, int64_t t, int j) -> const ConstValue& {
    const Inst& s = at(in.src[k]);
    return V[static_cast<size_t>(in.src[k])][static_cast<size_t>(t * s.lanes + (s.lanes == 1 ? 0 : j))];
  };
  auto ptr = [&](const Inst& in, size_t k, int64_t t, int j) -> Ptr {
    const Inst& s = at(in.src[k]);
    // a scalar pointer reaches consecutive elements; a vector of pointers has one per lane
    if (s.lanes == 1) {
      Ptr p = P[static_cast<size_t>(in.src[k])][static_cast<size_t>(t)];
      p.off += j;
      return p;
    }
    return P[static_cast<size_t>(in.src[k])][static_cast<size_t>(t * s.lanes + j)];
  };

  for (int64_t gz = 0; gz < global_size[2]; gz++)
    for (int64_t gy = 0; gy < global_size[1]; gy++)
      for (int64_t gx = 0; gx < global_size[0]; gx++) {
        const int64_t gid[3] = {gx, gy, gz};
        mems.resize(n_globals), locals.clear();
        std::fill(loop.begin(), loop.end(), -1);
        std::vector<std::vector<char>> masks{std::vector<char>(static_cast<size_t>(warp), 1)};
        for (size_t i = 0; i < n;) {
          const Inst& in = prog_[i];
          const auto L = static_cast<size_t>(in.lanes);
          const std::vector<char>& mask = masks.back();
          std::vector<ConstValue>& out = V[i];
          if (!in.dtype.is_ptr() && in.op != Ops::ASSIGN && in.op != Ops::RANGE) out.assign(warp * L, ConstValue());
          switch (in.op) {
            case Ops::SINK:
            case Ops::BARRIER:  // the work-group runs in lockstep: every thread is here
              break;
            case Ops::NOOP:
              if (!in.src.empty() && L > 0) out = V[static_cast<size_t>(in.src[0])];
              break;
            case Ops::CONST: std::fill(out.begin(), out.end(), truncate(in.u.arg<ConstValue>(), in.dtype)); break;
            case Ops::VCONST: {
              const Tuple& c = in.u.arg<Tuple>();
              TG_CHECK(c.size() == L, "PYTHON: VCONST of ", c.size(), " values for ", L, " lanes");
              for (int64_t t = 0; t < warp; t++)
                for (size_t j = 0; j < L; j++) out[t * L + j] = truncate(c[j], in.dtype);
              break;
            }
            case Ops::DEFINE_GLOBAL: P[i].assign(static_cast<size_t>(warp), Ptr{in.param, 0, true}); break;
            case Ops::DEFINE_LOCAL: {
              TG_CHECK(in.dtype.size() >= 0, "PYTHON: a DEFINE_LOCAL needs a size");
              DType e = in.dtype.base().scalar();
              locals.emplace_back(static_cast<size_t>(in.dtype.size() * e.itemsize()), uint8_t(0));
              mems.push_back(Memory{locals.back().data(), in.dtype.size(), e});
              P[i].assign(static_cast<size_t>(warp), Ptr{static_cast<int>(mems.size() - 1), 0, true});
              break;
            }
            case Ops::DEFINE_VAR:
              TG_CHECK(static_cast<size_t>(in.param) < vals.size(), "PYTHON: ", name, " needs a value for variable ",
                       in.u.arg<VarArg>().name);
              std::fill(out.begin(), out.end(), ConstValue(vals[static_cast<size_t>(in.param)]));
              break;
            case Ops::SPECIAL: {
              const SpecialArg& s = in.u.arg<SpecialArg>();
              const int d = s.name.back() - '0';
              TG_CHECK(d >= 0 && d < 3, "PYTHON: SPECIAL ", s.name, " has no dimension");
              for (int64_t t = 0; t < warp; t++) {
                const int64_t lid[3] = {t % local[0], (t / local[0]) % local[1], t / (local[0] * local[1])};
                out[t] = s.name[0] == 'l' ? lid[d] : s.name[0] == 'g' ? gid[d] : gid[d] * local[d] + lid[d];
              }
              break;
            }
            case Ops::RANGE: {
              const int64_t end = as_int(val(in, 0, 0, 0));
              for (int64_t t = 1; t < warp; t++)
                TG_CHECK(as_int(val(in, 0, t, 0)) == end, "PYTHON: ", name, ": a loop's end differs between threads");
              loop[i] = loop[i] < 0 ? 0 : loop[i] + 1;
              if (loop[i] >= end) {  // done (or never entered): past the ENDRANGE
                loop[i] = -1;
                i = static_cast<size_t>(in.jump) + 1;
                continue;
              }
              out.assign(warp, ConstValue(loop[i]));
              break;
            }
            case Ops::ENDRANGE: i = static_cast<size_t>(in.jump); continue;
            case Ops::IF: {
              std::vector<char> m = mask;
              for (int64_t t = 0; t < warp; t++) m[t] = m[t] && as_bool(val(in, 0, t, 0));
              masks.push_back(std::move(m));
              break;
            }
            case Ops::ENDIF:
              TG_CHECK(masks.size() > 1, "PYTHON: ", name, ": ENDIF without IF");
              masks.pop_back();
              break;
            case Ops::DEFINE_ACC:
              for (int64_t t = 0; t < warp; t++)
                for (size_t j = 0; j < L; j++) out[t * L + j] = val(in, 0, t, static_cast<int>(j));
              break;
            case Ops::ASSIGN: {
              std::vector<ConstValue>& acc = V[static_cast<size_t>(in.src[0])];
              for (int64_t t = 0; t < warp; t++)
                if (mask[t])
                  for (size_t j = 0; j < L; j++) acc[t * L + j] = val(in, 1, t, static_cast<int>(j));
              out = acc;
              break;
            }
            case Ops::INDEX: {
              if (!in.dtype.is_ptr()) throw Error(cat("PYTHON: ", name, ": an INDEX that is not a pointer"));
              std::vector<Ptr>& o = P[i];
              o.assign(warp * L, Ptr{});
              for (int64_t t = 0; t < warp; t++)
                for (size_t j = 0; j < L; j++) {
                  const int jj = static_cast<int>(j);
                  const int bl = at(in.src[0]).lanes;
                  Ptr p = P[static_cast<size_t>(in.src[0])][static_cast<size_t>(bl == 1 ? t : t * bl + jj)];
                  p.off += as_int(val(in, 1, t, jj));
                  if (in.src.size() > 2) p.gate = p.gate && as_bool(val(in, 2, t, jj));
                  o[t * L + j] = p;
                }
              break;
            }
            case Ops::PTRCAT: {
              std::vector<Ptr>& o = P[i];
              o.assign(warp * L, Ptr{});
              for (int64_t t = 0; t < warp; t++) {
                size_t j = 0;
                for (size_t k = 0; k < in.src.size(); k++)
                  for (int q = 0; q < at(in.src[k]).lanes; q++) o[t * L + j++] = ptr(in, k, t, q);
              }
              break;
            }
            case Ops::CAT:
              for (int64_t t = 0; t < warp; t++) {
                size_t j = 0;
                for (size_t k = 0; k < in.src.size(); k++)
                  for (int q = 0; q < at(in.src[k]).lanes; q++) out[t * L + j++] = val(in, k, t, q);
              }
              break;
            case Ops::LOAD: {
              // LOAD(ptr, [alt], [barrier...]): a gated-off lane reads alt (or 0)
              const bool has_alt = in.src.size() > 1 && at(in.src[1]).dtype == in.dtype;
              const DType e = in.dtype.scalar();
              for (int64_t t = 0; t < warp; t++)
                for (size_t j = 0; j < L; j++) {
                  const int jj = static_cast<int>(j);
                  Ptr p = ptr(in, 0, t, jj);
                  if (p.gate && mask[t]) {
                    TG_CHECK(mems.at(static_cast<size_t>(p.mem)).dtype.itemsize() == e.itemsize(), "PYTHON: ", name,
                             ": a load of ", in.dtype.repr(), " from a buffer of ",
                             mems[static_cast<size_t>(p.mem)].dtype.repr());
                    out[t * L + j] = read_value(memory_at(in, p), e);
                  } else {
                    out[t * L + j] = has_alt ? val(in, 1, t, jj) : truncate(int64_t(0), e);
                  }
                }
              break;
            }
            case Ops::STORE: {
              const Inst& v = at(in.src[1]);
              const DType e = v.dtype.scalar();
              for (int64_t t = 0; t < warp; t++)
                for (int j = 0; j < v.lanes; j++) {
                  Ptr p = ptr(in, 0, t, j);
                  if (p.gate && mask[t]) write_value(memory_at(in, p), e, val(in, 1, t, j));
                }
              break;
            }
            case Ops::GEP: {
              const Tuple& idx = in.u.arg<Tuple>();
              TG_CHECK(idx.size() == L, "PYTHON: a GEP of ", idx.size(), " lanes into ", L);
              for (int64_t t = 0; t < warp; t++)
                for (size_t j = 0; j < L; j++) out[t * L + j] = val(in, 0, t, static_cast<int>(as_int(idx[j])));
              break;
            }
            case Ops::VECTORIZE:
              TG_CHECK(in.src.size() == L, "PYTHON: a VECTORIZE of ", in.src.size(), " values into ", L, " lanes");
              for (int64_t t = 0; t < warp; t++)
                for (size_t j = 0; j < L; j++) out[t * L + j] = val(in, j, t, 0);
              break;
            case Ops::CAST:
              if (in.dtype.is_ptr()) {
                P[i] = P[static_cast<size_t>(in.src[0])];
                break;
              }
              for (int64_t t = 0; t < warp; t++)
                for (size_t j = 0; j < L; j++)
                  out[t * L + j] = cast_value(val(in, 0, t, static_cast<int>(j)), in.dtype);
              break;
            case Ops::BITCAST: {
              const Inst& s = at(in.src[0]);
              const DType from = s.dtype.scalar(), to = in.dtype.scalar();
              TG_CHECK(from.itemsize() * s.lanes == to.itemsize() * in.lanes, "PYTHON: a BITCAST from ", s.dtype.repr(),
                       " to ", in.dtype.repr(), " changes the size");
              scratch.assign(static_cast<size_t>(from.itemsize() * s.lanes), 0);
              for (int64_t t = 0; t < warp; t++) {
                for (int j = 0; j < s.lanes; j++)
                  write_value(scratch.data() + j * from.itemsize(), from, val(in, 0, t, j));
                for (size_t j = 0; j < L; j++) out[t * L + j] = read_value(scratch.data() + j * to.itemsize(), to);
              }
              break;
            }
            case Ops::WMMA: {
              // CUDA's mma.sync m16n8kK, one warp of 32 threads at a time: thread `lane` holds elements of A (16 x K),
              // B (K x 8) and C (16 x 8) at the places the PTX ISA gives (tinygrad's ops_python models, EMULATE_CUDA)
              const WmmaArg& w = as_wmma_arg(in.u.arg());
              const int K = w.dims[2];
              const bool tf32 = w.dtype_in == dtypes::float32;
              TG_CHECK(warp % 32 == 0, "PYTHON: ", name, ": a WMMA needs whole warps of 32 threads, got ", warp);
              auto a_at = [&](int k, int row) -> std::pair<int, int> {  // (element, lane) of A[row][k]
                if (K == 16) return {k % 2 + (row / 8) * 2 + (k / 8) * 4, (k / 2) % 4 + (row % 8) * 4};
                if (tf32) return {(k / 4) * 2 + row / 8, k % 4 + (row % 8) * 4};
                return {k % 2 + (row / 8) * 2, k / 2 + (row % 8) * 4};
              };
              auto b_at = [&](int col, int k) -> std::pair<int, int> {  // (element, lane) of B[k][col]
                if (K == 16) return {k % 2 + (k / 8) * 2, (k / 2) % 4 + col * 4};
                if (tf32) return {k / 4, k % 4 + col * 4};
                return {k % 2, k / 2 + col * 4};
              };
              for (int64_t goff = 0; goff < warp; goff += 32)
                for (int lane = 0; lane < 32; lane++)
                  for (size_t e = 0; e < L; e++) {
                    const int ci = static_cast<int>(e) % 2 + (lane % 4) * 2,
                              cj = lane / 4 + (static_cast<int>(e) / 2) * 8;
                    double acc = 0;
                    for (int k = 0; k < K; k++) {
                      auto [ae, al] = a_at(k, cj);
                      auto [be, bl] = b_at(ci, k);
                      acc += as_double(val(in, 0, goff + al, ae)) * as_double(val(in, 1, goff + bl, be));
                    }
                    out[(goff + lane) * L + e] =
                        cast_value(as_double(val(in, 2, goff + lane, static_cast<int>(e))) + acc, in.dtype);
                  }
              break;
            }
            default: {  // the ALUs
              const DType s = in.dtype.scalar(), src_dtype = at(in.src[0]).dtype.scalar();
              const bool bf16 = s == dtypes::bfloat16;
              std::vector<ConstValue> ops(in.src.size());
              for (int64_t t = 0; t < warp; t++)
                for (size_t j = 0; j < L; j++) {
                  for (size_t k = 0; k < in.src.size(); k++) ops[k] = val(in, k, t, static_cast<int>(j));
                  ConstValue r = exec_alu(in.op, bf16 ? dtypes::float32 : s, ops, true, src_dtype);
                  out[t * L + j] = bf16 ? ConstValue(round_bf16(as_double(r))) : r;
                }
            }
          }
          i++;
        }
      }
  if (!wait) return std::nullopt;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count();
}

// *** the device ***

namespace {

class PythonDevice : public Compiled {
 public:
  explicit PythonDevice(const std::string& device)
      : Compiled(device, MallocAllocator::instance(), std::make_shared<PythonRenderer>(), std::make_shared<Compiler>(),
                 [](const std::string& name, const std::string& lib) -> std::unique_ptr<Program> {
                   return std::make_unique<PythonProgram>(name, std::string_view(lib));
                 }) {}

  // the "binary" is the program text (never disk-cached), read back into the uops it was rendered from; the values of
  // the variables come in the spec's order
  BuiltProgram build(const ProgramSpec& spec) override {
    return BuiltProgram{
        spec.src, std::make_unique<PythonProgram>(spec.name, load_python_program(spec.name, spec.src), spec.vars)};
  }
};

}  // namespace

std::unique_ptr<Compiled> open_python_device(const std::string& device) {
  return std::make_unique<PythonDevice>(device);
}

}  // namespace tg
