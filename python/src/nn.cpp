// bindings of tinygrad.nn (layers, optim, state, datasets): the submodules tinygrad._C.nn{,.optim,.state,.datasets}
#include <fstream>
#include <unordered_set>

#include "common.h"
#include "tg/nn/datasets.h"
#include "tg/nn/gguf.h"
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
  py::handle tensor_type;  // what counts as a tensor (tinygrad's tensor_type=Tensor)
  std::vector<std::pair<std::string, py::object>> out;
  std::unordered_set<PyObject*> path;  // containers being walked: a cycle is not followed again

  static std::string strip_dots(std::string s) {
    size_t b = s.find_first_not_of('.'), e = s.find_last_not_of('.');
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
  }
  void walk(py::handle obj, const std::string& prefix) {
    if (py::isinstance(obj, tensor_type)) {
      out.emplace_back(strip_dots(prefix), py::reinterpret_borrow<py::object>(obj));
      return;
    }
    if (obj.is_none() || py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj) || is_scalar(obj)) return;
    if (path.count(obj.ptr())) return;
    path.insert(obj.ptr());
    if (py::hasattr(obj, "__tg_state__")) {  // a C++ layer: its members, as its visit names them
      for (py::handle kv : obj.attr("__tg_state__")())
        if (py::object o = kv[py::int_(1)]; py::isinstance(o, tensor_type))
          out.emplace_back(prefix + kv[py::int_(0)].cast<std::string>(), o);
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

py::dict get_state_dict(py::handle obj, const std::string& prefix, py::handle tensor_type) {
  Walker w{tensor_type.is_none() ? py::handle(py::type::of<Tensor>()) : tensor_type, {}, {}};
  w.walk(obj, prefix);
  py::dict d;
  for (auto& [k, t] : w.out) d[py::str(k)] = t;
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

// *** safetensors: python values <-> JSON (the header's metadata), paths as str or os.PathLike ***

tg::json::Value to_json(py::handle h, int depth = 1) {
  namespace json = tg::json;
  if (h.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(h)) return h.cast<bool>();
  if (py::isinstance<py::int_>(h)) {
    try {
      return h.cast<int64_t>();
    } catch (const py::cast_error&) {
      throw py::value_error(tg::cat("metadata int ", std::string(py::repr(h)), " does not fit int64"));
    }
  }
  if (py::isinstance<py::float_>(h)) return h.cast<double>();
  if (py::isinstance<py::str>(h)) return h.cast<std::string>();
  bool container = py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h) || py::isinstance<py::dict>(h);
  if (container && depth > json::max_depth)
    throw py::value_error(tg::cat("metadata nested deeper than ", json::max_depth));
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    json::Array a;
    for (py::handle x : h) a.push_back(to_json(x, depth + 1));
    return a;
  }
  if (py::isinstance<py::dict>(h)) {
    json::Object o;
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(h)) {
      if (!py::isinstance<py::str>(k))
        throw py::type_error(tg::cat("metadata keys must be str, not ", std::string(py::repr(k))));
      o.emplace_back(k.cast<std::string>(), to_json(v, depth + 1));
    }
    return o;
  }
  throw py::type_error(tg::cat("metadata value ", std::string(py::repr(h)), " is not JSON serializable"));
}

py::object from_json(const tg::json::Value& v) {
  using K = tg::json::Value::Kind;
  switch (v.kind()) {
    case K::null: return py::none();
    case K::boolean: return py::bool_(v.as_bool());
    case K::integer: return py::int_(v.as_int());
    case K::number: return py::float_(v.as_double());
    case K::string: return py::str(v.as_string());
    case K::array: {
      py::list l;
      for (const auto& x : v.as_array()) l.append(from_json(x));
      return l;
    }
    case K::object: {
      py::dict d;
      for (const auto& [k, x] : v.as_object()) d[py::str(k)] = from_json(x);
      return d;
    }
  }
  return py::none();
}

std::string fspath(py::handle fn) {
  return py::module_::import("os").attr("fspath")(fn).cast<std::string>();  // str, bytes or os.PathLike
}

py::dict to_py_dict(const tg::nn::StateDict& sd) {
  py::dict d;
  for (const auto& [k, t] : sd) d[py::str(k)] = py::cast(t);
  return d;
}

// *** GGUF: metadata values <-> python, the loader and writer ***

py::object from_gguf(const tg::nn::GGUFValue& v) {
  using T = tg::nn::GGUFValue::Type;
  switch (v.type) {
    case T::FLOAT32:
    case T::FLOAT64: return py::float_(v.as_double());
    case T::BOOL: return py::bool_(v.as_bool());
    case T::STRING: return py::str(v.as_string());
    case T::ARRAY: {
      py::list l;
      for (const auto& x : v.as_array()) l.append(from_gguf(x));
      return l;
    }
    case T::UINT64: return py::int_(std::get<uint64_t>(v.v));
    default: return py::int_(v.as_int());
  }
}

// python values as llama.cpp's writer (gguf-py) types them: ints as UINT32 (INT32 when negative, 64 bits when they
// don't fit), floats as FLOAT32, lists of ints as INT32 arrays, other lists as arrays of their first element's type
tg::nn::GGUFValue to_gguf(py::handle h, int depth = 0) {
  using V = tg::nn::GGUFValue;
  if (py::isinstance<py::bool_>(h)) return V::boolean(h.cast<bool>());
  if (py::isinstance<py::int_>(h)) {
    py::int_ i = py::reinterpret_borrow<py::int_>(h);
    if (i >= py::int_(0) && i < py::int_(int64_t(1) << 32)) return V::u32(h.cast<uint32_t>());
    if (i < py::int_(0) && i >= py::int_(-(int64_t(1) << 31))) return V::i32(h.cast<int32_t>());
    if (i < py::int_(0)) return {V::Type::INT64, V::Type::UINT8, h.cast<int64_t>()};
    return V::u64(h.cast<uint64_t>());
  }
  if (py::isinstance<py::float_>(h)) return V::f32(h.cast<float>());
  if (py::isinstance<py::str>(h)) return V::str(h.cast<std::string>());
  if ((py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) && depth == 0) {
    std::vector<V> xs;
    for (py::handle x : h) xs.push_back(to_gguf(x, depth + 1));
    for (auto& x : xs)  // an array of ints is INT32, as gguf-py writes token types and ids (llama.cpp checks the type)
      if ((x.type == V::Type::UINT32 && x.as_int() <= INT32_MAX) || x.type == V::Type::INT32)
        x = V::i32(static_cast<int32_t>(x.as_int()));
    V::Type et = xs.empty() ? V::Type::INT32 : xs[0].type;
    for (auto& x : xs)
      if (x.type != et) {  // mixed ints: the widest the values need
        if (x.type == V::Type::STRING || et == V::Type::STRING || x.type == V::Type::FLOAT32 || et == V::Type::FLOAT32)
          throw py::type_error("gguf_save: an array mixes " + std::string(py::repr(h)));
        et = V::Type::INT64;
      }
    if (et == V::Type::INT64)
      for (auto& x : xs) x = {V::Type::INT64, V::Type::UINT8, x.as_int()};
    return V::array(et, std::move(xs));
  }
  throw py::type_error("gguf_save: metadata value " + std::string(py::repr(h)) + " can't be written");
}

void bind_gguf(py::module_ m) {
  namespace nn = tg::nn;
  m.def(
      "gguf_load",
      [](py::handle fn) {
        nn::GGUFFile f = py::isinstance<Tensor>(fn) ? nn::gguf_load(fn.cast<Tensor>()) : nn::gguf_load(fspath(fn));
        py::dict kv;
        for (const auto& [k, v] : f.kv) kv[py::str(k)] = from_gguf(v);
        return py::make_tuple(kv, to_py_dict(f.tensors));
      },
      py::arg("tensor"),
      "(the metadata, the tensors) of a GGUF file (a path, or a uint8 Tensor of its bytes): lazy, each tensor reads "
      "its own bytes and dequantizes to float32 where quantized");
  m.def("ggml_data_to_tensor", &nn::ggml_data_to_tensor, py::arg("t"), py::arg("n"), py::arg("ggml_type"),
        "n values of ggml type ggml_type (llama.cpp's ids) from the bytes of the uint8 tensor t, as a 1-D tensor");
  m.def("ggml_int8_linear",
        static_cast<Tensor (*)(const Tensor&, const Tensor&, uint32_t, int64_t)>(&nn::ggml_int8_linear), py::arg("x"),
        py::arg("t"), py::arg("ggml_type"), py::arg("n"),
        "x (..., k) @ W.T for the (n, k) weight W of a GGML block type packed in the uint8 tensor t, as llama.cpp "
        "computes it: x quantized to int8 blocks of 32, integer dot products with W's, scaled (ours: no such function "
        "in tinygrad)");
  py::class_<nn::GGMLInt8Weight>(
      m, "GGMLInt8Weight", "a Q4_0 / Q8_0 / Q4_K / Q6_K weight in the int8 matvec's layout (ggml_int8_pack; ours)")
      .def(py::init([](Tensor q, Tensor d, uint32_t type, int64_t n, int64_t k, std::optional<Tensor> sc) {
             return nn::GGMLInt8Weight{std::move(q), std::move(d), type, n, k, std::move(sc)};
           }),
           py::arg("q"), py::arg("d"), py::arg("ggml_type"), py::arg("n"), py::arg("k"), py::arg("sc") = py::none())
      .def_readonly("q", &nn::GGMLInt8Weight::q)
      .def_readonly("d", &nn::GGMLInt8Weight::d)
      .def_readonly("ggml_type", &nn::GGMLInt8Weight::type)
      .def_readonly("n", &nn::GGMLInt8Weight::n)
      .def_readonly("k", &nn::GGMLInt8Weight::k)
      .def_readonly("sc", &nn::GGMLInt8Weight::sc)
      .def("dequantize", &nn::GGMLInt8Weight::dequantize, "the (n, k) float32 weight, lazily");
  m.def(
      "ggml_int8_pack",
      [](const Tensor& t, uint32_t type, int64_t n, int64_t k) {
        nn::GGMLInt8Weight w = nn::ggml_int8_pack(t, type, n, k);
        Tensor::realize(w.tensors());
        return w;
      },
      py::arg("t"), py::arg("ggml_type"), py::arg("n"), py::arg("k"),
      "the (n, k) Q4_0 / Q8_0 / Q4_K / Q6_K weight packed in the uint8 tensor t, laid out (realized) for "
      "ggml_int8_linear");
  m.def("ggml_int8_linear", static_cast<Tensor (*)(const Tensor&, const nn::GGMLInt8Weight&)>(&nn::ggml_int8_linear),
        py::arg("x"), py::arg("w"), "x (..., k) @ W.T for a weight that ggml_int8_pack laid out");
  m.def(
      "gguf_save",
      [](py::handle fn, py::dict tensors, py::object metadata) {
        nn::GGUFMetadata kv;
        if (!metadata.is_none())
          for (auto [k, v] : py::reinterpret_borrow<py::dict>(metadata)) kv.emplace_back(py::str(k), to_gguf(v));
        std::vector<nn::GGUFSaveTensor> ts;
        for (auto [k, v] : tensors) {
          nn::GGUFSaveTensor st{py::str(k), Tensor::empty({0}), 0, false, {}};
          if (py::isinstance<Tensor>(v)) {
            st.values = v.cast<Tensor>();
            tg::DType dt = st.values.dtype();
            st.type = static_cast<uint32_t>(dt == tg::dtypes::float16    ? nn::GGMLType::F16
                                            : dt == tg::dtypes::bfloat16 ? nn::GGMLType::BF16
                                            : dt == tg::dtypes::int8     ? nn::GGMLType::I8
                                            : dt == tg::dtypes::int16    ? nn::GGMLType::I16
                                            : dt == tg::dtypes::int32    ? nn::GGMLType::I32
                                            : dt == tg::dtypes::int64    ? nn::GGMLType::I64
                                            : dt == tg::dtypes::float64  ? nn::GGMLType::F64
                                                                         : nn::GGMLType::F32);
          } else {
            py::tuple t = py::reinterpret_borrow<py::tuple>(v);
            st.values = t[0].cast<Tensor>(), st.type = t[1].cast<uint32_t>();
            if (t.size() > 2) st.raw = true, st.shape = to_shape(t[2]);
          }
          ts.push_back(std::move(st));
        }
        nn::gguf_save(fspath(fn), kv, ts);
      },
      py::arg("fn"), py::arg("tensors"), py::arg("metadata") = py::none(),
      "writes a GGUF v3 file: tensors maps names to a Tensor (stored in its own dtype), (Tensor, ggml_type) to "
      "quantize it, or (uint8 Tensor of packed blocks, ggml_type, shape) to store them as they are");
}

void bind_safetensors(py::module_ m) {
  namespace state = tg::nn::state;
  m.def(
      "safe_save",
      [](const py::dict& tensors, py::handle fn, py::object metadata) {
        tg::json::Object meta;
        if (!metadata.is_none()) {
          if (!py::isinstance<py::dict>(metadata))
            throw py::type_error(tg::cat("metadata must be a dict, not ", std::string(py::repr(metadata))));
          meta = to_json(metadata).as_object();
        }
        state::safe_save(to_state_dict(tensors), fspath(fn), meta);
      },
      py::arg("tensors"), py::arg("fn"), py::arg("metadata") = py::none(),
      "writes the dict of tensors to a .safetensors file, with optional metadata (a dict, written as JSON)");
  m.def(
      "safe_load",
      [](py::handle fn) {
        if (py::isinstance<Tensor>(fn)) return to_py_dict(state::safe_load(fn.cast<Tensor>()));
        return to_py_dict(state::safe_load(fspath(fn)));
      },
      py::arg("fn"), "the dict of tensors in a .safetensors file (a path, or a uint8 Tensor of its bytes)");
  m.def(
      "torch_load",
      [](py::handle fn) {
        if (py::isinstance<Tensor>(fn)) return to_py_dict(state::torch_load(fn.cast<Tensor>()));
        return to_py_dict(state::torch_load(fspath(fn)));
      },
      py::arg("t"),
      "the tensors of a PyTorch checkpoint (torch.save's zip format; a path, or a uint8 Tensor of its bytes), "
      "flattened to dotted names");
  m.def(
      "safe_load_metadata",
      [](py::handle fn) {
        if (py::isinstance<Tensor>(fn)) {
          Tensor t = fn.cast<Tensor>();
          TG_CHECK(t.ndim() == 1 && t.dtype() == tg::dtypes::uint8,
                   "safe_load_metadata: the tensor must be 1-D uint8 (a file's bytes), got ", t.dtype(), " ",
                   tg::shape_str(t.shape()));
          std::vector<uint8_t> bytes = t.data_bytes();
          state::SafetensorsHeader h = state::safe_parse_header(bytes, "tensor");
          return py::make_tuple(t, h.data_start, from_json(h.json));
        }
        std::string path = fspath(fn);
        state::SafetensorsHeader h = state::safe_load_metadata(path);  // checks the file before reading it whole
        std::ifstream f(path, std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
        TG_CHECK(f.good() || f.eof(), "safe_load_metadata: can't read ", tg::py_str_repr(path));
        Tensor t(bytes, tg::Shape{static_cast<int64_t>(bytes.size())});
        return py::make_tuple(t, h.data_start, from_json(h.json));
      },
      py::arg("t"),
      "(the file's bytes as a uint8 Tensor, where the data starts, the header as a dict), as tinygrad returns them; "
      "NOTE: the Tensor is a copy of the whole file");
}

void bind_state(py::module_ m) {
  bind_safetensors(m);
  bind_gguf(m);
  m.def("get_state_dict", &get_state_dict, py::arg("obj"), py::arg("prefix") = "",
        py::arg("tensor_type") = py::type::of<Tensor>());
  m.def(
      "get_parameters",
      [](py::handle obj) {
        py::list out;
        for (auto [k, v] : get_state_dict(obj, "", py::none())) out.append(v);
        return out;
      },
      py::arg("obj"));
  m.def(
      "load_state_dict",
      [](py::handle model, py::dict state_dict, bool strict, bool verbose, bool consume, bool realize) {
        tg::nn::StateDict sd = to_state_dict(state_dict);
        tg::nn::StateDict model_state = to_state_dict(get_state_dict(model, "", py::none()));
        // as the reference: keys the model lacks are ignored, strict or not (strict is about the model's keys),
        // and a tensor takes the state dict's dtype (its replace() keeps it: fp16 weights make an fp16 layer)
        for (const std::string& k : sd.keys())
          if (!model_state.contains(k)) sd.erase(k);
        std::vector<Tensor> loaded;
        try {
          loaded = tg::nn::state::load_state_dict_into(
              model_state, sd,
              {.strict = strict, .verbose = verbose, .consume = false, .realize = realize, .same_dtype = false});
        } catch (const tg::Error& e) {
          // a key of the model that the state dict lacks: the reference's state_dict[k] raises KeyError
          bool missing = false;
          for (auto& kv : model_state) missing = missing || !sd.contains(kv.first);
          if (strict && missing) throw py::key_error(e.what());
          throw;
        }
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
            tg::nn::datasets::mnist({.fashion = fashion, .dir = std::move(dir), .device = std::move(device)});
        return py::make_tuple(X_train, Y_train, X_test, Y_test);
      },
      py::arg("device") = py::none(), py::arg("fashion") = false, py::arg("dir") = py::none(),
      "(X_train, Y_train, X_test, Y_test) from the IDX files in dir (default data/mnist, from tools/fetch_mnist.py; "
      "with fashion, Debian's /usr/share/datasets/fashion-mnist)");
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
