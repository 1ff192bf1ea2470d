// bindings of the Tensor methods that run the graph: kernelize, realize and reading the data back
#include "tg/engine/realize.h"

#include "common.h"
#include "tg/tensor/tensor.h"

namespace tgpy {
using tg::Tensor;

namespace {
// the realized contents as tinygrad's memoryview: cast to the dtype's struct format and the tensor's shape
py::object data_view(const Tensor& t) {
  std::vector<uint8_t> b = t.data_bytes();
  py::bytes raw(reinterpret_cast<const char*>(b.data()), b.size());
  tg::DType d = t.dtype();
  if (d.fmt() == 0) throw py::value_error(tg::cat("no struct format for ", d.repr()));
  py::list shape;
  for (int64_t s : t.shape()) shape.append(s);
  py::object mv = py::module_::import("builtins").attr("memoryview")(raw);
  return mv.attr("cast")(std::string(1, d.fmt()), py::tuple(shape));
}
// a tensor with no elements: nested empty lists, as memoryview.tolist would give
py::object empty_list(const tg::Shape& s, size_t dim) {
  py::list l;
  if (dim + 1 < s.size())
    for (int64_t i = 0; i < s[dim]; i++) l.append(empty_list(s, dim + 1));
  return l;
}
}  // namespace

void bind_realize(py::class_<Tensor>& cls) {
  cls.def("kernelize",
          [](py::object self, py::args lst) {
            tg::MetadataScope m("kernelize");
            std::vector<Tensor> ts{self.cast<Tensor>()};
            for (py::handle x : lst) ts.push_back(x.cast<Tensor>());
            Tensor::kernelize(ts);
            return self;
          })
      .def(
          "realize",
          [](py::object self, py::args lst, bool do_update_stats) {
            tg::MetadataScope m("realize");
            std::vector<Tensor> ts{self.cast<Tensor>()};
            for (py::handle x : lst) ts.push_back(x.cast<Tensor>());
            if (do_update_stats) {
              Tensor::realize(ts);
            } else {  // as realize, but GlobalCounters don't count these kernels
              auto [schedule, var_vals] = Tensor::schedule_with_vars(ts);
              if (!schedule.empty()) tg::run_schedule(std::move(schedule), var_vals, false);
            }
            return self;
          },
          py::arg("do_update_stats") = true)
      .def("data",
           [](const Tensor& t) {
             tg::MetadataScope m("data");
             return data_view(t);
           })
      .def("tolist",
           [](const Tensor& t) -> py::object {
             tg::MetadataScope m("tolist");
             if (t.numel() == 0) return empty_list(t.shape(), 0);
             return data_view(t).attr("tolist")();
           })
      .def("item",
           [](const Tensor& t) {
             tg::MetadataScope m("item");
             if (t.numel() != 1)
               throw py::value_error(tg::cat("must have one element for item, shape is ", tg::shape_str(t.shape())));
             std::vector<uint8_t> b = t.data_bytes();
             py::bytes raw(reinterpret_cast<const char*>(b.data()), b.size());
             py::object mv = py::module_::import("builtins").attr("memoryview")(raw);
             return mv.attr("cast")(std::string(1, t.dtype().fmt())).attr("__getitem__")(0);
           })
      .def("numpy", [](const Tensor& t) {
        tg::MetadataScope m("numpy");
        std::vector<uint8_t> b = t.numel() == 0 ? std::vector<uint8_t>{} : t.data_bytes();
        py::list shape;
        for (int64_t s : t.shape()) shape.append(s);
        return numpy_from_bytes(b, t.dtype()).attr("reshape")(py::tuple(shape));
      });
}

}  // namespace tgpy
