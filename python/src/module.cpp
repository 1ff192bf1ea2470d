// the extension tinygrad._C: conversions shared by the bindings, error translation, the module
#include <cstring>
#include <memory>

#include "common.h"
#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/shape/shapetracker.h"
#include "tg/uop/kernel_info.h"

namespace tgpy {

static bool is_numpy_bool(py::handle h) {
  std::string n = py::str(py::type::handle_of(h).attr("__name__"));
  return n == "bool_" || n == "bool";
}

bool is_scalar(py::handle h) {
  if (PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr())) return true;
  // numpy scalars: integers have __index__, floats are numbers with __float__ and no len
  if (py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h) || py::isinstance<py::bytes>(h)) return false;
  if (!py::hasattr(h, "shape") || !py::hasattr(h, "dtype")) return false;
  py::object shape = h.attr("shape");  // a UOp's is None (or a tuple of its sizes): not a scalar
  return py::isinstance<py::tuple>(shape) && py::len(shape) == 0 && !py::isinstance<tg::UOpNode>(h);
}

tg::ConstValue to_const(py::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return o == Py_True;
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow !=
        0) {  // uint64's upper half is exact; past that, wrap, as the value is truncated to the dtype anyway
      if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (!PyErr_Occurred()) return tg::int_const(u);
        PyErr_Clear();
      }
      return static_cast<int64_t>(PyLong_AsUnsignedLongLongMask(o));
    }
    return static_cast<int64_t>(v);
  }
  if (PyFloat_Check(o)) return PyFloat_AsDouble(o);
  if (py::hasattr(h, "dtype") && py::hasattr(h, "item")) {  // numpy scalar or 0-d array
    if (is_numpy_bool(h)) return h.attr("item")().cast<bool>();
    return to_const(h.attr("item")());
  }
  if (PyIndex_Check(o)) return py_int(h);
  throw py::type_error(tg::cat("expected a bool, int or float, got ", std::string(py::str(py::type::handle_of(h)))));
}

py::object from_const(const tg::ConstValue& v) {
  if (auto* b = std::get_if<bool>(&v)) return py::bool_(*b);
  if (auto* i = std::get_if<int64_t>(&v)) return py::int_(*i);
  if (auto* u = std::get_if<uint64_t>(&v)) return py::int_(*u);
  return py::float_(std::get<double>(v));
}

py::object numpy_from_bytes(const std::vector<uint8_t>& bytes, tg::DType d) {
  if (d.fmt() == 0 || d == tg::dtypes::bfloat16)
    throw py::value_error(tg::cat("numpy has no ", d.repr(), ": cast the tensor first"));
  py::module_ np = py::module_::import("numpy");
  py::bytes raw(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::string npd = d == tg::dtypes::bool_ ? "bool" : std::string(1, d.fmt());
  return np.attr("frombuffer")(raw, py::arg("dtype") = np.attr("dtype")(npd)).attr("copy")();
}

std::vector<int64_t> to_ints(py::handle h) {
  if (PyLong_Check(h.ptr())) return {h.cast<int64_t>()};
  std::vector<int64_t> out;
  for (py::handle x : h) out.push_back(py_int(x));
  return out;
}

tg::Shape to_shape(py::handle h) {
  if (PyLong_Check(h.ptr()) || py::isinstance<tg::UOpNode>(h)) return {h.cast<tg::sint>()};
  tg::Shape out;
  for (py::handle x : h) out.push_back(py::isinstance<tg::UOpNode>(x) ? x.cast<tg::sint>() : tg::sint(py_int(x)));
  return out;
}

py::object from_arg(const tg::Arg& a) {
  return std::visit(
      [](const auto& x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return py::none();
        else if constexpr (std::is_same_v<T, tg::ConstValue>)
          return from_const(x);
        else if constexpr (std::is_same_v<T, std::string>)
          return py::str(x);
        else if constexpr (std::is_same_v<T, tg::Ops>)
          return py::cast(x);
        else if constexpr (std::is_same_v<T, tg::VarArg>)
          return py::make_tuple(x.name, from_const(x.min), from_const(x.max));
        else if constexpr (std::is_same_v<T, tg::SpecialArg>)
          return x.sym ? py::make_tuple(x.name,
                                        tg::special_size(tg::UOp::make(tg::Ops::SPECIAL, tg::dtypes::int32, {}, x)))
                       : py::make_tuple(x.name, x.size);
        else if constexpr (std::is_same_v<T, tg::ReduceArg>)
          return py::make_tuple(py::cast(x.op), py::tuple(py::cast(x.axes)));
        else if constexpr (std::is_same_v<T, tg::Tuple>) {
          py::tuple t(x.size());
          for (size_t i = 0; i < x.size(); i++) t[i] = from_const(x[i]);
          return t;
        } else if constexpr (std::is_same_v<T, tg::PairTuple>) {
          py::tuple t(x.size());
          for (size_t i = 0; i < x.size(); i++) t[i] = py::make_tuple(x[i].first, x[i].second);
          return t;
        } else {
          static_assert(std::is_same_v<T, tg::ObjectArg>);
          if (const auto* d = dynamic_cast<const tg::DeviceTupleArg*>(x.get()))  // a DEVICE's tuple
            return py::tuple(py::cast(d->devices));
          return py::cast(std::const_pointer_cast<tg::ArgObject>(x));
        }
      },
      a);
}

tg::Arg to_arg(py::handle h) {
  if (h.is_none()) return std::monostate{};
  if (py::isinstance<tg::Ops>(h)) return h.cast<tg::Ops>();
  if (py::isinstance<py::str>(h)) return h.cast<std::string>();
  if (py::isinstance<tg::ArgObject>(h)) return tg::ObjectArg(h.cast<std::shared_ptr<tg::ArgObject>>());
  if (is_scalar(h)) return to_const(h);
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
    py::sequence s = py::reinterpret_borrow<py::sequence>(h);
    size_t n = py::len(s);
    bool strings = n >= 1;
    for (py::handle x : s) strings = strings && py::isinstance<py::str>(x);
    if (strings) return tg::ObjectArg(std::make_shared<tg::DeviceTupleArg>(s.cast<std::vector<std::string>>()));
    if (n >= 1 && py::isinstance<py::str>(s[0])) {
      if (n == 3) {  // a bound may be given as a CONST UOp (the reference's test_uops does)
        auto bound = [](py::handle x) {
          if (py::isinstance<tg::UOpNode>(x) && x.cast<tg::UOp>().op() == tg::Ops::CONST)
            return x.cast<tg::UOp>().const_arg();
          return to_const(x);
        };
        return tg::VarArg{s[0].cast<std::string>(), bound(s[1]), bound(s[2])};
      }
      if (n == 2 && py::isinstance<tg::UOpNode>(s[1])) {  // a symbolic size
        tg::UOp sz = s[1].cast<tg::UOp>();
        return tg::SpecialArg{s[0].cast<std::string>(), tg::as_int(sz.vmax()), std::make_shared<tg::UOpArg>(sz)};
      }
      if (n == 2) return tg::SpecialArg{s[0].cast<std::string>(), py_int(s[1]), nullptr};
    }
    if (n == 2 && py::isinstance<tg::Ops>(s[0])) return tg::ReduceArg{s[0].cast<tg::Ops>(), to_ints(s[1])};
    bool pairs = n > 0, scalars = true;
    for (py::handle x : s) {
      bool is_pair = (py::isinstance<py::tuple>(x) || py::isinstance<py::list>(x)) && py::len(x) == 2;
      pairs = pairs && is_pair;
      scalars = scalars && is_scalar(x);
    }
    if (scalars) {
      tg::Tuple t;
      for (py::handle x : s) t.push_back(to_const(x));
      return t;
    }
    if (pairs) {
      tg::PairTuple t;
      for (py::handle x : s) {
        py::sequence p = py::reinterpret_borrow<py::sequence>(x);
        t.emplace_back(py_int(p[0]), py_int(p[1]));
      }
      return t;
    }
  }
  // the reference's KernelInfo record (tinygrad.uop.ops.KernelInfo): the engine's
  if (py::isinstance(h, py::module_::import("tinygrad.uop.ops").attr("KernelInfo")))
    return tg::ObjectArg(
        std::make_shared<tg::KernelInfo>(h.attr("name").cast<std::string>(), h.attr("local_dims").cast<int>(),
                                         h.attr("upcasted").cast<int>(), h.attr("dont_use_locals").cast<bool>()));
  throw py::type_error(tg::cat("can't use ", std::string(py::repr(h)), " as a UOp arg"));
}

py::object metadata_object(const tg::Metadata& m) {
  return py::module_::import("tinygrad.helpers").attr("Metadata")(m.name, m.caller, m.backward);
}

}  // namespace tgpy

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "tinygrad.cpp: the C++ engine under tinygrad's Python API";
  // errors: a user mistake raises the Python exception tinygrad raises for it (tg::Error's kind), a broken
  // invariant an AssertionError
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tg::InternalError& e) {
      PyErr_SetString(PyExc_AssertionError, e.what());
    } catch (const tg::Error& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.kind) {
        case tg::ErrorKind::Index: type = PyExc_IndexError; break;
        case tg::ErrorKind::Value: type = PyExc_ValueError; break;
        case tg::ErrorKind::Type: type = PyExc_TypeError; break;
        case tg::ErrorKind::Assertion: type = PyExc_AssertionError; break;
        case tg::ErrorKind::NotImplemented: type = PyExc_NotImplementedError; break;
        case tg::ErrorKind::Runtime: break;
      }
      PyErr_SetString(type, e.what());
    }
  });
  tgpy::bind_uop(m);
  tgpy::bind_tensor(m);
  tgpy::bind_nn(m);
  tgpy::bind_jit(m);
  tgpy::bind_device(m);
  tgpy::bind_llm(m);
  tgpy::bind_onnx(m);
  tgpy::bind_distributed(m);
  m.def("getenv", [](const std::string& k, int64_t d) { return tg::getenv(k.c_str(), d); });
  // the engine's knobs (src/tg/helpers/knobs.h), for tinygrad.helpers' ContextVar and Context
  m.def("knob_table", [] {
    py::list out;
    for (const tg::KnobInfo& k : tg::knob_table())
      out.append(py::make_tuple(std::string(k.name), k.kind == tg::KnobKind::Int, std::string(k.default_text), k.flags,
                                std::string(k.meaning)));
    return out;
  });
  m.def("knob_value", [](const std::string& name) -> py::object {
    const tg::KnobInfo* k = tg::find_knob(name);
    if (!k) throw py::key_error(name);
    if (k->kind == tg::KnobKind::Int) return py::int_(tg::knob_int(name));
    return py::str(tg::knob_text(name));
  });
  m.def("set_knob", [](const std::string& name, const std::string& value) { tg::set_knob(name, value); });
  // a Context over the engine's knobs: entered and left from Python's `with` (on the thread that runs it)
  struct KnobContext {
    std::vector<std::pair<std::string, tg::KnobValue>> settings;
    std::unique_ptr<tg::Context> ctx;
  };
  py::class_<KnobContext>(m, "KnobContext")
      .def(py::init([](const py::dict& kw) {
        KnobContext c;
        for (auto [k, v] : kw) c.settings.emplace_back(py::str(k), tg::KnobValue(std::string(py::str(v))));
        return c;
      }))
      .def("enter", [](KnobContext& c) { c.ctx = std::make_unique<tg::Context>(c.settings); })
      .def("exit", [](KnobContext& c) { c.ctx.reset(); });
}
