// bindings of the Tensor's [nn] methods (src/tg/tensor/tensor_nn.cpp, tensor_pool.cpp), with tinygrad's Python
// signatures: x.conv2d(w, b, stride=2, padding=1), x.max_pool2d(kernel_size=(2,2)), Tensor.einsum("ij,jk->ik", a, b)
#include "common.h"
#include "tg/tensor/tensor.h"

namespace tgpy {
using tg::DType;
using tg::Tensor;

namespace {

#define META(name) tg::MetadataScope tg_meta_(name)

std::optional<DType> dtype_arg(py::handle h) {
  if (h.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(h)) return tg::dtypes::from_name(h.cast<std::string>());
  return h.cast<DType>();
}
std::vector<int64_t> axis_arg(py::handle axis) { return axis.is_none() ? std::vector<int64_t>{} : to_ints(axis); }
std::optional<Tensor> tensor_arg(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return h.cast<Tensor>();
}
// python's make_tuple(kernel_size, 2): an int is that size on 2 dims, a sequence is one size per dim
std::vector<int64_t> kernel_arg(py::handle h) {
  std::vector<int64_t> k = to_ints(h);
  if (PyLong_Check(h.ptr())) k.push_back(k[0]);
  return k;
}
std::vector<int64_t> stride_arg(py::handle stride, const std::vector<int64_t>& kernel) {
  return stride.is_none() ? kernel : to_ints(stride);
}
// padding: an int or a sequence of ints; a string is a ValueError, as in the reference (only nn.Conv2d takes 'same')
std::vector<int64_t> padding_arg(py::handle padding) {
  if (py::isinstance<py::str>(padding))
    throw py::value_error("Padding must be an int or a sequence of ints, but got padding=" +
                          std::string(py::repr(padding)) + " (padding='same' is nn.Conv2d's, not the Tensor's)");
  return to_ints(padding);
}
py::tuple pair(const std::pair<Tensor, Tensor>& p) { return py::make_tuple(p.first, p.second); }

}  // namespace

void bind_tensor_nn(py::class_<Tensor>& cls) {
  // *** reductions ***
  cls.def(
         "any",
         [](const Tensor& t, py::object axis, bool keepdim) {
           META("any");
           return t.any(axis_arg(axis), keepdim);
         },
         py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def(
          "all",
          [](const Tensor& t, py::object axis, bool keepdim) {
            META("all");
            return t.all(axis_arg(axis), keepdim);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def(
          "var",
          [](const Tensor& t, py::object axis, bool keepdim, double correction) {
            META("var");
            return t.var(axis_arg(axis), keepdim, correction);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def(
          "std",
          [](const Tensor& t, py::object axis, bool keepdim, double correction) {
            META("std");
            return t.std(axis_arg(axis), keepdim, correction);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def(
          "var_mean",
          [](const Tensor& t, py::object axis, bool keepdim, double correction) {
            META("var_mean");
            return pair(t.var_mean(axis_arg(axis), keepdim, correction));
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def(
          "std_mean",
          [](const Tensor& t, py::object axis, bool keepdim, double correction) {
            META("std_mean");
            return pair(t.std_mean(axis_arg(axis), keepdim, correction));
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def(
          "argmax",
          [](const Tensor& t, std::optional<int64_t> axis, bool keepdim) {
            META("argmax");
            return t.argmax(axis, keepdim);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def(
          "argmin",
          [](const Tensor& t, std::optional<int64_t> axis, bool keepdim) {
            META("argmin");
            return t.argmin(axis, keepdim);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def(
          "logsumexp",
          [](const Tensor& t, py::object axis, bool keepdim) {
            META("logsumexp");
            return t.logsumexp(axis_arg(axis), keepdim);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def(
          "logcumsumexp",
          [](const Tensor& t, int64_t axis) {
            META("logcumsumexp");
            return t.logcumsumexp(axis);
          },
          py::arg("axis") = 0)
      .def(
          "cumsum",
          [](const Tensor& t, int64_t axis) {
            META("cumsum");
            return t.cumsum(axis);
          },
          py::arg("axis") = 0)
      .def(
          "cumprod",
          [](const Tensor& t, int64_t axis) {
            META("cumprod");
            return t.cumprod(axis);
          },
          py::arg("axis"))
      .def(
          "cummax",
          [](const Tensor& t, int64_t axis) {
            META("cummax");
            return t.cummax(axis);
          },
          py::arg("axis") = 0)
      .def(
          "softmax",
          [](const Tensor& t, int64_t axis, py::object dtype, bool single_kernel) {
            META("softmax");
            // _single_kernel: the reference's one-kernel softmax, its input made contiguous and the rest fused
            if (single_kernel) return t.contiguous().softmax(axis, dtype_arg(dtype)).fuse();
            return t.softmax(axis, dtype_arg(dtype));
          },
          py::arg("axis") = -1, py::arg("dtype") = py::none(), py::arg("_single_kernel") = 0)
      .def(
          "log_softmax",
          [](const Tensor& t, int64_t axis, py::object dtype) {
            META("log_softmax");
            return t.log_softmax(axis, dtype_arg(dtype));
          },
          py::arg("axis") = -1, py::arg("dtype") = py::none());

  // *** processing and linalg ***
  cls.def(
         "conv2d",
         [](const Tensor& t, const Tensor& weight, py::object bias, int64_t groups, py::object stride,
            py::object dilation, py::object padding, py::object dtype) {
           META("conv2d");
           return t.conv2d(weight, tensor_arg(bias),
                           {.groups = groups,
                            .stride = to_ints(stride),
                            .dilation = to_ints(dilation),
                            .padding = padding_arg(padding),
                            .dtype = dtype_arg(dtype)});
         },
         py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1,
         py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("dtype") = py::none())
      .def(
          "conv_transpose2d",
          [](const Tensor& t, const Tensor& weight, py::object bias, int64_t groups, py::object stride,
             py::object dilation, py::object padding, py::object output_padding) {
            META("conv_transpose2d");
            return t.conv_transpose2d(weight, tensor_arg(bias),
                                      {.groups = groups,
                                       .stride = to_ints(stride),
                                       .dilation = to_ints(dilation),
                                       .padding = padding_arg(padding),
                                       .output_padding = to_ints(output_padding)});
          },
          py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1,
          py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("output_padding") = 0)
      .def(
          "avg_pool2d",
          [](const Tensor& t, py::object kernel_size, py::object stride, py::object dilation, py::object padding,
             bool ceil_mode, bool count_include_pad) {
            META("avg_pool2d");
            std::vector<int64_t> k = kernel_arg(kernel_size);
            return t.avg_pool2d({.kernel_size = k,
                                 .stride = stride_arg(stride, k),
                                 .dilation = to_ints(dilation),
                                 .padding = padding_arg(padding),
                                 .ceil_mode = ceil_mode,
                                 .count_include_pad = count_include_pad});
          },
          py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1,
          py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true)
      .def(
          "max_pool2d",
          [](const Tensor& t, py::object kernel_size, py::object stride, py::object dilation, py::object padding,
             bool ceil_mode, bool return_indices) -> py::object {
            META("max_pool2d");
            std::vector<int64_t> k = kernel_arg(kernel_size);
            tg::MaxPool2dOptions o{.kernel_size = k,
                                   .stride = stride_arg(stride, k),
                                   .dilation = to_ints(dilation),
                                   .padding = padding_arg(padding),
                                   .ceil_mode = ceil_mode};
            if (return_indices) return pair(t.max_pool2d_with_indices(o));
            return py::cast(t.max_pool2d(o));
          },
          py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1,
          py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("return_indices") = false)
      .def(
          "max_unpool2d",
          [](const Tensor& t, const Tensor& indices, py::object kernel_size, py::object stride, py::object dilation,
             py::object padding, py::object output_size) {
            META("max_unpool2d");
            std::vector<int64_t> k = kernel_arg(kernel_size);
            return t.max_unpool2d(
                indices, {.kernel_size = k,
                          .stride = stride_arg(stride, k),
                          .dilation = to_ints(dilation),
                          .padding = padding_arg(padding),
                          .output_size = output_size.is_none() ? std::vector<int64_t>{} : to_ints(output_size)});
          },
          py::arg("indices"), py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(),
          py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("output_size") = py::none())
      .def(
          "interpolate",
          [](const Tensor& t, py::object size, const std::string& mode, bool align_corners) {
            META("interpolate");
            if (!py::isinstance<py::tuple>(size) && !py::isinstance<py::list>(size))
              throw py::type_error("interpolate: size must be a tuple or list of ints");
            return t.interpolate(to_shape(size), mode, align_corners);
          },
          py::arg("size"), py::arg("mode") = "linear", py::arg("align_corners") = false)
      .def_static(
          "einsum",
          [](const std::string& formula, py::args operands, py::object dtype) {
            META("einsum");
            std::vector<Tensor> xs;
            py::object seq = operands;  // einsum(f, a, b) and einsum(f, [a, b])
            if (operands.size() == 1 && !py::isinstance<Tensor>(operands[0])) seq = operands[0];
            for (py::handle h : seq) xs.push_back(h.cast<Tensor>());
            return Tensor::einsum(formula, xs, dtype_arg(dtype));
          },
          py::arg("formula"), py::kw_only(), py::arg("dtype") = py::none())
      .def(
          "sequential",
          [](py::object self, py::iterable ll) {  // no META: the layers' own methods name their uops
            py::object x = self;
            for (py::handle f : ll) x = f(x);
            return x;
          },
          py::arg("ll"));

  // *** nn functional ***
  cls.def(
         "linear",
         [](const Tensor& t, const Tensor& weight, py::object bias, py::object dtype) {
           META("linear");
           return t.linear(weight, tensor_arg(bias), dtype_arg(dtype));
         },
         py::arg("weight"), py::arg("bias") = py::none(), py::arg("dtype") = py::none())
      .def(
          "layernorm",
          [](const Tensor& t, py::object axis, double eps) {
            META("layernorm");
            return t.layernorm(to_ints(axis), eps);
          },
          py::arg("axis") = -1, py::arg("eps") = 1e-5)
      .def(
          "batchnorm",
          [](const Tensor& t, py::object weight, py::object bias, const Tensor& mean, const Tensor& invstd,
             py::object axis) {
            META("batchnorm");
            return t.batchnorm(tensor_arg(weight), tensor_arg(bias), mean, invstd, to_ints(axis));
          },
          py::arg("weight"), py::arg("bias"), py::arg("mean"), py::arg("invstd"), py::arg("axis") = 1)
      .def(
          "dropout",
          [](const Tensor& t, double p) {
            META("dropout");
            return t.dropout(p);
          },
          py::arg("p") = 0.5)
      .def(
          "one_hot",
          [](const Tensor& t, int64_t num_classes) {
            META("one_hot");
            return t.one_hot(num_classes);
          },
          py::arg("num_classes") = -1)
      .def(
          "scaled_dot_product_attention",
          [](const Tensor& t, const Tensor& key, const Tensor& value, py::object attn_mask, double dropout_p,
             bool is_causal) {
            META("scaled_dot_product_attention");
            return t.scaled_dot_product_attention(key, value, tensor_arg(attn_mask), dropout_p, is_causal);
          },
          py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(), py::arg("dropout_p") = 0.0,
          py::arg("is_causal") = false)
      .def(
          "binary_crossentropy",
          [](const Tensor& t, const Tensor& Y, const std::string& reduction) {
            META("binary_crossentropy");
            return t.binary_crossentropy(Y, reduction);
          },
          py::arg("Y"), py::arg("reduction") = "mean")
      .def(
          "binary_crossentropy_logits",
          [](const Tensor& t, const Tensor& Y, const std::string& reduction) {
            META("binary_crossentropy_logits");
            return t.binary_crossentropy_logits(Y, reduction);
          },
          py::arg("Y"), py::arg("reduction") = "mean")
      .def(
          "sparse_categorical_crossentropy",
          [](const Tensor& t, const Tensor& Y, int64_t ignore_index, double label_smoothing,
             const std::string& reduction) {
            META("sparse_categorical_crossentropy");
            return t.sparse_categorical_crossentropy(
                Y, {.ignore_index = ignore_index, .label_smoothing = label_smoothing, .reduction = reduction});
          },
          py::arg("Y"), py::arg("ignore_index") = -1, py::arg("label_smoothing") = 0.0, py::arg("reduction") = "mean")
      .def(
          "cross_entropy",
          [](const Tensor& t, const Tensor& Y, const std::string& reduction, double label_smoothing) {
            META("cross_entropy");
            return t.cross_entropy(Y, {.reduction = reduction, .label_smoothing = label_smoothing});
          },
          py::arg("Y"), py::arg("reduction") = "mean", py::arg("label_smoothing") = 0.0)
      .def(
          "nll_loss",
          [](const Tensor& t, const Tensor& Y, py::object weight, std::optional<int64_t> ignore_index,
             const std::string& reduction) {
            META("nll_loss");
            return t.nll_loss(Y, tensor_arg(weight), {.ignore_index = ignore_index, .reduction = reduction});
          },
          py::arg("Y"), py::arg("weight") = py::none(), py::arg("ignore_index") = py::none(),
          py::arg("reduction") = "mean");
}

}  // namespace tgpy
