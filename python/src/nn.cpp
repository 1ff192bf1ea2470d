// bindings of tinygrad.nn (layers, optim, state, datasets): the submodules tinygrad._C.nn{,.optim,.state,.datasets}
#include <unordered_set>

#include "common.h"
#include "tg/nn/datasets.h"
#include "tg/nn/optim.h"
#include "tg/nn/state.h"

namespace tgpy {
using tg::Tensor;
namespace optim = tg::nn::optim;

void bind_nn_layers(py::module_& nn);  // python/src/nn_layers.cpp

namespace {

std::optional<bool> fused_arg(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return py::bool_(py::reinterpret_borrow<py::object>(h)).cast<bool>();
}

// *** state dicts of python objects: tensors, C++ layers, namedtuples, dicts, lists, tuples, objects' __dict__ ***

struct Walker {
  std::vector<std::pair<std::string, Tensor>> out;
  std::unordered_set<PyObject*> path;  // containers being walked: a cycle is not followed again

  static std::string strip_dots(std::string s) {
    size_t b = s.find_first_not_of('.'), e = s.find_last_not_of('.');
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
  }
  void walk(py::handle obj, const std::string& prefix) {
    if (py::isinstance<Tensor>(obj)) {
      out.emplace_back(strip_dots(prefix), obj.cast<Tensor>());
      return;
    }
    if (obj.is_none() || py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj) || is_scalar(obj)) return;
    if (path.count(obj.ptr())) return;
    path.insert(obj.ptr());
    if (py::hasattr(obj, "__tg_state__")) {  // a C++ layer: its members, as its visit names them
      for (auto& [k, t] : obj.attr("__tg_state__")().cast<std::vector<std::pair<std::string, Tensor>>>())
        out.emplace_back(prefix + k, t);
    } else if (py::hasattr(obj, "_asdict") && py::isinstance<py::tuple>(obj)) {  // namedtuple
      walk(obj.attr("_asdict")(), prefix);
    } else if (py::isinstance<py::dict>(obj)) {
      for (auto [k, v] : py::reinterpret_borrow<py::dict>(obj)) walk(v, prefix + std::string(py::str(k)) + ".");
    } else if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
      size_t i = 0;
      for (py::handle x : obj) walk(x, prefix + std::to_string(i++) + ".");
    } else if (py::hasattr(obj, "__dict__")) {
      walk(obj.attr("__dict__"), prefix);
    }
    path.erase(obj.ptr());
  }
};

py::dict get_state_dict(py::handle obj, const std::string& prefix) {
  Walker w;
  w.walk(obj, prefix);
  py::dict d;
  for (auto& [k, t] : w.out) d[py::str(k)] = py::cast(t);
  return d;
}

tg::nn::StateDict to_state_dict(const py::dict& d) {
  tg::nn::StateDict sd;
  for (auto [k, v] : d) {
    if (!py::isinstance<Tensor>(v))
      throw py::type_error(tg::cat("state dict value of ", std::string(py::repr(k)), " is not a Tensor"));
    sd.insert_or_assign(std::string(py::str(k)), v.cast<Tensor>());
  }
  return sd;
}

// a C++ layer's state (for the walker above and for its __dict__-free objects)
template <class M>
std::vector<std::pair<std::string, Tensor>> layer_state(M& m) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& kv : tg::nn::state::get_state_dict(m)) out.push_back(kv);
  return out;
}

void bind_optim(py::module_ m) {
  py::class_<optim::Optimizer>(m, "Optimizer")
      .def_readwrite("params", &optim::Optimizer::params)
      .def_readwrite("buffers", &optim::Optimizer::buffers)
      .def_readwrite("lr", &optim::Optimizer::lr)
      .def_readonly("device", &optim::Optimizer::device)
      .def_readonly("fused", &optim::Optimizer::fused)
      .def("zero_grad", &optim::Optimizer::zero_grad)
      .def("step", &optim::Optimizer::step)
      .def("schedule_step", &optim::Optimizer::schedule_step);

  py::class_<optim::OptimizerGroup, optim::Optimizer>(m, "OptimizerGroup")
      .def(py::init([](const py::args& args) {
             std::vector<optim::Optimizer*> os;
             for (py::handle a : args) os.push_back(a.cast<optim::Optimizer*>());
             return std::make_unique<optim::OptimizerGroup>(os);
           }),
           py::keep_alive<1, 2>())  // the group holds pointers to the optimizers in its args
      .def("__getitem__",
           [](py::object self, size_t i) {
             auto& g = self.cast<optim::OptimizerGroup&>();
             if (i >= g.optimizers.size()) throw py::index_error("optimizer index out of range");
             return py::cast(g.optimizers[i], py::return_value_policy::reference_internal, self);
           })
      .def_property_readonly("optimizers", [](py::object self) {
        auto& g = self.cast<optim::OptimizerGroup&>();
        py::tuple t(g.optimizers.size());
        for (size_t i = 0; i < g.optimizers.size(); i++)
          t[i] = py::cast(g.optimizers[i], py::return_value_policy::reference_internal, self);
        return t;
      });

  py::class_<optim::LARS, optim::Optimizer>(m, "LARS")
      .def(py::init([](const std::vector<Tensor>& params, double lr, double momentum, double weight_decay,
                       bool nesterov, bool classic, double tcoef, py::object fused) {
             return optim::LARS(params, {.lr = lr,
                                         .momentum = momentum,
                                         .weight_decay = weight_decay,
                                         .nesterov = nesterov,
                                         .classic = classic,
                                         .tcoef = tcoef,
                                         .fused = fused_arg(fused)});
           }),
           py::arg("params"), py::arg("lr") = 0.001, py::arg("momentum") = 0.9, py::arg("weight_decay") = 1e-4,
           py::arg("nesterov") = false, py::arg("classic") = true, py::arg("tcoef") = 0.001,
           py::arg("fused") = py::none())
      .def_readwrite("momentum", &optim::LARS::momentum)
      .def_readwrite("wd", &optim::LARS::wd)
      .def_readwrite("nesterov", &optim::LARS::nesterov)
      .def_readwrite("classic", &optim::LARS::classic)
      .def_readwrite("tcoef", &optim::LARS::tcoef)
      .def_readwrite("b", &optim::LARS::b);

  py::class_<optim::LAMB, optim::Optimizer>(m, "LAMB")
      .def(py::init([](const std::vector<Tensor>& params, double lr, double b1, double b2, double eps,
                       double weight_decay, bool adam, py::object fused) {
             return optim::LAMB(params, {.lr = lr,
                                         .b1 = b1,
                                         .b2 = b2,
                                         .eps = eps,
                                         .weight_decay = weight_decay,
                                         .adam = adam,
                                         .fused = fused_arg(fused)});
           }),
           py::arg("params"), py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-6,
           py::arg("weight_decay") = 0.0, py::arg("adam") = false, py::arg("fused") = py::none())
      .def_readwrite("b1", &optim::LAMB::b1)
      .def_readwrite("b2", &optim::LAMB::b2)
      .def_readwrite("eps", &optim::LAMB::eps)
      .def_readwrite("wd", &optim::LAMB::wd)
      .def_readwrite("adam", &optim::LAMB::adam)
      .def_readwrite("b1_t", &optim::LAMB::b1_t)
      .def_readwrite("b2_t", &optim::LAMB::b2_t)
      .def_readwrite("m", &optim::LAMB::m)
      .def_readwrite("v", &optim::LAMB::v);

  m.def(
      "SGD",
      [](const std::vector<Tensor>& params, double lr, double momentum, double weight_decay, bool nesterov,
         bool classic, py::object fused) {
        return optim::SGD(params, {.lr = lr,
                                   .momentum = momentum,
                                   .weight_decay = weight_decay,
                                   .nesterov = nesterov,
                                   .classic = classic,
                                   .fused = fused_arg(fused)});
      },
      py::arg("params"), py::arg("lr") = 0.001, py::arg("momentum") = 0.0, py::arg("weight_decay") = 0.0,
      py::arg("nesterov") = false, py::arg("classic") = false, py::arg("fused") = py::none());
  m.def(
      "Adam",
      [](const std::vector<Tensor>& params, double lr, double b1, double b2, double eps, py::object fused) {
        return optim::Adam(params, {.lr = lr, .b1 = b1, .b2 = b2, .eps = eps, .fused = fused_arg(fused)});
      },
      py::arg("params"), py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-8,
      py::arg("fused") = py::none());
  m.def(
      "AdamW",
      [](const std::vector<Tensor>& params, double lr, double b1, double b2, double eps, double weight_decay,
         py::object fused) {
        return optim::AdamW(
            params,
            {.lr = lr, .b1 = b1, .b2 = b2, .eps = eps, .weight_decay = weight_decay, .fused = fused_arg(fused)});
      },
      py::arg("params"), py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-8,
      py::arg("weight_decay") = 0.01, py::arg("fused") = py::none());
}

void bind_state(py::module_ m) {
  m.def("get_state_dict", &get_state_dict, py::arg("obj"), py::arg("prefix") = "");
  m.def(
      "get_parameters",
      [](py::handle obj) {
        py::list out;
        for (auto [k, v] : get_state_dict(obj, "")) out.append(v);
        return out;
      },
      py::arg("obj"));
  m.def(
      "load_state_dict",
      [](py::handle model, py::dict state_dict, bool strict, bool verbose, bool consume, bool realize) {
        tg::nn::StateDict sd = to_state_dict(state_dict);
        tg::nn::StateDict model_state = to_state_dict(get_state_dict(model, ""));
        std::vector<Tensor> loaded = tg::nn::state::load_state_dict_into(
            model_state, sd, {.strict = strict, .verbose = verbose, .consume = false, .realize = realize});
        if (consume)
          for (auto& kv : model_state)
            if (state_dict.contains(kv.first)) PyDict_DelItemString(state_dict.ptr(), kv.first.c_str());
        return loaded;
      },
      py::arg("model"), py::arg("state_dict"), py::arg("strict") = true, py::arg("verbose") = true,
      py::arg("consume") = false, py::arg("realize") = true);
}

void bind_datasets(py::module_ m) {
  m.def(
      "mnist",
      [](std::optional<std::string> device, bool fashion, std::optional<std::string> dir) {
        auto [X_train, Y_train, X_test, Y_test] =
            tg::nn::datasets::mnist(dir.value_or(fashion ? "data/fashion-mnist" : "data/mnist"), device);
        return py::make_tuple(X_train, Y_train, X_test, Y_test);
      },
      py::arg("device") = py::none(), py::arg("fashion") = false, py::arg("dir") = py::none(),
      "(X_train, Y_train, X_test, Y_test) from the IDX files in dir (default data/mnist, from tools/fetch_mnist.py)");
  m.def("load_idx", &tg::nn::datasets::load_idx, py::arg("path"), py::arg("device") = py::none());
}

}  // namespace

void bind_nn(py::module_& m) {
  py::module_ nn = m.def_submodule("nn", "tinygrad.nn: layers");
  bind_nn_layers(nn);
  bind_optim(nn.def_submodule("optim", "tinygrad.nn.optim"));
  bind_state(nn.def_submodule("state", "tinygrad.nn.state"));
  bind_datasets(nn.def_submodule("datasets", "tinygrad.nn.datasets"));
}

}  // namespace tgpy
