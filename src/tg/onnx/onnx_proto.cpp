// ONNX's messages read from the protobuf wire format (see onnx_proto.h)
#include "tg/onnx/onnx_proto.h"

#include <cstring>

#include "tg/helpers/helpers.h"
#include "tg/nn/mapped_file.h"

namespace tg::onnx {

const char* data_type_name(int32_t t) {
  static const char* const names[] = {"UNDEFINED",      "FLOAT",    "UINT8",        "INT8",           "UINT16",
                                      "INT16",          "INT32",    "INT64",        "STRING",         "BOOL",
                                      "FLOAT16",        "DOUBLE",   "UINT32",       "UINT64",         "COMPLEX64",
                                      "COMPLEX128",     "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                      "FLOAT8E5M2FNUZ", "UINT4",    "INT4"};
  if (t >= 0 && t < static_cast<int32_t>(std::size(names))) return names[t];
  return "<unknown>";
}

const char* attribute_type_name(AttributeProto::Type t) {
  static const char* const names[] = {
      "UNDEFINED", "FLOAT",   "INT",    "STRING",        "TENSOR",         "GRAPH",      "FLOATS",     "INTS",
      "STRINGS",   "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
  auto i = static_cast<int32_t>(t);
  if (i >= 0 && i < static_cast<int32_t>(std::size(names))) return names[i];
  return "<unknown>";
}

int64_t ModelProto::opset_version() const {
  for (const OperatorSetId& o : opset_import)
    if (o.domain.empty() || o.domain == "ai.onnx") return o.version;
  return opset_import.empty() ? 0 : opset_import.front().version;
}

namespace {

enum Wire : uint32_t { VARINT = 0, I64 = 1, LEN = 2, I32 = 5 };
constexpr int kMaxDepth = 64;

// A cursor over one message's bytes [pos, end) of the whole buffer (offsets are the file's)
struct Reader {
  const uint8_t* base;
  uint64_t pos, end;
  const char* msg;  // the message being read, for errors
  int depth;

  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(cat("onnx: bad ", msg, " at byte offset ", pos, ": ", what));
  }
  bool done() const { return pos >= end; }
  // the next field's key, or false at the message's end
  bool next(uint32_t& field, uint32_t& wire) {
    if (done()) return false;
    uint64_t key = varint();
    field = static_cast<uint32_t>(key >> 3), wire = static_cast<uint32_t>(key & 7);
    return true;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos >= end) fail("truncated varint");
      uint8_t b = base[pos++];
      if (shift == 63 && (b & 0x7e) != 0) fail("varint overflows 64 bits");
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail("varint longer than 10 bytes");
  }
  template <class T>
  T fixed() {
    if (end - pos < sizeof(T)) fail(cat("truncated ", sizeof(T), "-byte value"));
    T v;
    std::memcpy(&v, base + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  // a length-delimited field's range
  ByteRange len() {
    uint64_t n = varint();
    if (n > end - pos) fail(cat("a length of ", n, " runs past the end (", end - pos, " bytes left)"));
    ByteRange r{pos, n};
    pos += n;
    return r;
  }
  Reader sub(const char* name) {
    if (depth + 1 > kMaxDepth) fail(cat("messages nested deeper than ", kMaxDepth));
    ByteRange r = len();
    return Reader{base, r.offset, r.offset + r.size, name, depth + 1};
  }
  std::string str() {
    ByteRange r = len();
    return std::string(reinterpret_cast<const char*>(base + r.offset), r.size);
  }
  void skip(uint32_t wire) {
    switch (wire) {
      case VARINT: varint(); break;
      case I64: fixed<uint64_t>(); break;
      case I32: fixed<uint32_t>(); break;
      case LEN: len(); break;
      default: fail(cat("wire type ", wire, " (groups are not in ONNX)"));
    }
  }
  void expect(uint32_t wire, uint32_t want, uint32_t field) const {
    if (wire != want) fail(cat("field ", field, " has wire type ", wire, ", expected ", want));
  }
  // a repeated number field, packed (one LEN) or one element per key
  template <class T, class Read>
  void repeated(uint32_t wire, uint32_t scalar_wire, uint32_t field, std::vector<T>& out, Read read) {
    if (wire == LEN) {
      ByteRange r = len();
      Reader inner{base, r.offset, r.offset + r.size, msg, depth};
      while (!inner.done()) out.push_back(read(inner));
    } else {
      expect(wire, scalar_wire, field);
      out.push_back(read(*this));
    }
  }
  void ints(uint32_t wire, uint32_t field, std::vector<int64_t>& out) {
    repeated(wire, VARINT, field, out, [](Reader& r) { return static_cast<int64_t>(r.varint()); });
  }
  int64_t int64(uint32_t wire, uint32_t field) {
    expect(wire, VARINT, field);
    return static_cast<int64_t>(varint());
  }
};

// each message's reader: a loop over its fields (nesting is bounded by kMaxDepth)
TensorProto read_tensor(Reader r);

std::pair<std::string, std::string> read_entry(Reader r) {
  std::pair<std::string, std::string> kv;
  for (uint32_t field = 0, wire = 0; r.next(field, wire);) {
    if (field == 1 && wire == LEN)
      kv.first = r.str();
    else if (field == 2 && wire == LEN)
      kv.second = r.str();
    else
      r.skip(wire);
  }
  return kv;
}

TensorProto read_tensor(Reader r) {
  TensorProto t;
  for (uint32_t field = 0, wire = 0; r.next(field, wire);) {
    switch (field) {
      case 1: r.ints(wire, field, t.dims); break;
      case 2: t.data_type = static_cast<int32_t>(r.int64(wire, field)); break;
      case 4: r.repeated(wire, I32, field, t.float_data, [](Reader& x) { return x.fixed<float>(); }); break;
      case 5:
        r.repeated(wire, VARINT, field, t.int32_data, [](Reader& x) { return static_cast<int32_t>(x.varint()); });
        break;
      case 6: r.expect(wire, LEN, field), t.string_data.push_back(r.str()); break;
      case 7: r.ints(wire, field, t.int64_data); break;
      case 8: r.expect(wire, LEN, field), t.name = r.str(); break;
      case 9: r.expect(wire, LEN, field), t.raw_data = r.len(); break;
      case 10: r.repeated(wire, I64, field, t.double_data, [](Reader& x) { return x.fixed<double>(); }); break;
      case 11: r.repeated(wire, VARINT, field, t.uint64_data, [](Reader& x) { return x.varint(); }); break;
      case 13:
        r.expect(wire, LEN, field), t.external_data.push_back(read_entry(r.sub("StringStringEntryProto")));
        break;
      case 14: t.data_location = static_cast<int32_t>(r.int64(wire, field)); break;
      default: r.skip(wire);
    }
  }
  return t;
}

// TypeProto nests (a sequence of optionals of tensors): read iteratively down the chain of element types
TypeProto read_type(Reader r) {
  TypeProto out;
  TypeProto* cur = &out;
  std::optional<Reader> next = r;
  while (next) {
    Reader rr = *next;
    next.reset();
    for (uint32_t field = 0, wire = 0; rr.next(field, wire);) {
      if ((field == 1 || field == 4 || field == 9) && wire == LEN) {
        Reader body = rr.sub("TypeProto");
        if (field == 1) {  // Tensor { elem_type = 1; shape = 2 }
          cur->kind = TypeProto::Kind::Tensor;
          for (uint32_t f = 0, w = 0; body.next(f, w);) {
            if (f == 1)
              cur->elem_type = static_cast<int32_t>(body.int64(w, f));
            else if (f == 2 && w == LEN) {
              Reader shape = body.sub("TensorShapeProto");
              cur->shape.emplace();
              for (uint32_t sf = 0, sw = 0; shape.next(sf, sw);) {
                if (sf != 1 || sw != LEN) {
                  shape.skip(sw);
                  continue;
                }
                Reader dim = shape.sub("TensorShapeProto.Dimension");
                TensorShapeDim d;
                for (uint32_t df = 0, dw = 0; dim.next(df, dw);) {
                  if (df == 1)
                    d.dim_value = dim.int64(dw, df);
                  else if (df == 2 && dw == LEN)
                    d.dim_param = dim.str();
                  else
                    dim.skip(dw);
                }
                cur->shape->push_back(std::move(d));
              }
            } else
              body.skip(w);
          }
        } else {  // Sequence / Optional { elem_type = 1 }
          cur->kind = field == 4 ? TypeProto::Kind::Sequence : TypeProto::Kind::Optional;
          cur->elem = std::make_shared<TypeProto>();
          for (uint32_t f = 0, w = 0; body.next(f, w);) {
            if (f == 1 && w == LEN)
              next = body.sub("TypeProto");
            else
              body.skip(w);
          }
        }
      } else if (field == 5 || field == 8) {  // map_type, sparse_tensor_type
        cur->kind = TypeProto::Kind::Unsupported;
        rr.skip(wire);
      } else
        rr.skip(wire);
    }
    if (next) cur = cur->elem.get();
  }
  return out;
}

ValueInfoProto read_value_info(Reader r) {
  ValueInfoProto v;
  for (uint32_t field = 0, wire = 0; r.next(field, wire);) {
    if (field == 1 && wire == LEN)
      v.name = r.str();
    else if (field == 2 && wire == LEN)
      v.type = read_type(r.sub("TypeProto"));
    else
      r.skip(wire);
  }
  return v;
}

AttributeProto read_attribute(Reader r) {
  AttributeProto a;
  for (uint32_t field = 0, wire = 0; r.next(field, wire);) {
    switch (field) {
      case 1: r.expect(wire, LEN, field), a.name = r.str(); break;
      case 2: r.expect(wire, I32, field), a.f = r.fixed<float>(); break;
      case 3: a.i = r.int64(wire, field); break;
      case 4: r.expect(wire, LEN, field), a.s = r.str(); break;
      case 5: r.expect(wire, LEN, field), a.t = read_tensor(r.sub("TensorProto")); break;
      case 6: r.expect(wire, LEN, field), r.len(), a.has_graph = true; break;
      case 7: r.repeated(wire, I32, field, a.floats, [](Reader& x) { return x.fixed<float>(); }); break;
      case 8: r.ints(wire, field, a.ints); break;
      case 9: r.expect(wire, LEN, field), a.strings.push_back(r.str()); break;
      case 10: r.expect(wire, LEN, field), a.tensors.push_back(read_tensor(r.sub("TensorProto"))); break;
      case 11: r.expect(wire, LEN, field), r.len(), a.has_graph = true; break;
      case 20: a.type = static_cast<AttributeProto::Type>(r.int64(wire, field)); break;
      default: r.skip(wire);
    }
  }
  return a;
}

NodeProto read_node(Reader r) {
  NodeProto n;
  for (uint32_t field = 0, wire = 0; r.next(field, wire);) {
    if (wire == LEN && field == 1)
      n.input.push_back(r.str());
    else if (wire == LEN && field == 2)
      n.output.push_back(r.str());
    else if (wire == LEN && field == 3)
      n.name = r.str();
    else if (wire == LEN && field == 4)
      n.op_type = r.str();
    else if (wire == LEN && field == 5)
      n.attribute.push_back(read_attribute(r.sub("AttributeProto")));
    else if (wire == LEN && field == 7)
      n.domain = r.str();
    else
      r.skip(wire);
  }
  return n;
}

GraphProto read_graph(Reader r) {
  GraphProto g;
  for (uint32_t field = 0, wire = 0; r.next(field, wire);) {
    if (wire == LEN && field == 1)
      g.node.push_back(read_node(r.sub("NodeProto")));
    else if (wire == LEN && field == 2)
      g.name = r.str();
    else if (wire == LEN && field == 5)
      g.initializer.push_back(read_tensor(r.sub("TensorProto")));
    else if (wire == LEN && field == 11)
      g.input.push_back(read_value_info(r.sub("ValueInfoProto")));
    else if (wire == LEN && field == 12)
      g.output.push_back(read_value_info(r.sub("ValueInfoProto")));
    else if (wire == LEN && field == 13)
      g.value_info.push_back(read_value_info(r.sub("ValueInfoProto")));
    else
      r.skip(wire);
  }
  return g;
}

ModelProto read_model(ModelSource src) {
  ModelProto m;
  Reader r{src.bytes.data(), 0, src.bytes.size(), "ModelProto", 0};
  bool has_graph = false;
  for (uint32_t field = 0, wire = 0; r.next(field, wire);) {
    if (field == 0) r.fail("field number 0 (not a protobuf message)");
    if (field == 1)
      m.ir_version = r.int64(wire, field);
    else if (field == 2 && wire == LEN)
      m.producer_name = r.str();
    else if (field == 3 && wire == LEN)
      m.producer_version = r.str();
    else if (field == 4 && wire == LEN)
      m.domain = r.str();
    else if (field == 5)
      m.model_version = r.int64(wire, field);
    else if (field == 7 && wire == LEN)
      m.graph = read_graph(r.sub("GraphProto")), has_graph = true;
    else if (field == 8 && wire == LEN) {
      Reader o = r.sub("OperatorSetIdProto");
      OperatorSetId id;
      for (uint32_t f = 0, w = 0; o.next(f, w);) {
        if (f == 1 && w == LEN)
          id.domain = o.str();
        else if (f == 2)
          id.version = o.int64(w, f);
        else
          o.skip(w);
      }
      m.opset_import.push_back(std::move(id));
    } else
      r.skip(wire);
  }
  std::string where = src.path.empty() ? std::string("<bytes>") : py_str_repr(src.path);
  TG_CHECK_AS(ValueError, has_graph, "onnx: ", where, " (", src.bytes.size(),
              " bytes) has no graph: not an ONNX model");
  m.source = std::move(src);
  return m;
}

ModelSource map_file(const std::string& path) {
  auto file = std::make_shared<nn::MappedFile>(path, "onnx_load");
  return ModelSource{path, file->bytes(), file};
}

}  // namespace

ModelProto onnx_load(const std::string& path) { return read_model(map_file(path)); }

ModelProto onnx_load_bytes(std::span<const uint8_t> bytes) {
  auto copy = std::make_shared<std::vector<uint8_t>>(bytes.begin(), bytes.end());
  return read_model(ModelSource{"", std::span<const uint8_t>(copy->data(), copy->size()), copy});
}

std::pair<TensorProto, ModelSource> load_tensor_proto(const std::string& path) {
  ModelSource src = map_file(path);
  TensorProto t = read_tensor(Reader{src.bytes.data(), 0, src.bytes.size(), "TensorProto", 0});
  return {std::move(t), std::move(src)};
}

}  // namespace tg::onnx
