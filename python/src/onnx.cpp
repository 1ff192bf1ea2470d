// tinygrad._C.onnx: the ONNX reader and runner (src/tg/onnx) for tinygrad.frontend.onnx and tinygrad.nn.onnx
#include "tg/onnx/onnx.h"

#include <pybind11/stl/filesystem.h>

#include "common.h"

namespace tgpy {

void bind_onnx(py::module_& m) {
  namespace onnx = tg::onnx;
  py::module_ o = m.def_submodule("onnx", "tinygrad.frontend.onnx's engine: the ONNX reader and runner (src/tg/onnx)");
  py::class_<onnx::NodeProto>(o, "NodeProto")
      .def_readonly("op_type", &onnx::NodeProto::op_type)
      .def_readonly("name", &onnx::NodeProto::name)
      .def_readonly("domain", &onnx::NodeProto::domain)
      .def_readonly("input", &onnx::NodeProto::input)
      .def_readonly("output", &onnx::NodeProto::output)
      .def("__repr__", [](const onnx::NodeProto& n) { return "<NodeProto " + n.op_type + " " + n.name + ">"; });
  py::class_<onnx::ValueInfoProto>(o, "ValueInfoProto").def_readonly("name", &onnx::ValueInfoProto::name);
  py::class_<onnx::TensorProto>(o, "TensorProto")
      .def_readonly("name", &onnx::TensorProto::name)
      .def_readonly("dims", &onnx::TensorProto::dims)
      .def_readonly("data_type", &onnx::TensorProto::data_type);
  py::class_<onnx::GraphProto>(o, "GraphProto")
      .def_readonly("name", &onnx::GraphProto::name)
      .def_readonly("node", &onnx::GraphProto::node)
      .def_readonly("initializer", &onnx::GraphProto::initializer)
      .def_readonly("input", &onnx::GraphProto::input)
      .def_readonly("output", &onnx::GraphProto::output);
  py::class_<onnx::OperatorSetId>(o, "OperatorSetIdProto")
      .def_readonly("domain", &onnx::OperatorSetId::domain)
      .def_readonly("version", &onnx::OperatorSetId::version);
  py::class_<onnx::ModelProto>(o, "ModelProto")
      .def_readonly("ir_version", &onnx::ModelProto::ir_version)
      .def_readonly("producer_name", &onnx::ModelProto::producer_name)
      .def_readonly("producer_version", &onnx::ModelProto::producer_version)
      .def_readonly("opset_import", &onnx::ModelProto::opset_import)
      .def_readonly("graph", &onnx::ModelProto::graph);
  o.def(
      "onnx_load", [](const std::filesystem::path& p) { return onnx::onnx_load(p.string()); }, py::arg("path"));
  o.def(
      "onnx_load_bytes",
      [](const py::bytes& b) {
        std::string_view s = b;
        return onnx::onnx_load_bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
      },
      py::arg("data"));
  o.def("supported_ops", &onnx::supported_ops);
  py::class_<onnx::OnnxRunner>(o, "OnnxRunner")
      .def(py::init([](const onnx::ModelProto& model, std::optional<std::string> device) {
             return std::make_unique<onnx::OnnxRunner>(model, onnx::OnnxRunnerOptions{.device = std::move(device)});
           }),
           py::arg("model"), py::arg("device") = py::none())
      .def("run", &onnx::OnnxRunner::run, py::arg("inputs"), py::arg("debug") = -1)
      .def_property_readonly("graph_inputs",
                             [](const onnx::OnnxRunner& r) {
                               // name -> (shape, dtype, is_optional, is_sequence), shape None when not declared
                               py::dict out;
                               for (const auto& [name, v] : r.graph_inputs()) {
                                 py::object shape = py::none();
                                 if (v.has_shape) {
                                   py::list dims;
                                   for (const auto& d : v.shape) std::visit([&](const auto& x) { dims.append(x); }, d);
                                   shape = py::tuple(dims);
                                 }
                                 out[py::str(name)] = py::make_tuple(shape, v.dtype, v.is_optional, v.is_sequence);
                               }
                               return out;
                             })
      .def_property_readonly("graph_outputs", &onnx::OnnxRunner::graph_outputs)
      .def_property_readonly("opset_version", &onnx::OnnxRunner::opset_version)
      .def_property_readonly("is_training", &onnx::OnnxRunner::is_training)
      .def_property_readonly("device", &onnx::OnnxRunner::device);
}

}  // namespace tgpy
