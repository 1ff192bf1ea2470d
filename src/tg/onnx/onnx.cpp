// The ONNX runner: a model's graph run node by node as Tensor calls (see onnx.h)
#include "tg/onnx/onnx.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <type_traits>

#include "tg/helpers/helpers.h"
#include "tg/helpers/knobs.h"
#include "tg/nn/state_internal.h"
#include "tg/onnx/onnx_ops.h"
#include "tg/runtime/device.h"

namespace tg::onnx {

DType dtype_parse(int32_t t) {
  switch (static_cast<DataType>(t)) {
    case DataType::FLOAT: return dtypes::float32;
    case DataType::UINT8: return dtypes::uint8;
    case DataType::INT8: return dtypes::int8;
    case DataType::UINT16: return dtypes::uint16;
    case DataType::INT16: return dtypes::int16;
    case DataType::INT32: return dtypes::int32;
    case DataType::INT64: return dtypes::int64;
    case DataType::BOOL: return dtypes::bool_;
    case DataType::FLOAT16: return dtypes::float16;
    case DataType::DOUBLE: return dtypes::float64;
    case DataType::UINT32: return dtypes::uint32;
    case DataType::UINT64: return dtypes::uint64;
    case DataType::BFLOAT16: return dtypes::bfloat16;
    default: break;
  }
  throw NotImplementedError(cat("onnx dtype ", data_type_name(t), " (", t, ") is not supported"));
}

namespace {

// a proto number as integer type I: a float that isn't finite or doesn't fit is a ValueError (converting it would be
// undefined); an integer wraps, as a cast does
template <class I, class T>
I narrow(T x, DType dt) {
  if constexpr (std::is_floating_point_v<T>) {
    const auto lx = static_cast<long double>(x);
    TG_CHECK_AS(ValueError,
                (std::isfinite(x) && lx > static_cast<long double>(std::numeric_limits<I>::min()) - 1 &&
                 lx < static_cast<long double>(std::numeric_limits<I>::max()) + 1),
                "onnx: the tensor value ", x, " doesn't fit its dtype ", dt);
  }
  return static_cast<I>(x);
}

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v, DType dt) {
  // the proto's widened numbers narrowed to the tensor's dtype, as bytes
  std::vector<uint8_t> out(v.size() * static_cast<size_t>(dt.itemsize()));
  for (size_t i = 0; i < v.size(); i++) {
    uint8_t* p = out.data() + i * static_cast<size_t>(dt.itemsize());
    auto put = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
    if (dt == dtypes::float32)
      put(static_cast<float>(v[i]));
    else if (dt == dtypes::float64)
      put(static_cast<double>(v[i]));
    else if (dt == dtypes::int64)
      put(narrow<int64_t>(v[i], dt));
    else if (dt == dtypes::uint64)
      put(narrow<uint64_t>(v[i], dt));
    else if (dt == dtypes::int32)
      put(narrow<int32_t>(v[i], dt));
    else if (dt == dtypes::uint32)
      put(narrow<uint32_t>(v[i], dt));
    else if (dt == dtypes::int16)
      put(narrow<int16_t>(v[i], dt));
    else if (dt == dtypes::uint16 || dt == dtypes::float16 || dt == dtypes::bfloat16)
      put(narrow<uint16_t>(v[i], dt));  // half and bfloat16 come as their bits
    else if (dt == dtypes::int8)
      put(narrow<int8_t>(v[i], dt));
    else if (dt == dtypes::uint8)
      put(narrow<uint8_t>(v[i], dt));
    else if (dt == dtypes::bool_)
      put(static_cast<uint8_t>(v[i] != 0));
    else
      throw NotImplementedError(cat("onnx: can't store numbers as ", dt));
  }
  return out;
}

std::string external_path(const TensorProto& t, const ModelSource& source, uint64_t& offset,
                          std::optional<uint64_t>& length) {
  std::string location;
  for (const auto& entry : t.external_data) {
    // not a structured binding: clang 14's lambdas can't capture one
    const std::string &k = entry.first, &v = entry.second;
    auto number = [&](const std::string& what) {
      TG_CHECK_AS(ValueError, !v.empty() && v.find_first_not_of("0123456789") == std::string::npos, "onnx: tensor ",
                  py_str_repr(t.name), "'s external data ", what, " is not a number: ", py_str_repr(v));
      return static_cast<uint64_t>(std::stoull(v));
    };
    if (k == "location")
      location = v;
    else if (k == "offset")
      offset = number("offset");
    else if (k == "length")
      length = number("length");
  }
  TG_CHECK_AS(ValueError, !location.empty(), "onnx: tensor ", py_str_repr(t.name),
              " has external data without a location");
  TG_CHECK_AS(ValueError, !source.path.empty(), "onnx: tensor ", py_str_repr(t.name), " is stored in ",
              py_str_repr(location), ", but the model was read from bytes: load it from its file");
  namespace fs = std::filesystem;
  return (fs::path(source.path).parent_path() / location).string();
}

}  // namespace

Tensor buffer_parse(const TensorProto& t, const ModelSource& source, const std::string& device) {
  TG_CHECK_AS(NotImplementedError, t.string_data.empty() && t.data_type != static_cast<int32_t>(DataType::STRING),
              "onnx: tensor ", py_str_repr(t.name), " holds strings, which are not supported");
  DType dt = dtype_parse(t.data_type);
  Shape shape(t.dims.begin(), t.dims.end());
  for (int64_t d : t.dims)
    TG_CHECK_AS(ValueError, d >= 0, "onnx: tensor ", py_str_repr(t.name), " has a negative dim ", d);
  // the nonzero dims' product bounds the strides too: a shape with a 0 holds nothing but still has strides
  Shape nonzero;
  for (int64_t d : t.dims)
    if (d > 0) nonzero.push_back(d);
  int64_t extent = tg::prod(nonzero);  // a ValueError when the product overflows
  TG_CHECK_AS(ValueError, extent < (int64_t{1} << 48), "onnx: tensor ", py_str_repr(t.name), " of shape ",
              shape_str(shape), " has too many elements");
  int64_t numel = tg::prod(shape);
  uint64_t nbytes = static_cast<uint64_t>(numel) * static_cast<uint64_t>(dt.itemsize());
  auto sized = [&](uint64_t have, const char* where) {
    TG_CHECK_AS(ValueError, have == nbytes, "onnx: tensor ", py_str_repr(t.name), " of shape ", shape_str(shape), " ",
                dt, " needs ", nbytes, " bytes, its ", where, " has ", have);
  };
  if (t.data_location == 1 || !t.external_data.empty()) {
    uint64_t offset = 0;
    std::optional<uint64_t> length;
    std::string path = external_path(t, source, offset, length);
    Tensor file = Tensor::from_file(path);
    auto size = static_cast<uint64_t>(file.numel());
    TG_CHECK_AS(ValueError, offset <= size && nbytes <= size - offset, "onnx: tensor ", py_str_repr(t.name),
                " needs bytes [", offset, ", ", offset + nbytes, ") of ", py_str_repr(path), ", which has ", size);
    if (length) sized(*length, "external data length");
    if (numel == 0) return Tensor::empty(shape, {.device = device, .dtype = dt});
    auto o = static_cast<int64_t>(offset);
    return file.shrink({{o, o + static_cast<int64_t>(nbytes)}}).bitcast(dt).reshape(shape).to(device);
  }
  if (t.raw_data) {
    sized(t.raw_data->size, "raw_data");
    return nn::state::realized_from_bytes(source.bytes.data() + t.raw_data->offset, dt, shape, device);
  }
  std::vector<uint8_t> bytes;
  if (!t.float_data.empty())
    bytes = bytes_of(t.float_data, dt);
  else if (!t.int32_data.empty())
    bytes = bytes_of(t.int32_data, dt);
  else if (!t.int64_data.empty())
    bytes = bytes_of(t.int64_data, dt);
  else if (!t.double_data.empty())
    bytes = bytes_of(t.double_data, dt);
  else if (!t.uint64_data.empty())
    bytes = bytes_of(t.uint64_data, dt);
  sized(bytes.size(), "data");
  return nn::state::realized_from_bytes(bytes.data(), dt, shape, device);
}

// *** OpContext ***

void OpContext::unsupported(const std::string& what) const {
  throw NotImplementedError(cat("onnx: ", op, " (node ", py_str_repr(node), "): ", what));
}
void OpContext::invalid(const std::string& what) const {
  throw Error(cat("onnx: ", op, " (node ", py_str_repr(node), "): ", what));
}
bool OpContext::has(size_t i) const { return i < inputs.size() && !std::holds_alternative<std::monostate>(inputs[i]); }
const Tensor& OpContext::t(size_t i) const {
  if (!has(i)) invalid(cat("input ", i, " is required"));
  if (!std::holds_alternative<Tensor>(inputs[i])) invalid(cat("input ", i, " is a sequence, expected a tensor"));
  return std::get<Tensor>(inputs[i]);
}
std::optional<Tensor> OpContext::opt(size_t i) const {
  if (!has(i)) return std::nullopt;
  return t(i);
}
std::vector<Tensor> OpContext::variadic() const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); i++)
    if (has(i)) out.push_back(t(i));
  return out;
}
std::vector<int64_t> OpContext::ints(size_t i) const {
  Tensor x = t(i);
  if (x.numel() == 0) return {};
  return x.cast(dtypes::int64).tolist<int64_t>();
}
std::vector<double> OpContext::floats(size_t i) const {
  Tensor x = t(i);
  if (x.numel() == 0) return {};
  return x.cast(dtypes::float64).tolist<double>();
}
int64_t OpContext::int_(size_t i) const {
  std::vector<int64_t> v = ints(i);
  if (v.size() != 1) invalid(cat("input ", i, " must hold one value, it has ", v.size()));
  return v[0];
}
double OpContext::float_(size_t i) const {
  std::vector<double> v = floats(i);
  if (v.size() != 1) invalid(cat("input ", i, " must hold one value, it has ", v.size()));
  return v[0];
}

namespace {
const AttributeProto* find_attr(const OpContext& c, const std::string& name, AttributeProto::Type want) {
  auto it = c.attrs.find(name);
  if (it == c.attrs.end()) return nullptr;
  if (it->second->type != want)
    c.invalid(cat("attribute ", py_str_repr(name), " is ", attribute_type_name(it->second->type), ", expected ",
                  attribute_type_name(want)));
  return it->second;
}
}  // namespace

int64_t OpContext::attr_i(const std::string& name, int64_t def) const {
  const AttributeProto* a = find_attr(*this, name, AttributeProto::Type::INT);
  return a ? a->i : def;
}
double OpContext::attr_f(const std::string& name, double def) const {
  const AttributeProto* a = find_attr(*this, name, AttributeProto::Type::FLOAT);
  return a ? static_cast<double>(a->f) : def;
}
std::string OpContext::attr_s(const std::string& name, const std::string& def) const {
  const AttributeProto* a = find_attr(*this, name, AttributeProto::Type::STRING);
  return a ? a->s : def;
}
std::optional<std::vector<int64_t>> OpContext::attr_ints(const std::string& name) const {
  const AttributeProto* a = find_attr(*this, name, AttributeProto::Type::INTS);
  if (!a) return std::nullopt;
  return a->ints;
}
std::optional<std::vector<double>> OpContext::attr_floats(const std::string& name) const {
  const AttributeProto* a = find_attr(*this, name, AttributeProto::Type::FLOATS);
  if (!a) return std::nullopt;
  return std::vector<double>(a->floats.begin(), a->floats.end());
}
std::optional<Tensor> OpContext::attr_t(const std::string& name) const {
  const AttributeProto* a = find_attr(*this, name, AttributeProto::Type::TENSOR);
  if (!a || !a->t) return std::nullopt;
  return buffer_parse(*a->t, *source, device);
}

const Tensor& as_tensor(const Value& v, const std::string& what) {
  if (const Tensor* t = std::get_if<Tensor>(&v)) return *t;
  throw Error(cat("onnx: ", what, " is ", std::holds_alternative<std::monostate>(v) ? "not given" : "a sequence",
                  ", expected a tensor"));
}

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    add_math_ops(t);
    add_movement_ops(t);
    add_nn_ops(t);
    return t;
  }();
  return table;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, _] : op_table()) out.push_back(name);
  return out;
}

// *** the runner ***

namespace {

OnnxValue type_parse(const ValueInfoProto& v) {
  OnnxValue out;
  const TypeProto* t = &v.type;
  if (t->kind == TypeProto::Kind::Optional && t->elem) out.is_optional = true, t = t->elem.get();
  if (t->kind == TypeProto::Kind::Sequence && t->elem) out.is_sequence = true, t = t->elem.get();
  TG_CHECK_AS(
      NotImplementedError, t->kind == TypeProto::Kind::Tensor, "onnx: input ", py_str_repr(v.name),
      " has a type that is not a tensor, a sequence or an optional (maps and sparse tensors are not supported)");
  out.dtype = dtype_parse(t->elem_type);
  if (t->shape) {
    out.has_shape = true;
    for (const TensorShapeDim& d : *t->shape) {
      if (!d.dim_param.empty())
        out.shape.emplace_back(d.dim_param);
      else
        out.shape.emplace_back(d.dim_value.value_or(-1));
    }
  }
  return out;
}

std::string value_repr(const Value& v) {
  if (const Tensor* t = std::get_if<Tensor>(&v)) return cat(shape_str(t->shape()), " ", t->dtype());
  if (const auto* s = std::get_if<std::vector<Tensor>>(&v)) return cat("sequence of ", s->size());
  return "None";
}

}  // namespace

struct OnnxRunner::Node {
  size_t num;
  std::string op, name, domain;
  std::vector<std::string> inputs, outputs;
  std::vector<AttributeProto> attrs;
  const std::vector<OpVersion>* impl = nullptr;
};

OnnxRunner::OnnxRunner(const ModelProto& model, OnnxRunnerOptions opts)
    : device_(nn::state::canonical_device(opts.device)), opset_version_(model.opset_version()) {
  auto src = std::make_shared<ModelSource>(model.source);
  source_ = src;
  for (const NodeProto& n : model.graph.node)
    if (n.domain == "ai.onnx.training" || n.domain == "ai.onnx.preview.training") is_training_ = true;
  initial_values_[""] = std::monostate{};
  for (const TensorProto& t : model.graph.initializer) initial_values_[t.name] = buffer_parse(t, *src, device_);
  for (const ValueInfoProto& v : model.graph.input) {
    if (initial_values_.count(v.name)) continue;
    graph_inputs_[v.name] = type_parse(v);
    graph_inputs_order_.push_back(v.name);
  }
  for (const ValueInfoProto& v : model.graph.output) graph_outputs_.push_back(v.name);
  const OpTable& table = op_table();
  for (size_t i = 0; i < model.graph.node.size(); i++) {
    const NodeProto& n = model.graph.node[i];
    auto node = std::make_shared<Node>();
    node->num = i;
    node->op = n.op_type;
    node->name = n.name.empty() ? cat("#", i) : n.name;
    node->domain = n.domain;
    node->inputs = n.input;
    node->outputs = n.output;
    node->attrs = n.attribute;
    auto it = table.find(n.op_type);
    TG_CHECK_AS(NotImplementedError, it != table.end(), "onnx: op ", py_str_repr(n.op_type),
                n.domain.empty() ? std::string() : cat(" of domain ", py_str_repr(n.domain)), " (node ",
                py_str_repr(node->name), ") is not supported");
    node->impl = &it->second;
    for (const AttributeProto& a : n.attribute) {
      bool ok = a.type != AttributeProto::Type::GRAPH && a.type != AttributeProto::Type::GRAPHS &&
                a.type != AttributeProto::Type::SPARSE_TENSOR && a.type != AttributeProto::Type::SPARSE_TENSORS &&
                a.type != AttributeProto::Type::TYPE_PROTO && a.type != AttributeProto::Type::TYPE_PROTOS;
      TG_CHECK_AS(NotImplementedError, ok, "onnx: ", n.op_type, " (node ", py_str_repr(node->name), "): attribute ",
                  py_str_repr(a.name), " with type ", attribute_type_name(a.type), " is not supported");
    }
    nodes_.push_back(std::move(node));
  }
}

Value OnnxRunner::parse_input(const std::string& name, const Value& v, const OnnxValue& spec) {
  if (spec.is_optional && std::holds_alternative<std::monostate>(v)) return v;
  if (spec.is_sequence) {
    const auto* seq = std::get_if<std::vector<Tensor>>(&v);
    TG_CHECK(seq != nullptr, "onnx: input ", py_str_repr(name), " received ", value_repr(v), ", expected a sequence");
    for (const Tensor& t : *seq)
      TG_CHECK(t.shape() == seq->front().shape(), "onnx: shapes for ", py_str_repr(name),
               " sequence must be homogeneous, got ", shape_str(seq->front().shape()), " and ", shape_str(t.shape()));
    return v;
  }
  const auto* tp = std::get_if<Tensor>(&v);
  TG_CHECK(tp != nullptr, "onnx: input ", py_str_repr(name), " received ", value_repr(v), ", expected a tensor");
  Tensor t = *tp;
  if (spec.has_shape) {
    Shape shape = t.shape();
    TG_CHECK(shape.size() == spec.shape.size(), "onnx: ", py_str_repr(name), " has ", shape.size(), " dims ",
             shape_str(shape), ", expected ", spec.shape.size());
    for (size_t d = 0; d < shape.size(); d++) {
      int64_t want;
      if (const auto* sym = std::get_if<std::string>(&spec.shape[d]))
        want = variable_dims_.try_emplace(*sym, shape[d]).first->second;
      else
        want = std::get<int64_t>(spec.shape[d]);
      if (want < 0) continue;  // an unknown dim
      TG_CHECK(shape[d] == want, "onnx: ", py_str_repr(name), " has mismatch on dim=", d, ". Expected ", want,
               ", received ", shape[d], ".");
    }
  }
  TG_CHECK(t.dtype() == spec.dtype, "onnx: input ", py_str_repr(name), " has dtype ", t.dtype(),
           ", the model declares ", spec.dtype);
  if (t.device() != device_) t = t.to(device_);
  return t;
}

std::map<std::string, Value> OnnxRunner::run(const std::map<std::string, Value>& inputs, int debug) {
  if (debug < 0) debug = static_cast<int>(DEBUGONNX.value());
  std::map<std::string, Value> values = initial_values_;
  variable_dims_.clear();
  for (const std::string& name : graph_inputs_order_) {
    auto it = inputs.find(name);
    TG_CHECK(it != inputs.end(), "onnx: please provide input data for ", py_str_repr(name));
    values[name] = parse_input(name, it->second, graph_inputs_.at(name));
  }
  Tensor::train mode(is_training_);
  for (const auto& node : nodes_) {
    OpContext c;
    c.op = node->op;
    c.node = node->name;
    c.opset = opset_version_;
    c.device = device_;
    c.num_outputs = node->outputs.size();
    c.source = source_.get();
    c.values = &values;
    for (const std::string& in : node->inputs) {
      auto it = values.find(in);
      TG_CHECK(it != values.end(), "onnx: ", node->op, " (node ", py_str_repr(node->name), ") reads ", py_str_repr(in),
               ", which no input, initializer or earlier node gives");
      c.inputs.push_back(it->second);
    }
    for (const AttributeProto& a : node->attrs) c.attrs[a.name] = &a;
    const OpVersion* impl = nullptr;
    for (const OpVersion& v : *node->impl)
      if (v.since <= opset_version_ || impl == nullptr) impl = &v;  // the newest one not above the model's opset
    if (debug >= 1) std::cout << node->num << ": op '" << node->op << "' (" << node->name << ")\n";
    if (debug >= 2)
      for (size_t i = 0; i < c.inputs.size(); i++)
        std::cout << "\t\t" << node->inputs[i] << " - " << value_repr(c.inputs[i]) << "\n";
    std::vector<Value> out = impl->fn(c);
    TG_CHECK(out.size() >= node->outputs.size(), "onnx: ", node->op, " (node ", py_str_repr(node->name), ") gives ",
             out.size(), " outputs, the model names ", node->outputs.size());
    for (size_t i = 0; i < node->outputs.size(); i++) {
      if (debug >= 2) std::cout << "\toutput " << node->outputs[i] << " - " << value_repr(out[i]) << "\n";
      if (!node->outputs[i].empty()) values[node->outputs[i]] = std::move(out[i]);
    }
  }
  std::map<std::string, Value> result;
  for (const std::string& name : graph_outputs_) {
    auto it = values.find(name);
    TG_CHECK(it != values.end(), "onnx: the graph's output ", py_str_repr(name), " is never computed");
    result[name] = it->second;
  }
  return result;
}

std::map<std::string, Tensor> OnnxRunner::operator()(const std::map<std::string, Tensor>& inputs, int debug) {
  std::map<std::string, Value> in(inputs.begin(), inputs.end());
  std::map<std::string, Tensor> out;
  for (auto& [name, v] : run(in, debug)) out.emplace(name, as_tensor(v, cat("output ", py_str_repr(name))));
  return out;
}

}  // namespace tg::onnx
