#pragma once
// An ONNX model file read with a protobuf wire-format reader of our own (tinygrad's newest nn/onnx.py does the same):
// only the messages and fields a runner needs (onnx.proto3's ModelProto, GraphProto, NodeProto, AttributeProto,
// TensorProto, ValueInfoProto, TypeProto), no generated code and no libprotobuf to link.
//
//   onnx::ModelProto m = onnx::onnx_load("model.onnx");   // the file stays mapped; big initializers are not copied
//   for (const onnx::NodeProto& n : m.graph.node) ...
//
// The wire format: each field is a varint key (field number << 3 | wire type) then a varint, 8 or 4 bytes, or a
// varint length and that many bytes (strings, bytes, nested messages, packed repeated numbers). Unknown fields are
// skipped. Bad input (truncated, a length past the end, a varint over 10 bytes, a wire type a field can't have,
// nesting deeper than 64) is a ValueError naming the message, the field and the byte offset.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tg::onnx {

// TensorProto.DataType
enum class DataType : int32_t {
  UNDEFINED = 0,
  FLOAT = 1,
  UINT8 = 2,
  INT8 = 3,
  UINT16 = 4,
  INT16 = 5,
  INT32 = 6,
  INT64 = 7,
  STRING = 8,
  BOOL = 9,
  FLOAT16 = 10,
  DOUBLE = 11,
  UINT32 = 12,
  UINT64 = 13,
  COMPLEX64 = 14,
  COMPLEX128 = 15,
  BFLOAT16 = 16,
  FLOAT8E4M3FN = 17,
  FLOAT8E4M3FNUZ = 18,
  FLOAT8E5M2 = 19,
  FLOAT8E5M2FNUZ = 20,
  UINT4 = 21,
  INT4 = 22,
};
const char* data_type_name(int32_t t);  // "FLOAT", "INT64"; "<unknown 99>" for ids past the table

// The bytes a model was read from: a mapped file (`path` set) or a copy of bytes given in memory. Tensors' raw_data
// are ranges of it, so a model's weights are read where they lie.
struct ModelSource {
  std::string path;  // empty for bytes
  std::span<const uint8_t> bytes;
  std::shared_ptr<const void> keep;  // the mapping or the copy
};

struct ByteRange {
  uint64_t offset = 0, size = 0;
};

struct TensorProto {
  std::string name;
  int32_t data_type = 0;
  std::vector<int64_t> dims;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;  // int32, int16, int8, uint16, uint8, bool, float16 and bfloat16 bits
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;  // uint32 and uint64
  std::vector<std::string> string_data;
  std::optional<ByteRange> raw_data;                               // into the model's source
  std::vector<std::pair<std::string, std::string>> external_data;  // location, offset, length, checksum
  int32_t data_location = 0;                                       // 1: EXTERNAL
};

struct TensorShapeDim {
  std::optional<int64_t> dim_value;
  std::string dim_param;  // a named (symbolic) dim; both empty: unknown
};

// TypeProto: a tensor, a sequence of or an optional of one (map and sparse types are recorded as unsupported)
struct TypeProto {
  enum class Kind : uint8_t { None, Tensor, Sequence, Optional, Unsupported };
  Kind kind = Kind::None;
  int32_t elem_type = 0;                             // Tensor
  std::optional<std::vector<TensorShapeDim>> shape;  // Tensor: nullopt when the shape is not given
  std::shared_ptr<TypeProto> elem;                   // Sequence, Optional
};

struct ValueInfoProto {
  std::string name;
  TypeProto type;
};

struct GraphProto;

struct AttributeProto {
  enum class Type : int32_t {
    UNDEFINED = 0,
    FLOAT = 1,
    INT = 2,
    STRING = 3,
    TENSOR = 4,
    GRAPH = 5,
    FLOATS = 6,
    INTS = 7,
    STRINGS = 8,
    TENSORS = 9,
    GRAPHS = 10,
    SPARSE_TENSOR = 11,
    SPARSE_TENSORS = 12,
    TYPE_PROTO = 13,
    TYPE_PROTOS = 14,
  };
  std::string name;
  Type type = Type::UNDEFINED;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::optional<TensorProto> t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<TensorProto> tensors;
  bool has_graph = false;  // subgraphs (If, Loop, Scan) are skipped: no op here runs one
};
const char* attribute_type_name(AttributeProto::Type t);

struct NodeProto {
  std::string name, op_type, domain;
  std::vector<std::string> input, output;
  std::vector<AttributeProto> attribute;
};

struct GraphProto {
  std::string name;
  std::vector<NodeProto> node;
  std::vector<TensorProto> initializer;
  std::vector<ValueInfoProto> input, output, value_info;
};

struct OperatorSetId {
  std::string domain;
  int64_t version = 0;
};

struct ModelProto {
  int64_t ir_version = 0;
  std::string producer_name, producer_version, domain;
  int64_t model_version = 0;
  std::vector<OperatorSetId> opset_import;
  GraphProto graph;
  ModelSource source;  // the bytes the raw_data ranges point into
  // the version of the default domain ("" or "ai.onnx") the model imports
  int64_t opset_version() const;
};

// Reads a model. A path is mapped; bytes are copied. Bad input: ValueError naming the field and byte offset.
ModelProto onnx_load(const std::string& path);
ModelProto onnx_load_bytes(std::span<const uint8_t> bytes);
// One TensorProto on its own (the backend suite's input_0.pb / output_0.pb files), with its source
std::pair<TensorProto, ModelSource> load_tensor_proto(const std::string& path);

}  // namespace tg::onnx
