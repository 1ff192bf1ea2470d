#pragma once
// UPat and PatternMatcher: patterns are small immutable trees built with operators; rules are (pattern, function)
// pairs whose functions are captureless lambdas. One matcher template serves rewriting (R = UOp), rendering
// (R = std::optional<std::string>), verification (R = std::optional<bool>) and gradients.
#include <array>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tg/uop/trace.h"
#include "tg/uop/uop.h"

namespace tg {

struct UPatNode;

class UPat {
 public:
  UPat() = default;
  explicit UPat(std::shared_ptr<const UPatNode> p) : p_(std::move(p)) {}

  UPat named(std::string_view name) const;
  UPat dtype(DType d) const;
  UPat dtype(std::vector<DType> ds) const;
  UPat arg(Arg a) const;
  UPat any_len() const;     // allow_any_len=True
  UPat each(UPat p) const;  // src=UPat(...): every source matches p, any count
  UPat permuted() const;    // src as a list: try every order of the sources

  // builders copied from UOp, as tinygrad's UPat has them
  UPat cast(std::optional<DType> d = {}) const;
  UPat bitcast(std::optional<DType> d = {}) const;
  UPat gep(std::optional<int64_t> i = {}) const;
  UPat index(UPat idx) const;
  UPat index(UPat idx, UPat valid) const;
  UPat load(std::vector<UPat> more = {}) const;
  UPat store(std::vector<UPat> more) const;
  UPat or_casted(std::string_view name = "") const;
  UPat or_broadcasted() const;
  UPat alu(Ops op, std::vector<UPat> more = {}) const;  // commutative ops take their sources in any order
  UPat const_like(ConstValue v) const;

  const UPatNode* get() const { return p_.get(); }
  std::string repr() const;

 private:
  std::shared_ptr<const UPatNode> p_;
};

struct UPatNode {
  OpSet ops;                  // empty: any op
  std::vector<DType> dtypes;  // empty: any dtype
  std::optional<Arg> arg;
  std::string name;      // capture name, empty for none
  uint64_t name_id = 0;  // fnv1a(name)
  enum class Src : uint8_t { None, Tuple, Permute, Repeat, Any } mode = Src::None;
  std::vector<UPat> src;
  std::vector<const UPatNode*> src_nodes;
  bool strict_length = false, all_same = false;
  size_t required_len = 0;
  OpSet early_reject;  // ops that the node's direct sources must include
};

UPat op(OpSet ops);
UPat op(OpSet ops, std::vector<UPat> src);
UPat var(std::string_view name = "", std::vector<DType> dtypes = {});
UPat cvar(std::string_view name = "", std::vector<DType> dtypes = {}, bool vec = true);
UPat const_pat(std::optional<DType> dtype, ConstValue v);  // UPat.const
UPat any(std::vector<UPat> alternatives);                  // UPat.any

// *** captures: constexpr names, hashed at compile time ***

struct Var {
  const char* name;
  uint64_t id;
  constexpr explicit Var(const char* n) : name(n), id(fnv1a(n)) {}
  operator UPat() const { return var(name); }  // NOLINT: a capture is a pattern
  UPat dtype(std::vector<DType> ds) const { return var(name, std::move(ds)); }
  UPat dtype(DType d) const { return var(name, {d}); }
};
struct CVar {
  const char* name;
  uint64_t id;
  bool vec = true;
  constexpr explicit CVar(const char* n, bool v = true) : name(n), id(fnv1a(n)), vec(v) {}
  operator UPat() const { return cvar(name, {}, vec); }  // NOLINT
  UPat dtype(std::vector<DType> ds) const { return cvar(name, std::move(ds), vec); }
  UPat dtype(DType d) const { return cvar(name, {d}, vec); }
};
namespace pat {
inline constexpr Var x{"x"}, y{"y"}, z{"z"}, w{"w"};
inline constexpr CVar c0{"c0"}, c1{"c1"}, c2{"c2"}, c3{"c3"};
}  // namespace pat

// *** operators on patterns ***

template <class T>
concept PatLike = std::is_same_v<T, UPat> || std::is_same_v<T, Var> || std::is_same_v<T, CVar>;
template <class A, class B>
concept PatOperands = (PatLike<A> && (PatLike<B> || Scalar<B>)) || (Scalar<A> && PatLike<B>);

inline UPat to_upat(const UPat& p) { return p; }
inline UPat to_upat(const Var& v) { return v; }
inline UPat to_upat(const CVar& v) { return v; }
template <Scalar T>
UPat to_upat(T) = delete;
template <class A, class B>
UPat upat_binop(Ops op, const A& a, const B& b) {
  if constexpr (Scalar<A>) {
    UPat pb = to_upat(b);
    return pb.const_like(to_const(a)).alu(op, {pb});
  } else if constexpr (Scalar<B>) {
    UPat pa = to_upat(a);
    return pa.alu(op, {pa.const_like(to_const(b))});
  } else {
    return to_upat(a).alu(op, {to_upat(b)});
  }
}
#define TG_UPAT_BINOP(OPER, OPNAME) \
  template <class A, class B>       \
  requires PatOperands<A, B> UPat operator OPER(const A& a, const B& b) { return upat_binop(Ops::OPNAME, a, b); }
TG_UPAT_BINOP(+, ADD)
TG_UPAT_BINOP(*, MUL)
TG_UPAT_BINOP(%, MOD)
TG_UPAT_BINOP(&, AND)
TG_UPAT_BINOP(|, OR)
TG_UPAT_BINOP(^, XOR)
TG_UPAT_BINOP(<<, SHL)
TG_UPAT_BINOP(>>, SHR)
TG_UPAT_BINOP(<, CMPLT)
#undef TG_UPAT_BINOP
template <PatLike A>
UPat operator-(const A& a) {
  return upat_binop(Ops::MUL, a, -1);
}
template <class A, class B>
requires PatOperands<A, B> UPat operator-(const A& a, const B& b) {
  if constexpr (Scalar<B>)
    return upat_binop(Ops::ADD, a, -b);
  else
    return upat_binop(Ops::ADD, a, -to_upat(b));
}
template <class A, class B>
requires PatOperands<A, B> UPat idiv(const A& a, const B& b) { return upat_binop(Ops::IDIV, a, b); }
template <class A, class B>
requires PatOperands<A, B> UPat ne(const A& a, const B& b) { return upat_binop(Ops::CMPNE, a, b); }
template <class A, class B>
requires PatOperands<A, B> UPat maximum(const A& a, const B& b) { return upat_binop(Ops::MAX, a, b); }
template <class A, class B>
requires PatOperands<A, B> UPat fdiv(const A& a, const B& b) { return to_upat(a) * to_upat(b).alu(Ops::RECIP); }
template <PatLike A, PatLike B, PatLike C>
UPat where(const A& c, const B& t, const C& f) {
  return to_upat(c).alu(Ops::WHERE, {to_upat(t), to_upat(f)});
}

// *** matches ***

class Match {
 public:
  UOp operator[](const Var& v) const { return get(v.id, v.name); }
  UOp operator[](const CVar& v) const { return get(v.id, v.name); }
  UOp operator[](std::string_view name) const { return get(fnv1a(name), name); }
  bool has(std::string_view name) const;

  // used by the matcher
  static constexpr size_t kMax = 16;
  std::array<std::pair<uint64_t, const UOpNode*>, kMax> caps;
  size_t n = 0;

 private:
  UOp get(uint64_t id, std::string_view name) const;
};
using M = const Match&;

// the matching engine, type-erased: calls on_match for every way p matches u, until it returns true
using MatchCallback = bool (*)(void* env, const Match& m);
bool match_upat(const UPatNode* p, const UOpNode* u, Match& m, MatchCallback on_match, void* env);

struct NoCtx {};
UOp match_capture(const Match& m, uint64_t id);  // the capture named by id; InternalError when absent

// a rule body that is an object, for rules made at run time (the Python bindings' callables): one virtual call
template <class R, class Ctx = NoCtx>
struct RuleCallable {
  virtual ~RuleCallable() = default;
  virtual R call(const Match& m, Ctx* ctx) const = 0;  // ctx may be null
};

template <class R, class Ctx = NoCtx>
struct Rule {
  using Fn = R (*)(const Match&);
  using CtxFn = R (*)(const Match&, Ctx&);
  UPat pat;
  Fn fn = nullptr;
  CtxFn ctx_fn = nullptr;
  uint64_t capture = 0;                             // the right-hand side is this capture ({x + 0, x})
  std::shared_ptr<const RuleCallable<R, Ctx>> obj;  // or this object
  const char* file;
  int line;
  Rule(UPat p, Fn f, const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE())
      : pat(std::move(p)), fn(f), file(file_), line(line_) {}
  Rule(UPat p, CtxFn f, const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE())
      : pat(std::move(p)), ctx_fn(f), file(file_), line(line_) {}
  Rule(UPat p, Var v, const char* file_ = __builtin_FILE(),
       int line_ = __builtin_LINE()) requires std::is_same_v<R, UOp>
      : pat(std::move(p)), capture(v.id), file(file_), line(line_) {}
  Rule(UPat p, std::shared_ptr<const RuleCallable<R, Ctx>> o, const char* file_ = __builtin_FILE(),
       int line_ = __builtin_LINE())
      : pat(std::move(p)), obj(std::move(o)), file(file_), line(line_) {}
};

// the source location of the last rule that rewrote something on this thread (for a rewrite that never converges)
struct RuleLocation {
  const char* file = nullptr;
  int line = 0;
};
inline thread_local RuleLocation last_rule_location;

// the index of a PatternMatcher: rules by root op, as tinygrad's pdict
struct RuleIndex {
  std::array<std::vector<uint32_t>, NUM_OPS> by_op;
  void build(const std::vector<const UPatNode*>& roots);
};

template <class R, class Ctx = NoCtx>
class PatternMatcher {
 public:
  using RuleT = Rule<R, Ctx>;
  PatternMatcher() = default;
  PatternMatcher(std::initializer_list<RuleT> rules) : rules_(rules) { index(); }
  explicit PatternMatcher(std::vector<RuleT> rules) : rules_(std::move(rules)) { index(); }
  PatternMatcher operator+(const PatternMatcher& o) const {
    std::vector<RuleT> all = rules_;
    all.insert(all.end(), o.rules_.begin(), o.rules_.end());
    return PatternMatcher(std::move(all));
  }
  const std::vector<RuleT>& rules() const { return rules_; }

  // the first rule that matches and returns something wins; R{} (null / nullopt) when none does
  R rewrite(const UOp& u, Ctx* ctx = nullptr) const {
    const UOpNode* n = u.get();
    for (uint32_t i : idx_.by_op[static_cast<size_t>(n->op)]) {
      const RuleT& r = rules_[i];
      if (!n->src_ops.contains(r.pat.get()->early_reject)) continue;
      Env env{&r, ctx, R{}};
      Match m;
      if (match_upat(r.pat.get(), n, m, &Env::call, &env)) {
        last_rule_location = {r.file, r.line};
        if constexpr (std::is_same_v<R, UOp>)
          if (trace::current != nullptr) [[unlikely]]
            trace::record_match(trace::current, u, env.result, r.file, r.line, r.pat);
        return std::move(env.result);
      }
    }
    return R{};
  }
  UOp fixed_point_rewrite(UOp u, Ctx* ctx = nullptr) const requires std::is_same_v<R, UOp> {
    while (UOp next = rewrite(u, ctx)) u = std::move(next);
    return u;
  }

 private:
  struct Env {
    const RuleT* r;
    Ctx* ctx;
    R result;
    static bool call(void* e, const Match& m) {
      auto* env = static_cast<Env*>(e);
      const RuleT& r = *env->r;
      if (r.fn)
        env->result = r.fn(m);
      else if (r.ctx_fn) {
        TG_ASSERT(env->ctx != nullptr, "rule at ", r.file, ":", r.line, " needs a context");
        env->result = r.ctx_fn(m, *env->ctx);
      } else if (r.obj)
        env->result = r.obj->call(m, env->ctx);
      else
        env->result = capture_result(m, r.capture);
      return static_cast<bool>(env->result);
    }
  };
  static R capture_result(const Match& m, uint64_t id) {
    if constexpr (std::is_same_v<R, UOp>)
      return match_capture(m, id);
    else
      return R{};
  }
  void index() {
    std::vector<const UPatNode*> roots;
    for (auto& r : rules_) roots.push_back(r.pat.get());
    idx_.build(roots);
  }
  std::vector<RuleT> rules_;
  RuleIndex idx_;
};

// a context-free matcher as rules of a matcher with a context, so it composes with + (tinygrad passes ctx only to
// the rules that name it)
template <class Ctx>
PatternMatcher<UOp, Ctx> with_ctx(const PatternMatcher<UOp>& pm) {
  std::vector<Rule<UOp, Ctx>> out;
  out.reserve(pm.rules().size());
  for (const auto& r : pm.rules()) {
    TG_ASSERT(r.ctx_fn == nullptr && r.obj == nullptr, "rule at ", r.file, ":", r.line, " needs its own context");
    Rule<UOp, Ctx> n(r.pat, typename Rule<UOp, Ctx>::Fn(r.fn), r.file, r.line);
    n.capture = r.capture;
    out.push_back(std::move(n));
  }
  return PatternMatcher<UOp, Ctx>(std::move(out));
}

// *** graph_rewrite: tinygrad's unified_rewrite, with an explicit stack ***

// name: the step's name in the VIZ trace (an unnamed rewrite is not recorded); file, line: where it was called
struct RewriteOpts {
  bool bottom_up = false;
  const char* name = nullptr;
  const char* file = __builtin_FILE();
  int line = __builtin_LINE();
};
using RewriteFn = UOp (*)(void* env, const UOp& u);
UOp unified_rewrite(const UOp& root, RewriteFn rewrite, RewriteFn fixed_point, void* env, bool bottom_up);

template <class Ctx>
UOp graph_rewrite(const UOp& sink, const PatternMatcher<UOp, Ctx>& pm, Ctx& ctx, RewriteOpts opts = {}) {
  struct Env {
    const PatternMatcher<UOp, Ctx>* pm;
    Ctx* ctx;
  } env{&pm, &ctx};
  auto rw = [](void* e, const UOp& u) { return static_cast<Env*>(e)->pm->rewrite(u, static_cast<Env*>(e)->ctx); };
  auto fp = [](void* e, const UOp& u) {
    return static_cast<Env*>(e)->pm->fixed_point_rewrite(u, static_cast<Env*>(e)->ctx);
  };
  if (trace::tracking()) [[unlikely]] {
    trace::StepScope step(sink, opts.name, opts.bottom_up, opts.file, opts.line);
    return unified_rewrite(sink, rw, fp, &env, opts.bottom_up);
  }
  return unified_rewrite(sink, rw, fp, &env, opts.bottom_up);
}
inline UOp graph_rewrite(const UOp& sink, const PatternMatcher<UOp>& pm, RewriteOpts opts = {}) {
  NoCtx ctx;
  return graph_rewrite(sink, pm, ctx, opts);
}

}  // namespace tg
