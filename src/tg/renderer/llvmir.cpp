#include "tg/renderer/llvmir.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <set>

#include "tg/helpers/helpers.h"
#include "tg/renderer/cstyle.h"
#include "tg/uop/kernel_info.h"

namespace tg {

// *** types and constants ***

std::string ldt(DType dt) {
  if (dt.is_ptr()) return dt.vcount() > 1 ? cat("<", dt.vcount(), " x ptr>") : "ptr";
  if (dt.count() > 1) return cat("<", dt.count(), " x ", ldt(dt.scalar()), ">");
  DType s = dt.scalar();
  if (s == dtypes::void_) return "void";
  if (s == dtypes::bool_) return "i1";
  if (s == dtypes::int8 || s == dtypes::uint8) return "i8";
  if (s == dtypes::int16 || s == dtypes::uint16) return "i16";
  if (s == dtypes::int32 || s == dtypes::uint32) return "i32";
  if (s == dtypes::int64 || s == dtypes::uint64) return "i64";
  if (s == dtypes::float16) return "half";
  if (s == dtypes::bfloat16) return "bfloat";
  if (s == dtypes::float32) return "float";
  if (s == dtypes::float64) return "double";
  throw NotImplementedError(cat("LLVM: no IR type for ", dt.repr()));
}

std::string lconst(ConstValue v, DType dt) {
  DType s = dt.scalar();
  if (dtypes::is_float(s)) {
    double x = as_double(truncate(v, s));
    char buf[32];
    if (s == dtypes::bfloat16) {  // 0xR: the 16 bits
      std::snprintf(buf, sizeof(buf), "0xR%04X",
                    static_cast<unsigned>(std::bit_cast<uint32_t>(static_cast<float>(x)) >> 16));
      return buf;
    }
    // the double's bits: exact for every float, half and double (the value is already rounded to dt)
    std::snprintf(buf, sizeof(buf), "0x%016llX", static_cast<unsigned long long>(std::bit_cast<uint64_t>(x)));
    return buf;
  }
  if (s == dtypes::bool_) return as_bool(v) ? "true" : "false";
  // the bits as a signed number of the width (a uint64 above INT64_MAX is negative here, as LLVM reads it)
  const auto bits = static_cast<uint64_t>(as_i128(truncate(v, s)));
  return cat(static_cast<long long>(bits));
}

namespace {

// the conversion instruction from one scalar kind to another (tinygrad's lcast)
std::string lcast(DType in, DType out) {
  in = in.scalar(), out = out.scalar();
  if (dtypes::is_float(in)) {
    if (dtypes::is_float(out)) return out.itemsize() > in.itemsize() ? "fpext" : "fptrunc";
    if (dtypes::is_int(out)) return dtypes::is_unsigned(out) ? "fptoui" : "fptosi";
  }
  if (dtypes::is_unsigned(in) || dtypes::is_bool(in)) {
    if (dtypes::is_float(out)) return "uitofp";
    if (dtypes::is_int(out)) return out.itemsize() < in.itemsize() ? "trunc" : "zext";
  }
  if (dtypes::is_int(in)) {
    if (dtypes::is_float(out)) return "sitofp";
    if (dtypes::is_int(out)) return out.itemsize() < in.itemsize() ? "trunc" : "sext";
  }
  throw NotImplementedError(cat("LLVM: no cast from ", in.repr(), " to ", out.repr()));
}

// the instruction of a binary ALU, by its operands' dtype. Float ops may contract into FMAs (as clang does for C);
// comparisons are ordered as C's < and unordered as C's != (nan != nan). A signed add doesn't wrap (as C's, and as the
// reference renders it): with nsw, LLVM's scalar evolution reads an index as the sum it is, which makes the loop
// passes and LSR cheaper on our kernels
std::string lop(Ops op, DType operand) {
  DType s = operand.scalar();
  const bool f = dtypes::is_float(s), u = dtypes::is_unsigned(s) || s == dtypes::bool_;
  switch (op) {
    case Ops::ADD: return f ? "fadd contract" : u ? "add" : "add nsw";
    case Ops::SUB: return f ? "fsub contract" : "sub";
    case Ops::MUL: return f ? "fmul contract" : "mul";
    case Ops::FDIV: return "fdiv";
    case Ops::IDIV: return u ? "udiv" : "sdiv";
    case Ops::MOD: return u ? "urem" : "srem";
    case Ops::CMPLT: return f ? "fcmp olt" : u ? "icmp ult" : "icmp slt";
    case Ops::CMPNE: return f ? "fcmp une" : "icmp ne";
    case Ops::AND: return "and";
    case Ops::OR: return "or";
    case Ops::XOR: return "xor";
    case Ops::SHL: return "shl";
    case Ops::SHR: return u ? "lshr" : "ashr";
    default: throw NotImplementedError(cat("LLVM: no instruction for ", op, " on ", operand.repr()));
  }
}

// the intrinsic a unary float op calls, overloaded by its type: @llvm.sqrt.f32, @llvm.sqrt.v4f32. Only sqrt, one
// instruction: exp2, log2 and sin are polynomials (uop/transcendental.h), as the reference computes them on LLVM,
// so a kernel never calls libm and vectorizes whole
constexpr OpSet intrinsic_ops{Ops::SQRT};
std::string intrinsic(Ops op, DType dt) {
  TG_ASSERT(op == Ops::SQRT, "LLVM: no intrinsic for ", op);
  DType s = dt.scalar();
  std::string e = s == dtypes::float16 ? "f16" : s == dtypes::bfloat16 ? "bf16" : s == dtypes::float64 ? "f64" : "f32";
  return cat("@llvm.sqrt.", dt.count() > 1 ? cat("v", dt.count(), e) : e);
}

using R = LLVMRenderer;

std::string label(const std::string& v) { return v.substr(1); }  // %v3 -> v3

}  // namespace

const std::string& LLVMRenderer::operator[](const UOp& u) const {
  auto it = r_.find(u.get());
  TG_ASSERT(it != r_.end(), "LLVM: uop rendered before its source: ", u.op());
  return it->second;
}

const LLVMRewrite& llvm_rewrite() {
  static const LLVMRewrite pm = {
      // memory
      {op(Ops::INDEX).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         const UOp& i = x.src(1);
         if (i.op() == Ops::ADD && i.src(1).op() == Ops::CONST) {
           // base + (x + c) as base[x][c]: the loads of a tile share one address from the loop's index and differ
           // by constants, which LLVM's loop passes (IVUsers, LSR) see as one use instead of one per load. Not
           // inbounds: base[x] alone may point outside the buffer
           const std::string t = ldt(x.dtype().base()), it = ldt(i.dtype());
           return cat("  ", ctx[x], "_base = getelementptr ", t, ", ptr ", ctx[x.src(0)], ", ", it, " ", ctx[i.src(0)],
                      "\n  ", ctx[x], " = getelementptr ", t, ", ptr ", ctx[x], "_base, ", it, " ", ctx[i.src(1)]);
         }
         return cat("  ", ctx[x], " = getelementptr inbounds ", ldt(x.dtype().base()), ", ptr ", ctx[x.src(0)], ", ",
                    ldt(x.src(1).dtype()), " ", ctx[x.src(1)]);
       }},
      {op(Ops::LOAD, {op(Ops::INDEX, {var(), var(), var("mask")}).or_casted("idx"), var("alt")}).named("x"),
       [](M m, R& ctx) -> LStr {  // a gated load: branch around it, the alt value where the gate is off
         UOp x = m["x"];
         const std::string &v = ctx[x], t = ldt(x.dtype()), l = label(v);
         return cat("  br label %", l, "_entry\n", l, "_entry:\n  br i1 ", ctx[m["mask"]], ", label %", l,
                    "_load, label %", l, "_exit\n", l, "_load:\n  ", v, "_yes = load ", t, ", ptr ", ctx[m["idx"]],
                    ", align ", x.dtype().scalar().itemsize(), "\n  br label %", l, "_exit\n", l, "_exit:\n  ", v,
                    " = phi ", t, " [", v, "_yes, %", l, "_load], [", ctx[m["alt"]], ", %", l, "_entry]");
       }},
      {op(Ops::LOAD, {var("idx")}).any_len().named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         return cat("  ", ctx[x], " = load ", ldt(x.dtype()), ", ptr ", ctx[m["idx"]], ", align ",
                    x.dtype().scalar().itemsize());
       }},
      {op(Ops::STORE).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         DType vt = x.src(1).dtype();
         return cat("  store ", ldt(vt), " ", ctx[x.src(1)], ", ptr ", ctx[x.src(0)], ", align ",
                    vt.scalar().itemsize());
       }},
      // vectors
      {op(Ops::GEP).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         const Tuple& idx = x.arg<Tuple>();
         if (idx.size() == 1)
           return cat("  ", ctx[x], " = extractelement ", ldt(x.src(0).dtype()), " ", ctx[x.src(0)], ", i32 ",
                      as_int(idx[0]));
         std::vector<std::string> lanes;
         for (const ConstValue& i : idx) lanes.push_back(cat("i32 ", as_int(i)));
         return cat("  ", ctx[x], " = shufflevector ", ldt(x.src(0).dtype()), " ", ctx[x.src(0)], ", ",
                    ldt(x.src(0).dtype()), " poison, <", idx.size(), " x i32> <", join(lanes, ", "), ">");
       }},
      {op(Ops::VECTORIZE).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         const std::string& v = ctx[x];
         const std::string t = ldt(x.dtype()), st = ldt(x.dtype().scalar());
         std::vector<std::string> lines;
         for (size_t i = 0; i < x.src().size(); i++)
           lines.push_back(cat("  ", i + 1 == x.src().size() ? v : cat(v, "_", i), " = insertelement ", t, " ",
                               i == 0 ? std::string("poison") : cat(v, "_", i - 1), ", ", st, " ", ctx[x.src(i)],
                               ", i32 ", i));
         return join(lines, "\n");
       }},
      // ALUs
      {op(Ops::BITCAST).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         return cat("  ", ctx[x], " = bitcast ", ldt(x.src(0).dtype()), " ", ctx[x.src(0)], " to ", ldt(x.dtype()));
       }},
      {op(Ops::CAST).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         if (x.dtype().scalar() == dtypes::bool_)  // C's (bool)x: x != 0
           return cat("  ", ctx[x], " = ", lop(Ops::CMPNE, x.src(0).dtype()), " ", ldt(x.src(0).dtype()), " ",
                      ctx[x.src(0)], ", ",
                      x.src(0).dtype().count() > 1 ? "zeroinitializer" : lconst(int64_t(0), x.src(0).dtype()));
         return cat("  ", ctx[x], " = ", lcast(x.src(0).dtype(), x.dtype()), " ", ldt(x.src(0).dtype()), " ",
                    ctx[x.src(0)], " to ", ldt(x.dtype()));
       }},
      {op(Ops::NEG).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         if (dtypes::is_float(x.dtype())) return cat("  ", ctx[x], " = fneg ", ldt(x.dtype()), " ", ctx[x.src(0)]);
         return cat("  ", ctx[x], " = sub ", ldt(x.dtype()), " ",
                    x.dtype().count() > 1 ? "zeroinitializer" : std::string("0"), ", ", ctx[x.src(0)]);
       }},
      {op(Ops::RECIP).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         std::string one = lconst(1.0, x.dtype());
         if (x.dtype().count() > 1) {
           std::vector<std::string> ones(static_cast<size_t>(x.dtype().count()),
                                         cat(ldt(x.dtype().scalar()), " ", one));
           one = cat("<", join(ones, ", "), ">");
         }
         return cat("  ", ctx[x], " = fdiv ", ldt(x.dtype()), " ", one, ", ", ctx[x.src(0)]);
       }},
      {op(intrinsic_ops).named("x"),
       [](M m, R& ctx) -> LStr {  // the intrinsics: instructions or libm calls, resolved in this process
         UOp x = m["x"];
         const std::string t = ldt(x.dtype());
         return cat("  ", ctx[x], " = call ", t, " ", intrinsic(x.op(), x.dtype()), "(", t, " ", ctx[x.src(0)], ")");
       }},
      {op(Ops::WHERE).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         return cat("  ", ctx[x], " = select ", ldt(x.src(0).dtype()), " ", ctx[x.src(0)], ", ", ldt(x.src(1).dtype()),
                    " ", ctx[x.src(1)], ", ", ldt(x.src(2).dtype()), " ", ctx[x.src(2)]);
       }},
      // integer division by a divisor that may be 0 gives 0 (tinygrad's cdiv/cmod) and INT_MIN/-1 wraps, as the C
      // renderer's: never a SIGFPE. Only divisors whose range allows it get the guard.
      {op({Ops::IDIV, Ops::MOD}, {var("a"), var("b")}).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"], a = m["a"], b = m["b"];
         if (!dtypes::is_int(x.dtype())) return std::nullopt;
         const bool zero = !(as_double(b.vmin()) > 0 || as_double(b.vmax()) < 0);
         const bool minus1 = !dtypes::is_unsigned(x.dtype()) && as_double(b.vmin()) <= -1 &&
                             as_double(b.vmax()) >= -1 && as_double(a.vmin()) <= as_double(dtypes::min(x.dtype()));
         if (!zero && !minus1) return std::nullopt;  // the plain rule below
         const std::string& v = ctx[x];
         const std::string t = ldt(x.dtype()), it = ldt(x.dtype().scalar());
         const int n = x.dtype().count();
         auto splat = [&](int64_t c) {
           if (n == 1) return cat(c);
           std::vector<std::string> lanes(static_cast<size_t>(n), cat(it, " ", c));
           return cat("<", join(lanes, ", "), ">");
         };
         const std::string bt = n == 1 ? "i1" : cat("<", n, " x i1>");
         std::vector<std::string> l;
         std::string d = ctx[b];
         if (zero) {
           l.push_back(cat("  ", v, "_z = icmp eq ", t, " ", d, ", ", splat(0)));
           l.push_back(cat("  ", v, "_dz = select ", bt, " ", v, "_z, ", t, " ", splat(1), ", ", t, " ", d));
           d = v + "_dz";
         }
         if (minus1) {
           l.push_back(cat("  ", v, "_m = icmp eq ", t, " ", ctx[b], ", ", splat(-1)));
           l.push_back(cat("  ", v, "_dm = select ", bt, " ", v, "_m, ", t, " ", splat(1), ", ", t, " ", d));
           d = v + "_dm";
         }
         std::string q = cat(v, "_q");
         l.push_back(cat("  ", q, " = ", lop(x.op(), x.dtype()), " ", t, " ", ctx[a], ", ", d));
         if (minus1) {  // a / -1 is -a (wrapping), a % -1 is 0
           if (x.op() == Ops::IDIV) l.push_back(cat("  ", v, "_neg = sub ", t, " ", splat(0), ", ", ctx[a]));
           l.push_back(cat("  ", v, "_qm = select ", bt, " ", v, "_m, ", t, " ",
                           x.op() == Ops::IDIV ? v + "_neg" : splat(0), ", ", t, " ", q));
           q = v + "_qm";
         }
         l.push_back(zero ? cat("  ", v, " = select ", bt, " ", v, "_z, ", t, " ", splat(0), ", ", t, " ", q)
                          : cat("  ", v, " = add ", t, " ", q, ", ", splat(0)));
         return join(l, "\n");
       }},
      {op(GroupOp::Binary).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         return cat("  ", ctx[x], " = ", lop(x.op(), x.src(0).dtype()), " ", ldt(x.src(0).dtype()), " ", ctx[x.src(0)],
                    ", ", ctx[x.src(1)]);
       }},
      // control flow
      {op(Ops::RANGE).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp x = m["x"];
         const std::string& v = ctx[x];
         const std::string l = label(v), t = ldt(x.dtype());
         std::string start = "0", pre;
         if (x.get() == ctx.split_range) {  // this core's share: [end*core/ncores, end*(core+1)/ncores)
           const std::string& end = ctx[x.src(0)];
           pre =
               cat("  ", v, "_end = sext ", t, " ", end, " to i64\n  ", v, "_c = sext i32 %tg_core to i64\n  ", v,
                   "_n = sext i32 %tg_ncores to i64\n  ", v, "_c1 = add i64 ", v, "_c, 1\n  ", v, "_lo64 = mul i64 ", v,
                   "_end, ", v, "_c\n  ", v, "_lo64d = sdiv i64 ", v, "_lo64, ", v, "_n\n  ", v, "_hi64 = mul i64 ", v,
                   "_end, ", v, "_c1\n  ", v, "_hi64d = sdiv i64 ", v, "_hi64, ", v, "_n\n  ", v, "_lo = trunc i64 ", v,
                   "_lo64d to ", t, "\n  ", v, "_hi = trunc i64 ", v, "_hi64d to ", t, "\n");
           start = cat(v, "_lo");
         }
         return cat(pre, "  br label %", l, "_entry\n", l, "_entry:\n  br label %", l, "_body\n", l, "_body:\n  ", v,
                    " = phi ", t, " [ ", start, ", %", l, "_entry ], [ ", v, "_next, %", l, "_latch ]");
       }},
      {op(Ops::ENDRANGE).named("x"),
       [](M m, R& ctx) -> LStr {
         UOp r = m["x"].src(0);
         const std::string& v = ctx[r];
         const std::string l = label(v), t = ldt(r.dtype());
         const std::string end = r.get() == ctx.split_range ? cat(v, "_hi") : ctx[r.src(0)];
         return cat("  br label %", l, "_latch\n", l, "_latch:\n  ", v, "_next = add ", t, " ", v, ", 1\n  ", v,
                    "_more = icmp slt ", t, " ", v, "_next, ", end, "\n  br i1 ", v, "_more, label %", l,
                    "_body, label %", l, "_exit\n", l, "_exit:");
       }},
      {op(Ops::IF).named("x"),
       [](M m, R& ctx) -> LStr {
         const std::string l = label(ctx[m["x"]]);
         return cat("  br i1 ", ctx[m["x"].src(0)], ", label %", l, "_body, label %", l, "_skip\n", l, "_body:");
       }},
      {op(Ops::ENDIF).named("x"),
       [](M m, R& ctx) -> LStr {
         const std::string l = label(ctx[m["x"].src(0)]);
         return cat("  br label %", l, "_skip\n", l, "_skip:");
       }},
      {op(Ops::BARRIER), [](M, R&) -> LStr { return ""; }},
  };
  return pm;
}

// *** LLVMRenderer ***

// uop -> uop rewrites before rendering (tinygrad's LLVMRenderer.extra_matcher)
static const PatternMatcher<UOp>& llvm_extra_matcher() {
  static const PatternMatcher<UOp> pm =
      software_bf16() +
      PatternMatcher<UOp>{
          {op(Ops::MAX).named("m"),
           [](M m) { return (m["m"].src(0) < m["m"].src(1)).where(m["m"].src(1), m["m"].src(0)); }},  // (a<b)?b:a
      };
  return pm;
}

LLVMRenderer::LLVMRenderer() {
  extra_matcher = &llvm_extra_matcher();
  device = "LLVM";
  has_local = false;
  has_shared = false;
  global_max = std::nullopt;
  upcast_max = 64;  // the CPU's vector tiles (codegen/cpu_tiles.cpp): 64 rows of a packed int8 weight
  // as the C renderer (the same kernels as the CPU's), less libm's exp2, log2 and sin
  code_for_op = {Ops::SQRT, Ops::RECIP, Ops::NEG,  Ops::AND,   Ops::XOR, Ops::OR,  Ops::ADD,   Ops::SUB,
                 Ops::MUL,  Ops::MOD,   Ops::IDIV, Ops::CMPNE, Ops::SHR, Ops::SHL, Ops::CMPLT, Ops::WHERE};
}

std::string LLVMRenderer::render(const std::vector<UOp>& uops) { return render_kernel(uops); }

std::string LLVMRenderer::render_threaded(const std::vector<UOp>& uops, const UOp& range) {
  split_range = range.get();
  try {
    std::string ret = render_kernel(uops);
    split_range = nullptr;
    return ret;
  } catch (...) {
    split_range = nullptr;
    throw;
  }
}

std::string LLVMRenderer::render_kernel(const std::vector<UOp>& uops) {
  r_.clear();
  std::vector<std::string> args, kernel;
  std::set<std::string> intrinsics;
  std::unordered_map<const UOpNode*, const UOpNode*> acc_to_assign;  // DEFINE_ACC -> the value assigned to it
  int vc = -1;
  for (const UOp& u : uops)
    if (u.op() == Ops::ASSIGN) {  // the assigned value gets its name first: the loop's phi refers to it
      r_[u.get()] = r_[u.src(1).get()] = cat("%assign", ++vc);
      acc_to_assign[u.src(0).get()] = u.src(1).get();
    }
  std::string name = "test";
  for (const UOp& u : uops) {
    const Ops op = u.op();
    if (op == Ops::SINK) {
      if (const KernelInfo* ki = as_kernel_info(u.arg())) name = ki->name;
      continue;
    }
    if (op == Ops::DEFINE_GLOBAL || op == Ops::DEFINE_VAR) {
      r_[u.get()] =
          op == Ops::DEFINE_GLOBAL ? cat("%data", as_int(u.arg<ConstValue>())) : cat("%", u.arg<VarArg>().name);
      args.push_back(cat(ldt(u.dtype()), op == Ops::DEFINE_GLOBAL ? " noalias " : " ", r_[u.get()]));
      continue;
    }
    if (op == Ops::ASSIGN) continue;  // named above; the phi at its loop carries it
    if (op == Ops::DEFINE_ACC) {
      r_[u.get()] = (*this)[u.src(0)];
      continue;
    }
    if (op == Ops::CONST) {
      r_[u.get()] = lconst(u.const_arg(), u.dtype());
      if (u.dtype().count() > 1) {
        std::vector<std::string> lanes(static_cast<size_t>(u.dtype().count()),
                                       cat(ldt(u.dtype().scalar()), " ", r_[u.get()]));
        r_[u.get()] = cat("<", join(lanes, ", "), ">");
      }
      continue;
    }
    if (op == Ops::VCONST) {
      std::vector<std::string> lanes;
      for (const ConstValue& c : u.arg<Tuple>())
        lanes.push_back(cat(ldt(u.dtype().scalar()), " ", lconst(c, u.dtype())));
      r_[u.get()] = cat("<", join(lanes, ", "), ">");
      continue;
    }
    if (op == Ops::CAST && (u.dtype().is_ptr() || ldt(u.dtype()) == ldt(u.src(0).dtype()))) {
      r_[u.get()] = (*this)[u.src(0)];  // a pointer cast, or signed <-> unsigned of one width: the same bits
      continue;
    }
    if (op == Ops::NOOP && !u.src().empty()) {
      r_[u.get()] = (*this)[u.src(0)];
      continue;
    }
    TG_CHECK_AS(NotImplementedError, op != Ops::DEFINE_LOCAL && op != Ops::SPECIAL && op != Ops::WMMA, "LLVM: ", name,
                ": the CPU target has no ", op);
    if (!r_.count(u.get())) r_[u.get()] = cat("%v", ++vc);
    LStr l = llvm_rewrite().rewrite(u, this);
    TG_CHECK_AS(NotImplementedError, l.has_value(), "LLVM: ", name, ": failed to render ", op, " ", u.dtype().repr(),
                " with ", u.src().size(), " sources");
    if (!l->empty()) kernel.push_back(*l);
    if (intrinsic_ops.has(op))
      intrinsics.insert(cat("declare ", ldt(u.dtype()), " ", intrinsic(op, u.dtype()), "(", ldt(u.dtype()), ")"));
    if (op == Ops::RANGE)  // the accumulators this loop carries: one phi each
      for (const UOp& x : uops) {
        if (x.op() != Ops::DEFINE_ACC || !acc_to_assign.count(x.get())) continue;
        if (std::find(x.src().begin() + 1, x.src().end(), u) == x.src().end()) continue;
        std::string phi = cat("%acc", ++vc);
        const std::string l = label(r_.at(u.get()));
        kernel.push_back(cat("  ", phi, " = phi ", ldt(x.dtype()), " [ ", r_.at(x.get()), ", %", l, "_entry ], [ ",
                             r_.at(acc_to_assign.at(x.get())), ", %", l, "_latch ]"));
        r_[x.get()] = phi;
      }
  }
  if (split_range != nullptr) args.push_back("i32 %tg_core"), args.push_back("i32 %tg_ncores");
  std::string ret;
  for (const std::string& d : intrinsics) ret += d + "\n";
  ret += cat("define void @", name, "(", join(args, ", "), ") #0\n{\n", join(kernel, "\n"), "\n  ret void\n}\n");
  ret += "attributes #0 = { nounwind \"no-builtins\" \"no-trapping-math\"=\"true\" }\n";
  r_.clear();
  return ret;
}

std::string LLVMRenderer::entry_shim(const std::string& name, const std::vector<KernelParam>& params,
                                     bool threaded) const {
  std::vector<std::string> body, args;
  size_t nbuf = 0;
  for (size_t i = 0; i < params.size(); i++) {
    const KernelParam& p = params[i];
    if (p.is_buffer) {
      body.push_back(cat("  %p", i, " = getelementptr inbounds ptr, ptr %bufs, i64 ", nbuf++));
      body.push_back(cat("  %a", i, " = load ptr, ptr %p", i));
      args.push_back(cat("ptr %a", i));
    } else {
      const std::string t = ldt(p.dtype);
      body.push_back(cat("  %p", i, " = getelementptr inbounds i64, ptr %vars, i64 ", p.index));
      body.push_back(cat("  %l", i, " = load i64, ptr %p", i));
      body.push_back(t == "i64" ? cat("  %a", i, " = add i64 %l", i, ", 0")
                                : cat("  %a", i, " = trunc i64 %l", i, " to ", t));
      args.push_back(cat(t, " %a", i));
    }
  }
  const std::string loads = join(body, "\n") + (body.empty() ? "" : "\n"), a = join(args, ", ");
  const std::string sep = args.empty() ? "" : ", ";
  std::string ret = cat("define void @tg_entry_", name, "(ptr %bufs, ptr %vars) {\n", loads, "  call void @", name, "(",
                        a, threaded ? cat(sep, "i32 0, i32 1") : "", ")\n  ret void\n}\n");
  if (threaded)
    ret += cat("define void @tg_entry_threads_", name, "(ptr %bufs, ptr %vars, i32 %core, i32 %ncores) {\n", loads,
               "  call void @", name, "(", a, sep, "i32 %core, i32 %ncores)\n  ret void\n}\n");
  return ret;
}

}  // namespace tg
