// bindings of the nn layers (src/tg/nn/nn.h) in tinygrad._C.nn, with the reference's constructor arguments
#include "common.h"
#include "tg/nn/nn.h"

namespace tgpy {
using tg::Tensor;
namespace nn = tg::nn;

namespace {

// an int or a sequence of ints: int kernel sizes are square, sequences give one size per dim
std::vector<int64_t> kernel_arg(py::handle h) { return PyLong_Check(h.ptr()) ? std::vector<int64_t>{} : to_ints(h); }

nn::ConvPadding padding_arg(py::handle h) {
  if (py::isinstance<py::str>(h)) return nn::ConvPadding(h.cast<std::string>(), 0);
  return nn::ConvPadding(to_ints(h));
}

// the tensors of a layer, named as get_state_dict names them (the state walker asks for these)
template <class L>
std::vector<std::pair<std::string, Tensor>> state_items(L& layer) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& kv : nn::state::get_state_dict(layer)) out.push_back(kv);
  return out;
}

template <class L, class... Extra>
py::class_<L, Extra...> layer(py::module_& m, const char* name) {
  py::class_<L, Extra...> c(m, name);
  c.def("__tg_state__", [](L& l) { return state_items(l); });
  return c;
}

template <class L>
L make_conv(int64_t in, int64_t out, py::handle kernel_size, nn::ConvOptions o) {
  std::vector<int64_t> ks = kernel_arg(kernel_size);
  return ks.empty() ? L(in, out, py_int(kernel_size), std::move(o)) : L(in, out, ks, std::move(o));
}

}  // namespace

void bind_nn_layers(py::module_& m) {
  layer<nn::Linear>(m, "Linear")
      .def(py::init<int64_t, int64_t, bool>(), py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true)
      .def("__call__", &nn::Linear::operator())
      .def_readwrite("weight", &nn::Linear::weight)
      .def_readwrite("bias", &nn::Linear::bias);

  auto conv_opts = [](py::handle stride, py::handle padding, py::handle dilation, int64_t groups, bool bias) {
    return nn::ConvOptions{.stride = to_ints(stride),
                           .padding = padding_arg(padding),
                           .dilation = to_ints(dilation),
                           .groups = groups,
                           .bias = bias};
  };
  layer<nn::Conv2d>(m, "Conv2d")
      .def(py::init([conv_opts](int64_t in, int64_t out, py::object kernel_size, py::object stride, py::object padding,
                                py::object dilation, int64_t groups, bool bias) {
             return make_conv<nn::Conv2d>(in, out, kernel_size, conv_opts(stride, padding, dilation, groups, bias));
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
           py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("bias") = true)
      .def("__call__", &nn::Conv2d::operator())
      .def_readwrite("weight", &nn::Conv2d::weight)
      .def_readwrite("bias", &nn::Conv2d::bias)
      .def_property_readonly("kernel_size", [](const nn::Conv2d& c) { return py::tuple(py::cast(c.kernel_size)); })
      .def_readwrite("stride", &nn::Conv2d::stride)
      .def_readwrite("dilation", &nn::Conv2d::dilation)
      .def_readwrite("padding", &nn::Conv2d::padding)
      .def_readwrite("groups", &nn::Conv2d::groups);
  m.def(
      "Conv1d",
      [conv_opts](int64_t in, int64_t out, int64_t kernel_size, py::object stride, py::object padding,
                  py::object dilation, int64_t groups, bool bias) {
        return nn::Conv1d(in, out, kernel_size, conv_opts(stride, padding, dilation, groups, bias));
      },
      py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("bias") = true);

  auto convt_opts = [](py::handle stride, py::handle padding, py::handle output_padding, py::handle dilation,
                       int64_t groups, bool bias) {
    return nn::ConvTransposeOptions{.stride = to_ints(stride),
                                    .padding = to_ints(padding),
                                    .output_padding = to_ints(output_padding),
                                    .dilation = to_ints(dilation),
                                    .groups = groups,
                                    .bias = bias};
  };
  layer<nn::ConvTranspose2d, nn::Conv2d>(m, "ConvTranspose2d")
      .def(py::init([convt_opts](int64_t in, int64_t out, py::object kernel_size, py::object stride, py::object padding,
                                 py::object output_padding, py::object dilation, int64_t groups, bool bias) {
             auto o = convt_opts(stride, padding, output_padding, dilation, groups, bias);
             std::vector<int64_t> ks = kernel_arg(kernel_size);
             return ks.empty() ? nn::ConvTranspose2d(in, out, py_int(kernel_size), o)
                               : nn::ConvTranspose2d(in, out, ks, o);
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
           py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1,
           py::arg("bias") = true)
      .def("__call__", &nn::ConvTranspose2d::operator())
      .def_readwrite("output_padding", &nn::ConvTranspose2d::output_padding);
  m.def(
      "ConvTranspose1d",
      [convt_opts](int64_t in, int64_t out, int64_t kernel_size, py::object stride, py::object padding,
                   py::object output_padding, py::object dilation, int64_t groups, bool bias) {
        return nn::ConvTranspose1d(in, out, kernel_size,
                                   convt_opts(stride, padding, output_padding, dilation, groups, bias));
      },
      py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1,
      py::arg("bias") = true);

  auto bn =
      layer<nn::BatchNorm>(m, "BatchNorm")
          .def(py::init([](int64_t sz, double eps, bool affine, bool track_running_stats, double momentum) {
                 return nn::BatchNorm(
                     sz,
                     {.eps = eps, .affine = affine, .track_running_stats = track_running_stats, .momentum = momentum});
               }),
               py::arg("sz"), py::arg("eps") = 1e-5, py::arg("affine") = true, py::arg("track_running_stats") = true,
               py::arg("momentum") = 0.1)
          .def("__call__", &nn::BatchNorm::operator())
          .def("calc_stats", &nn::BatchNorm::calc_stats)
          .def_readwrite("eps", &nn::BatchNorm::eps)
          .def_readwrite("track_running_stats", &nn::BatchNorm::track_running_stats)
          .def_readwrite("momentum", &nn::BatchNorm::momentum)
          .def_readwrite("weight", &nn::BatchNorm::weight)
          .def_readwrite("bias", &nn::BatchNorm::bias)
          .def_readwrite("num_batches_tracked", &nn::BatchNorm::num_batches_tracked)
          .def_readwrite("running_mean", &nn::BatchNorm::running_mean)
          .def_readwrite("running_var", &nn::BatchNorm::running_var);
  m.attr("BatchNorm2d") = bn;
  m.attr("BatchNorm3d") = bn;

  auto ln = layer<nn::LayerNorm>(m, "LayerNorm");
  ln.def(py::init([](py::object shape, double eps, bool affine) { return nn::LayerNorm(to_ints(shape), eps, affine); }),
         py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::arg("elementwise_affine") = true)
      .def("__call__", &nn::LayerNorm::operator())
      .def_property_readonly("normalized_shape",
                             [](const nn::LayerNorm& l) { return py::tuple(py::cast(l.normalized_shape)); })
      .def_property_readonly("axis", [](const nn::LayerNorm& l) { return py::tuple(py::cast(l.axis)); })
      .def_readwrite("eps", &nn::LayerNorm::eps)
      .def_readwrite("elementwise_affine", &nn::LayerNorm::elementwise_affine)
      .def_readwrite("weight", &nn::LayerNorm::weight)
      .def_readwrite("bias", &nn::LayerNorm::bias);
  layer<nn::LayerNorm2d, nn::LayerNorm>(m, "LayerNorm2d")
      .def(py::init(
               [](py::object shape, double eps, bool affine) { return nn::LayerNorm2d(to_ints(shape), eps, affine); }),
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
      .def("_norm", &nn::RMSNorm::_norm)
      .def_readwrite("eps", &nn::RMSNorm::eps)
      .def_readwrite("weight", &nn::RMSNorm::weight);
  layer<nn::Embedding>(m, "Embedding")
      .def(py::init<int64_t, int64_t>(), py::arg("vocab_size"), py::arg("embed_size"))
      .def("__call__", &nn::Embedding::operator())
      .def_readwrite("vocab_sz", &nn::Embedding::vocab_sz)
      .def_readwrite("embed_sz", &nn::Embedding::embed_sz)
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
