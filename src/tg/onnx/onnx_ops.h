#pragma once
// The op table of the ONNX runner (internal to src/tg/onnx): each op is a function of an OpContext (the node's
// inputs, attributes and output count) returning its outputs. Ops that change across opsets have one entry per
// version they changed in; the runner picks the newest one not above the model's opset.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tg/onnx/onnx.h"

namespace tg::onnx {

struct OpContext {
  std::string op, node;  // the op type and the node's name (or "#<index>")
  int64_t opset = 0;
  std::string device;
  std::vector<Value> inputs;
  std::map<std::string, const AttributeProto*> attrs;
  size_t num_outputs = 1;
  const ModelSource* source = nullptr;
  std::map<std::string, Value>* values = nullptr;  // every value computed so far (Gradient reads them)

  [[noreturn]] void unsupported(const std::string& what) const;
  [[noreturn]] void invalid(const std::string& what) const;  // a model that breaks the op's spec: RuntimeError

  size_t n() const { return inputs.size(); }
  bool has(size_t i) const;         // input i is given (and not an omitted optional)
  const Tensor& t(size_t i) const;  // input i as a tensor; missing or a sequence is an error
  std::optional<Tensor> opt(size_t i) const;
  std::vector<Tensor> variadic() const;  // every given input (Sum, Max, Concat ...)
  // input i's values on the host, the reference's to_python_const: shapes, axes, pads, scalars
  std::vector<int64_t> ints(size_t i) const;
  std::vector<double> floats(size_t i) const;
  int64_t int_(size_t i) const;  // a single value
  double float_(size_t i) const;

  bool has_attr(const std::string& name) const { return attrs.count(name) != 0; }
  int64_t attr_i(const std::string& name, int64_t def) const;
  double attr_f(const std::string& name, double def) const;
  std::string attr_s(const std::string& name, const std::string& def) const;
  std::optional<std::vector<int64_t>> attr_ints(const std::string& name) const;
  std::optional<std::vector<double>> attr_floats(const std::string& name) const;
  std::optional<Tensor> attr_t(const std::string& name) const;
};

using OpFn = std::function<std::vector<Value>(OpContext&)>;
struct OpVersion {
  int64_t since;
  OpFn fn;
};
using OpTable = std::map<std::string, std::vector<OpVersion>>;

// the families of ops, each in its own file, adding themselves to the table
void add_math_ops(OpTable& t);      // onnx_ops.cpp: elementwise, reductions, casts
void add_movement_ops(OpTable& t);  // onnx_ops.cpp: shapes, slicing, gathers and scatters
void add_nn_ops(OpTable& t);        // onnx_ops_nn.cpp: convolution, pools, normalization, resize, quantization
const OpTable& op_table();

// a value as a tensor, or an error naming what it is
const Tensor& as_tensor(const Value& v, const std::string& what);

}  // namespace tg::onnx
