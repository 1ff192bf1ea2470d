#include "tg/uop/spec.h"

#include <string_view>

#include "tg/helpers/knobs.h"
#include "tg/uop/wmma_arg.h"

namespace tg {

namespace {

using B = std::optional<bool>;

B ok(M) { return true; }

// the python type of a const of dtype d (dtypes.as_const): bool, int (int64_t or uint64_t) or float
bool is_int_const(const ConstValue& v) {
  return std::holds_alternative<int64_t>(v) || std::holds_alternative<uint64_t>(v);
}
bool const_fits(const ConstValue& v, DType d) {
  if (dtypes::is_int(d)) return is_int_const(v);
  return dtypes::is_float(d) ? std::holds_alternative<double>(v) : std::holds_alternative<bool>(v);
}

// INDEX: <buf, idx, gate?>. Bounds need z3 in tinygrad, and without z3 tinygrad skips them (IGNORE_OOB=1).
// With IGNORE_OOB=0 we check what vmin/vmax prove; that ignores the gate, so it may reject a valid gated access.
B validate_index(M m) {
  UOp idx = m["idx"];
  if (IGNORE_OOB != 0) return true;
  DType buf = idx.src(0).dtype();
  if (buf.is_image() || buf.size() == -1) return true;
  const UOp& i = idx.src(1);
  if (as_int(i.vmin()) >= 0 && as_int(i.vmax()) < buf.size()) return true;
  for (const UOp& u : i.toposort())
    if (u.op() == Ops::BITCAST) return true;  // WEBGPU has a BITCAST in the index (as tinygrad)
  return false;
}

int64_t prod_of_sizes(const Arg& arg) {  // CONTRACT/UNROLL: ((axis, size), ...)
  int64_t p = 1;
  if (auto* t = std::get_if<PairTuple>(&arg))
    for (auto& [axis, size] : *t) p *= size;
  return p;
}

}  // namespace

// *** the rules: the order is spec.py's ***

const SpecMatcher& spec() {
  using namespace pat;
  const OpSet bufs{Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL}, bufidx{Ops::INDEX, Ops::CAST};
  static const SpecMatcher pm = {
      // *** buffers, accumulators, variables, loops ***
      {op(Ops::DEFINE_GLOBAL).named("x"), [](M m) -> B { return m["x"].dtype().is_ptr() && !m["x"].dtype().local(); }},
      {op(Ops::DEFINE_LOCAL).named("x"),
       [](M m) -> B { return m["x"].dtype().is_ptr() && !m["x"].dtype().is_image() && m["x"].dtype().local(); }},
      {op(Ops::DEFINE_ACC, {var("c")}).any_len().named("x"),
       [](M m) -> B {  // <init, RANGE...>
         const auto& src = m["x"].src();
         for (size_t i = 1; i < src.size(); i++)
           if (src[i].op() != Ops::RANGE) return false;
         return m["c"].dtype() == m["x"].dtype();
       }},
      {op(Ops::DEFINE_VAR, {}).named("x"),
       [](M m) -> B {
         auto* v = std::get_if<VarArg>(&m["x"].arg());
         return v != nullptr && is_int_const(v->min) && is_int_const(v->max);
       }},
      {op(Ops::RANGE, {x}).named("rng"),
       [](M m) -> B {
         auto* c = std::get_if<ConstValue>(&m["rng"].arg());
         return m["rng"].dtype() == m[x].dtype() && c != nullptr && is_int_const(*c);
       }},
      {op(Ops::SPECIAL, {}).named("x"), [](M m) -> B { return std::holds_alternative<SpecialArg>(m["x"].arg()); }},

      // *** early views (TODO: check that the args are ShapeTrackers) ***
      {op(Ops::VIEW, {}).dtype(dtypes::void_), ok},
      {op(Ops::VIEW, {var("src")}).named("x"),
       [](M m) -> B { return m["src"].op() != Ops::STORE && m["x"].dtype().base() == m["src"].dtype().base(); }},
      {op(Ops::VALID, {op(Ops::VIEW)}).dtype(dtypes::bool_), ok},

      // *** consts: the arg's python type follows the dtype (int for ints, float for floats, bool for bool) ***
      {op(Ops::CONST).named("x"),
       [](M m) -> B {
         auto* c = std::get_if<ConstValue>(&m["x"].arg());
         return c != nullptr && const_fits(*c, m["x"].dtype());
       }},
      {op(Ops::VCONST).named("x"),
       [](M m) -> B {  // one value per lane
         auto* t = std::get_if<Tuple>(&m["x"].arg());
         if (t == nullptr || static_cast<int>(t->size()) != m["x"].dtype().count()) return false;
         for (auto& v : *t)
           if (!const_fits(v, m["x"].dtype())) return false;
         return true;
       }},

      // *** early LOAD <bufview, store?> and STORE <bufview, val> ***
      {op(Ops::LOAD, {op(Ops::VIEW, {op(bufs)})}), ok},
      {op(Ops::LOAD, {op(Ops::VIEW, {op(bufs)}), op(Ops::STORE)}), ok},
      {op(Ops::STORE, {op(Ops::VIEW, {op(bufs)}), var()}), ok},

      // *** new style: INDEX <buf, alu, gate?>, LOAD <bufidx, alt?, barrier?>, STORE <bufidx, val, gate?> ***
      {op(Ops::INDEX, {op(bufs), var()}).named("idx"), validate_index},
      {op(Ops::INDEX, {op(bufs), var(), var("mask", {dtypes::bool_})}).named("idx"), validate_index},
      {op(Ops::LOAD, {op(bufidx)}), ok},
      {op(Ops::LOAD, {op(bufidx), op({Ops::IF, Ops::BARRIER})}), ok},
      {op(Ops::LOAD, {op(bufidx), var("alt")}).named("ld"),
       [](M m) -> B { return m["ld"].dtype() == m["alt"].dtype(); }},
      {op(Ops::STORE, {op(bufidx), var()}).dtype(dtypes::void_), ok},
      {op(Ops::STORE, {op(bufidx), var(), var("", {dtypes::bool_})}).dtype(dtypes::void_), ok},
      {op(Ops::STORE, {op(bufidx), var(), op(Ops::IF)}).dtype(dtypes::void_), ok},

      // *** ALUs: all dtypes match, except comparisons (bool out), WHERE (bool condition) and shifts ***
      {op(Ops::WHERE, {var("", {dtypes::bool_}), x, y}).named("w"),
       [](M m) -> B { return m["w"].dtype() == m[x].dtype() && m[x].dtype() == m[y].dtype(); }},
      {op({Ops::CMPLT, Ops::CMPNE}, {x, y}).dtype(dtypes::bool_),
       [](M m) -> B { return m[x].dtype().base() == m[y].dtype().base(); }},
      // a comparison gives bool (an extra: spec.py lets the ALU rule accept an int CMPLT of ints)
      {op({Ops::CMPLT, Ops::CMPNE}), [](M) -> B { return false; }},
      {op({Ops::SHL, Ops::SHR}, {x, y}).named("a"),
       [](M m) -> B {  // the distance may be a uint
         return m["a"].dtype() == m[x].dtype() && (m[y].dtype() == m[x].dtype() || m[y].dtype() == dtypes::uint32);
       }},
      {op({Ops::IDIV, Ops::MOD}).named("x"), [](M m) -> B { return dtypes::is_int(m["x"].dtype()) ? B{} : B{false}; }},
      {op(GroupOp::ALU).named("x"),
       [](M m) -> B {
         for (const UOp& s : m["x"].src())
           if (s.dtype().base() != m["x"].dtype().base()) return false;
         return true;
       }},

      {op(Ops::ASSIGN, {op({Ops::DEFINE_ACC, Ops::DEFINE_GLOBAL}), var()}), ok},
      {op(Ops::ENDRANGE, {op(Ops::RANGE)}).dtype(dtypes::void_), ok},

      // *** WMMA <a, b, acc>, CONTRACT and UNROLL ***
      {op(Ops::WMMA, {var(), var(), var()}).named("x"), [](M m) -> B { return get_wmma_arg(m["x"].arg()) != nullptr; }},
      {op(Ops::CONTRACT).named("x"), [](M m) -> B { return m["x"].dtype().count() == prod_of_sizes(m["x"].arg()); }},
      {op(Ops::UNROLL).named("x"),
       [](M m) -> B { return !m["x"].src().empty() && m["x"].src(0).dtype().count() == prod_of_sizes(m["x"].arg()); }},

      // *** IF <gate, barrier?> ***
      {op(Ops::IF, {var()}).dtype(dtypes::void_), ok},
      {op(Ops::IF, {var(), op(Ops::BARRIER)}).dtype(dtypes::void_), ok},
      {op(Ops::ENDIF, {op(Ops::IF)}).dtype(dtypes::void_), ok},

      {op(Ops::REDUCE_AXIS).named("x"),
       [](M m) -> B {
         auto* r = std::get_if<ReduceArg>(&m["x"].arg());
         return r != nullptr && OpSet{Ops::ADD, Ops::MUL, Ops::MAX}.has(r->op);
       }},
      {op(Ops::GEP, {var("src")}).named("gep"), [](M m) -> B { return m["gep"].dtype() == m["src"].dtype().scalar(); }},
      {op(Ops::VECTORIZE).named("x"),
       [](M m) -> B {
         UOp v = m["x"];
         const int n = static_cast<int>(v.src().size());
         if (n <= 1 || n != v.dtype().count()) return false;
         for (const UOp& s : v.src())  // a vector (or a vector of pointers) does not vectorize again
           if (s.dtype().count() != 1 || s.dtype().vcount() != 1 || v.dtype() != s.dtype().vec(n)) return false;
         return true;
       }},
      // BITCAST reinterprets the bytes, so they must be as many (an extra to spec.py, which leaves it to the renderer)
      {op(Ops::BITCAST, {x}).named("b"),
       [](M m) -> B {
         bool ptrs = m["b"].dtype().is_ptr() || m[x].dtype().is_ptr();
         return ptrs || m["b"].dtype().itemsize() == m[x].dtype().itemsize() ? B{} : B{false};
       }},
      {op({Ops::BITCAST, Ops::CAST}, {var()}).named("x"), [](M m) -> B { return is_none(m["x"].arg()); }},
      {op(Ops::BARRIER).dtype(dtypes::void_).each(op(Ops::STORE)), ok},  // NOTE: all pointers must be local
      {op(Ops::BARRIER).dtype(dtypes::void_), ok},                       // BARRIERs can also happen at the end of loops

      // NOTE: for testing, sinks may hold anything
      {op(Ops::SINK).dtype(dtypes::void_), ok},
      {op({Ops::NOOP, Ops::CUSTOMI, Ops::CUSTOM}), ok},

      // PTX LOAD/STORE: an int64 address
      {op({Ops::LOAD, Ops::STORE}, {var("", {dtypes::int64})}).any_len(), ok},
  };
  return pm;
}

// *** type_verify ***

namespace {

// what the spec asks of an op, for the error message
std::string_view spec_hint(Ops o) {
  static const std::pair<OpSet, std::string_view> hints[] = {
      {Ops::DEFINE_GLOBAL, "DEFINE_GLOBAL needs a global pointer or image dtype"},
      {Ops::DEFINE_LOCAL, "DEFINE_LOCAL needs a local pointer dtype"},
      {Ops::DEFINE_ACC, "DEFINE_ACC takes (init, RANGE...) with init of the accumulator's dtype"},
      {Ops::DEFINE_VAR, "DEFINE_VAR takes no sources and int bounds"},
      {Ops::RANGE, "RANGE takes (end,) of its own dtype and an int arg"},
      {Ops::SPECIAL, "SPECIAL takes no sources and a (name, size) arg"},
      {OpSet{Ops::VIEW, Ops::VALID}, "VIEW is void or views a source of its base dtype; VALID is bool over a VIEW"},
      {Ops::CONST, "the CONST arg's type must follow the dtype: int for ints, float for floats, bool for bool"},
      {Ops::VCONST, "VCONST needs one value per lane, each of the dtype's kind"},
      {Ops::INDEX, "INDEX takes (DEFINE_GLOBAL|DEFINE_LOCAL, index[, bool gate]) and stays in bounds"},
      {Ops::LOAD, "LOAD takes (INDEX|CAST[, IF|BARRIER|alt of the load's dtype])"},
      {Ops::STORE, "STORE is void and takes (INDEX|CAST, value[, bool gate|IF])"},
      {Ops::WHERE, "WHERE takes a bool condition and two values of its own dtype"},
      {OpSet{Ops::CMPLT, Ops::CMPNE}, "comparisons give bool and compare two sources of one dtype"},
      {OpSet{Ops::SHL, Ops::SHR}, "shifts keep the value's dtype; the distance has the value's dtype or uint"},
      {OpSet{Ops::IDIV, Ops::MOD}, "IDIV and MOD are for ints only"},
      {GroupOp::ALU, "ALU sources must have the output's dtype"},
      {Ops::ASSIGN, "ASSIGN takes (DEFINE_ACC|DEFINE_GLOBAL, value)"},
      {Ops::ENDRANGE, "ENDRANGE is void and takes (RANGE,)"},
      {Ops::WMMA, "WMMA takes (a, b, acc) and its 8-field arg"},
      {OpSet{Ops::CONTRACT, Ops::UNROLL}, "CONTRACT/UNROLL lane counts must be the product of the axis sizes"},
      {OpSet{Ops::IF, Ops::ENDIF}, "IF is void and takes (gate[, BARRIER]); ENDIF is void and takes (IF,)"},
      {Ops::REDUCE_AXIS, "REDUCE_AXIS reduces with ADD, MUL or MAX"},
      {Ops::GEP, "GEP gives the scalar of its source's dtype"},
      {Ops::VECTORIZE, "VECTORIZE of n > 1 scalars of one dtype gives that dtype .vec(n)"},
      {OpSet{Ops::CAST, Ops::BITCAST}, "CAST/BITCAST take one source and no arg; BITCAST keeps the byte size"},
      {OpSet{Ops::BARRIER, Ops::SINK}, "BARRIER and SINK are void"},
  };
  for (auto& [ops, hint] : hints)
    if (ops.has(o)) return hint;
  return "the codegen spec has no rule for this op";
}

// the first rule that answers for u (nullptr: none); only used to explain a failure, so no index is needed
const SpecMatcher::RuleT* deciding_rule(const SpecMatcher& pm, const UOp& u) {
  for (const auto& r : pm.rules()) {
    const UPatNode* p = r.pat.get();
    OpSet ops = p->ops;
    if (p->mode == UPatNode::Src::Any)
      for (auto* alt : p->src_nodes) ops = ops | alt->ops;
    if (!ops.has(u.op()) || !u.get()->src_ops.contains(p->early_reject)) continue;
    struct Env {
      const SpecMatcher::RuleT* r;
      bool answered = false;
    } env{&r};
    Match m;
    auto cb = [](void* e, const Match& mm) {
      auto* env = static_cast<Env*>(e);
      env->answered = env->r->fn != nullptr && env->r->fn(mm).has_value();
      return env->answered;
    };
    if (match_upat(p, u.get(), m, cb, &env)) return &r;
  }
  return nullptr;
}

std::string basename(const char* path) {
  std::string_view s(path);
  size_t slash = s.find_last_of('/');
  return std::string(slash == std::string_view::npos ? s : s.substr(slash + 1));
}

}  // namespace

void type_verify(const std::vector<UOp>& uops, const SpecMatcher* extra_spec) {
  for (size_t i = 0; i < uops.size(); i++) {
    const UOp& u = uops[i];
    B ret = extra_spec != nullptr ? extra_spec->rewrite(u) : B{};
    if (!ret) ret = spec().rewrite(u);
    if (ret == true) continue;
    std::vector<std::string> src_ops, src_dtypes;
    for (const UOp& s : u.src()) src_ops.push_back(cat(s.op())), src_dtypes.push_back(s.dtype().repr());
    std::string why;
    if (!ret) {
      why = "no rule accepts it";
    } else {
      const SpecMatcher& pm = extra_spec != nullptr && extra_spec->rewrite(u) == false ? *extra_spec : spec();
      const auto* r = deciding_rule(pm, u);
      why = r != nullptr ? cat("rejected by the rule at ", basename(r->file), ":", r->line) : "rejected";
    }
    throw Error(cat("UOp verification failed at ", i, " on ", u.op(), " ", u.dtype(), " ", u.src().size(), " [",
                    join(src_ops, ", "), "] ", arg_repr(u.arg()), ": src dtypes [", join(src_dtypes, ", "), "]: ", why,
                    " (", spec_hint(u.op()), ")"));
  }
}

void type_verify(const UOp& sink, const SpecMatcher* extra_spec) { type_verify(sink.toposort(), extra_spec); }

}  // namespace tg
