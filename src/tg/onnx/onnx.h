#pragma once
// ONNX models run as Tensor calls (tinygrad's extra/onnx.py, tinygrad/nn/onnx.py in its newest code):
//
//   onnx::ModelProto model = onnx::onnx_load("model.onnx");
//   onnx::OnnxRunner run(model);
//   std::map<std::string, Tensor> out = run({{"input", Tensor::rand({1, 3, 224, 224})}});
//
// Each node becomes the Tensor calls of its op (onnx_ops.cpp, the default domain's ops of opsets 7-17 and a few
// com.microsoft ones); nothing runs until an output is realized, so a whole model is one lazy graph that fuses and
// can run under TinyJit. Initializers are lazy views of the model file's bytes (or of their external data files),
// copied to the device when first used.
//
// Errors: an op the runner doesn't have, an unsupported attribute or dtype: NotImplementedError naming the op, the
// node and the value; a missing input or an input of the wrong shape: RuntimeError naming the input, the dim and
// both sizes (the reference's messages).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tg/onnx/onnx_proto.h"
#include "tg/tensor/tensor.h"

namespace tg::onnx {

// a graph value: nothing (an omitted optional input), a tensor, or a sequence of tensors
using Value = std::variant<std::monostate, Tensor, std::vector<Tensor>>;

// a graph input's declared type (OnnxValue): each dim a size, a name (symbolic) or unknown (-1 and "")
struct OnnxValue {
  std::vector<std::variant<int64_t, std::string>> shape;
  bool has_shape = false;
  DType dtype = dtypes::float32;
  bool is_optional = false, is_sequence = false;
};

// ONNX's element types as ours; NotImplementedError for STRING, COMPLEX, FLOAT8, INT4/UINT4 (named)
DType dtype_parse(int32_t onnx_dtype);
// a TensorProto's values as a tensor on `device` (raw data from the model's source; external data from files beside
// `source.path`, as lazy views)
Tensor buffer_parse(const TensorProto& t, const ModelSource& source, const std::string& device);

struct OnnxRunnerOptions {
  std::optional<std::string> device = std::nullopt;  // default: Device.DEFAULT
};

class OnnxRunner {
 public:
  explicit OnnxRunner(const ModelProto& model, OnnxRunnerOptions opts = {});
  // runs the graph: every input the model declares (and no initializer gives) must be in `inputs`
  std::map<std::string, Value> run(const std::map<std::string, Value>& inputs, int debug = -1);
  // the same, with tensors only (a sequence or omitted output is an error)
  std::map<std::string, Tensor> operator()(const std::map<std::string, Tensor>& inputs, int debug = -1);

  const std::map<std::string, OnnxValue>& graph_inputs() const { return graph_inputs_; }
  const std::vector<std::string>& graph_outputs() const { return graph_outputs_; }
  int64_t opset_version() const { return opset_version_; }
  bool is_training() const { return is_training_; }
  const std::string& device() const { return device_; }

 private:
  struct Node;
  Value parse_input(const std::string& name, const Value& v, const OnnxValue& spec);

  std::string device_;
  std::shared_ptr<const ModelSource> source_;  // the model's bytes, which attribute tensors are read from
  int64_t opset_version_ = 0;
  bool is_training_ = false;
  std::map<std::string, Value> initial_values_;  // initializers (and "" for an omitted input)
  std::map<std::string, OnnxValue> graph_inputs_;
  std::vector<std::string> graph_inputs_order_;
  std::vector<std::string> graph_outputs_;
  std::vector<std::shared_ptr<Node>> nodes_;
  std::map<std::string, int64_t> variable_dims_;
};

// the ops the runner has, sorted (tinygrad's onnx_ops keys)
std::vector<std::string> supported_ops();

}  // namespace tg::onnx
