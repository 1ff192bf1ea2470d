// bindings of the nn layers (src/tg/nn/nn.h) in tinygrad._C.nn, with the reference's constructor arguments
#include "common.h"
#include "tg/nn/nn.h"

namespace tgpy {
using tg::Tensor;
namespace nn = tg::nn;

namespace {

// padding: ints, or the string 'same'
void set_padding(nn::ConvOptions& o, py::handle h) {
  if (!py::isinstance<py::str>(h)) {
    o.padding = to_ints(h);
    return;
  }
  if (py::str(h.attr("lower")()).cast<std::string>() != "same")  // any case, as the reference's padding.lower()
    throw py::value_error("Invalid padding string " + std::string(py::repr(h)) + ", only 'same' is supported");
  o.padding_same = true;
}
nn::ConvOptions conv_opts(py::handle stride, py::handle padding, py::handle output_padding, py::handle dilation,
                          int64_t groups, bool bias) {
  nn::ConvOptions o{.stride = to_ints(stride),
                    .dilation = to_ints(dilation),
                    .groups = groups,
                    .bias = bias,
                    .output_padding = to_ints(output_padding)};
  set_padding(o, padding);
  return o;
}
// an int kernel size is square; a sequence gives one size per dim
template <class L>
L make_conv(int64_t in, int64_t out, py::handle kernel_size, nn::ConvOptions o) {
  if (PyLong_Check(kernel_size.ptr())) return L(in, out, py_int(kernel_size), std::move(o));
  return L(in, out, to_ints(kernel_size), std::move(o));
}

// every layer: __tg_state__ gives its tensors as get_state_dict names them (the state walker of nn.cpp asks for it),
// each as the same Python object its attribute gives (a wrapper of the member, as def_readwrite returns it), so
// `p is layer.bias` holds for the p of get_parameters, as in the reference
template <class L, class... Extra>
py::class_<L, Extra...> layer(py::module_& m, const char* name) {
  py::class_<L, Extra...> c(m, name);
  c.def("__tg_state__", [](py::object self) {
    py::list out;
    nn::StateVisitor v([&](const std::string& k, Tensor& t) {
      out.append(py::make_tuple(k, py::cast(&t, py::return_value_policy::reference_internal, self)));
    });
    v("", self.cast<L&>());
    return out;
  });
  return c;
}
template <class V>
py::tuple tuple_of(const V& v) {
  return py::tuple(py::cast(v));
}

}  // namespace

void bind_nn_layers(py::module_& m) {
  layer<nn::Linear>(m, "Linear")
      .def(py::init<int64_t, int64_t, bool>(), py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true)
      .def("__call__", &nn::Linear::operator())
      .def_readwrite("weight", &nn::Linear::weight)
      .def_readwrite("bias", &nn::Linear::bias);

  layer<nn::Conv2d>(m, "Conv2d")
      .def(py::init([](int64_t in, int64_t out, py::object kernel_size, py::object stride, py::object padding,
                       py::object dilation, int64_t groups, bool bias) {
             return make_conv<nn::Conv2d>(in, out, kernel_size,
                                          conv_opts(stride, padding, py::int_(0), dilation, groups, bias));
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
           py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("bias") = true)
      .def("__call__", &nn::Conv2d::operator())
      .def_readwrite("weight", &nn::Conv2d::weight)
      .def_readwrite("bias", &nn::Conv2d::bias)
      .def_property_readonly("kernel_size", [](const nn::Conv2d& c) { return tuple_of(c.kernel_size); })
      .def_property_readonly("stride", [](const nn::Conv2d& c) { return tuple_of(c.opts.stride); })
      .def_property_readonly("dilation", [](const nn::Conv2d& c) { return tuple_of(c.opts.dilation); })
      .def_property_readonly("padding", [](const nn::Conv2d& c) { return tuple_of(c.opts.padding); })
      .def_property_readonly("groups", [](const nn::Conv2d& c) { return c.opts.groups; });
  m.def(
      "Conv1d",
      [](int64_t in, int64_t out, int64_t kernel_size, py::object stride, py::object padding, py::object dilation,
         int64_t groups, bool bias) {
        return nn::Conv1d(in, out, kernel_size, conv_opts(stride, padding, py::int_(0), dilation, groups, bias));
      },
      py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("bias") = true);

  layer<nn::ConvTranspose2d>(m, "ConvTranspose2d")
      .def(py::init([](int64_t in, int64_t out, py::object kernel_size, py::object stride, py::object padding,
                       py::object output_padding, py::object dilation, int64_t groups, bool bias) {
             return make_conv<nn::ConvTranspose2d>(in, out, kernel_size,
                                                   conv_opts(stride, padding, output_padding, dilation, groups, bias));
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
           py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1,
           py::arg("bias") = true)
      .def("__call__", &nn::ConvTranspose2d::operator())
      .def_readwrite("weight", &nn::ConvTranspose2d::weight)
      .def_readwrite("bias", &nn::ConvTranspose2d::bias)
      .def_property_readonly("kernel_size", [](const nn::ConvTranspose2d& c) { return tuple_of(c.kernel_size); })
      .def_property_readonly("output_padding",
                             [](const nn::ConvTranspose2d& c) { return tuple_of(c.opts.output_padding); });
  m.def(
      "ConvTranspose1d",
      [](int64_t in, int64_t out, int64_t kernel_size, py::object stride, py::object padding, py::object output_padding,
         py::object dilation, int64_t groups, bool bias) {
        return nn::ConvTranspose1d(in, out, kernel_size,
                                   conv_opts(stride, padding, output_padding, dilation, groups, bias));
      },
      py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1,
      py::arg("bias") = true);

  auto bn = layer<nn::BatchNorm>(m, "BatchNorm");
  bn.def(py::init([](int64_t sz, double eps, bool affine, bool track_running_stats, double momentum) {
           return nn::BatchNorm(
               sz, {.eps = eps, .affine = affine, .track_running_stats = track_running_stats, .momentum = momentum});
         }),
         py::arg("sz"), py::arg("eps") = 1e-5, py::arg("affine") = true, py::arg("track_running_stats") = true,
         py::arg("momentum") = 0.1)
      .def("__call__", &nn::BatchNorm::operator())
      .def("calc_stats", &nn::BatchNorm::calc_stats)
      .def_property_readonly("eps", [](const nn::BatchNorm& b) { return b.opts.eps; })
      .def_property_readonly("track_running_stats", [](const nn::BatchNorm& b) { return b.opts.track_running_stats; })
      .def_property_readonly("momentum", [](const nn::BatchNorm& b) { return b.opts.momentum; })
      .def_readwrite("weight", &nn::BatchNorm::weight)
      .def_readwrite("bias", &nn::BatchNorm::bias)
      .def_readwrite("num_batches_tracked", &nn::BatchNorm::num_batches_tracked)
      .def_readwrite("running_mean", &nn::BatchNorm::running_mean)
      .def_readwrite("running_var", &nn::BatchNorm::running_var);
  m.attr("BatchNorm2d") = bn;
  m.attr("BatchNorm3d") = bn;

  layer<nn::LayerNorm>(m, "LayerNorm")
      .def(py::init(
               [](py::object shape, double eps, bool affine) { return nn::LayerNorm(to_shape(shape), eps, affine); }),
           py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::arg("elementwise_affine") = true)
      .def("__call__", &nn::LayerNorm::operator())
      .def_property_readonly("normalized_shape", [](const nn::LayerNorm& l) { return tuple_of(l.normalized_shape); })
      .def_readwrite("eps", &nn::LayerNorm::eps)
      .def_readwrite("weight", &nn::LayerNorm::weight)
      .def_readwrite("bias", &nn::LayerNorm::bias);
  layer<nn::LayerNorm2d, nn::LayerNorm>(m, "LayerNorm2d")
      .def(py::init(
               [](py::object shape, double eps, bool affine) { return nn::LayerNorm2d(to_shape(shape), eps, affine); }),
           py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::arg("elementwise_affine") = true)
      .def("__call__", &nn::LayerNorm2d::operator());

  layer<nn::GroupNorm>(m, "GroupNorm")
      .def(py::init<int64_t, int64_t, double, bool>(), py::arg("num_groups"), py::arg("num_channels"),
           py::arg("eps") = 1e-5, py::arg("affine") = true)
      .def("__call__", &nn::GroupNorm::operator())
      .def_readwrite("num_groups", &nn::GroupNorm::num_groups)
      .def_readwrite("num_channels", &nn::GroupNorm::num_channels)
      .def_readwrite("eps", &nn::GroupNorm::eps)
      .def_readwrite("weight", &nn::GroupNorm::weight)
      .def_readwrite("bias", &nn::GroupNorm::bias);
  layer<nn::InstanceNorm>(m, "InstanceNorm")
      .def(py::init<int64_t, double, bool>(), py::arg("num_features"), py::arg("eps") = 1e-5, py::arg("affine") = true)
      .def("__call__", &nn::InstanceNorm::operator())
      .def_readwrite("num_features", &nn::InstanceNorm::num_features)
      .def_readwrite("eps", &nn::InstanceNorm::eps)
      .def_readwrite("weight", &nn::InstanceNorm::weight)
      .def_readwrite("bias", &nn::InstanceNorm::bias);
  layer<nn::RMSNorm>(m, "RMSNorm")
      .def(py::init<int64_t, double, bool>(), py::arg("dim"), py::arg("eps") = 1e-6,
           py::arg("elementwise_affine") = true)
      .def("__call__", &nn::RMSNorm::operator())
      .def_readwrite("eps", &nn::RMSNorm::eps)
      .def_readwrite("weight", &nn::RMSNorm::weight);
  layer<nn::Embedding>(m, "Embedding")
      .def(py::init<int64_t, int64_t>(), py::arg("vocab_size"), py::arg("embed_size"))
      .def("__call__", &nn::Embedding::operator())
      .def_readwrite("vocab_sz", &nn::Embedding::vocab_size)
      .def_readwrite("embed_sz", &nn::Embedding::embed_size)
      .def_readwrite("weight", &nn::Embedding::weight);
  layer<nn::LSTMCell>(m, "LSTMCell")
      .def(py::init<int64_t, int64_t, bool>(), py::arg("input_size"), py::arg("hidden_size"), py::arg("bias") = true)
      .def("__call__", &nn::LSTMCell::operator(), py::arg("x"), py::arg("hc") = py::none())
      .def_readwrite("weight_ih", &nn::LSTMCell::weight_ih)
      .def_readwrite("weight_hh", &nn::LSTMCell::weight_hh)
      .def_readwrite("bias_ih", &nn::LSTMCell::bias_ih)
      .def_readwrite("bias_hh", &nn::LSTMCell::bias_hh);
}

}  // namespace tgpy
