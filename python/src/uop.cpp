// bindings of the UOp level: DType, Ops, UOp, UPat, PatternMatcher, graph_rewrite, the codegen entry points
#include <memory>
#include <sstream>

#include "common.h"
#include "tg/codegen/devectorizer.h"
#include "tg/codegen/expander.h"
#include "tg/codegen/pipeline.h"
#include "tg/gradient/gradient.h"
#include "tg/renderer/renderer.h"
#include "tg/runtime/buffers.h"
#include "tg/schedule/grouper.h"
#include "tg/shape/uop_multi.h"
#include "tg/shape/uop_shape.h"
#include "tg/uop/kernel_info.h"
#include "tg/uop/spec.h"
#include "tg/uop/symbolic.h"
#include "tg/uop/transcendental.h"
#include "tg/uop/upat.h"

namespace tgpy {
using tg::DType;
using tg::Ops;
using tg::UOp;
using tg::UPat;

namespace {

// *** rules whose bodies are Python callables: the parameter names bind the captures, `ctx` the context ***

struct PyCtx {
  py::object obj;
};
using PyPatternMatcher = tg::PatternMatcher<UOp, PyCtx>;
using PyRuleT = tg::Rule<UOp, PyCtx>;

struct PyRule final : tg::RuleCallable<UOp, PyCtx> {
  py::object fn;
  std::vector<std::string> names;  // captures the function takes
  bool has_ctx = false;
  UOp call(const tg::Match& m, PyCtx* ctx) const override {
    py::dict kw;
    for (const std::string& n : names)
      if (m.has(n)) kw[py::str(n)] = py::cast(m[n]);
    if (has_ctx) kw["ctx"] = ctx != nullptr ? ctx->obj : py::none();
    py::object r = fn(**kw);
    if (r.is_none()) return UOp();
    if (!py::isinstance<tg::UOpNode>(r))
      throw py::type_error(tg::cat("a PatternMatcher rule returned ", std::string(py::repr(r)), ", not a UOp or None"));
    return r.cast<UOp>();
  }
};

std::shared_ptr<const PyRule> make_rule(py::object fn) {
  auto r = std::make_shared<PyRule>();
  py::object sig = py::module_::import("inspect").attr("signature")(fn);
  py::object var_kw = py::module_::import("inspect").attr("Parameter").attr("VAR_KEYWORD");
  for (py::handle p : sig.attr("parameters").attr("values")()) {
    if (py::object(p.attr("kind")).equal(var_kw)) continue;
    std::string n = py::str(p.attr("name"));
    if (n == "ctx")
      r->has_ctx = true;
    else
      r->names.push_back(n);
  }
  r->fn = std::move(fn);
  return r;
}

struct PyPM {
  PyPatternMatcher pm;
  py::list patterns;  // the (UPat, fxn) pairs, as tinygrad's PatternMatcher.patterns
};

// a C++ matcher (no context) as a Python one: the same rules, with function-pointer bodies
std::shared_ptr<PyPM> from_cpp(const tg::PatternMatcher<UOp>& cpp) {
  std::vector<PyRuleT> rules;
  for (const auto& r : cpp.rules()) {
    if (r.fn == nullptr && r.capture == 0) continue;  // context rules can't run without their C++ context
    PyRuleT nr(r.pat, r.fn, r.file, r.line);
    nr.capture = r.capture;
    rules.push_back(std::move(nr));
  }
  auto p = std::make_shared<PyPM>();
  p->pm = PyPatternMatcher(std::move(rules));
  return p;
}

// *** UOp helpers ***

UOp ufix(const UOp& self, py::handle x) {
  if (py::isinstance<tg::UOpNode>(x)) return x.cast<UOp>();
  return self.const_like(to_const(x));
}
std::vector<UOp> to_uops(py::handle h) {
  std::vector<UOp> out;
  for (py::handle x : h) out.push_back(x.cast<UOp>());
  return out;
}
py::tuple uop_tuple(const std::vector<UOp>& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); i++) t[i] = py::cast(v[i]);
  return t;
}
std::vector<DType> to_dtypes(py::handle h) {
  if (h.is_none()) return {};
  if (py::isinstance<DType>(h)) return {h.cast<DType>()};
  std::vector<DType> out;
  for (py::handle x : h) out.push_back(x.cast<DType>());
  return out;
}
tg::OpSet to_opset(py::handle h) {
  tg::OpSet s;
  if (h.is_none()) return s;
  if (py::isinstance<Ops>(h)) return tg::OpSet(h.cast<Ops>());
  for (py::handle x : h) s.add(x.cast<Ops>());
  return s;
}
UPat to_upat(const UPat& self, py::handle x) {
  if (py::isinstance<UPat>(x)) return x.cast<UPat>();
  return self.const_like(to_const(x));
}
std::vector<UPat> to_upats(py::handle h) {
  std::vector<UPat> out;
  for (py::handle x : h) out.push_back(x.cast<UPat>());
  return out;
}

// the KernelInfo / ShapeTracker attributes tinygrad code reads off an arg
py::object argobject_getattr(const std::shared_ptr<tg::ArgObject>& o, const std::string& name) {
  if (auto* ki = dynamic_cast<const tg::KernelInfo*>(o.get())) {
    if (name == "name") return py::str(ki->name);
    if (name == "local_dims") return py::int_(ki->local_dims);
    if (name == "upcasted") return py::int_(ki->upcasted);
    if (name == "dont_use_locals") return py::bool_(ki->dont_use_locals);
  }
  if (auto* st = dynamic_cast<const tg::ShapeTrackerArg*>(o.get())) {
    const tg::ShapeTracker& t = st->st;
    if (name == "shape") return py::tuple(py::cast(t.shape()));
    if (name == "size") return py::cast(t.size());
    if (name == "contiguous") return py::bool_(t.contiguous());
    if (name == "views") {  // tinygrad.shape.view.View records of the engine's views
      py::object view = py::module_::import("tinygrad.shape.view").attr("View");
      py::list vs;
      for (const tg::View& v : t.views) {
        py::object mask = py::none();
        if (v.mask) {
          py::list m;
          for (const auto& [b, e] : *v.mask) m.append(py::make_tuple(py::cast(b), py::cast(e)));
          mask = py::tuple(m);
        }
        vs.append(
            view(py::tuple(py::cast(v.shape)), py::tuple(py::cast(v.strides)), py::cast(v.offset), mask, v.contiguous));
      }
      return py::tuple(vs);
    }
    // the movement ops, each a new ShapeTracker (tinygrad's ShapeTracker.reshape ...)
    auto method = [&](auto fn) {
      return py::cpp_function([t, fn](py::object a) { return from_arg(tg::st_arg(fn(t, a))); });
    };
    if (name == "reshape")
      return method([](const tg::ShapeTracker& s, py::object a) { return s.reshape(a.cast<tg::Shape>()); });
    if (name == "expand")
      return method([](const tg::ShapeTracker& s, py::object a) { return s.expand(a.cast<tg::Shape>()); });
    if (name == "permute")
      return method([](const tg::ShapeTracker& s, py::object a) { return s.permute(a.cast<std::vector<int64_t>>()); });
    if (name == "shrink")
      return method([](const tg::ShapeTracker& s, py::object a) { return s.shrink(a.cast<tg::Mask>()); });
    if (name == "pad") return method([](const tg::ShapeTracker& s, py::object a) { return s.pad(a.cast<tg::Mask>()); });
  }
  if (auto* k = dynamic_cast<const tg::KernelArg*>(o.get())) {
    if (name == "ast") return py::cast(k->ast);
    if (name == "metadata") {
      py::list l;
      for (const tg::Metadata* md : k->metadata) l.append(metadata_object(*md));
      return py::tuple(l);
    }
  }
  throw py::attribute_error(tg::cat("'", o->repr(), "' has no attribute '", name, "'"));
}

// the codegen options of full_rewrite's opts: None is the generic Renderer(), else one of the engine's renderers
// (Device["CPU"].renderer, PythonRenderer(), ClangRenderer() ...)
const tg::RenderOpts* render_opts(const py::object& opts, const char* fn) {
  if (opts.is_none()) return nullptr;
  if (!py::isinstance<tg::Renderer>(opts))
    throw py::type_error(tg::cat(fn, ": opts must be a Renderer (Device[...].renderer, PythonRenderer() ...), not ",
                                 std::string(py::str(py::type::handle_of(opts).attr("__name__")))));
  return opts.cast<tg::Renderer*>();
}

}  // namespace

static PyObject* ops_members[tg::NUM_OPS] = {};
PyObject* ops_member(Ops op) { return ops_members[static_cast<size_t>(op)]; }

void bind_uop(py::module_& m) {
  // *** DType ***
  py::class_<DType>(m, "DType")
      .def_property_readonly("priority", &DType::priority)
      .def_property_readonly("itemsize", &DType::itemsize)
      .def_property_readonly("name", &DType::name)
      .def_property_readonly("fmt",
                             [](DType d) -> py::object {
                               if (d.fmt()) return py::str(std::string(1, d.fmt()));
                               return py::none();
                             })
      .def_property_readonly("count", &DType::count)
      .def_property_readonly("vcount", &DType::vcount)
      .def_property_readonly("v", &DType::v)
      .def_property_readonly("size", &DType::size)
      .def_property_readonly("local", &DType::local)
      .def_property_readonly("base", &DType::base)
      .def("scalar", &DType::scalar)
      .def("vec", &DType::vec)
      .def("ptr", &DType::ptr, py::arg("size") = -1, py::arg("local") = false)
      .def("nbytes", &DType::nbytes)
      .def("is_ptr", &DType::is_ptr)
      .def("__repr__", &DType::repr)
      .def("__eq__", [](DType a, py::object b) { return py::isinstance<DType>(b) && a == b.cast<DType>(); })
      .def("__ne__", [](DType a, py::object b) { return !(py::isinstance<DType>(b) && a == b.cast<DType>()); })
      .def("__lt__", [](DType a, DType b) { return a < b; })
      .def("__hash__", [](DType d) { return reinterpret_cast<uintptr_t>(d.data_ptr()); });
  py::dict dts;
  const std::pair<const char*, const DType*> named[] = {
      {"void", &tg::dtypes::void_},      {"bool", &tg::dtypes::bool_},        {"int8", &tg::dtypes::int8},
      {"uint8", &tg::dtypes::uint8},     {"int16", &tg::dtypes::int16},       {"uint16", &tg::dtypes::uint16},
      {"int32", &tg::dtypes::int32},     {"uint32", &tg::dtypes::uint32},     {"int64", &tg::dtypes::int64},
      {"uint64", &tg::dtypes::uint64},   {"fp8e4m3", &tg::dtypes::fp8e4m3},   {"fp8e5m2", &tg::dtypes::fp8e5m2},
      {"float16", &tg::dtypes::float16}, {"bfloat16", &tg::dtypes::bfloat16}, {"float32", &tg::dtypes::float32},
      {"float64", &tg::dtypes::float64}};
  for (auto& [n, d] : named) dts[n] = *d;
  m.attr("dtype_table") = dts;
  m.def("get_default_float", [] { return tg::dtypes::default_float; });
  m.def("set_default_float", [](DType d) { tg::dtypes::default_float = d; });
  m.def("get_default_int", [] { return tg::dtypes::default_int; });
  m.def("set_default_int", [](DType d) { tg::dtypes::default_int = d; });
  m.def("dtype_from_name", &tg::dtypes::from_name);
  m.def("is_float", &tg::dtypes::is_float);
  m.def("is_int", &tg::dtypes::is_int);
  m.def("is_unsigned", &tg::dtypes::is_unsigned);
  m.def("is_bool", &tg::dtypes::is_bool);
  m.def("dtype_min", [](DType d) { return from_const(tg::dtypes::min(d)); });
  m.def("dtype_max", [](DType d) { return from_const(tg::dtypes::max(d)); });
  m.def("as_const", [](py::handle v, DType d) { return from_const(tg::dtypes::as_const(to_const(v), d)); });
  m.def("finfo", &tg::dtypes::finfo);
  m.def("least_upper_dtype", [](py::args ds) {
    std::vector<DType> v;
    for (py::handle d : ds) v.push_back(d.cast<DType>());
    return tg::least_upper_dtype(v);
  });
  m.def("least_upper_float", &tg::least_upper_float);
  m.def("sum_acc_dtype", &tg::sum_acc_dtype);
  m.def("truncate", [](py::handle v, DType d) { return from_const(tg::truncate(to_const(v), d)); });

  // *** Ops ***
  py::enum_<Ops> ops(m, "Ops");
#define TG_X(name) ops.value(#name, Ops::name);
  TG_OPS(TG_X)
#undef TG_X
#define TG_X(name) ops_members[static_cast<size_t>(Ops::name)] = py::object(ops.attr(#name)).release().ptr();
  TG_OPS(TG_X)
#undef TG_X
  m.def("ops_in", [](const std::string& group) {
    static const std::pair<const char*, tg::OpSet> groups[] = {{"Unary", tg::GroupOp::Unary},
                                                               {"Binary", tg::GroupOp::Binary},
                                                               {"Ternary", tg::GroupOp::Ternary},
                                                               {"ALU", tg::GroupOp::ALU},
                                                               {"Irreducible", tg::GroupOp::Irreducible},
                                                               {"Movement", tg::GroupOp::Movement},
                                                               {"Buffer", tg::GroupOp::Buffer},
                                                               {"Block", tg::GroupOp::Block},
                                                               {"Commutative", tg::GroupOp::Commutative},
                                                               {"Associative", tg::GroupOp::Associative},
                                                               {"Idempotent", tg::GroupOp::Idempotent},
                                                               {"UnsafePad", tg::GroupOp::UnsafePad},
                                                               {"Meta", tg::GroupOp::Meta},
                                                               {"All", tg::GroupOp::All}};
    for (auto& [n, s] : groups)
      if (group == n) {
        std::vector<Ops> out;
        for (int i = 1; i < tg::NUM_OPS; i++)
          if (s.has(static_cast<Ops>(i))) out.push_back(static_cast<Ops>(i));
        return out;
      }
    throw py::key_error(group);
  });

  // *** ArgObject: ShapeTracker, KernelInfo, the grouper's Kernel ... ***
  py::class_<tg::ArgObject, std::shared_ptr<tg::ArgObject>>(m, "ArgObject")
      .def("__repr__", &tg::ArgObject::repr)
      .def("__eq__",
           [](const tg::ArgObject& a, py::object b) {
             return py::isinstance<tg::ArgObject>(b) && a.equals(b.cast<const tg::ArgObject&>());
           })
      .def("__hash__", [](const tg::ArgObject& a) { return static_cast<int64_t>(a.hash() >> 1); })
      .def("__getattr__", &argobject_getattr);

  // *** UOp ***
  py::class_<tg::UOpNode, NodeRef<tg::UOpNode>> cls(m, "UOp");
  // UOp(op, dtype, src, arg, tag) returns the interned node's one Python object: __new__ does the lookup
  cls.attr("__new__") =
      py::cpp_function([](py::handle, Ops op, DType dtype, py::object src, py::object arg,
                          py::object tag) { return UOp::make(op, dtype, to_uops(src), to_arg(arg), to_arg(tag)); },
                       py::arg("cls"), py::arg("op"), py::arg("dtype") = tg::dtypes::void_,
                       py::arg("src") = py::tuple(), py::arg("arg") = py::none(), py::arg("tag") = py::none());
  cls.def("__init__", [](py::handle, py::args, py::kwargs) {});
  cls.def_property_readonly("op", [](const UOp& u) { return u.op(); })
      .def_property_readonly("dtype", [](const UOp& u) { return u.dtype(); })
      .def_property_readonly("src", [](const UOp& u) { return uop_tuple(u.src()); })
      .def_property_readonly("arg", [](const UOp& u) { return from_arg(u.arg()); })
      .def_property_readonly("tag", [](const UOp& u) { return from_arg(u.tag()); })
      .def("__repr__", [](const UOp& u) { return u.repr(); })
      .def("replace",
           [](const UOp& u, py::kwargs kw) {
             std::optional<Ops> op;
             std::optional<DType> dt;
             std::optional<std::vector<UOp>> src;
             std::optional<tg::Arg> arg;
             for (auto [k, v] : kw) {
               std::string key = py::str(k);
               if (key == "op")
                 op = v.cast<Ops>();
               else if (key == "dtype")
                 dt = v.cast<DType>();
               else if (key == "src")
                 src = to_uops(v);
               else if (key == "arg")
                 arg = to_arg(v);
               else if (key == "tag")
                 return u.replace(op, dt, src, arg).with_tag(to_arg(v));
               else  // the reference asserts on a field UOp doesn't have
                 throw tg::AssertionError(tg::cat("UOp.replace: no field '", key, "' (op, dtype, src, arg, tag)"));
             }
             return u.replace(op, dt, src, arg);
           })
      .def_property_readonly("shape",
                             [](const UOp& u) -> py::object {
                               const tg::ShapeTracker* st = tg::uop_st(u);
                               if (st) return py::tuple(py::cast(st->shape()));
                               return py::none();
                             })
      .def_property_readonly("st",
                             [](const UOp& u) -> py::object {
                               const tg::ShapeTracker* st = tg::uop_st(u);
                               return st ? from_arg(tg::st_arg(*st)) : py::none();
                             })
      .def_property_readonly("_device",
                             [](const UOp& u) -> py::object {
                               auto d = tg::uop_device(u);
                               if (d) return tgpy::device_object(*d);
                               return py::none();
                             })
      .def_property_readonly("device",  // the reference asserts a node has one (a CONST has none)
                             [](const UOp& u) -> py::object {
                               auto d = tg::uop_device(u);
                               if (!d) throw tg::AssertionError(tg::cat("no device on ", u.op()));
                               return tgpy::device_object(*d);
                             })
      .def_property_readonly("buf_uop",
                             [](const UOp& u) {  // the BUFFER an ASSIGN writes (or the BUFFER itself)
                               if (u.op() == Ops::BUFFER) return u;
                               if (u.op() != Ops::ASSIGN) throw tg::AssertionError(tg::cat("must be ASSIGN ", u.op()));
                               return tg::uop_base(u.src(0));
                             })
      .def_property_readonly("base", &tg::uop_base)
      // multi-device (tinygrad's UOp.axis, bounds, multi, mselect, allreduce, copy_to_device, shard)
      .def_property_readonly("axis", [](const UOp& u) { return tg::uop_axis(u); })
      .def_property_readonly("bounds",
                             [](const UOp& u) {
                               py::list ret;
                               for (const auto& [b, e] : tg::uop_bounds(u))
                                 ret.append(py::make_tuple(py::cast(b), py::cast(e)));
                               return py::tuple(ret);
                             })
      .def("multi", &tg::uop_multi, py::arg("axis"))
      .def("mselect", &tg::uop_mselect, py::arg("arg"))
      .def(
          "allreduce",
          [](const UOp& u, tg::Ops op, py::handle device) {
            if (py::isinstance<UOp>(device)) return tg::uop_allreduce(u, op, device.cast<UOp>());
            return tg::uop_allreduce(u, op, tgpy::device_name(device));
          },
          py::arg("op"), py::arg("device"))
      .def(
          "copy_to_device",
          [](const UOp& u, py::handle device, std::optional<int64_t> arg) {
            const std::string d = tgpy::device_name(device);
            return arg ? tg::uop_copy_to_device(u, d, *arg) : tg::uop_copy_to_device(u, d);
          },
          py::arg("device"), py::arg("arg") = py::none())
      .def(
          "shard",
          [](const UOp& u, py::handle devices, int64_t axis) {
            return tg::uop_shard(u, tgpy::device_name(devices), axis);
          },
          py::arg("devices"), py::arg("axis"))
      .def_property_readonly("is_realized", [](const UOp& u) { return tg::uop_is_realized(u); })
      .def_property_readonly("realized", [](const UOp& u) { return tg::uop_realized(u); })
      .def_property_readonly("size", &tg::uop_size)
      .def_property_readonly("vmin", [](const UOp& u) { return from_const(u.vmin()); })
      .def_property_readonly("vmax", [](const UOp& u) { return from_const(u.vmax()); })
      .def("toposort",
           [](const UOp& u) {
             py::dict d;
             for (const UOp& x : u.toposort()) d[py::cast(x)] = py::none();
             return d;
           })
      .def("substitute",
           [](const UOp& u, py::dict dvars) {
             std::vector<std::pair<UOp, UOp>> v;
             for (auto [k, x] : dvars) v.emplace_back(k.cast<UOp>(), x.cast<UOp>());
             return u.substitute(v);
           })
      .def("simplify", [](const UOp& u) { return u.simplify(); })
      .def("const_factor", [](const UOp& u) { return u.const_factor(); })
      // the live nodes that have this one among their sources (tinygrad's children: weak references, each called
      // for its node)
      .def_property_readonly("children",
                             [](const UOp& u) {
                               py::list out;
                               py::object ref = py::module_::import("tinygrad.uop.ops").attr("_ChildRef");
                               for (const UOp& p : tg::uop_live_parents(u)) out.append(ref(py::cast(p)));
                               return out;
                             })
      // simplify, and a constant's value where it folds to one (tinygrad's ssimplify: int | float | UOp)
      .def("ssimplify",
           [](const UOp& u) -> py::object {
             UOp r = u.simplify();
             return r.op() == Ops::CONST ? from_const(r.const_arg()) : py::cast(r);
           })
      // the Tensor method that made this node, as a 1-tuple of Metadata (None when none was recorded)
      .def_property_readonly("metadata",
                             [](const UOp& u) -> py::object {
                               const tg::Metadata* m = u.metadata();
                               return m == nullptr ? py::object(py::none()) : py::make_tuple(metadata_object(*m));
                             })
      .def(
          "render", [](const UOp& u, bool s) { return u.render(s); }, py::arg("simplify") = true)
      .def("const_like", [](const UOp& u, py::handle b) { return u.const_like(to_const(b)); })
      .def("alu", [](const UOp& u, Ops op, py::args src) { return u.alu(op, to_uops(src)); })
      .def("cast", [](const UOp& u, DType d) { return u.cast(d); })
      .def("bitcast", [](const UOp& u, DType d) { return u.bitcast(d); })
      .def("gep", [](const UOp& u,
                     py::handle i) { return PyLong_Check(i.ptr()) ? u.gep(i.cast<int64_t>()) : u.gep(to_ints(i)); })
      .def("broadcast", [](const UOp& u, int n) { return u.broadcast(n); })
      .def(
          "index",
          [](const UOp& u, const UOp& idx, py::object valid) {
            return valid.is_none() ? u.index(idx) : u.index(idx, valid.cast<UOp>());
          },
          py::arg("idx"), py::arg("valid") = py::none())
      .def("load",
           [](const UOp& u, py::args src, py::kwargs kw) {
             // LOAD(self, *src), of dtype= when given (else the pointer's base), as tinygrad's UOp.load
             UOp ld = u.load(to_uops(src));
             for (auto [k, v] : kw) {
               if (std::string(py::str(k)) != "dtype")
                 throw py::type_error(
                     tg::cat("UOp.load() got an unexpected keyword argument '", std::string(py::str(k)), "'"));
               ld = UOp::make(Ops::LOAD, v.cast<DType>(), std::vector<UOp>(ld.src().begin(), ld.src().end()));
             }
             return ld;
           })
      .def("store", [](const UOp& u, py::args src) { return u.store(to_uops(src)); })
      .def("sink",
           [](const UOp& u, py::args src) {
             std::vector<UOp> s{u};
             for (const UOp& x : to_uops(src)) s.push_back(x);
             return UOp::sink(s);
           })
      .def("bind", [](const UOp& u, int64_t v) { return u.bind(v); })
      .def("unbind",
           [](const UOp& u) {  // BIND(var, val) -> (var, val)
             if (u.op() != tg::Ops::BIND || u.src(0).op() != tg::Ops::DEFINE_VAR || u.src(1).op() != tg::Ops::CONST)
               throw py::value_error("can't unbind " + u.render() + ": not a bound Variable");
             return py::make_tuple(u.src(0), tg::as_int(u.src(1).const_arg()));
           })
      .def_property_readonly("val",
                             [](const UOp& u) {  // a bound Variable's value
                               if (u.op() != tg::Ops::BIND || u.src(1).op() != tg::Ops::CONST)
                                 throw py::value_error("val of " + u.render() + ": not a bound Variable");
                               return tg::as_int(u.src(1).const_arg());
                             })
      .def("where",
           [](const UOp& c, py::handle t, py::handle f) {
             if (py::isinstance<tg::UOpNode>(t)) {
               UOp tu = t.cast<UOp>();
               return c.where(tu, ufix(tu, f));
             }
             UOp fu = f.cast<UOp>();
             return c.where(ufix(fu, t), fu);
           })
      .def("maximum", [](const UOp& a, py::handle b) { return a.maximum(ufix(a, b)); })
      .def("minimum", [](const UOp& a, py::handle b) { return a.minimum(ufix(a, b)); })
      .def("ne", [](const UOp& a, py::handle b) { return a.ne(ufix(a, b)); })
      .def("eq", [](const UOp& a, py::handle b) { return a.eq(ufix(a, b)); })
      .def("logical_not", [](const UOp& u) { return u.logical_not(); })
      .def("neg", [](const UOp& u) { return u.neg(); })
      .def("reciprocal", [](const UOp& u) { return u.reciprocal(); })
      .def("sqrt", [](const UOp& u) { return u.sqrt(); })
      .def("exp2", [](const UOp& u) { return u.exp2(); })
      .def("log2", [](const UOp& u) { return u.log2(); })
      .def("sin", [](const UOp& u) { return u.sin(); })
      .def("pow", [](const UOp& a, py::handle b) { return a.pow(ufix(a, b)); })
      .def("__neg__", [](const UOp& u) { return u.neg(); })
      .def("__add__", [](const UOp& a, py::handle b) { return a + ufix(a, b); })
      .def("__radd__", [](const UOp& a, py::handle b) { return ufix(a, b) + a; })
      .def("__sub__",
           [](const UOp& a, py::handle b) {
             return py::isinstance<tg::UOpNode>(b)
                        ? a - b.cast<UOp>()
                        : a + a.const_like(to_const(py::reinterpret_borrow<py::object>(b).attr("__neg__")()));
           })
      .def("__rsub__", [](const UOp& a, py::handle b) { return ufix(a, b) + (-a); })
      .def("__mul__", [](const UOp& a, py::handle b) { return a * ufix(a, b); })
      .def("__rmul__", [](const UOp& a, py::handle b) { return ufix(a, b) * a; })
      .def("__truediv__", [](const UOp& a, py::handle b) { return tg::fdiv(a, ufix(a, b)); })
      .def("__rtruediv__", [](const UOp& a, py::handle b) { return tg::fdiv(ufix(a, b), a); })
      .def("__floordiv__", [](const UOp& a, py::handle b) { return tg::idiv(a, ufix(a, b)); })
      .def("__rfloordiv__", [](const UOp& a, py::handle b) { return tg::idiv(ufix(a, b), a); })
      .def("__mod__", [](const UOp& a, py::handle b) { return a % ufix(a, b); })
      .def("__rmod__", [](const UOp& a, py::handle b) { return ufix(a, b) % a; })
      .def("__and__", [](const UOp& a, py::handle b) { return a & ufix(a, b); })
      .def("__rand__", [](const UOp& a, py::handle b) { return ufix(a, b) & a; })
      .def("__or__", [](const UOp& a, py::handle b) { return a | ufix(a, b); })
      .def("__ror__", [](const UOp& a, py::handle b) { return ufix(a, b) | a; })
      .def("__xor__", [](const UOp& a, py::handle b) { return a ^ ufix(a, b); })
      .def("__rxor__", [](const UOp& a, py::handle b) { return ufix(a, b) ^ a; })
      .def("__lshift__", [](const UOp& a, py::handle b) { return a << ufix(a, b); })
      .def("__rshift__", [](const UOp& a, py::handle b) { return a >> ufix(a, b); })
      .def("__pow__", [](const UOp& a, py::handle b) { return a.pow(ufix(a, b)); })
      .def("__lt__", [](const UOp& a, py::handle b) { return a < ufix(a, b); })
      .def("__gt__", [](const UOp& a, py::handle b) { return ufix(a, b) < a; })
      .def("__ge__", [](const UOp& a, py::handle b) { return (a < ufix(a, b)).logical_not(); })
      .def("__le__", [](const UOp& a, py::handle b) { return (ufix(a, b) < a).logical_not(); })
      .def_static("const",
                  [](DType d, py::handle b) {
                    if (!py::isinstance<py::tuple>(b)) return UOp::const_(d, to_const(b));
                    tg::Tuple vals;  // a VCONST of the lanes (a CONST when they are all the same), as the reference
                    for (py::handle x : b) vals.push_back(to_const(x));
                    return UOp::vconst(d, vals);
                  })
      .def_static(
          "variable",
          [](const std::string& name, py::handle mn, py::handle mx, DType d) {
            return UOp::variable(name, to_const(mn), to_const(mx), d);
          },
          py::arg("name"), py::arg("min_val"), py::arg("max_val"), py::arg("dtype") = tg::dtypes::int32)
      .def_static("range",
                  [](DType d, py::handle end, int64_t idx) {
                    return py::isinstance<tg::UOpNode>(end) ? UOp::range(d, end.cast<UOp>(), idx)
                                                            : UOp::range(d, end.cast<int64_t>(), idx);
                  })
      .def_static("unique", &UOp::unique)
      .def_static("new_buffer", [](const std::string& device, tg::sint size, DType dtype) {
        return tg::uop_new_buffer(tg::Device::canonicalize(device), size, dtype);
      });
  m.def("uop_intern_count", &tg::uop_intern_count);

  // *** UPat ***
  py::class_<UPat>(m, "UPat")
      .def(py::init([](py::object op, py::object dtype, py::object src, py::object arg, py::object name,
                       bool allow_any_len, py::object, py::object) {
             tg::OpSet ops = to_opset(op);
             UPat p;
             if (src.is_none())
               p = ops.empty() ? tg::var("") : tg::op(ops);
             else {
               tg::OpSet o = ops.empty() ? tg::GroupOp::All : ops;
               if (py::isinstance<UPat>(src))
                 p = tg::op(o).each(src.cast<UPat>());
               else if (py::isinstance<py::list>(src))
                 p = tg::op(o, to_upats(src)).permuted();
               else
                 p = tg::op(o, to_upats(src));
             }
             if (!dtype.is_none()) p = p.dtype(to_dtypes(dtype));
             if (!arg.is_none()) p = p.arg(to_arg(arg));
             if (allow_any_len) p = p.any_len();
             if (!name.is_none()) p = p.named(name.cast<std::string>());
             return p;
           }),
           py::arg("op") = py::none(), py::arg("dtype") = py::none(), py::arg("src") = py::none(),
           py::arg("arg") = py::none(), py::arg("name") = py::none(), py::arg("allow_any_len") = false,
           py::arg("custom_early_reject") = py::none(), py::arg("location") = py::none())
      .def_static(
          "var",
          [](py::object name, py::object dtype) {
            return tg::var(name.is_none() ? "" : name.cast<std::string>(), to_dtypes(dtype));
          },
          py::arg("name") = py::none(), py::arg("dtype") = py::none())
      .def_static(
          "cvar",
          [](py::object name, py::object dtype, bool vec) {
            return tg::cvar(name.is_none() ? "" : name.cast<std::string>(), to_dtypes(dtype), vec);
          },
          py::arg("name") = py::none(), py::arg("dtype") = py::none(), py::arg("vec") = true)
      .def_static("const",
                  [](py::object dtype, py::handle b) {
                    return tg::const_pat(dtype.is_none() ? std::nullopt : std::optional<DType>(dtype.cast<DType>()),
                                         to_const(b));
                  })
      .def_static("any", [](py::args pats) { return tg::any(to_upats(pats)); })
      .def("named", [](const UPat& p, const std::string& n) { return p.named(n); })
      // every way the pattern matches uop, each a dict of its named captures (store's entries first), as
      // tinygrad's UPat.match; [] when it doesn't match
      .def(
          "match",
          [](const UPat& p, const UOp& u, py::dict store) {
            std::unordered_map<uint64_t, std::string> names;  // the pattern's capture names, by id
            std::vector<const tg::UPatNode*> stack{p.get()};
            while (!stack.empty()) {
              const tg::UPatNode* n = stack.back();
              stack.pop_back();
              if (!n->name.empty()) names.emplace(n->name_id, n->name);
              for (const UPat& c : n->src) stack.push_back(c.get());
            }
            struct Env {
              const std::unordered_map<uint64_t, std::string>* names;
              py::dict store;
              py::list out;
            } env{&names, store, py::list()};
            tg::Match m;
            tg::match_upat(
                p.get(), u.get(), m,
                [](void* e, const tg::Match& mm) {
                  Env& en = *static_cast<Env*>(e);
                  py::dict d(en.store);
                  for (size_t i = 0; i < mm.n; i++) {
                    auto it = en.names->find(mm.caps[i].first);
                    if (it != en.names->end()) d[py::str(it->second)] = py::cast(UOp::borrow(mm.caps[i].second));
                  }
                  en.out.append(d);
                  return false;  // every match
                },
                &env);
            return env.out;
          },
          py::arg("uop"), py::arg("store"))
      .def(
          "cast",
          [](const UPat& p, py::object d) {
            return p.cast(d.is_none() ? std::nullopt : std::optional<DType>(d.cast<DType>()));
          },
          py::arg("dtype") = py::none())
      .def(
          "bitcast",
          [](const UPat& p, py::object d) {
            return p.bitcast(d.is_none() ? std::nullopt : std::optional<DType>(d.cast<DType>()));
          },
          py::arg("dtype") = py::none())
      .def(
          "gep",
          [](const UPat& p, py::object i) {
            return p.gep(i.is_none() ? std::nullopt : std::optional<int64_t>(i.cast<int64_t>()));
          },
          py::arg("i") = py::none())
      .def(
          "index",
          [](const UPat& p, const UPat& idx, py::object valid) {
            return valid.is_none() ? p.index(idx) : p.index(idx, valid.cast<UPat>());
          },
          py::arg("idx"), py::arg("valid") = py::none())
      .def("load", [](const UPat& p, py::args src) { return p.load(to_upats(src)); })
      .def("store", [](const UPat& p, py::args src) { return p.store(to_upats(src)); })
      .def(
          "or_casted",
          [](const UPat& p, py::object n) { return p.or_casted(n.is_none() ? "" : n.cast<std::string>()); },
          py::arg("name") = py::none())
      .def("or_broadcasted", &UPat::or_broadcasted)
      .def("alu", [](const UPat& p, Ops op, py::args src) { return p.alu(op, to_upats(src)); })
      .def("const_like", [](const UPat& p, py::handle b) { return p.const_like(to_const(b)); })
      .def("where",
           [](const UPat& c, py::handle t, py::handle f) {
             UPat tp = py::isinstance<UPat>(t) ? t.cast<UPat>() : f.cast<UPat>();
             return c.alu(Ops::WHERE, {to_upat(tp, t), to_upat(tp, f)});
           })
      .def("maximum", [](const UPat& a, py::handle b) { return a.alu(Ops::MAX, {to_upat(a, b)}); })
      .def("ne", [](const UPat& a, py::handle b) { return a.alu(Ops::CMPNE, {to_upat(a, b)}); })
      .def("__neg__", [](const UPat& a) { return a.alu(Ops::MUL, {a.const_like(int64_t(-1))}); })
      .def("__add__", [](const UPat& a, py::handle b) { return a.alu(Ops::ADD, {to_upat(a, b)}); })
      .def("__radd__", [](const UPat& a, py::handle b) { return to_upat(a, b).alu(Ops::ADD, {a}); })
      .def("__sub__",
           [](const UPat& a, py::handle b) {
             if (py::isinstance<UPat>(b))
               return a.alu(Ops::ADD, {b.cast<UPat>().alu(Ops::MUL, {a.const_like(int64_t(-1))})});
             return a.alu(Ops::ADD, {a.const_like(to_const(py::reinterpret_borrow<py::object>(b).attr("__neg__")()))});
           })
      .def("__mul__", [](const UPat& a, py::handle b) { return a.alu(Ops::MUL, {to_upat(a, b)}); })
      .def("__rmul__", [](const UPat& a, py::handle b) { return to_upat(a, b).alu(Ops::MUL, {a}); })
      .def("__floordiv__", [](const UPat& a, py::handle b) { return a.alu(Ops::IDIV, {to_upat(a, b)}); })
      .def("__truediv__", [](const UPat& a, py::handle b) { return a.alu(Ops::MUL, {to_upat(a, b).alu(Ops::RECIP)}); })
      .def("__mod__", [](const UPat& a, py::handle b) { return a.alu(Ops::MOD, {to_upat(a, b)}); })
      .def("__and__", [](const UPat& a, py::handle b) { return a.alu(Ops::AND, {to_upat(a, b)}); })
      .def("__or__", [](const UPat& a, py::handle b) { return a.alu(Ops::OR, {to_upat(a, b)}); })
      .def("__xor__", [](const UPat& a, py::handle b) { return a.alu(Ops::XOR, {to_upat(a, b)}); })
      .def("__lshift__", [](const UPat& a, py::handle b) { return a.alu(Ops::SHL, {to_upat(a, b)}); })
      .def("__rshift__", [](const UPat& a, py::handle b) { return a.alu(Ops::SHR, {to_upat(a, b)}); })
      .def("__lt__", [](const UPat& a, py::handle b) { return a.alu(Ops::CMPLT, {to_upat(a, b)}); })
      .def("__repr__", &UPat::repr);

  // *** PatternMatcher, graph_rewrite ***
  py::class_<PyPM, std::shared_ptr<PyPM>>(m, "PatternMatcher")
      .def(py::init([](py::iterable patterns) {
        auto p = std::make_shared<PyPM>();
        std::vector<PyRuleT> rules;
        for (py::handle x : patterns) {
          py::tuple t = py::reinterpret_borrow<py::object>(x).cast<py::tuple>();
          if (t.size() != 2) throw py::value_error("a PatternMatcher pattern is a (UPat, function) pair");
          rules.emplace_back(t[0].cast<UPat>(), std::shared_ptr<const tg::RuleCallable<UOp, PyCtx>>(make_rule(t[1])));
          p->patterns.append(t);
        }
        p->pm = PyPatternMatcher(std::move(rules));
        return p;
      }))
      .def_readonly("patterns", &PyPM::patterns)
      .def("__add__",
           [](const PyPM& a, const PyPM& b) {
             auto p = std::make_shared<PyPM>();
             p->pm = a.pm + b.pm;
             p->patterns = a.patterns + b.patterns;
             return p;
           })
      .def(
          "rewrite",
          [](const PyPM& p, const UOp& u, py::object ctx) {
            PyCtx c{std::move(ctx)};
            return p.pm.rewrite(u, &c);
          },
          py::arg("uop"), py::arg("ctx") = py::none());
  m.def(
      "graph_rewrite",
      [](const UOp& sink, const PyPM& pm, py::object ctx, bool bottom_up, py::object, py::object bpm) {
        if (!bpm.is_none()) throw py::value_error("graph_rewrite: bpm is not supported");
        PyCtx c{std::move(ctx)};
        return tg::graph_rewrite(sink, pm.pm, c, tg::RewriteOpts{bottom_up, nullptr});
      },
      py::arg("sink"), py::arg("pm"), py::arg("ctx") = py::none(), py::arg("bottom_up") = false,
      py::arg("name") = py::none(), py::arg("bpm") = py::none());
  m.def("symbolic_simple", [] { return from_cpp(tg::symbolic_simple()); });
  // the reference's symbolic ends with gep_pushing, so symbolic_flat and sym have it too, and its sym has the
  // codegen-time rules (VECTORIZE of consts -> VCONST ...); the engine keeps those in the codegen layer
  // (codegen/devectorizer.h: sym_codegen is sym + gep_pushing + them) and adds them where the codegen rewrites
  m.def("symbolic", [] { return from_cpp(tg::symbolic() + tg::gep_pushing()); });
  m.def("symbolic_flat", [] { return from_cpp(tg::symbolic_flat() + tg::gep_pushing()); });
  m.def("sym", [] { return from_cpp(tg::sym_codegen()); });
  m.def("expander", [] { return from_cpp(tg::expander()); });
  m.def("type_verify", [](py::handle uops) {
    if (py::isinstance<tg::UOpNode>(uops))
      tg::type_verify(uops.cast<UOp>());
    else
      tg::type_verify(to_uops(uops));
  });
  m.def("print_uops", [](py::handle uops) {
    std::ostringstream os;
    tg::print_uops(to_uops(uops), os);
    py::print(os.str(), py::arg("end") = "");
  });

  // *** codegen ***
  m.def(
      "full_rewrite_to_sink",
      [](const UOp& sink, py::object opts, bool linearizer) {
        return tg::full_rewrite_to_sink(sink, render_opts(opts, "full_rewrite_to_sink"), linearizer);
      },
      py::arg("sink"), py::arg("opts") = py::none(), py::arg("linearizer") = false);
  m.def(
      "full_rewrite",
      [](const UOp& sink, py::object opts) { return tg::full_rewrite(sink, render_opts(opts, "full_rewrite")); },
      py::arg("sink"), py::arg("opts") = py::none());

  // *** transcendental: the polynomials and their pieces (tinygrad.uop.transcendental) ***
  m.def("xexp2", &tg::xexp2, py::arg("d"));
  m.def("xlog2", &tg::xlog2, py::arg("d"));
  m.def("xsin", &tg::xsin, py::arg("d"), py::arg("fast") = false, py::arg("switch_over") = 30.0);
  m.def("xpow", &tg::xpow, py::arg("base"), py::arg("exponent"));
  m.def("rintk", &tg::rintk, py::arg("d"));
  m.def("pow2if", &tg::pow2if, py::arg("q"), py::arg("float_dtype"));
  m.def("frexp", &tg::frexp, py::arg("v"));
  m.def("payne_hanek_reduction", &tg::payne_hanek_reduction, py::arg("d"));
  m.def("cody_waite_reduction", &tg::cody_waite_reduction, py::arg("d"));

  // *** gradient, shape ***
  m.def(
      "compute_gradient",
      [](const UOp& root, const UOp& root_grad, py::iterable targets) {
        std::vector<UOp> ts;
        for (py::handle t : targets) ts.push_back(t.cast<UOp>());
        py::dict out;
        for (auto& [node, grad] : tg::compute_gradient(root, root_grad, ts)) out[py::cast(UOp::borrow(node))] = grad;
        return out;
      },
      py::arg("root"), py::arg("root_grad"), py::arg("targets"));
  m.def(
      "shapetracker_from_shape",
      [](const tg::Shape& shape, py::object strides) {
        std::optional<tg::Shape> st;
        if (!strides.is_none()) st = strides.cast<tg::Shape>();
        return from_arg(tg::st_arg(tg::ShapeTracker::from_shape(shape, st)));
      },
      py::arg("shape"), py::arg("strides") = py::none());
}

}  // namespace tgpy
