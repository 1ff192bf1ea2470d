// bindings of the Tensor, Device and GlobalCounters. Every Tensor method runs under a MetadataScope with its
// Python name (tinygrad's _metadata_wrapper), so kernels list the same metadata as the reference (['__add__']).
#include "tg/tensor/tensor.h"

#include <memory>

#include "tensor_common.h"
#include "tg/runtime/device.h"
#include "tg/tensor/tensor_internal.h"

namespace tgpy {
using tg::DType;
using tg::Tensor;

std::optional<DType> to_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  // a name is looked up on dtypes, as tinygrad's to_dtype does: an unknown one is an AttributeError
  if (py::isinstance<py::str>(h)) return py::module_::import("tinygrad.dtype").attr("dtypes").attr(h).cast<DType>();
  return h.cast<DType>();
}

tg::TensorOptions make_opts(py::handle device, py::handle dtype, py::handle requires_grad) {
  tg::TensorOptions o;
  if (!device.is_none()) o.device = tgpy::device_name(device);
  o.dtype = to_dtype(dtype);
  if (!requires_grad.is_none()) o.requires_grad = requires_grad.cast<bool>();
  return o;
}
tg::TensorOptions opts_from_kwargs(const py::kwargs& kw) {
  py::object none = py::none();
  for (auto [k, v] : kw) {
    std::string key = py::str(k);
    if (key != "device" && key != "dtype" && key != "requires_grad")
      throw py::type_error("unexpected keyword argument '" + key + "'");
  }
  return make_opts(kw.contains("device") ? kw["device"] : none, kw.contains("dtype") ? kw["dtype"] : none,
                   kw.contains("requires_grad") ? kw["requires_grad"] : none);
}

bool is_seq(py::handle h) { return py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h); }

// nested lists and tuples: the shape (from the first elements) and the leaves, row-major; ragged data is an error
void flatten(py::handle h, size_t depth, tg::Shape& shape, std::vector<tg::ConstValue>& out) {
  if (!is_seq(h)) {
    if (depth != shape.size()) throw py::value_error("setting an array element with a sequence: the data is ragged");
    out.push_back(to_const(h));
    return;
  }
  int64_t n = static_cast<int64_t>(py::len(h));
  if (depth == shape.size())
    shape.push_back(n);
  else if (depth > shape.size() || shape[depth] != n)
    throw py::value_error("setting an array element with a sequence: the data is ragged");
  for (py::handle x : h) flatten(x, depth + 1, shape, out);
}

template <class T>
Tensor from_ptr(const void* p, const tg::Shape& shape, const tg::TensorOptions& o) {
  return Tensor(static_cast<const T*>(p), shape, o);
}

Tensor from_list(py::handle data, tg::TensorOptions o) {
  tg::Shape shape;
  std::vector<tg::ConstValue> vals;
  flatten(data, 0, shape, vals);
  bool all_bool = !vals.empty(), any_float = vals.empty();
  for (auto& v : vals) {
    all_bool = all_bool && std::holds_alternative<bool>(v);
    any_float = any_float || std::holds_alternative<double>(v);
  }
  DType inferred = all_bool ? tg::dtypes::bool_ : any_float ? tg::dtypes::default_float : tg::dtypes::default_int;
  if (!o.dtype) o.dtype = inferred;
  if (vals.empty()) return Tensor::empty(shape, o);  // no host data to copy
  if (any_float) {
    std::vector<double> d;
    for (auto& v : vals) d.push_back(tg::as_double(v));
    return Tensor(d.data(), shape, o);
  }
  if (all_bool) {
    std::unique_ptr<bool[]> d(new bool[vals.size()]);
    for (size_t i = 0; i < vals.size(); i++) d[i] = std::get<bool>(vals[i]);
    return Tensor(d.get(), shape, o);
  }
  std::vector<int64_t> d;
  for (auto& v : vals) d.push_back(static_cast<int64_t>(static_cast<uint64_t>(tg::as_i128(v))));  // an int's bits
  return Tensor(d.data(), shape, o);
}

// anything with the buffer protocol (numpy arrays, memoryviews): made contiguous by numpy when it is not
Tensor from_buffer(py::handle data, tg::TensorOptions o) {
  py::object arr = py::reinterpret_borrow<py::object>(data);
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(arr).request();
  bool contiguous = true;
  int64_t expect = info.itemsize;
  for (int64_t i = info.ndim - 1; i >= 0; i--) {
    if (info.shape[i] != 1 && info.strides[i] != expect) contiguous = false;
    expect *= info.shape[i];
  }
  if (!contiguous) {
    arr = py::module_::import("numpy").attr("ascontiguousarray")(arr);
    info = py::reinterpret_borrow<py::buffer>(arr).request();
  }
  tg::Shape shape(info.shape.begin(), info.shape.end());
  std::string f = info.format;
  char c = f.empty() ? 'B' : f.back();
  auto set = [&](DType d) {
    if (!o.dtype) o.dtype = d;
  };
  switch (c) {
    case '?': set(tg::dtypes::bool_); return from_ptr<bool>(info.ptr, shape, o);
    case 'b': set(tg::dtypes::int8); return from_ptr<int8_t>(info.ptr, shape, o);
    case 'B':
    case 'c': set(tg::dtypes::uint8); return from_ptr<uint8_t>(info.ptr, shape, o);
    case 'f': set(tg::dtypes::float32); return from_ptr<float>(info.ptr, shape, o);
    case 'd': set(tg::dtypes::float64); return from_ptr<double>(info.ptr, shape, o);
    case 'e': {  // half: through float32, into float16 unless another dtype is asked for
      set(tg::dtypes::float16);
      py::object f32 = arr.attr("astype")("float32");
      py::buffer_info i32 = py::reinterpret_borrow<py::buffer>(f32).request();
      return from_ptr<float>(i32.ptr, shape, o);
    }
    default: break;
  }
  bool is_signed = c == 'h' || c == 'i' || c == 'l' || c == 'q' || c == 'n';
  bool is_unsigned = c == 'H' || c == 'I' || c == 'L' || c == 'Q' || c == 'N';
  if (is_signed || is_unsigned) {
    switch (info.itemsize * (is_signed ? 1 : -1)) {
      case 2: set(tg::dtypes::int16); return from_ptr<int16_t>(info.ptr, shape, o);
      case 4: set(tg::dtypes::int32); return from_ptr<int32_t>(info.ptr, shape, o);
      case 8: set(tg::dtypes::int64); return from_ptr<int64_t>(info.ptr, shape, o);
      case -2: set(tg::dtypes::uint16); return from_ptr<uint16_t>(info.ptr, shape, o);
      case -4: set(tg::dtypes::uint32); return from_ptr<uint32_t>(info.ptr, shape, o);
      case -8: set(tg::dtypes::uint64); return from_ptr<uint64_t>(info.ptr, shape, o);
      default: break;
    }
  }
  throw py::type_error("can't make a Tensor from a buffer of format '" + f + "'");
}

Tensor make_tensor(py::handle data, const tg::TensorOptions& o) {
  if (py::isinstance<tg::UOpNode>(data)) {
    tg::UOp u = data.cast<tg::UOp>();
    if (u.op() == tg::Ops::BIND) {  // the reference's Tensor(Variable.bind(v)): a scalar of the bound value
      Tensor t = Tensor::from_bind(u, o.device);
      return o.dtype ? t.cast(*o.dtype) : t;
    }
    return Tensor(u, o);
  }
  if (py::isinstance<Tensor>(data)) return data.cast<Tensor>();
  if (data.is_none()) return Tensor::empty({0}, o);
  if (py::isinstance(data, py::module_::import("pathlib").attr("PurePath"))) {  // the file's bytes, on DISK
    py::object path = data.attr("resolve")();
    path.attr("stat")();  // a missing file: python's FileNotFoundError, as the reference
    return Tensor::from_file(py::str(path).cast<std::string>(), o);
  }
  if (py::isinstance<py::bytes>(data)) {
    std::string s = data.cast<std::string>();
    tg::TensorOptions u = o;
    if (!u.dtype) u.dtype = tg::dtypes::uint8;
    return Tensor(reinterpret_cast<const uint8_t*>(s.data()), tg::Shape{static_cast<int64_t>(s.size())}, u);
  }
  if (is_seq(data)) return from_list(data, o);
  if (PyObject_CheckBuffer(data.ptr()) && !PyBool_Check(data.ptr())) return from_buffer(data, o);
  if (is_scalar(data)) {
    tg::ConstValue v = to_const(data);
    if (auto* b = std::get_if<bool>(&v)) return Tensor(*b, o);
    if (auto* d = std::get_if<double>(&v)) return Tensor(*d, o);
    return Tensor(static_cast<int64_t>(static_cast<uint64_t>(tg::as_i128(v))), o);  // an int's bits
  }
  throw py::type_error("can't create a Tensor from " + std::string(py::repr(data)));
}

// an operand of a binary op: a Tensor, a python scalar (a const of the tensor's dtype), or data
Tensor operand(const Tensor& self, py::handle x) {
  if (py::isinstance<Tensor>(x)) return x.cast<Tensor>();
  if (is_scalar(x)) return self.scalar_like(to_const(x));
  if (py::isinstance<tg::UOpNode>(x)) return self.size_scalar(py_sint(x));  // a bound Variable (tinygrad's from_uop)
  tg::TensorOptions o;
  o.device = self.device();
  return make_tensor(x, o);
}

std::vector<int64_t> axes(py::handle axis) {
  if (axis.is_none()) return {};
  return to_ints(axis);
}
// f(*shape) and f(shape): ints, or one sequence of them; None keeps the tensor's dim
tg::Shape shape_args(const py::args& args, const Tensor* self) {
  py::object seq = args;
  if (args.size() > 0 && is_seq(args[0])) {  // the reference's argfix: one sequence, or ints
    if (args.size() != 1) throw py::value_error("bad arg " + std::string(py::repr(args)));
    seq = args[0];
  }
  tg::Shape s;
  size_t i = 0;
  for (py::handle x : seq) {
    if (x.is_none() && self != nullptr)
      s.push_back(self->shape().at(i));
    else
      s.push_back(py_sint(x));
    i++;
  }
  return s;
}
// f(self, shape, *args): tinygrad's reshape(shape, *args), argfix(shape, *args)
tg::Shape shape_args(py::handle first, const py::args& rest, const Tensor* self) {
  py::tuple all(rest.size() + 1);
  all[0] = first;
  for (size_t i = 0; i < rest.size(); i++) all[i + 1] = rest[i];
  return shape_args(py::reinterpret_steal<py::args>(all.release()), self);
}
py::tuple shape_tuple(const tg::Shape& s) { return py::tuple(py::cast(s)); }

tg::sint py_sint(py::handle x) { return py::isinstance<tg::UOpNode>(x) ? x.cast<tg::sint>() : tg::sint(py_int(x)); }

tg::Mask shrink_arg(const Tensor& t, py::handle arg) {
  tg::Shape s = t.shape();
  tg::Mask m;
  size_t i = 0;
  for (py::handle x : arg) {
    if (x.is_none())
      m.emplace_back(0, s.at(i));
    else
      m.emplace_back(py_sint(x[py::int_(0)]), py_sint(x[py::int_(1)]));
    i++;
  }
  return m;
}

void bind_realize(py::class_<Tensor>& cls);
void bind_tensor_math(py::class_<Tensor>& cls);
void bind_tensor_movement(py::class_<Tensor>& cls);
void bind_tensor_nn(py::class_<Tensor>& cls);
void bind_tensor_inplace(py::class_<Tensor>& cls);

void bind_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor");
  cls.def(py::init([](py::object data, py::object device, py::object dtype, py::object requires_grad) {
            return make_tensor(data, make_opts(device, dtype, requires_grad));
          }),
          py::arg("data"), py::arg("device") = py::none(), py::arg("dtype") = py::none(),
          py::arg("requires_grad") = py::none())
      // *** properties ***
      // settable, as the reference's slot: the tensor stands for the given graph from now on (replace, unchecked)
      .def_property("uop", &Tensor::uop,
                    [](Tensor& t, const tg::UOp& u) { t.replace(tg::tensor_from_uop(u, std::nullopt), true); })
      .def_property_readonly("lazydata", &Tensor::uop)
      .def_property_readonly("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device", [](const Tensor& t) { return tgpy::device_object(t.device()); })
      .def_property_readonly("ndim", &Tensor::ndim)
      .def("numel", &Tensor::numel)
      .def("element_size", &Tensor::element_size)
      .def("nbytes", &Tensor::nbytes)
      .def("is_floating_point", &Tensor::is_floating_point)
      .def_property("requires_grad", &Tensor::requires_grad,
                    [](Tensor& t, std::optional<bool> v) {
                      if (v) t.requires_grad_(*v);
                    })
      .def(
          "requires_grad_",
          [](py::object self, bool v) {
            self.cast<Tensor&>().requires_grad_(v);
            return self;
          },
          py::arg("requires_grad") = true)
      .def_property("grad", &Tensor::grad, &Tensor::set_grad)
      // *** autograd ***
      .def(
          "gradient",
          [](const Tensor& t, py::args targets, std::optional<Tensor> gradient, bool materialize_grads) {
            std::vector<Tensor> ts;
            for (py::handle x : targets) ts.push_back(x.cast<Tensor>());
            return t.gradient(ts, std::move(gradient), materialize_grads);
          },
          py::arg("gradient") = py::none(), py::arg("materialize_grads") = false)
      .def(
          "backward",
          [](py::object self, std::optional<Tensor> gradient) {
            self.cast<Tensor&>().backward(std::move(gradient));
            return self;
          },
          py::arg("gradient") = py::none())
      .def_property_static(
          "training", [](py::handle) { return Tensor::training; }, [](py::handle, bool v) { Tensor::training = v; })
      .def_property_static(
          "no_grad", [](py::handle) { return Tensor::no_grad; }, [](py::handle, bool v) { Tensor::no_grad = v; })
      .def("__repr__", &Tensor::repr)
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def("__bool__", [](const Tensor&) -> bool { throw py::type_error("__bool__ on Tensor is not defined"); })
      .def("__len__",
           [](const Tensor& t) {
             if (t.ndim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.shape()[0];
           })
      // *** creation ***
      .def_static(
          "full",
          [](py::handle shape, py::handle fill, py::kwargs kw) {
            META("full");
            return Tensor::full(to_shape(shape), to_const(fill), opts_from_kwargs(kw));
          },
          py::arg("shape"), py::arg("fill_value"))
      .def_static("zeros",
                  [](py::args shape, py::kwargs kw) {
                    META("zeros");
                    return Tensor::zeros(shape_args(shape), opts_from_kwargs(kw));
                  })
      .def_static("ones",
                  [](py::args shape, py::kwargs kw) {
                    META("ones");
                    return Tensor::ones(shape_args(shape), opts_from_kwargs(kw));
                  })
      .def_static(
          "empty",
          [](py::args shape, py::object device, py::object dtype, py::kwargs kw) {
            META("empty");
            tg::TensorOptions o = opts_from_kwargs(kw);
            if (!device.is_none()) o.device = tgpy::device_name(device);
            if (!dtype.is_none()) o.dtype = to_dtype(dtype);
            return Tensor::empty(shape_args(shape), o);
          },
          py::arg("device") = py::none(), py::arg("dtype") = py::none())
      .def_static(
          "arange",
          [](py::handle start, py::object stop, py::handle step, py::kwargs kw) {
            META("arange");
            tg::TensorOptions o = opts_from_kwargs(kw);
            auto sym = [](py::handle h) { return py::isinstance<tg::UOpNode>(h); };
            if (sym(start) || (!stop.is_none() && sym(stop))) {  // a bound Variable's size: step 1 only
              if (!(PyLong_Check(step.ptr()) && step.cast<int64_t>() == 1))
                throw py::value_error("a symbolic arange takes step 1");
              return stop.is_none() ? Tensor::arange(tg::sint(0), py_sint(start), o)
                                    : Tensor::arange(py_sint(start), py_sint(stop), o);
            }
            if (stop.is_none()) {
              if (PyLong_Check(start.ptr()) && !o.dtype) return Tensor::arange(start.cast<int64_t>(), o);
              return Tensor::arange(0, py::float_(py::reinterpret_borrow<py::object>(start)).cast<double>(),
                                    py::float_(py::reinterpret_borrow<py::object>(step)).cast<double>(), o);
            }
            bool ints = PyLong_Check(start.ptr()) && PyLong_Check(stop.ptr()) && PyLong_Check(step.ptr());
            if (ints && !o.dtype) o.dtype = tg::dtypes::default_int;
            return Tensor::arange(py::float_(py::reinterpret_borrow<py::object>(start)).cast<double>(),
                                  py::float_(stop).cast<double>(),
                                  py::float_(py::reinterpret_borrow<py::object>(step)).cast<double>(), o);
          },
          py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1)
      .def_static(
          "eye",
          [](int64_t n, py::object mm, py::kwargs kw) {
            META("eye");
            return Tensor::eye(n, mm.is_none() ? std::nullopt : std::optional<int64_t>(mm.cast<int64_t>()),
                               opts_from_kwargs(kw));
          },
          py::arg("n"), py::arg("m") = py::none())
      .def(
          "full_like",
          [](const Tensor& t, py::handle fill, py::kwargs kw) {
            META("full_like");
            return t.full_like(to_const(fill), opts_from_kwargs(kw));
          },
          py::arg("fill_value"))
      .def("zeros_like",
           [](const Tensor& t, py::kwargs kw) {
             META("zeros_like");
             return t.zeros_like(opts_from_kwargs(kw));
           })
      .def("ones_like",
           [](const Tensor& t, py::kwargs kw) {
             META("ones_like");
             return t.ones_like(opts_from_kwargs(kw));
           })
      // *** elementwise ***
      .def(
          "cast",
          [](const Tensor& t, py::handle d) {
            META("cast");
            return t.cast(*to_dtype(d));
          },
          py::arg("dtype"))
      .def(
          "bitcast",
          [](const Tensor& t, py::handle d) {
            META("bitcast");
            return t.bitcast(*to_dtype(d));
          },
          py::arg("dtype"))
      .def("float",
           [](const Tensor& t) {
             META("float");
             return t.cast(tg::dtypes::float32);
           })
      .def("half",
           [](const Tensor& t) {
             META("half");
             return t.cast(tg::dtypes::float16);
           })
      .def("double",
           [](const Tensor& t) {
             META("double");
             return t.cast(tg::dtypes::float64);
           })
      .def("int",
           [](const Tensor& t) {
             META("int");
             return t.cast(tg::dtypes::int32);
           })
      .def("long",
           [](const Tensor& t) {
             META("long");
             return t.cast(tg::dtypes::int64);
           })
      .def("bool",
           [](const Tensor& t) {
             META("bool");
             return t.cast(tg::dtypes::bool_);
           })
      .def(
          "to",
          [](py::object self, py::object device) -> py::object {
            META("to");
            const Tensor& t = self.cast<const Tensor&>();
            if (device.is_none()) return self;
            Tensor r = t.to(tgpy::device_name(device));
            return r.is(t) ? self : py::cast(std::move(r));  // already there: the same object, as the reference
          },
          py::arg("device"))
      .def(
          "shard",
          [](const Tensor& t, py::handle devices, std::optional<int64_t> axis) {
            META("shard");
            return t.shard(tg::device_names(tgpy::device_name(devices)), axis);
          },
          py::arg("devices"), py::arg("axis") = py::none())
      .def(
          "shard_",
          [](py::object self, py::handle devices, std::optional<int64_t> axis) {
            META("shard_");
            self.cast<Tensor&>().shard_(tg::device_names(tgpy::device_name(devices)), axis);
            return self;
          },
          py::arg("devices"), py::arg("axis") = py::none())
      .def(
          "to_",
          [](py::object self, py::object device) {
            META("to_");
            if (!device.is_none()) self.cast<Tensor&>().to_(tgpy::device_name(device));
            return self;
          },
          py::arg("device"))
      .def("contiguous",
           [](const Tensor& t) {
             META("contiguous");
             return t.contiguous();
           })
      .def("detach",
           [](const Tensor& t) {
             META("detach");
             return t.detach();
           })
      .def("neg",
           [](const Tensor& t) {
             META("neg");
             return t.neg();
           })
      .def("__neg__",
           [](const Tensor& t) {
             META("__neg__");
             return t.neg();
           })
      .def("__invert__",
           [](const Tensor& t) {
             META("__invert__");
             return t.bitwise_not();
           })
      .def("logical_not",
           [](const Tensor& t) {
             META("logical_not");
             return t.logical_not();
           })
      .def("reciprocal",
           [](const Tensor& t) {
             META("reciprocal");
             return t.reciprocal();
           })
      .def("sqrt",
           [](const Tensor& t) {
             META("sqrt");
             return t.sqrt();
           })
      .def("rsqrt",
           [](const Tensor& t) {
             META("rsqrt");
             return t.rsqrt();
           })
      .def("exp",
           [](const Tensor& t) {
             META("exp");
             return t.exp();
           })
      .def("exp2",
           [](const Tensor& t) {
             META("exp2");
             return t.exp2();
           })
      .def("log",
           [](const Tensor& t) {
             META("log");
             return t.log();
           })
      .def("log2",
           [](const Tensor& t) {
             META("log2");
             return t.log2();
           })
      .def("sin",
           [](const Tensor& t) {
             META("sin");
             return t.sin();
           })
      .def("cos",
           [](const Tensor& t) {
             META("cos");
             return t.cos();
           })
      .def("relu",
           [](const Tensor& t) {
             META("relu");
             return t.relu();
           })
      .def("sigmoid",
           [](const Tensor& t) {
             META("sigmoid");
             return t.sigmoid();
           })
      .def("square",
           [](const Tensor& t) {
             META("square");
             return t.square();
           })
      .def("abs",
           [](const Tensor& t) {
             META("abs");
             return t.abs();
           })
      .def("sign",
           [](const Tensor& t) {
             META("sign");
             return t.sign();
           })
      .def("bitwise_not",
           [](const Tensor& t) {
             META("bitwise_not");
             return t.bitwise_not();
           })
      .def(
          "where",
          [](const Tensor& c, py::handle x, py::handle y) {
            META("where");
            if (py::isinstance<Tensor>(x)) {
              Tensor tx = x.cast<Tensor>();
              return c.where(tx, operand(tx, y));
            }
            if (py::isinstance<Tensor>(y)) {
              Tensor ty = y.cast<Tensor>();
              return c.where(operand(ty, x), ty);
            }
            tg::TensorOptions o;
            o.device = c.device();
            Tensor tx = make_tensor(x, o);
            return c.where(tx, operand(tx, y));
          },
          py::arg("x"), py::arg("y"))
      .def(
          "maximum",
          [](const Tensor& a, py::handle b) {
            META("maximum");
            return a.maximum(operand(a, b));
          },
          py::arg("x"))
      .def(
          "minimum",
          [](const Tensor& a, py::handle b) {
            META("minimum");
            return a.minimum(operand(a, b));
          },
          py::arg("x"))
      .def(
          "eq",
          [](const Tensor& a, py::handle b) {
            META("eq");
            return a.eq(operand(a, b));
          },
          py::arg("x"))
      .def(
          "ne",
          [](const Tensor& a, py::handle b) {
            META("ne");
            return a.ne(operand(a, b));
          },
          py::arg("x"))
      .def(
          "__eq__",
          [](const Tensor& a, py::handle b) {
            META("__eq__");
            return a.eq(operand(a, b));
          },
          py::arg("x"))
      .def(
          "__ne__",
          [](const Tensor& a, py::handle b) {
            META("__ne__");
            return a.ne(operand(a, b));
          },
          py::arg("x"))
      .def(
          "__lt__",
          [](const Tensor& a, py::handle b) {
            META("__lt__");
            return a.lt(operand(a, b));
          },
          py::arg("x"))
      .def(
          "__gt__",
          [](const Tensor& a, py::handle b) {
            META("__gt__");
            return a.gt(operand(a, b));
          },
          py::arg("x"))
      .def(
          "__le__",
          [](const Tensor& a, py::handle b) {
            META("__le__");
            return a.le(operand(a, b));
          },
          py::arg("x"))
      .def(
          "__ge__",
          [](const Tensor& a, py::handle b) {
            META("__ge__");
            return a.ge(operand(a, b));
          },
          py::arg("x"))
      .def(
          "dot",
          [](const Tensor& a, const Tensor& b, py::object dtype) {
            META("dot");
            return a.dot(b, to_dtype(dtype));
          },
          py::arg("w"), py::arg("dtype") = py::none())
      .def(
          "matmul",
          [](const Tensor& a, py::handle b, bool reverse, py::object dtype) {
            META("matmul");
            Tensor tb = operand(a, b);
            return reverse ? tb.dot(a, to_dtype(dtype)) : a.dot(tb, to_dtype(dtype));
          },
          py::arg("x"), py::arg("reverse") = false, py::arg("dtype") = py::none())
      .def(
          "__matmul__",
          [](const Tensor& a, py::handle b) {
            META("__matmul__");
            return a.dot(operand(a, b));
          },
          py::arg("x"))
      .def(
          "__rmatmul__",
          [](const Tensor& a, py::handle b) {
            META("__rmatmul__");
            return operand(a, b).dot(a);
          },
          py::arg("x"))
      // *** movement ***
      .def(
          "reshape",
          [](const Tensor& t, py::handle shape, py::args rest) {
            META("reshape");
            return t.reshape(shape_args(shape, rest, &t));
          },
          py::arg("shape"))
      .def(
          "view",
          [](const Tensor& t, py::handle shape, py::args rest) {
            META("view");
            return t.reshape(shape_args(shape, rest, &t));
          },
          py::arg("shape"))
      .def(
          "expand",
          [](const Tensor& t, py::handle shape, py::args rest) {
            META("expand");
            return t.expand(shape_args(shape, rest));
          },
          py::arg("shape"))
      .def(
          "permute",
          [](const Tensor& t, py::handle order, py::args rest) {
            META("permute");
            tg::Shape a = shape_args(order, rest);
            return t.permute(std::vector<int64_t>(a.begin(), a.end()));
          },
          py::arg("order"))
      .def(
          "flip",
          [](const Tensor& t, py::handle axis, py::args rest) {
            META("flip");
            tg::Shape a = shape_args(axis, rest);
            return t.flip(std::vector<int64_t>(a.begin(), a.end()));
          },
          py::arg("axis"))
      .def(
          "shrink",
          [](const Tensor& t, py::handle arg) {
            META("shrink");
            return t.shrink(shrink_arg(t, arg));
          },
          py::arg("arg"))
      .def(
          "transpose",
          [](const Tensor& t, int64_t d0, int64_t d1) {
            META("transpose");
            return t.transpose(d0, d1);
          },
          py::arg("dim0") = 1, py::arg("dim1") = 0)
      .def_property_readonly("T",
                             [](const Tensor& t) {
                               META("T");
                               return t.T();
                             })
      .def(
          "flatten",
          [](const Tensor& t, int64_t s, int64_t e) {
            META("flatten");
            return t.flatten(s, e);
          },
          py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def(
          "squeeze",
          [](const Tensor& t, py::object d) {
            META("squeeze");
            return t.squeeze(d.is_none() ? std::nullopt : std::optional<int64_t>(d.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def(
          "unsqueeze",
          [](const Tensor& t, int64_t d) {
            META("unsqueeze");
            return t.unsqueeze(d);
          },
          py::arg("dim"))
      // *** reduce ***
      .def(
          "sum",
          [](const Tensor& t, py::object axis, bool keepdim, py::object dtype) {
            META("sum");
            return t.sum(axes(axis), keepdim, to_dtype(dtype));
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none())
      .def(
          "prod",
          [](const Tensor& t, py::object axis, bool keepdim, py::object dtype) {
            META("prod");
            return t.prod(axes(axis), keepdim, to_dtype(dtype));
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none())
      .def(
          "max",
          [](const Tensor& t, py::object axis, bool keepdim) {
            META("max");
            return t.max(axes(axis), keepdim);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def(
          "min",
          [](const Tensor& t, py::object axis, bool keepdim) {
            META("min");
            return t.min(axes(axis), keepdim);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def(
          "mean",
          [](const Tensor& t, py::object axis, bool keepdim) {
            META("mean");
            return t.mean(axes(axis), keepdim);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false);

  // binary ops with reflected forms: add(x, reverse=False), __add__, __radd__ ...
#define TG_PY_BINOP(METHOD, NAME, RNAME)                \
  cls.def(                                              \
      #METHOD,                                          \
      [](const Tensor& a, py::handle b, bool reverse) { \
        META(#METHOD);                                  \
        return a.METHOD(operand(a, b), reverse);        \
      },                                                \
      py::arg("x"), py::arg("reverse") = false);        \
  cls.def(                                              \
      NAME,                                             \
      [](const Tensor& a, py::handle b) {               \
        META(NAME);                                     \
        return a.METHOD(operand(a, b));                 \
      },                                                \
      py::arg("x"));                                    \
  cls.def(                                              \
      RNAME,                                            \
      [](const Tensor& a, py::handle b) {               \
        META(RNAME);                                    \
        return a.METHOD(operand(a, b), true);           \
      },                                                \
      py::arg("x"));
  TG_PY_BINOP(add, "__add__", "__radd__")
  TG_PY_BINOP(sub, "__sub__", "__rsub__")
  TG_PY_BINOP(mul, "__mul__", "__rmul__")
  TG_PY_BINOP(div, "__truediv__", "__rtruediv__")
  cls.def(
      "idiv",
      [](const Tensor& a, py::handle b, bool reverse) {
        META("idiv");
        return a.idiv(operand(a, b), reverse);
      },
      py::arg("x"), py::arg("reverse") = false);
  // python's //: tinygrad's div(rounding_mode="floor")
  cls.def(
      "__floordiv__",
      [](const Tensor& a, py::handle b) {
        META("__floordiv__");
        return a.div(operand(a, b), false, "floor");
      },
      py::arg("x"));
  cls.def(
      "__rfloordiv__",
      [](const Tensor& a, py::handle b) {
        META("__rfloordiv__");
        return a.div(operand(a, b), true, "floor");
      },
      py::arg("x"));
  TG_PY_BINOP(mod, "__mod__", "__rmod__")
  TG_PY_BINOP(pow, "__pow__", "__rpow__")
  TG_PY_BINOP(bitwise_and, "__and__", "__rand__")
  TG_PY_BINOP(bitwise_or, "__or__", "__ror__")
  TG_PY_BINOP(bitwise_xor, "__xor__", "__rxor__")
#undef TG_PY_BINOP

#ifdef TG_PY_REALIZE
  bind_realize(cls);
  bind_tensor_math(cls);
  bind_tensor_movement(cls);
  bind_tensor_nn(cls);
  bind_tensor_inplace(cls);
#endif

  // tinygrad.tensor._METADATA.set(m): a Metadata (name, caller, backward) every Tensor method records, or None
  m.def(
      "set_metadata",
      [](py::handle md) {
        tg::MetadataScope::set_current(md.is_none()
                                           ? nullptr
                                           : tg::intern_metadata(py::str(md.attr("name")), py::str(md.attr("caller")),
                                                                 md.attr("backward").cast<bool>()));
      },
      py::arg("metadata"));

  // *** Device ***
  m.def("get_default_device", [] { return tg::Device::DEFAULT.str(); });
  m.def("set_default_device", [](const std::string& d) { tg::Device::DEFAULT = d; });
  m.def(
      "canonicalize_device",
      [](py::object d) {
        return d.is_none() ? tg::Device::canonicalize() : tg::Device::canonicalize(d.cast<std::string>());
      },
      py::arg("device") = py::none());
  m.def("get_available_devices", &tg::Device::get_available_devices);

  // *** GlobalCounters ***
  py::class_<tg::GlobalCounters>(m, "GlobalCounters")
      .def_property_static(
          "global_ops", [](py::object) { return tg::GlobalCounters::global_ops.load(); },
          [](py::object, int64_t v) { tg::GlobalCounters::global_ops = v; })
      .def_property_static(
          "global_mem", [](py::object) { return tg::GlobalCounters::global_mem.load(); },
          [](py::object, int64_t v) { tg::GlobalCounters::global_mem = v; })
      .def_property_static(
          "kernel_count", [](py::object) { return tg::GlobalCounters::kernel_count.load(); },
          [](py::object, int64_t v) { tg::GlobalCounters::kernel_count = v; })
      .def_property_static(
          "mem_used", [](py::object) { return tg::GlobalCounters::mem_used.load(); },
          [](py::object, int64_t v) { tg::GlobalCounters::mem_used = v; })
      .def_property_static(
          "time_sum_s", [](py::object) { return tg::GlobalCounters::time_sum_s; },
          [](py::object, double v) { tg::GlobalCounters::time_sum_s = v; })
      .def_static("reset", &tg::GlobalCounters::reset);
}

}  // namespace tgpy
