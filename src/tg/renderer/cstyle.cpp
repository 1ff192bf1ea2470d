#include "tg/renderer/cstyle.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/uop/kernel_info.h"
#include "tg/uop/symbolic.h"
#include "tg/uop/wmma_arg.h"

namespace tg {

// *** helpers ***

std::string strip_parens(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  std::string in = s.substr(1, s.size() - 2);
  // python's find gives -1 for "absent": a '(' only, with no ')' after, keeps the parens
  auto pos = [&](char c) {
    size_t p = in.find(c);
    return p == std::string::npos ? int64_t(-1) : int64_t(p);
  };
  return pos('(') <= pos(')') ? in : s;
}

// str.format with "{}", "{0}" and "{{"/"}}", as CUSTOM's arg uses it
static std::string py_format(const std::string& fmt, const std::vector<std::string>& args) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < fmt.size(); i++) {
    char c = fmt[i];
    if ((c == '{' || c == '}') && i + 1 < fmt.size() && fmt[i + 1] == c) {
      out += c;
      i++;
    } else if (c == '{') {
      size_t close = fmt.find('}', i);
      TG_CHECK(close != std::string::npos, "bad format string ", fmt);
      std::string field = fmt.substr(i + 1, close - i - 1);
      size_t k = field.empty() ? next++ : std::stoul(field);
      TG_CHECK(k < args.size(), "format index ", k, " out of range in ", fmt);
      out += args[k];
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

static std::string str_replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

static bool const_is_nan(const UOp& x) {
  const auto* d = std::get_if<double>(&x.const_arg());
  return d != nullptr && std::isnan(*d);
}

// *** base_rewrite: uop -> C text ***

using R = CStyleLanguage;  // the rules' ctx: tinygrad's `ctx`, the renderer

// bfloat16 stored as its 16 bits (the Clang renderer on x86, OpenCL): computed in float by software_bf16()
static bool soft_bf16_dtype(DType dt, const R& ctx) {
  if (dt != dtypes::bfloat16) return false;
  std::string name = ctx.render_dtype(dt);
  return name == "unsigned short" || name == "ushort";
}
static bool soft_bf16(const UOp& x, const R& ctx) { return soft_bf16_dtype(x.dtype(), ctx); }

const StringRewrite& base_rewrite() {
  static const double inf = std::numeric_limits<double>::infinity();
  static const StringRewrite pm = {
      {op(Ops::DEFINE_ACC).named("x"), [](M m, R& ctx) -> Str { return ctx[m["x"].src(0)]; }},  // acc0 = its init
      {op(Ops::ASSIGN).named("x"),
       [](M m, R& ctx) -> Str {  // acc0 = (acc0+val0);
         std::string s = cat(ctx[m["x"].src(0)], " = ", ctx[m["x"].src(1)], ";");
         return ctx.reassociating() && dtypes::is_float(m["x"].dtype()) ? ctx.render_reassociated(s) : s;
       }},
      {op(Ops::IF).named("x"), [](M m, R& ctx) -> Str { return cat("if (", ctx[m["x"].src(0)], ") {"); }},  // if (g) {
      {op({Ops::ENDIF, Ops::ENDRANGE}), [](M, R&) -> Str { return "}"; }},                                  // }
      {op(Ops::WMMA).named("x"),
       [](M m, R& ctx) -> Str {  // __WMMA_8_16_16_half_float(a, b, c)
         UOp x = m["x"];
         return cat("__", as_wmma_arg(x.arg()).name, "(", ctx[x.src(0)], ", ", ctx[x.src(1)], ", ", ctx[x.src(2)], ")");
       }},
      // r method accesses
      {op(Ops::RANGE).named("x"),
       [](M m, R& ctx) -> Str {  // for (int ridx0 = 0; ridx0 < 4; ridx0++) {
         UOp x = m["x"];
         const std::string& i = ctx[x];
         return cat("for (", ctx.render_dtype(x.dtype()), " ", i, " = 0; ", i, " < ", ctx[x.src(0)], "; ", i, "++) {");
       }},
      {op(Ops::VECTORIZE).named("x"),
       [](M m, R& ctx) -> Str {  // (float4){a,b,c,d}
         UOp x = m["x"];
         if (!ctx.float4) return std::nullopt;
         std::vector<std::string> parts;
         for (const UOp& y : x.src()) parts.push_back(ctx[y]);
         return cat(str_replace_all(*ctx.float4, "float4", ctx.render_dtype(x.dtype())), ctx.float4_style.first,
                    join(parts, ","), ctx.float4_style.second);
       }},
      {op(Ops::CAST).named("x"),
       [](M m, R& ctx) -> Str {  // __builtin_convertvector(v, float4)
         UOp x = m["x"];
         if (x.dtype().count() <= 1 || x.dtype().is_ptr()) return std::nullopt;
         return cat("__builtin_convertvector(", ctx[x.src(0)], ", ", ctx.render_dtype(x.dtype()), ")");
       }},
      {op(Ops::CAST).named("x"),
       [](M m, R& ctx) -> Str {  // ((float)(v))
         return cat("(", ctx.render_cast(m["x"].dtype(), ctx[m["x"].src(0)]), ")");
       }},
      {op(Ops::BITCAST).named("x"),
       [](M m, R& ctx) -> Str {  // (*((float*)&v))
         return cat("(*((", ctx.buffer_prefix, ctx.render_dtype(m["x"].dtype()), "*)&", ctx[m["x"].src(0)], "))");
       }},
      {op(Ops::DEFINE_LOCAL).named("x"),
       [](M m, R& ctx) -> Str {  // float temp0[16];
         UOp x = m["x"];
         return cat(ctx.smem_align, ctx.smem_prefix, ctx.render_dtype(x.dtype().base()), " ", ctx[x], "[",
                    x.dtype().size(), "];");
       }},
      {op(Ops::BARRIER), [](M, R& ctx) -> Str { return ctx.barrier; }},                   // the language's barrier
      {op(Ops::NOOP).named("x"), [](M m, R& ctx) -> Str { return ctx[m["x"].src(0)]; }},  // its source
      {op(Ops::SPECIAL).named("x"),
       [](M m, R& ctx) -> Str {  // get_group_id(0); /* 4 */
         const SpecialArg& s = m["x"].arg<SpecialArg>();
         Str idx = ctx.code_for_workitem(s.name[0], s.name.substr(s.name.size() - 1));
         if (!idx) return std::nullopt;
         return cat(*idx, "; /* ", s.sym ? s.sym->repr() : std::to_string(s.size), " */");
       }},
      // const
      // (software bf16 is an unsigned short: its inf and nan are bits, rendered below, not a cast of a float)
      {op(Ops::CONST).arg(ConstValue(inf)).named("x"),
       [](M m, R& ctx) -> Str {  // ((float)(INFINITY))
         if (soft_bf16(m["x"], ctx)) return std::nullopt;
         return cat("(", ctx.render_cast(m["x"].dtype(), ctx.infinity), ")");
       }},
      {op(Ops::CONST).arg(ConstValue(-inf)).named("x"),
       [](M m, R& ctx) -> Str {  // ((float)(-INFINITY))
         if (soft_bf16(m["x"], ctx)) return std::nullopt;
         return cat("(", ctx.render_cast(m["x"].dtype(), "-" + ctx.infinity), ")");
       }},
      {op(Ops::CONST).dtype(dtypes::floats).named("x"),
       [](M m, R& ctx) -> Str {  // ((float)(NAN))
         if (!const_is_nan(m["x"]) || soft_bf16(m["x"], ctx)) return std::nullopt;
         return cat("(", ctx.render_cast(m["x"].dtype(), ctx.nan), ")");
       }},
      {op(Ops::CONST).dtype(dtypes::float32).named("x"),
       [](M m) -> Str { return const_repr(m["x"].const_arg()) + "f"; }},  // 1.0f
      {op(Ops::CONST).dtype(dtypes::int64).named("x"),
       [](M m) -> Str { return const_repr(m["x"].const_arg()) + "ll"; }},  // 1ll
      {op(Ops::CONST).dtype(dtypes::uint64).named("x"),
       [](M m) -> Str { return const_repr(m["x"].const_arg()) + "ull"; }},  // 1ull
      {op(Ops::CONST).dtype(dtypes::uint32).named("x"),
       [](M m) -> Str { return const_repr(m["x"].const_arg()) + "u"; }},  // 1u
      {op(Ops::CONST).dtype(dtypes::bool_).named("x"),
       [](M m) -> Str { return as_bool(m["x"].const_arg()) ? "1" : "0"; }},  // 1
      // consts are rendered to larger type and casted
      {op(Ops::CONST).dtype({dtypes::bfloat16, dtypes::half}).named("x"),
       [](M m, R& ctx) -> Str {  // ((half)(1.0f))
         UOp x = m["x"];
         if (soft_bf16(x, ctx)) {                                                  // software bf16
           float f = static_cast<float>(truncate_bf16(as_double(x.const_arg())));  // truncated, as tinygrad folds
           return cat("((", ctx.render_dtype(x.dtype()), ")(", std::bit_cast<uint32_t>(f) >> 16, "u))");  // its bits
         }
         return cat("(", ctx.render_cast(x.dtype(), const_repr(x.const_arg()) + "f"), ")");
       }},
      {op(Ops::CONST).dtype({dtypes::uint8, dtypes::uint16}).named("x"),
       [](M m, R& ctx) -> Str {  // ((unsigned char)(1u))
         return cat("(", ctx.render_cast(m["x"].dtype(), const_repr(m["x"].const_arg()) + "u"), ")");
       }},
      {op(Ops::CONST).dtype({dtypes::int8, dtypes::int16}).named("x"),
       [](M m, R& ctx) -> Str {  // ((signed char)(1))
         return cat("(", ctx.render_cast(m["x"].dtype(), const_repr(m["x"].const_arg())), ")");
       }},
      // default const render
      {op(Ops::CONST).named("x"), [](M m) -> Str { return const_repr(m["x"].const_arg()); }},  // 1
      // new load/store
      {op(Ops::INDEX, {var("buf"), var("idx")}).any_len(),
       [](M m, R& ctx) -> Str {  // (data0+idx)
         UOp idx = m["idx"];
         const Ops* a = std::get_if<Ops>(&idx.arg());  // NOTE: tinygrad tests idx.arg, not idx.op: almost never true
         // ours: the threaded variant adds an index's constant to the pointer, (data0+alu0+4). Its outermost loop
         // runs to a bound known only at run time, and clang then can't tell that the int (alu0+4) is 4 past alu0
         // once widened, so it keeps four float4 loads apart instead of one 64-byte load (the conv weight
         // gradient: 47 -> 34 ms on 2 threads)
         bool flat = (a != nullptr && *a == Ops::ADD) ||
                     (ctx.rendering_threaded() && idx.op() == Ops::ADD && idx.src(1).op() == Ops::CONST);
         return cat("(", ctx[m["buf"]], "+", flat ? strip_parens(ctx[idx]) : ctx[idx], ")");
       }},
      {op(Ops::LOAD, {op(Ops::INDEX, {var(), var(), var("gate")}).or_casted("bidx"), var("var")}).any_len(),
       [](M m, R& ctx) -> Str {  // (gate?*(data0+idx):alt)
         return cat("(", ctx[m["gate"]], "?*", ctx[m["bidx"]], ":", ctx[m["var"]], ")");
       }},
      {op(Ops::LOAD, {var("bidx")}).any_len(),
       [](M m, R& ctx) -> Str { return "*" + ctx[m["bidx"]]; }},  // *(data0+idx)
      {op(Ops::STORE, {var("bidx"), var("var")}).any_len(),
       [](M m, R& ctx) -> Str {  // *(data0+idx) = v;
         return cat("*", ctx[m["bidx"]], " = ", ctx[m["var"]], ";");
       }},
      // integer division by a divisor that may be 0 is defined (0, as tinygrad's cdiv/cmod), never a SIGFPE; so is
      // INT_MIN/-1 (it wraps). Only divisors whose range allows it get the guard: constants and positive ranges don't.
      {op({Ops::IDIV, Ops::MOD}, {var("a"), var("b")}).named("x"),
       [](M m, R& ctx) -> Str {  // ((b)==0?0:(a)/(b))
         UOp x = m["x"], a = m["a"], b = m["b"];
         if (!dtypes::is_int(x.dtype()) || x.dtype().count() > 1) return std::nullopt;
         bool zero = !(as_double(b.vmin()) > 0 || as_double(b.vmax()) < 0);
         // NOTE: char and short divide after promotion to int, so only int and long can trap on MIN/-1
         bool minus1 = !dtypes::is_unsigned(x.dtype()) && x.dtype().itemsize() >= 4 && as_double(b.vmin()) <= -1 &&
                       as_double(b.vmax()) >= -1 && as_double(a.vmin()) <= as_double(dtypes::min(x.dtype()));
         if (!zero && !minus1) return std::nullopt;  // the plain ALU rule renders it
         std::string sa = ctx[a], sb = ctx[b], t = ctx.render_dtype(x.dtype());
         std::string div = cat("(", sa, x.op() == Ops::IDIV ? "/" : "%", sb, ")");
         if (minus1) {
           std::string ut = ctx.render_dtype(x.dtype().itemsize() == 8 ? dtypes::uint64 : dtypes::uint32);
           std::string wrap = x.op() == Ops::IDIV ? cat("(", t, ")(0u-(", ut, ")", sa, ")") : "0";
           div = cat("(", sb, "==-1?", wrap, ":", div, ")");
         }
         return zero ? cat("(", sb, "==0?0:", div, ")") : div;
       }},
      // alu/gep
      {op(GroupOp::ALU).named("x"),
       [](M m, R& ctx) -> Str {  // (a+b), chains of one op unparenthesized
         UOp x = m["x"];
         static constexpr OpSet flat{Ops::ADD, Ops::MUL, Ops::XOR, Ops::OR, Ops::AND};
         // float + and * don't associate: only the left operand's parentheses go (C reads a+b+c as (a+b)+c), so
         // a+(b+c) stays as written (Cody-Waite's reduction in sin depends on it; the reference drops them)
         const bool assoc = !dtypes::is_float(x.dtype().scalar());
         std::vector<std::string> operands;
         for (size_t i = 0; i < x.src().size(); i++) {
           const UOp& v = x.src(i);
           const bool strip = v.op() == x.op() && flat.has(x.op()) && (assoc || i == 0);
           operands.push_back(strip ? strip_parens(ctx[v]) : ctx[v]);
         }
         return ctx.render_op(x.op(), operands, x.dtype());
       }},
      {op(Ops::GEP).named("x"),
       [](M m, R& ctx) -> Str {  // v[0] or v.x
         UOp x = m["x"];
         int64_t i = as_int(x.arg<Tuple>().at(0));
         if (x.src(0).dtype().count() > ctx.gep_arr_threshold) return cat(ctx[x.src(0)], "[", i, "]");
         return cat(ctx[x.src(0)], ".", "xyzwabcd"[i]);
       }},
      // custom passes through with format
      {op({Ops::CUSTOM, Ops::CUSTOMI}).named("x"),
       [](M m, R& ctx) -> Str {  // arg.format(*srcs)
         std::vector<std::string> args;
         for (const UOp& y : m["x"].src()) args.push_back(ctx[y]);
         return py_format(m["x"].arg<std::string>(), args);
       }},
  };
  return pm;
}

// *** extra_pm: uop -> uop, before linearizing ***

// an ALU on vectors -> a VECTORIZE of scalar ALUs on GEPs
static UOp no_vectorized_alu_rule(M m) { return no_vectorized_alu(m["alu"]); }

// where(c, a, b) with every lane of c a constant -> the vector of a's lanes where c is true and b's elsewhere
static UOp where_of_constant_lanes(const UOp& alu) {
  const int n = alu.dtype().vcount();
  if (n == 1) return {};
  std::vector<UOp> lanes;
  for (int i = 0; i < n; i++) {
    UOp c = alu.src(0).gep(i);
    if (c.op() != Ops::CONST) return {};
    lanes.push_back(alu.src(as_bool(c.const_arg()) ? 1 : 2).gep(i));
  }
  return UOp::make(Ops::VECTORIZE, alu.dtype(), std::move(lanes));
}

const PatternMatcher<UOp>& extra_pm() {
  static const PatternMatcher<UOp> pm = {
      // insert a NOOP before BITCAST to force it to be rendered. not needed on all backends?
      {op(Ops::BITCAST).named("x"),
       [](M m) -> UOp {  // bitcast(x) -> bitcast(noop(x))
         UOp x = m["x"];
         if (OpSet{Ops::NOOP, Ops::LOAD, Ops::CUSTOM}.has(x.src(0).op())) return {};
         return UOp::make(Ops::BITCAST, x.dtype(), {UOp::make(Ops::NOOP, x.src(0).dtype(), x.src())});
       }},
      // rewrite MAX to CMPLT + WHERE (max function is annoying on many cstyle backends)
      {op(Ops::MAX).named("m"),
       [](M m) {
         return (m["m"].src(0) < m["m"].src(1)).where(m["m"].src(1), m["m"].src(0));
       }},  // max(a,b) -> (a<b)?b:a
      // devectorize any bools
      {op(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::ASSIGN, Ops::INDEX}).dtype(dtypes::bool_).named("alu"),
       no_vectorized_alu_rule},  // bool4 alu -> 4 bool alus
      {op(Ops::CAST, {var("", {dtypes::bool_})}).named("alu"),
       no_vectorized_alu_rule},  // CAST (from bool) can't be vectorized
      // ours: a WHERE whose condition is a constant in each lane picks whole lanes of its operands (an unrolled
      // nibble select: the low half of a block's lanes from one shift, the high half from the other)
      {op(Ops::WHERE).named("alu"), [](M m) { return where_of_constant_lanes(m["alu"]); }},
      // ours: one condition for every lane (a K-quant's sub-block select, the same across a block's lanes) selects
      // whole vectors: C's ?: takes a scalar condition and vector operands
      {op(Ops::WHERE, {op(Ops::VECTORIZE).named("c"), var("a"), var("b")}).named("alu"),
       [](M m) -> UOp {
         const UOp& c = m["c"];
         if (std::any_of(c.src().begin(), c.src().end(), [&](const UOp& s) { return s != c.src(0); })) return {};
         return UOp::make(Ops::WHERE, m["alu"].dtype(), {c.src(0), m["a"], m["b"]});
       }},
      {op(Ops::WHERE).named("alu"),  // WHERE can't be vectorized, but for a scalar condition
       [](M m) { return m["alu"].src(0).dtype().count() == 1 ? UOp{} : no_vectorized_alu(m["alu"]); }},
  };
  return pm;
}

// *** CStyleLanguage ***

CStyleLanguage::CStyleLanguage() {
  extra_matcher = &extra_pm();
  code_for_op = {Ops::SQRT,  Ops::RECIP, Ops::NEG, Ops::EXP2,  Ops::LOG2, Ops::SIN, Ops::AND,
                 Ops::XOR,   Ops::OR,    Ops::ADD, Ops::SUB,   Ops::MUL,  Ops::MOD, Ops::IDIV,
                 Ops::CMPNE, Ops::SHR,   Ops::SHL, Ops::CMPLT, Ops::WHERE};
}

Str CStyleLanguage::render_op(Ops op, const std::vector<std::string>& a, DType) const {
  if (!code_for_op.has(op)) return std::nullopt;
  switch (op) {
    case Ops::SQRT: return cat("sqrt(", a[0], ")");
    case Ops::RECIP: return cat("(1/", a[0], ")");
    case Ops::NEG: return cat("-", a[0]);
    case Ops::EXP2: return cat("exp2(", a[0], ")");
    case Ops::LOG2: return cat("log2(", a[0], ")");
    case Ops::SIN: return cat("sin(", a[0], ")");
    case Ops::AND: return cat("(", a[0], "&", a[1], ")");
    case Ops::XOR: return cat("(", a[0], "^", a[1], ")");
    case Ops::OR: return cat("(", a[0], "|", a[1], ")");
    case Ops::ADD: return cat("(", a[0], "+", a[1], ")");
    case Ops::SUB: return cat("(", a[0], "-", a[1], ")");
    case Ops::MUL: return cat("(", a[0], "*", a[1], ")");
    case Ops::MOD: return cat("(", a[0], "%", a[1], ")");
    case Ops::IDIV: return cat("(", a[0], "/", a[1], ")");
    case Ops::CMPNE: return cat("(", a[0], "!=", a[1], ")");
    case Ops::SHR: return cat("(", a[0], ">>", a[1], ")");
    case Ops::SHL: return cat("(", a[0], "<<", a[1], ")");
    case Ops::CMPLT: return cat("(", a[0], "<", a[1], ")");
    case Ops::WHERE: return cat("(", a[0], "?", a[1], ":", a[2], ")");
    default: return std::nullopt;
  }
}

Str CStyleLanguage::code_for_workitem(char, const std::string&) const { return std::nullopt; }

std::string CStyleLanguage::render_cast(DType dt, const std::string& val) const {
  return cat("(", render_dtype(dt), ")(", val, ")");
}

std::string CStyleLanguage::render_dtype(DType dt, bool is_mutable) const {
  if (dt.is_image()) return cat(is_mutable ? "write_only" : "read_only", " image2d_t");
  if (dt.is_ptr()) {
    return (dt.local() && smem_prefix_for_cast ? smem_prefix : buffer_prefix) + render_dtype(dt.base()) + "*";
  }
  DType scalar = dt.scalar();
  std::string name = scalar.name();
  for (const auto& [d, n] : type_map)
    if (d == scalar) name = n;
  if (dt.count() > 1) return str_replace_all(name, " ", "_") + std::to_string(dt.count());
  return name;
}

std::string CStyleLanguage::render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                                          const std::vector<KernelParam>& bufs, const std::vector<UOp>& uops,
                                          const std::optional<std::vector<std::string>>& prefix) const {
  bool has_image = false;
  std::vector<std::string> params;
  for (const KernelParam& b : bufs) {
    has_image |= b.dtype.is_image();
    std::string t = b.dtype.is_image() || b.dtype.is_ptr() ? render_dtype(b.dtype, b.is_mutable) + buffer_suffix
                    : b.dtype == dtypes::int32             ? arg_int_prefix
                                                           : render_dtype(b.dtype);  // NOTE: tinygrad prints None
    params.push_back(t + " " + b.name);
  }
  params.insert(params.end(), extra_args.begin(), extra_args.end());
  int64_t launch_bounds = 1;
  for (const UOp& u : uops)
    if (u.op() == Ops::SPECIAL && u.arg<SpecialArg>().name[0] == 'l') launch_bounds *= u.arg<SpecialArg>().size;
  std::string tmp =
      has_image ? "const sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;\n" : "";
  std::string prg = cat(str_replace_all(kernel_typedef, "{launch_bounds}", std::to_string(launch_bounds)), " ",
                        function_name, "(", join(params, ", "), ") {\n", tmp, join(kernel, "\n"), "\n}");
  return prefix ? join(*prefix, "\n") + "\n" + prg : prg;
}

const std::string& CStyleLanguage::operator[](const UOp& u) const {
  auto it = r_.find(u.get());
  TG_ASSERT(it != r_.end(), "uop rendered before its source: ", u.op());
  return it->second;
}

static std::string_view name_prefix(Ops op) {  // the variable name of a uop: prefix + counter
  switch (op) {
    case Ops::WMMA: return "wmma";
    case Ops::DEFINE_LOCAL: return "temp";
    case Ops::CONST: return "const";
    case Ops::CAST:
    case Ops::BITCAST:
    case Ops::VECTORIZE: return "cast";
    case Ops::GEP: return "gep";
    case Ops::NOOP: return "precast";
    case Ops::INDEX: return "bidx";
    case Ops::DEFINE_ACC: return "acc";
    case Ops::LOAD: return "val";
    default: return "alu";
  }
}

CStyleLanguage::Rendered CStyleLanguage::render_uops(const std::vector<UOp>& uops) {
  const bool expand_ssa = EXPAND_SSA != 0;
  r_.clear();
  std::unordered_map<const UOpNode*, int> child_count;
  for (const UOp& ru : uops)
    for (const UOp& v : ru.src()) child_count[v.get()]++;
  Rendered out{.name = "test", .kernel = {}, .bufs = {}};
  std::unordered_map<const UOpNode*, size_t> buf_pos;
  std::unordered_map<std::string_view, int> c;
  int depth = 1;
  reassociate_ = !uops.empty() && lowering_of(uops.back()).reassociate_reduces;
  for (const UOp& u : uops) {
    Ops op = u.op();
    if (op == Ops::SINK) {
      if (const KernelInfo* ki = as_kernel_info(u.arg())) out.name = ki->name;
      continue;
    }
    if (op == Ops::DEFINE_GLOBAL || op == Ops::DEFINE_VAR) {
      std::string name = op == Ops::DEFINE_GLOBAL ? cat("data", as_int(u.arg<ConstValue>())) : u.arg<VarArg>().name;
      r_[u.get()] = name;
      int64_t idx = op == Ops::DEFINE_GLOBAL ? as_int(u.arg<ConstValue>()) : 0;
      buf_pos[u.get()] = out.bufs.size();
      out.bufs.push_back({name, u.dtype(), op == Ops::DEFINE_GLOBAL, false, idx});
      continue;
    }
    // mark buffers that we store to writable
    if (op == Ops::STORE) {
      for (const UOp& up : u.src(0).toposort())
        if (up.op() == Ops::DEFINE_GLOBAL) out.bufs[buf_pos.at(up.get())].is_mutable = true;
    }
    // naming
    std::string_view prefix;
    if (op == Ops::SPECIAL)
      r_[u.get()] = u.arg<SpecialArg>().name;
    else if (op == Ops::RANGE)
      r_[u.get()] = cat("ridx", const_repr(u.arg<ConstValue>()));
    else {
      prefix = name_prefix(op);
      r_[u.get()] = cat(prefix, c[prefix]);
    }

    Str l = string_rewrite().rewrite(u, this);
    TG_ASSERT(l.has_value(), "failed to render ", op, " ", u.dtype(), " ", u.src().size(), " sources ",
              arg_repr(u.arg()));

    if (u.get() == split_range_) {  // the threaded variant's outermost loop runs this core's share of it
      TG_ASSERT(op == Ops::RANGE && depth == 1, "the loop split across threads must be the outermost RANGE");
      const std::string &i = r_.at(u.get()), &end = r_.at(u.src(0).get()), t = render_dtype(u.dtype());
      out.kernel.push_back(cat("  ", t, " tg_lo = (", t, ")((long long)(", end, ")*tg_core/tg_ncores);"));
      out.kernel.push_back(cat("  ", t, " tg_hi = (", t, ")((long long)(", end, ")*(tg_core+1)/tg_ncores);"));
      l = cat("for (", t, " ", i, " = tg_lo; ", i, " < tg_hi; ", i, "++) {");
    }
    if (op == Ops::ENDIF || op == Ops::ENDRANGE) depth--;
    static constexpr OpSet always_inline{Ops::CONST, Ops::GEP, Ops::INDEX, Ops::CUSTOMI};
    static constexpr OpSet single_use_inline =
        OpSet{Ops::VECTORIZE, Ops::CAST, Ops::BITCAST} | (GroupOp::ALU - OpSet{Ops::WHERE});
    if ((op != Ops::CAST || u.dtype().vcount() == 1) &&
        (always_inline.has(op) || (single_use_inline.has(op) && child_count[u.get()] == 1 && !expand_ssa))) {
      r_[u.get()] = *l;
    } else {
      if (op == Ops::RANGE || op == Ops::ASSIGN || op == Ops::DEFINE_LOCAL || u.dtype() == dtypes::void_) {
        if (op == Ops::ASSIGN) r_[u.get()] = r_.at(u.src(0).get());
      } else {
        l = cat(render_dtype(u.dtype()), " ", r_[u.get()], " = ", *l, op != Ops::SPECIAL ? ";" : "");
      }
      out.kernel.push_back(std::string(2 * static_cast<size_t>(depth), ' ') + *l);
      if (!prefix.empty()) c[prefix]++;  // if it was used, increment
    }
    if (op == Ops::IF || op == Ops::RANGE) depth++;
  }
  r_.clear();
  set_var_indices(out.bufs);
  return out;
}

std::string CStyleLanguage::render(const std::vector<UOp>& uops) {
  Rendered rd = render_uops(uops);
  return render_kernel(rd.name, rd.kernel, rd.bufs, uops);
}

// *** ClangRenderer ***

const RenderOpts& RenderOpts::cpu() {
  static const RenderOpts r = ClangRenderer();  // its capabilities, sliced off the renderer
  return r;
}

ClangRenderer::ClangRenderer() {
  device = "CPU";
  // exp2, log2 and sin as polynomials (uop/transcendental.h), as the reference renders them for clang: every kernel
  // computes them with the same bits (a kernel that recomputes another's value, as a max pool's backward compares its
  // recomputed inputs with the forward's max, must), and a plain loop vectorizes them
  code_for_op = code_for_op - OpSet{Ops::EXP2, Ops::LOG2, Ops::SIN};
  float4 = "(float4)";
  float4_style = {"{", "}"};
  gep_arr_threshold = 0;
  has_local = false;
  global_max = std::nullopt;
  dot_products = true;
  upcast_max = 64;  // the CPU's vector tiles (codegen/cpu_tiles.cpp): 64 rows of a packed int8 weight
  infinity = "__builtin_inff()";
  nan = "__builtin_nanf(\"\")";
  // TODO: AMX tensor cores
  buffer_suffix = " restrict";
  type_map = {{dtypes::bool_, "_Bool"}, {dtypes::half, "__fp16"}, {dtypes::bfloat16, "unsigned short"}};
  extra_matcher = &clang_extra_matcher();
  // NOTE: tinygrad uses "__attribute__((ms_abi)) void" as kernel_typedef on win32
}

std::string ClangRenderer::render_reassociated(const std::string& statement) const {
  return cat("{ _Pragma(\"clang fp reassociate(on)\") ", statement, " }");
}

Str ClangRenderer::render_op(Ops op, const std::vector<std::string>& a, DType dtype) const {
  const char* f = dtype.scalar() == dtypes::float64 ? "" : "f";
  if (op == Ops::SQRT) return cat("__builtin_sqrt", f, "(", a[0], ")");
  return CStyleLanguage::render_op(op, a, dtype);
}

// bfloat16 without the compiler's __bf16 (clang 14 has none on x86): stored as unsigned short, computed in float.
// A cast to float puts the 16 bits on top of a float's; a cast from float rounds to nearest even (NaN stays NaN);
// ALUs on bfloat16 run on floats and round back; a const renders as its bits (pm_render's CONST rule).
static UOp bf16_to_float(const UOp& x) {
  return (x.bitcast(dtypes::uint16).cast(dtypes::uint32).alu(Ops::SHL, {UOp::const_(dtypes::uint32, int64_t(16))}))
      .bitcast(dtypes::float32);
}
static UOp float_to_bf16(const UOp& f) {
  UOp u = f.bitcast(dtypes::uint32), c16 = UOp::const_(dtypes::uint32, int64_t(16));
  UOp odd = u.alu(Ops::SHR, {c16}) & UOp::const_(dtypes::uint32, int64_t(1));
  UOp rounded = (u + (odd + UOp::const_(dtypes::uint32, int64_t(0x7FFF)))).alu(Ops::SHR, {c16});
  return f.ne(f)
      .where(UOp::const_(dtypes::uint32, int64_t(0x7FC0)), rounded)
      .cast(dtypes::uint16)
      .bitcast(dtypes::bfloat16);
}
const PatternMatcher<UOp>& software_bf16() {
  static const OpSet computed = GroupOp::ALU - OpSet{Ops::WHERE};
  static const PatternMatcher<UOp> pm = {
      {op(computed | OpSet{Ops::CAST}).named("alu"),
       [](M m) -> UOp {  // an ALU or cast making or reading bf16 vectors: one lane at a time
         const UOp& alu = m["alu"];
         auto bf16_vec = [](const UOp& x) { return x.dtype().scalar() == dtypes::bfloat16 && x.dtype().count() > 1; };
         bool vec = bf16_vec(alu) || std::any_of(alu.src().begin(), alu.src().end(), bf16_vec);
         return vec ? no_vectorized_alu(alu) : UOp{};
       }},
      {op(Ops::CAST, {var("x", {dtypes::bfloat16})}).named("c"),
       [](M m) -> UOp {  // bf16 -> T: through float
         UOp c = m["c"], x = m["x"];
         if (c.dtype() == dtypes::bfloat16 || x.dtype().count() > 1) return {};
         UOp f = bf16_to_float(x);
         return c.dtype() == dtypes::float32 ? f : f.cast(c.dtype());
       }},
      {op(Ops::CAST, {var("x")}).dtype(dtypes::bfloat16).named("c"),
       [](M m) -> UOp {  // T -> bf16: from float, rounded
         UOp x = m["x"];
         if (x.dtype() == dtypes::bfloat16 || x.dtype().count() > 1) return {};
         return float_to_bf16(x.dtype() == dtypes::float32 ? x : x.cast(dtypes::float32));
       }},
      {op(computed).named("alu"),
       [](M m) -> UOp {  // an ALU with bf16 sources: on floats, its result rounded back when it is bf16
         UOp alu = m["alu"];
         bool any = false;
         std::vector<UOp> src;
         for (const UOp& x : alu.src()) {
           any = any || x.dtype() == dtypes::bfloat16;
           src.push_back(x.dtype() == dtypes::bfloat16 ? x.cast(dtypes::float32) : x);
         }
         if (!any || alu.dtype().count() > 1) return {};
         DType out = alu.dtype() == dtypes::bfloat16 ? DType(dtypes::float32) : alu.dtype();
         UOp f = UOp::make(alu.op(), out, src, alu.arg());
         return alu.dtype() == dtypes::bfloat16 ? f.cast(dtypes::bfloat16) : f;
       }},
  };
  return pm;
}

// ours: lanes of a vector ALU whose every source repeats in the same lanes (a block's scale broadcast over its
// weights, built from a few loads) are computed once: the op on the distinct lanes (a power of two of them, at most
// half), then a shuffle out to the full width. Without it the C compiler builds each operand lane by lane (a byte
// insert a lane) before the op. The lanes of a source: a VECTORIZE's sources, a GEP's indices, a constant's values
static UOp dedup_lanes(const UOp& alu) {
  const int64_t n = alu.dtype().count();
  if (n < 4 || alu.src().empty()) return {};
  // a source of other ops has n distinct lanes (the cheap test first: most vector ALUs of a kernel end here)
  for (const UOp& s : alu.src())
    if (s.dtype().count() != n || !OpSet{Ops::VECTORIZE, Ops::CONST, Ops::VCONST, Ops::GEP}.has(s.op())) return {};
  std::vector<std::vector<int64_t>> keys(static_cast<size_t>(n));  // lane -> one key per source
  for (const UOp& s : alu.src()) {
    std::unordered_map<const UOpNode*, int64_t> first;  // a VECTORIZE's source -> the first lane it is in
    for (int64_t i = 0; i < n; i++) {
      int64_t k = i;
      if (s.op() == Ops::VECTORIZE) {
        k = first.emplace(s.src(static_cast<size_t>(i)).get(), i).first->second;
      } else if (s.op() == Ops::CONST) {
        k = 0;
      } else if (s.op() == Ops::VCONST) {
        const Tuple& v = s.arg<Tuple>();
        for (k = 0; k < i && !(v[static_cast<size_t>(k)] == v[static_cast<size_t>(i)]);) k++;
      } else if (s.op() == Ops::GEP) {
        k = tuple_ints(s.arg())[static_cast<size_t>(i)];
      }
      keys[static_cast<size_t>(i)].push_back(k);
    }
  }
  std::vector<int64_t> uniq, idx;
  std::map<std::vector<int64_t>, int64_t> at_of;  // a lane's keys -> its place among the distinct lanes
  for (int64_t i = 0; i < n; i++) {
    auto [it, fresh] = at_of.emplace(keys[static_cast<size_t>(i)], static_cast<int64_t>(uniq.size()));
    if (fresh) {
      if (2 * static_cast<int64_t>(uniq.size() + 1) > n) return {};  // more than half the lanes distinct: not worth it
      uniq.push_back(i);
    }
    idx.push_back(it->second);
  }
  const int64_t u = static_cast<int64_t>(uniq.size());
  if (u * 2 > n || (u & (u - 1)) != 0) return {};
  auto lanes = [&](const UOp& s) -> UOp {  // s's lanes uniq, folded where s is a VECTORIZE, constant or GEP
    if (s.op() == Ops::VECTORIZE || s.op() == Ops::CONST || s.op() == Ops::VCONST || u == 1) {
      std::vector<UOp> xs;
      for (int64_t i : uniq) xs.push_back(s.gep(i));
      return u == 1 ? xs[0] : UOp::make(Ops::VECTORIZE, s.dtype().scalar().vec(static_cast<int>(u)), xs);
    }
    if (s.op() == Ops::GEP) {
      auto g = tuple_ints(s.arg());
      std::vector<int64_t> sel;
      for (int64_t i : uniq) sel.push_back(g[static_cast<size_t>(i)]);
      return s.src(0).gep(sel);
    }
    return s.gep(uniq);
  };
  std::vector<UOp> src;
  for (const UOp& s : alu.src()) src.push_back(lanes(s));
  UOp small = UOp::make(alu.op(), alu.dtype().scalar().vec(static_cast<int>(u)), src, alu.arg());
  return u == 1 ? small.broadcast(static_cast<int>(n)) : small.gep(idx);
}

// ours: a widening conversion of halves put together from the lanes of whole vectors (a tile's scales, loaded 16 rows
// at a time) converts each vector and puts the floats together. Clang 14 holds a vector of __fp16 in integer
// registers and builds the put-together one a word insert per lane (42 of a packed int8 matmul's 260 instructions a
// block); each vector's own conversion is one vcvtph2ps. nullopt unless every lane comes from a whole vector, in order
static UOp widen_halves_by_piece(const UOp& c) {
  const UOp& v = c.src(0);
  if (v.op() != Ops::VECTORIZE || v.dtype().scalar() != dtypes::float16 || c.dtype().scalar() != dtypes::float32)
    return {};
  std::vector<UOp> lanes;
  for (size_t i = 0; i < v.src().size();) {
    const UOp& g = v.src(i);
    if (g.op() != Ops::GEP || g.dtype().count() != 1 || g.src(0).dtype().count() < 2) return {};
    const UOp& piece = g.src(0);
    const auto n = static_cast<size_t>(piece.dtype().count());
    if (i + n > v.src().size()) return {};
    for (size_t k = 0; k < n; k++) {
      const UOp& gk = v.src(i + k);
      if (gk.op() != Ops::GEP || gk.src(0) != piece || tuple_ints(gk.arg())[0] != static_cast<int64_t>(k)) return {};
    }
    UOp f = piece.cast(dtypes::float32.vec(static_cast<int>(n)));
    for (size_t k = 0; k < n; k++) lanes.push_back(f.gep(static_cast<int64_t>(k)));
    i += n;
  }
  return UOp::make(Ops::VECTORIZE, c.dtype(), lanes);
}

// ours: lanes of vectors converted between half and float one by one and put together again (a devectorized kernel's
// casts feeding a vector store: a float16 weight copied to float32 for a prefill's matmul, 4 x 4 blocks transposed
// on the way into the matmul's layout) -> each vector converted whole, the lanes taken from the floats (halves).
// Clang 14 converts each __fp16 lane on its own (a word extract, a vcvtph2ps and a lane insert each: TinyLlama's
// 46 MB copies ran at 3-6 GB/s); a whole vector's conversion is one vcvtph2ps (vcvtps2ph), its load folded in.
// nullopt unless every lane is such a cast of a lane of a vector
static UOp convert_whole_vectors(const UOp& v) {
  const UOp& c0 = v.src(0);
  if (c0.op() != Ops::CAST || c0.src(0).op() != Ops::GEP) return {};
  const DType from = c0.src(0).dtype(), to = c0.dtype();
  if (!((from == dtypes::float16 && to == dtypes::float32) || (from == dtypes::float32 && to == dtypes::float16)))
    return {};
  std::vector<UOp> lanes;
  for (const UOp& l : v.src()) {
    if (l.op() != Ops::CAST || l.dtype() != to || l.src(0).op() != Ops::GEP || l.src(0).dtype() != from) return {};
    const UOp& x = l.src(0).src(0);
    const int n = x.dtype().vcount();
    if (n < 2 || !std::has_single_bit(static_cast<unsigned>(n)) || x.dtype().is_ptr()) return {};
    lanes.push_back(x.cast(to.vec(n)).gep(tuple_ints(l.src(0).arg())[0]));
  }
  // one vector's lanes in order: the vector itself
  const UOp& whole = lanes[0].src(0);
  bool in_order = whole.dtype().vcount() == static_cast<int>(lanes.size());
  for (size_t i = 0; in_order && i < lanes.size(); i++)
    in_order = lanes[i].src(0) == whole && tuple_ints(lanes[i].arg())[0] == static_cast<int64_t>(i);
  return in_order ? whole : UOp::make(Ops::VECTORIZE, v.dtype(), std::move(lanes));
}

// ours: a select of float lanes by a comparison of 32-bit lanes, as masks: C's comparison of two vectors is a vector
// of 0 / -1 ints, and (m & a) | (~m & b) a blend, where the generic rules split a WHERE (and each MAX, a WHERE of a
// CMPLT) into a scalar ?: per lane, as they must for a bool vector. The devectorized comparisons (bottom-up, the
// condition's lanes come split) are put back together. (A GELU's backward fused into a 4096 x 384 x 1536 matmul,
// its clamps and NaN checks: AVX-512 20 -> 15 ms, AVX2 27 -> 25.) nullopt where a lane is not such a comparison
static UOp where_by_mask(const UOp& w) {
  const int n = w.dtype().vcount();
  const DType vt = w.dtype().scalar();
  // (floats: an integer select may be part of a product the dot-product helper takes lane by lane, IQ4_NL's table)
  // (and C's vectors have 2^k lanes)
  if (n < 2 || !std::has_single_bit(static_cast<unsigned>(n)) || vt != dtypes::float32) return {};
  const UOp& c = w.src(0);
  if (c.op() != Ops::VECTORIZE && c.op() != Ops::CMPLT && c.op() != Ops::CMPNE) return {};
  const std::vector<UOp> cmps = c.op() == Ops::VECTORIZE ? c.src() : std::vector<UOp>{c};
  // one condition for every lane (a K-quant's sub-block): C's ?: selects whole vectors (extra_pm)
  auto uniform = [](const UOp& v) {  // the same in every lane: consts and splats, and ALUs of them (up to 64 nodes)
    std::vector<UOp> stack{v};
    for (int seen = 0; !stack.empty(); seen++) {
      UOp u = stack.back();
      stack.pop_back();
      if (seen == 64) return false;
      if (u.op() == Ops::CONST || u.dtype().vcount() == 1) continue;
      if (u.op() == Ops::VECTORIZE) {
        if (!std::all_of(u.src().begin(), u.src().end(), [&](const UOp& l) { return l == u.src(0); })) return false;
      } else if (GroupOp::ALU.has(u.op())) {
        stack.insert(stack.end(), u.src().begin(), u.src().end());
      } else {
        return false;
      }
    }
    return true;
  };
  if (cmps.size() > 1 ? uniform(c) : uniform(c.src(0)) && uniform(c.src(1))) return {};
  const Ops cmp = cmps[0].op();
  if (cmp != Ops::CMPLT && cmp != Ops::CMPNE) return {};
  std::vector<UOp> lhs, rhs;
  for (const UOp& l : cmps) {
    if (l.op() != cmp) return {};
    const DType st = l.src(0).dtype();
    if (st.itemsize() != 4 || st.vcount() != l.dtype().vcount() || st.scalar() != cmps[0].src(0).dtype().scalar() ||
        !(dtypes::is_float(st.scalar()) || dtypes::is_int(st.scalar())))
      return {};
    lhs.push_back(l.src(0));
    rhs.push_back(l.src(1));
  }
  const DType cst = cmps[0].src(0).dtype().scalar(), mt = dtypes::int32.vec(n);
  auto whole = [&](const std::vector<UOp>& lanes) {  // lanes 0..n-1 of one vector: that vector
    if (lanes.size() == 1) return lanes[0];
    const UOp& x = lanes[0].op() == Ops::GEP ? lanes[0].src(0) : lanes[0];
    bool in_order = x.dtype().vcount() == n;
    for (int i = 0; in_order && i < n; i++) {
      const UOp& g = lanes[static_cast<size_t>(i)];
      in_order = g.op() == Ops::GEP && g.src(0) == x && tuple_ints(g.arg()) == std::vector<int64_t>{i};
    }
    return in_order ? x : UOp::make(Ops::VECTORIZE, cst.vec(n), lanes);
  };
  const UOp m = UOp::make(cmp, mt, {whole(lhs), whole(rhs)});
  const UOp ones = UOp::const_(dtypes::int32, int64_t(-1)).broadcast(n);
  const UOp blend = (m & w.src(1).bitcast(mt)) | ((m ^ ones) & w.src(2).bitcast(mt));
  return blend.bitcast(w.dtype());
}

const PatternMatcher<UOp>& clang_extra_matcher() {
  static const PatternMatcher<UOp> pm =
      software_bf16() +
      PatternMatcher<UOp>{
          // LLVM legalizes double => half cast on systems that don't support it natively (like x86 cpus without
          // AVX512-FP16) into a compiler-rt libcall.
          {var("x", {dtypes::float64}).cast(dtypes::float16),
           [](M m) {
             return m["x"].cast(dtypes::float32).cast(dtypes::float16);
           }},                                                   // (half)double -> (half)(float)double
          {op(Ops::SQRT).named("alu"), no_vectorized_alu_rule},  // sqrt(float4) -> 4 sqrts
          {op(Ops::WHERE).named("w"), [](M m) { return where_by_mask(m["w"]); }},
          {op(Ops::CAST).named("c"), [](M m) { return widen_halves_by_piece(m["c"]); }},
          {op(Ops::VECTORIZE).named("v"), [](M m) { return convert_whole_vectors(m["v"]); }},
          {op(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST}).named("alu"), [](M m) { return dedup_lanes(m["alu"]); }},
          // ours: four lanes' 8-bit products summed -> the dot-product helper (vpdpbusd where the target has it)
          {op(Ops::ADD).named("x"),
           [](M m) {
             std::optional<UOp> d = clang_dot4(m["x"]);
             if (!d) d = clang_dot4_sum(m["x"]);
             return d ? *d : UOp{};
           }},
      } +
      extra_pm();
  return pm;
}

std::string ClangRenderer::render_vector_prefix(DType dt) const {
  // round (down) to power of two (this is actually the default clang behavior)
  int64_t alignment = ALIGNED ? int64_t(1) << static_cast<int>(std::log2(dt.itemsize())) : 1;
  if (unaligned_vector_type(*this, dt)) alignment = dt.scalar().itemsize();  // loaded from any address
  return cat("typedef ", render_dtype(dt.scalar()), " ", render_dtype(dt), " __attribute__((aligned(", alignment,
             "),vector_size(", dt.itemsize(), ")));");
}

std::vector<DType> uops_to_dtypes(const std::vector<UOp>& uops) {
  std::vector<DType> seen;
  for (const UOp& u : uops) {
    DType dt = u.dtype();
    if (!dt.is_ptr() && !dt.is_image() && !contains(seen, dt)) seen.push_back(dt);
  }
  return seen;
}

std::vector<std::string> ClangRenderer::render_defines(const std::vector<UOp>& uops) const {
  std::vector<std::string> prefix;
  std::vector<DType> dts = uops_to_dtypes(uops);
  for (DType dt : dot4_dtypes(uops))  // what the dot helpers use that the kernel may not
    if (!contains(dts, dt)) dts.push_back(dt);
  for (DType dt : dts)
    if (dt.count() > 1) prefix.push_back(render_vector_prefix(dt));
  // TODO: the AMX defines for WMMA
  for (std::string& f : render_dot4_defines(uops)) prefix.push_back(std::move(f));
  return prefix;
}

std::string ClangRenderer::render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                                         const std::vector<KernelParam>& bufs, const std::vector<UOp>& uops,
                                         const std::optional<std::vector<std::string>>& prefix) const {
  // tinygrad's _render_entry is empty for the CPU: the entry shim is added by the runtime, see entry_shim
  return join(render_defines(uops), "\n") + "\n" +
         CStyleLanguage::render_kernel(function_name, kernel, bufs, uops, prefix) + "\n";
}

std::optional<UOp> ClangRenderer::thread_split_range(const std::vector<UOp>& uops, int64_t global_axes) {
  size_t start = 0;
  std::vector<const UOpNode*> stored;
  for (const UOp& u : uops)
    if (u.op() == Ops::STORE)
      for (const UOp& b : u.src(0).toposort())
        if (b.op() == Ops::DEFINE_GLOBAL) stored.push_back(b.get());
  // before the loop: only what every core may compute for itself (no stores, no accumulators, no other loops), and
  // loads only of buffers the kernel does not write
  for (; start < uops.size() && uops[start].op() != Ops::RANGE; start++) {
    const UOp& u = uops[start];
    static constexpr OpSet pure =
        GroupOp::ALU | OpSet{Ops::DEFINE_GLOBAL, Ops::DEFINE_VAR, Ops::CONST, Ops::VCONST, Ops::CAST, Ops::BITCAST,
                             Ops::VECTORIZE,     Ops::GEP,        Ops::INDEX, Ops::NOOP,   Ops::SINK};
    if (u.op() == Ops::LOAD) {
      for (const UOp& b : u.src(0).toposort())
        if (b.op() == Ops::DEFINE_GLOBAL && std::find(stored.begin(), stored.end(), b.get()) != stored.end())
          return std::nullopt;
    } else if (!pure.has(u.op())) {
      return std::nullopt;
    }
  }
  if (start == uops.size()) return std::nullopt;
  const UOp& r = uops[start];
  const auto* axis = std::get_if<int64_t>(&r.arg<ConstValue>());
  if (axis == nullptr || *axis >= global_axes || r.dtype() != dtypes::int32) return std::nullopt;
  // after the loop: nothing but the SINK
  size_t end = start + 1;
  while (end < uops.size() && !(uops[end].op() == Ops::ENDRANGE && uops[end].src(0) == r)) end++;
  if (end == uops.size()) return std::nullopt;
  for (size_t i = end + 1; i < uops.size(); i++)
    if (uops[i].op() != Ops::SINK) return std::nullopt;
  return r;
}

std::string ClangRenderer::render_threaded(const std::vector<UOp>& uops, const UOp& split_range) {
  split_range_ = split_range.get();
  Rendered rd;
  try {
    rd = render_uops(uops);
  } catch (...) {
    split_range_ = nullptr;
    throw;
  }
  split_range_ = nullptr;
  for (const char* name : {"tg_core", "tg_ncores"})
    rd.bufs.push_back({.name = name, .dtype = dtypes::int32, .is_buffer = false, .is_mutable = false, .index = 0});
  return render_kernel(rd.name, rd.kernel, rd.bufs, uops);
}

std::string ClangRenderer::entry_shim(const std::string& function_name, const std::vector<KernelParam>& params,
                                      bool threaded) const {
  std::vector<std::string> args;
  size_t nbuf = 0;
  for (const KernelParam& p : params) {
    if (p.is_buffer)
      args.push_back(cat("(", render_dtype(p.dtype, p.is_mutable), ")bufs[", nbuf++, "]"));
    else
      args.push_back(cat("(", render_dtype(p.dtype), ")vars[", p.index, "]"));
  }
  if (!threaded)
    return cat("void tg_entry_", function_name, "(void** bufs, const long long* vars) { ", function_name, "(",
               join(args, ", "), "); }\n");
  std::string a = join(args, ", ") + (args.empty() ? "" : ", ");
  return cat("void tg_entry_", function_name, "(void** bufs, const long long* vars) { ", function_name, "(", a,
             "0, 1); }\nvoid tg_entry_threads_", function_name,
             "(void** bufs, const long long* vars, int core, int ncores) { ", function_name, "(", a,
             "core, ncores); }\n");
}

}  // namespace tg
