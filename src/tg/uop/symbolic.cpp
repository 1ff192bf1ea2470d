#include "tg/uop/symbolic.h"

namespace tg {

// *** constant folding ***

static UOp fold_alu(M m) {
  UOp a = m["a"];
  std::vector<ConstValue> args;
  for (const UOp& s : a.src()) args.push_back(s.const_arg());
  return a.const_like(exec_alu(a.op(), a.dtype(), args));
}

const PatternMatcher<UOp>& symbolic_simple() {
  using namespace pat;
  static const PatternMatcher<UOp> pm = {
      // *** self folding ***
      {x + 0, x},                                                  // x+0 -> x
      {x * 1, x},                                                  // x*1 -> x
      {idiv(x, 1), x},                                             // x//1 -> x
      {idiv(x, x), [](M m) { return m[x].const_like(1); }},        // x//x -> 1
      {x % x, [](M m) { return m[x].const_like(0); }},             // x%x -> 0
      // *** constant folding ***
      {op(GroupOp::Unary, {cvar("", {}, false)}).named("a"), fold_alu},
      {op(GroupOp::Binary - Ops::THREEFRY, {cvar("", {}, false), cvar("", {}, false)}).named("a"), fold_alu},
      {op(GroupOp::Ternary, {cvar("", {}, false), cvar("", {}, false), cvar("", {}, false)}).named("a"), fold_alu},
  };
  return pm;
}

const PatternMatcher<UOp>& symbolic() {
  static const PatternMatcher<UOp> pm = symbolic_simple();
  return pm;
}

const PatternMatcher<UOp>& sym() {
  static const PatternMatcher<UOp> pm = symbolic();
  return pm;
}

// *** render: expressions to text through NOOP nodes (tinygrad's `renderer`) ***

static const char* sym_of(Ops o) {
  switch (o) {
    case Ops::ADD: return "+";
    case Ops::SUB: return "-";
    case Ops::IDIV: return "//";
    case Ops::MOD: return "%";
    case Ops::SHL: return "<<";
    case Ops::SHR: return ">>";
    case Ops::MUL: return "*";
    case Ops::CMPLT: return "<";
    case Ops::CMPNE: return "!=";
    case Ops::AND: return "&";
    case Ops::OR: return "|";
    case Ops::XOR: return "^";
    default: return nullptr;
  }
}
static UOp noop(std::string s) { return UOp::make(Ops::NOOP, dtypes::void_, {}, std::move(s)); }
static const std::string& txt(const UOp& u) { return u.arg<std::string>(); }

const PatternMatcher<UOp>& pm_render_expr() {
  static const PatternMatcher<UOp> pm = {
      {op(Ops::DEFINE_VAR).named("x"), [](M m) { return noop(m["x"].arg<VarArg>().name); }},
      {op(Ops::SPECIAL).named("x"), [](M m) { return noop(m["x"].arg<SpecialArg>().name); }},
      {op(Ops::RANGE).named("x"), [](M m) { return noop(cat("ridx", arg_str(m["x"].arg()))); }},
      {op({Ops::CONST, Ops::VCONST}).named("x"), [](M m) { return noop(arg_str(m["x"].arg())); }},
      {op(Ops::UNROLL).named("x"), [](M m) { return noop(cat("UNROLL(", arg_str(m["x"].src(0).arg()), ", ", arg_str(m["x"].arg()), ")")); }},
      {op(Ops::CAST).named("x"), [](M m) {
         UOp u = m["x"];
         return noop(cat("(", u.dtype().repr().substr(7), ")(", arg_str(u.src(0).arg()), ")"));
       }},
      {op(Ops::LOAD), [](M) { return noop("load"); }},
      {op(Ops::BIND).each(op(Ops::NOOP)).named("x"), [](M m) { return m["x"].src(0); }},
      {op(Ops::NEG).each(op(Ops::NOOP)).named("x"), [](M m) { return noop(cat("(-", txt(m["x"].src(0)), ")")); }},
      {op(Ops::MAX).each(op(Ops::NOOP)).named("x"),
       [](M m) { return noop(cat("max(", txt(m["x"].src(0)), ", ", txt(m["x"].src(1)), ")")); }},
      {op(Ops::MULACC).each(op(Ops::NOOP)).named("x"), [](M m) {
         UOp u = m["x"];
         return noop(cat("(", txt(u.src(0)), "*", txt(u.src(1)), "+", txt(u.src(2)), ")"));
       }},
      {op(Ops::WHERE).each(op(Ops::NOOP)).named("x"), [](M m) {
         UOp u = m["x"];
         return noop(cat("(", txt(u.src(1)), " if ", txt(u.src(0)), " else ", txt(u.src(2)), ")"));
       }},
      {op(GroupOp::ALU).each(op(Ops::NOOP)).named("x"), [](M m) -> UOp {
         UOp u = m["x"];
         const char* s = sym_of(u.op());
         if (s == nullptr || u.src().size() != 2) return {};
         return noop(cat("(", txt(u.src(0)), s, txt(u.src(1)), ")"));
       }},
  };
  return pm;
}

UOp UOp::simplify() const { return graph_rewrite(*this, symbolic()); }

std::string UOp::render(bool simplify_first) const {
  UOp r = graph_rewrite(simplify_first ? simplify() : *this, pm_render_expr());
  return r.op() == Ops::NOOP ? r.arg<std::string>() : r.repr();
}

}  // namespace tg
