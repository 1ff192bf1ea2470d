// bindings of tinygrad.engine.jit (TinyJit): the C++ JitFunction under tinygrad's decorator
//
//   @TinyJit
//   def step(x, y): ...; return loss          # Tensor, None, or lists/tuples/dicts of them
//
// Tensor arguments (positional or keyword) are the inputs. bool/int/float/str/None and tuples of them are captured
// by value (a replay with another value is an error: the reference replays the captured one silently). Any other
// object is not looked at, as in the reference: the replay doesn't run the function, so an object only matters
// through the tensors it holds, which the capture already reads (hlb_cifar10 passes a new OptimizerGroup and a new
// list of schedulers every step). A Tensor directly inside a list, tuple or dict can't be tracked and is an error.
// tinygrad's asserts (changed inputs, duplicate inputs, nothing captured) raise AssertionError, a TinyJit inside a
// TinyJit RuntimeError.
#include "tg/tensor/jit.h"

#include <algorithm>
#include <ostream>

#include "common.h"

namespace tgpy {
using tg::Tensor;

namespace {

bool is_plain_value(py::handle h) {
  if (h.is_none() || PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr()) ||
      py::isinstance<py::str>(h) || py::isinstance<py::bytes>(h))
    return true;
  if (py::isinstance<py::tuple>(h)) {
    for (py::handle x : h)
      if (!is_plain_value(x)) return false;
    return true;
  }
  return false;
}

bool holds_tensor(py::handle h) {
  if (py::isinstance<Tensor>(h)) return true;
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    for (py::handle x : h)
      if (holds_tensor(x)) return true;
  } else if (py::isinstance<py::dict>(h)) {
    for (auto kv : py::reinterpret_borrow<py::dict>(h))
      if (holds_tensor(kv.second)) return true;
  }
  return false;
}

// a captured plain value: compares by type and ==
struct PyValue {
  py::object o;
  bool operator==(const PyValue& b) const {
    return py::type::handle_of(o).is(py::type::handle_of(b.o)) && o.equal(b.o);
  }
  friend std::ostream& operator<<(std::ostream& os, const PyValue& v) { return os << std::string(py::repr(v.o)); }
};

void add_arg(tg::JitArgs& ja, const std::string& name, py::handle a) {
  if (py::isinstance<Tensor>(a)) return ja.add(name, a.cast<Tensor>());
  if (py::isinstance<tg::UOpNode>(a)) return ja.add_var(a.cast<tg::UOp>());  // a bound Variable (start_pos)
  if (holds_tensor(a))
    throw tg::JitError(tg::cat("TinyJit can't track the tensors inside argument ", name, " (a ",
                               std::string(py::str(py::type::handle_of(a).attr("__name__"))),
                               "): pass them as separate arguments"));
  if (is_plain_value(a)) ja.values.emplace_back(name, tg::JitValue(PyValue{py::reinterpret_borrow<py::object>(a)}));
}

// the function's return value: its tensors in order (None passes through; any other value would be frozen)
void flatten_ret(py::handle r, std::vector<Tensor>& out, const std::string& where) {
  if (r.is_none()) return;
  if (py::isinstance<Tensor>(r)) return out.push_back(r.cast<Tensor>());
  if (py::isinstance<py::list>(r) || py::isinstance<py::tuple>(r)) {
    size_t i = 0;
    for (py::handle x : r) flatten_ret(x, out, tg::cat(where, "[", i++, "]"));
    return;
  }
  if (py::isinstance<py::dict>(r)) {
    for (auto kv : py::reinterpret_borrow<py::dict>(r))
      flatten_ret(kv.second, out, tg::cat(where, "[", std::string(py::repr(kv.first)), "]"));
    return;
  }
  throw tg::JitError(tg::cat("TinyJit: the function returned ", std::string(py::repr(r)), " (a ",
                             std::string(py::str(py::type::handle_of(r).attr("__name__"))), ", at ", where,
                             "); a replay would return the captured value: return Tensors"));
}
// the same structure with the replay's tensors in it
py::object rebuild_ret(py::handle r, const std::vector<Tensor>& ts, size_t& i) {
  if (r.is_none()) return py::none();
  if (py::isinstance<Tensor>(r)) return py::cast(ts.at(i++));
  if (py::isinstance<py::list>(r)) {
    py::list l;
    for (py::handle x : r) l.append(rebuild_ret(x, ts, i));
    return py::object(std::move(l));
  }
  if (py::isinstance<py::tuple>(r)) {
    py::list l;
    for (py::handle x : r) l.append(rebuild_ret(x, ts, i));
    return py::tuple(l);
  }
  py::dict d;
  for (auto kv : py::reinterpret_borrow<py::dict>(r)) d[kv.first] = rebuild_ret(kv.second, ts, i);
  return py::object(std::move(d));
}

class PyTinyJit {
 public:
  PyTinyJit(py::object fxn, py::object captured, bool prune, bool optimize) : fxn_(std::move(fxn)) {
    if (!captured.is_none()) throw py::type_error("TinyJit: a CapturedJit can't be loaded (no pickling yet)");
    if (prune || optimize) throw py::value_error("TinyJit: prune and optimize aren't supported yet");
    if (fxn_.is_none()) throw py::value_error("need either a function or a CapturedJit");
  }

  py::object call(const py::args& args, const py::kwargs& kwargs) {
    tg::JitArgs ja;
    for (size_t i = 0; i < args.size(); i++) add_arg(ja, std::to_string(i), args[i]);
    std::vector<std::pair<std::string, py::object>> kw;
    for (auto kv : kwargs) kw.emplace_back(py::str(kv.first), py::reinterpret_borrow<py::object>(kv.second));
    std::sort(kw.begin(), kw.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (auto& [k, v] : kw) add_arg(ja, k, v);

    py::object ret;
    bool was_captured = !jit_.jit_cache().empty();
    std::vector<Tensor> outs = jit_.call(ja, [&] {
      ret = fxn_(*args, **kwargs);
      std::vector<Tensor> flat;
      flatten_ret(ret, flat, "the return value");
      return flat;
    });
    if (ret) {  // the function ran (calls 1 and 2, or JIT=0): its own objects, realized
      if (!was_captured && !jit_.jit_cache().empty()) ret_ = ret;  // this call captured: keep its structure
      return ret;
    }
    size_t i = 0;
    return rebuild_ret(ret_, outs, i);
  }
  void reset() {
    jit_.reset();
    ret_ = py::object();
  }

  py::list jit_cache()
      const {  // the captured kernels, like tinygrad's ExecItems: .prg.display_name, .prg.device, .bufs
    py::object ns = py::module_::import("types").attr("SimpleNamespace");
    py::object runner = py::module_::import("tinygrad.engine.realize").attr("CapturedRunner");
    py::list l;
    for (const tg::ExecItem& ei : jit_.jit_cache()) {
      py::object prg = runner(ei.prg->display_name, ei.prg->device);
      py::list bufs;  // their reprs: <buf real:True device:CPU size:16 dtype:dtypes.float> (None: an input's slot)
      for (const tg::Buffer& b : ei.bufs) bufs.append(b ? py::object(py::str(b.repr())) : py::object(py::none()));
      l.append(ns(py::arg("prg") = prg, py::arg("bufs") = bufs));
    }
    return l;
  }
  int64_t cnt() const { return jit_.cnt(); }
  py::object fxn() const { return fxn_; }

 private:
  py::object fxn_, ret_;
  tg::JitFunction jit_;
};

}  // namespace

void bind_jit(py::module_& m) {
  py::class_<PyTinyJit>(m, "TinyJit")
      .def(py::init<py::object, py::object, bool, bool>(), py::arg("fxn"), py::arg("captured") = py::none(),
           py::arg("prune") = false, py::arg("optimize") = false)
      .def("__call__",
           [](PyTinyJit& self, const py::args& args, const py::kwargs& kwargs) {
             try {
               return self.call(args, kwargs);
             } catch (const tg::JitError& e) {
               PyErr_SetString(PyExc_AssertionError, e.what());
               throw py::error_already_set();
             }
           })
      .def("reset", &PyTinyJit::reset)
      .def_property_readonly("jit_cache", &PyTinyJit::jit_cache)
      .def_property_readonly("captured",
                             [](const PyTinyJit& self) -> py::object {
                               py::list jc = self.jit_cache();
                               if (jc.empty()) return py::none();
                               return py::module_::import("types").attr("SimpleNamespace")(py::arg("jit_cache") = jc);
                             })
      .def_property_readonly("cnt", &PyTinyJit::cnt)
      .def_property_readonly("fxn", &PyTinyJit::fxn)
      // a jitted method: the instance is the first argument (tinygrad's __get__)
      .def("__get__", [](py::object self, py::object obj, py::object) -> py::object {
        if (obj.is_none()) return self;
        return py::module_::import("functools").attr("partial")(self.attr("__call__"), obj);
      });
}

}  // namespace tgpy
