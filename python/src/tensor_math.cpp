// bindings of the Tensor's [math] methods (src/tg/tensor/tensor_math.cpp), with tinygrad's Python signatures:
// Tensor.randint(*shape, low=0, high=10), x.div(y, rounding_mode="floor"), x.isclose(y, rtol=..., equal_nan=True)
#include <optional>
#include <set>

#include "tensor_common.h"
#include "tg/tensor/tensor.h"

namespace tgpy {
using tg::DType;
using tg::Tensor;

namespace {

#define META(name) tg::MetadataScope tg_meta_(name)

std::optional<DType> dtype_of(py::handle h) {
  if (h.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(h)) return tg::dtypes::from_name(h.cast<std::string>());
  return h.cast<DType>();
}

// device/dtype/requires_grad from **kwargs; any other key is a TypeError, as a Python signature would raise
tg::TensorOptions kw_opts(const py::kwargs& kw, const std::set<std::string>& also = {}) {
  tg::TensorOptions o;
  for (auto [k, v] : kw) {
    std::string key = py::str(k);
    if (key == "device") {
      if (!v.is_none()) o.device = tgpy::device_name(v);
    } else if (key == "dtype") {
      o.dtype = dtype_of(v);
    } else if (key == "requires_grad") {
      if (!v.is_none()) o.requires_grad = v.cast<bool>();
    } else if (!also.count(key)) {
      throw py::type_error("unexpected keyword argument '" + key + "'");
    }
  }
  return o;
}
// the named device=, dtype=, requires_grad= of a signature over those from **kwargs (None: leave it)
tg::TensorOptions with(tg::TensorOptions o, py::handle device, py::handle dtype, py::handle requires_grad) {
  if (!device.is_none()) o.device = tgpy::device_name(device);
  if (!dtype.is_none()) o.dtype = dtype_of(dtype);
  if (!requires_grad.is_none()) o.requires_grad = requires_grad.cast<bool>();
  return o;
}
template <class T>
T kw_get(const py::kwargs& kw, const char* key, T dflt) {
  return kw.contains(key) ? kw[key].cast<T>() : dflt;
}

// f(*shape) and f(shape)
bool is_data(py::handle x) {
  return py::isinstance<py::list>(x) || py::isinstance<py::tuple>(x) || PyObject_CheckBuffer(x.ptr());
}
// a Tensor, a python scalar (a const as tinygrad's _broadcasted makes it), or data (lists, numpy arrays)
Tensor operand_of(const Tensor& self, py::handle x) {
  if (py::isinstance<Tensor>(x)) return x.cast<Tensor>();
  if (is_scalar(x)) return self.scalar_like(to_const(x));
  if (py::isinstance<tg::UOpNode>(x)) return self.size_scalar(py_sint(x));  // a bound Variable (tinygrad's from_uop)
  if (is_data(x))
    return py::module_::import("tinygrad").attr("Tensor")(x, py::arg("device") = self.device()).cast<Tensor>();
  throw py::type_error("expected a Tensor, a scalar or data, got " + std::string(py::repr(x)));
}

// clamp/clip: scalar bounds keep an int tensor int for int bounds; Tensor bounds go through maximum/minimum
Tensor clamp_py(const Tensor& t, py::handle lo, py::handle hi) {
  bool tensors = py::isinstance<Tensor>(lo) || py::isinstance<Tensor>(hi) || is_data(lo) || is_data(hi);
  if (!tensors) {
    auto bound = [](py::handle v) { return v.is_none() ? std::nullopt : std::optional<tg::ConstValue>(to_const(v)); };
    return t.clamp(bound(lo), bound(hi));
  }
  if (lo.is_none() && hi.is_none()) throw py::value_error("at least one of 'min_' or 'max_' must not be None");
  Tensor r = lo.is_none() ? t : t.maximum(operand_of(t, lo));
  return hi.is_none() ? r : r.minimum(operand_of(r, hi));
}

}  // namespace

void bind_tensor_math(py::class_<Tensor>& cls) {
  // *** creation and random ***
  cls.def_static(
         "manual_seed", [](uint64_t seed) { Tensor::manual_seed(seed); }, py::arg("seed") = 0)
      .def_static("_threefry_random_bits", &Tensor::threefry_random_bits, py::arg("key"), py::arg("counts0"),
                  py::arg("counts1"))
      .def_property_readonly_static("_device_seeds",
                                    [](py::handle) {  // a snapshot: the tensors are the generator's own
                                      py::dict d;
                                      for (const auto& [dev, t] : Tensor::device_seeds()) d[py::str(dev)] = t;
                                      return d;
                                    })
      .def_property_readonly_static("_device_rng_counters",
                                    [](py::handle) {
                                      py::dict d;
                                      for (const auto& [dev, t] : Tensor::device_rng_counters()) d[py::str(dev)] = t;
                                      return d;
                                    })
      .def_static(
          "rand",
          [](py::args shape, py::handle device, py::handle dtype, bool contiguous, py::kwargs kw) {
            META("rand");
            return Tensor::rand(shape_args(shape), with(kw_opts(kw), device, dtype, py::none()), contiguous);
          },
          py::arg("device") = py::none(), py::arg("dtype") = py::none(), py::arg("contiguous") = true)
      .def_static(
          "randn",
          [](py::args shape, py::handle dtype, py::handle requires_grad, py::kwargs kw) {
            META("randn");
            return Tensor::randn(shape_args(shape), with(kw_opts(kw), py::none(), dtype, requires_grad));
          },
          py::arg("dtype") = py::none(), py::arg("requires_grad") = py::none())
      .def_static(
          "uniform",
          [](py::args shape, double low, double high, py::handle dtype, py::handle requires_grad, py::kwargs kw) {
            META("uniform");
            return Tensor::uniform(shape_args(shape), low, high, with(kw_opts(kw), py::none(), dtype, requires_grad));
          },
          py::arg("low") = 0.0, py::arg("high") = 1.0, py::arg("dtype") = py::none(),
          py::arg("requires_grad") = py::none())
      .def_static(
          "randint",
          [](py::args shape, py::handle low, py::handle high, py::handle dtype, py::kwargs kw) {
            META("randint");
            if (!PyLong_Check(low.ptr()) || !PyLong_Check(high.ptr()))
              throw py::type_error("low=" + std::string(py::repr(low)) + " and high=" + std::string(py::repr(high)) +
                                   " must be integers");
            return Tensor::randint(shape_args(shape), low.cast<int64_t>(), high.cast<int64_t>(),
                                   with(kw_opts(kw), py::none(), dtype, py::none()));
          },
          py::arg("low") = 0, py::arg("high") = 10, py::arg("dtype") = tg::dtypes::int32)
      .def_static(
          "normal",
          [](py::args shape, double mean, double std, py::handle requires_grad, py::kwargs kw) {
            META("normal");
            return Tensor::normal(shape_args(shape), mean, std,
                                  with(kw_opts(kw), py::none(), py::none(), requires_grad));
          },
          py::arg("mean") = 0.0, py::arg("std") = 1.0, py::arg("requires_grad") = py::none())
      .def_static("scaled_uniform",
                  [](py::args shape, py::kwargs kw) {
                    META("scaled_uniform");
                    return Tensor::scaled_uniform(shape_args(shape), kw_opts(kw));
                  })
      .def_static("glorot_uniform",
                  [](py::args shape, py::kwargs kw) {
                    META("glorot_uniform");
                    return Tensor::glorot_uniform(shape_args(shape), kw_opts(kw));
                  })
      .def_static(
          "kaiming_uniform",
          [](py::args shape, double a, py::kwargs kw) {
            META("kaiming_uniform");
            return Tensor::kaiming_uniform(shape_args(shape), a, kw_opts(kw));
          },
          py::arg("a") = 0.01)
      .def_static(
          "kaiming_normal",
          [](py::args shape, double a, py::kwargs kw) {
            META("kaiming_normal");
            return Tensor::kaiming_normal(shape_args(shape), a, kw_opts(kw));
          },
          py::arg("a") = 0.01)
      .def_static(
          "randperm",
          [](int64_t n, py::handle device, py::handle dtype, py::kwargs kw) {
            META("randperm");
            return Tensor::randperm(n, with(kw_opts(kw), device, dtype, py::none()));
          },
          py::arg("n"), py::arg("device") = py::none(), py::arg("dtype") = tg::dtypes::int32)
      .def_static(
          "linspace",
          [](double start, double stop, int64_t steps, py::kwargs kw) {
            META("linspace");
            return Tensor::linspace(start, stop, steps, kw_opts(kw));
          },
          py::arg("start"), py::arg("stop"), py::arg("steps"))
      .def("rand_like",
           [](const Tensor& t, py::kwargs kw) {
             META("rand_like");
             return t.rand_like(kw_opts(kw, {"contiguous"}), kw_get(kw, "contiguous", true));
           })
      .def(
          "randn_like",
          [](const Tensor& t, py::handle dtype, py::handle requires_grad, py::kwargs kw) {
            META("randn_like");
            return t.randn_like(with(kw_opts(kw), py::none(), dtype, requires_grad));
          },
          py::arg("dtype") = py::none(), py::arg("requires_grad") = py::none())
      .def("empty_like",
           [](const Tensor& t, py::kwargs kw) {
             META("empty_like");
             return t.empty_like(kw_opts(kw));
           })
      .def(
          "multinomial",
          [](const Tensor& t, int64_t n, bool replacement) {
            META("multinomial");
            return t.multinomial(n, replacement);
          },
          py::arg("num_samples") = 1, py::arg("replacement") = false);

  // *** unary math and activations without arguments ***
#define TG_PY_UNARY(NAME)              \
  cls.def(#NAME, [](const Tensor& t) { \
    META(#NAME);                       \
    return t.NAME();                   \
  });
  TG_PY_UNARY(tan)
  TG_PY_UNARY(asin)
  TG_PY_UNARY(acos)
  TG_PY_UNARY(atan)
  TG_PY_UNARY(trunc)
  TG_PY_UNARY(ceil)
  TG_PY_UNARY(floor)
  TG_PY_UNARY(round)
  TG_PY_UNARY(isnan)
  TG_PY_UNARY(isfinite)
  TG_PY_UNARY(swish)
  TG_PY_UNARY(silu)
  TG_PY_UNARY(relu6)
  TG_PY_UNARY(hardswish)
  TG_PY_UNARY(tanh)
  TG_PY_UNARY(sinh)
  TG_PY_UNARY(cosh)
  TG_PY_UNARY(atanh)
  TG_PY_UNARY(asinh)
  TG_PY_UNARY(acosh)
  TG_PY_UNARY(erf)
  TG_PY_UNARY(gelu)
  TG_PY_UNARY(quick_gelu)
  TG_PY_UNARY(mish)
  TG_PY_UNARY(softsign)
  TG_PY_UNARY(logsigmoid)
#undef TG_PY_UNARY

  // *** with arguments ***
  cls.def(
         "isinf",
         [](const Tensor& t, bool pos, bool neg) {
           META("isinf");
           return t.isinf(pos, neg);
         },
         py::arg("detect_positive") = true, py::arg("detect_negative") = true)
      .def(
          "lerp",
          [](const Tensor& t, py::handle end, py::handle weight) {
            META("lerp");
            Tensor e = operand_of(t, end);
            if (py::isinstance<Tensor>(weight) || is_data(weight)) return t.lerp(e, operand_of(t, weight));
            return t.lerp(e, py::float_(py::reinterpret_borrow<py::object>(weight)).cast<double>());
          },
          py::arg("end"), py::arg("weight"))
      .def(
          "clamp",
          [](const Tensor& t, py::handle lo, py::handle hi) {
            META("clamp");
            return clamp_py(t, lo, hi);
          },
          py::arg("min_") = py::none(), py::arg("max_") = py::none())
      .def(
          "clip",
          [](const Tensor& t, py::handle lo, py::handle hi) {
            META("clip");
            return clamp_py(t, lo, hi);
          },
          py::arg("min_") = py::none(), py::arg("max_") = py::none())
      .def(
          "hardsigmoid",
          [](const Tensor& t, double alpha, double beta) {
            META("hardsigmoid");
            return t.hardsigmoid(alpha, beta);
          },
          py::arg("alpha") = 1.0 / 6, py::arg("beta") = 0.5)
      .def(
          "elu",
          [](const Tensor& t, double alpha) {
            META("elu");
            return t.elu(alpha);
          },
          py::arg("alpha") = 1.0)
      .def(
          "celu",
          [](const Tensor& t, double alpha) {
            META("celu");
            return t.celu(alpha);
          },
          py::arg("alpha") = 1.0)
      .def(
          "selu",
          [](const Tensor& t, double alpha, double gamma) {
            META("selu");
            return t.selu(alpha, gamma);
          },
          py::arg("alpha") = 1.67326, py::arg("gamma") = 1.0507)
      .def(
          "hardtanh",
          [](const Tensor& t, py::handle lo, py::handle hi) {
            META("hardtanh");
            if (is_scalar(lo) && is_scalar(hi)) return t.hardtanh(to_const(lo), to_const(hi));
            return clamp_py(t, lo, hi);  // tensor bounds, as the reference's clip
          },
          py::arg("min_val") = -1, py::arg("max_val") = 1)
      .def(
          "leaky_relu",
          [](const Tensor& t, double slope) {
            META("leaky_relu");
            return t.leaky_relu(slope);
          },
          py::arg("neg_slope") = 0.01)
      .def(
          "softplus",
          [](const Tensor& t, double beta) {
            META("softplus");
            return t.softplus(beta);
          },
          py::arg("beta") = 1);

  // *** binary ***
  // div(x, reverse=False, rounding_mode=None), in place of tensor.cpp's div(x, reverse)
  py::delattr(cls, "div");
  cls.def(
         "div",
         [](const Tensor& a, py::handle b, bool reverse, std::optional<std::string> mode) {
           META("div");
           return a.div(operand_of(a, b), reverse, std::move(mode));
         },
         py::arg("x"), py::arg("reverse") = false, py::arg("rounding_mode") = py::none())
      .def(
          "copysign",
          [](const Tensor& a, py::handle other) {
            META("copysign");
            return a.copysign(operand_of(a, other));
          },
          py::arg("other"))
      .def(
          "isclose",
          [](const Tensor& a, py::handle other, double rtol, double atol, bool equal_nan) {
            META("isclose");
            return a.isclose(operand_of(a, other), {.rtol = rtol, .atol = atol, .equal_nan = equal_nan});
          },
          py::arg("other"), py::arg("rtol") = 1e-05, py::arg("atol") = 1e-08, py::arg("equal_nan") = false)
      .def(
          "masked_fill",
          [](const Tensor& a, const Tensor& mask, py::handle value) {
            META("masked_fill");
            if (is_scalar(value)) return a.masked_fill(mask, a.scalar_like(to_const(value)));
            return a.masked_fill(mask, operand_of(a, value));
          },
          py::arg("mask"), py::arg("value"));
}

}  // namespace tgpy
