#include "tg/nn/gguf.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>

#include "tg/helpers/utf8.h"
#include "tg/nn/state_internal.h"
#include "tg/runtime/buffers.h"
#include "tg/runtime/device.h"

namespace tg::nn {

// *** types ***

std::optional<GGMLTypeTraits> ggml_type_traits(uint32_t type) {
  switch (static_cast<GGMLType>(type)) {
    case GGMLType::F32: return GGMLTypeTraits{"f32", 1, 4};
    case GGMLType::F16: return GGMLTypeTraits{"f16", 1, 2};
    case GGMLType::BF16: return GGMLTypeTraits{"bf16", 1, 2};
    case GGMLType::F64: return GGMLTypeTraits{"f64", 1, 8};
    case GGMLType::I8: return GGMLTypeTraits{"i8", 1, 1};
    case GGMLType::I16: return GGMLTypeTraits{"i16", 1, 2};
    case GGMLType::I32: return GGMLTypeTraits{"i32", 1, 4};
    case GGMLType::I64: return GGMLTypeTraits{"i64", 1, 8};
    case GGMLType::Q4_0: return GGMLTypeTraits{"q4_0", 32, 18};
    case GGMLType::Q4_1: return GGMLTypeTraits{"q4_1", 32, 20};
    case GGMLType::Q5_0: return GGMLTypeTraits{"q5_0", 32, 22};
    case GGMLType::Q5_1: return GGMLTypeTraits{"q5_1", 32, 24};
    case GGMLType::Q8_0: return GGMLTypeTraits{"q8_0", 32, 34};
    case GGMLType::Q2_K: return GGMLTypeTraits{"q2_K", 256, 84};
    case GGMLType::Q3_K: return GGMLTypeTraits{"q3_K", 256, 110};
    case GGMLType::Q4_K: return GGMLTypeTraits{"q4_K", 256, 144};
    case GGMLType::Q5_K: return GGMLTypeTraits{"q5_K", 256, 176};
    case GGMLType::Q6_K: return GGMLTypeTraits{"q6_K", 256, 210};
    case GGMLType::IQ4_NL: return GGMLTypeTraits{"iq4_nl", 32, 18};
    case GGMLType::IQ4_XS: return GGMLTypeTraits{"iq4_xs", 256, 136};
    default: return std::nullopt;
  }
}

static std::optional<DType> plain_dtype(uint32_t type) {
  switch (static_cast<GGMLType>(type)) {
    case GGMLType::F32: return dtypes::float32;
    case GGMLType::F16: return dtypes::float16;
    case GGMLType::BF16: return dtypes::bfloat16;
    case GGMLType::F64: return dtypes::float64;
    case GGMLType::I8: return dtypes::int8;
    case GGMLType::I16: return dtypes::int16;
    case GGMLType::I32: return dtypes::int32;
    case GGMLType::I64: return dtypes::int64;
    default: return std::nullopt;
  }
}

// *** values ***

int64_t GGUFValue::as_int() const {
  if (const auto* u = std::get_if<uint64_t>(&v)) {
    TG_CHECK_AS(ValueError, *u <= uint64_t(INT64_MAX), "GGUF value ", *u, " doesn't fit an int64");
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  throw ValueError(cat("GGUF value of type ", static_cast<uint32_t>(type), " is not an integer"));
}
double GGUFValue::as_double() const {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return static_cast<double>(as_int());
}
bool GGUFValue::as_bool() const {
  const auto* b = std::get_if<bool>(&v);
  TG_CHECK_AS(ValueError, b != nullptr, "GGUF value of type ", static_cast<uint32_t>(type), " is not a bool");
  return *b;
}
const std::string& GGUFValue::as_string() const {
  const auto* s = std::get_if<std::string>(&v);
  TG_CHECK_AS(ValueError, s != nullptr, "GGUF value of type ", static_cast<uint32_t>(type), " is not a string");
  return *s;
}
const std::vector<GGUFValue>& GGUFValue::as_array() const {
  const auto* a = std::get_if<std::vector<GGUFValue>>(&v);
  TG_CHECK_AS(ValueError, a != nullptr, "GGUF value of type ", static_cast<uint32_t>(type), " is not an array");
  return *a;
}

const GGUFValue* gguf_find(const GGUFMetadata& kv, const std::string& key) {
  for (const auto& [k, v] : kv)
    if (k == key) return &v;
  return nullptr;
}

int64_t GGUFTensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}
Shape GGUFTensorInfo::shape() const {
  Shape s;
  for (auto it = ne.rbegin(); it != ne.rend(); ++it) s.push_back(*it);
  return s;
}

// *** the header ***

namespace {

// a bounds-checked little-endian reader over the file's bytes; every error names the field and its offset
struct Reader {
  std::span<const uint8_t> b;
  const std::string& what;
  uint64_t pos = 0;

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw ValueError(cat("gguf_load: ", what, ": ", field, " at byte ", pos, ": ", why));
  }
  void need(uint64_t n, const std::string& field) const {
    if (n > b.size() - pos)
      fail(field, cat("needs ", n, " bytes, the file has ", b.size() - pos, " left (truncated?)"));
  }
  template <class T>
  T get(const std::string& field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, b.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  std::string str(const std::string& field) {
    auto n = get<uint64_t>(field + " (string length)");
    need(n, field);
    std::string s(reinterpret_cast<const char*>(b.data() + pos), n);
    if (!is_valid_utf8(s)) fail(field, "the string is not valid UTF-8");
    pos += n;
    return s;
  }
  GGUFValue value(GGUFValue::Type t, const std::string& field, int depth) {
    using T = GGUFValue::Type;
    GGUFValue v;
    v.type = t;
    switch (t) {
      case T::UINT8: v.v = uint64_t(get<uint8_t>(field)); break;
      case T::INT8: v.v = int64_t(get<int8_t>(field)); break;
      case T::UINT16: v.v = uint64_t(get<uint16_t>(field)); break;
      case T::INT16: v.v = int64_t(get<int16_t>(field)); break;
      case T::UINT32: v.v = uint64_t(get<uint32_t>(field)); break;
      case T::INT32: v.v = int64_t(get<int32_t>(field)); break;
      case T::UINT64: v.v = get<uint64_t>(field); break;
      case T::INT64: v.v = get<int64_t>(field); break;
      case T::FLOAT32: v.v = double(get<float>(field)); break;
      case T::FLOAT64: v.v = get<double>(field); break;
      case T::BOOL: {
        auto x = get<uint8_t>(field);
        if (x > 1) pos--, fail(field, cat("a bool must be 0 or 1, got ", int(x)));
        v.v = x == 1;
        break;
      }
      case T::STRING: v.v = str(field); break;
      case T::ARRAY: {
        if (depth >= 8) fail(field, "arrays nested more than 8 deep");
        auto et = get<uint32_t>(field + " (array type)");
        if (et > 12) pos -= 4, fail(field, cat("unknown array element type ", et));
        auto n = get<uint64_t>(field + " (array length)");
        // each element takes at least a byte (a string 8): a count the rest of the file can't hold is corrupt, and
        // nothing is reserved for it
        uint64_t min_size = et == uint32_t(T::STRING) || et == uint32_t(T::ARRAY) ? 8 : elem_size(T(et));
        if (n > (b.size() - pos) / min_size)
          pos -= 8,
              fail(field, cat("an array of ", n, " elements can't fit in the ", b.size() - pos - 8, " bytes left"));
        std::vector<GGUFValue> xs;
        xs.reserve(n);
        for (uint64_t i = 0; i < n; i++) xs.push_back(value(T(et), field, depth + 1));
        v.elem_type = T(et);
        v.v = std::move(xs);
        break;
      }
      default: fail(field, cat("unknown value type ", uint32_t(t)));
    }
    return v;
  }
  static uint64_t elem_size(GGUFValue::Type t) {
    using T = GGUFValue::Type;
    switch (t) {
      case T::UINT16:
      case T::INT16: return 2;
      case T::UINT32:
      case T::INT32:
      case T::FLOAT32: return 4;
      case T::UINT64:
      case T::INT64:
      case T::FLOAT64: return 8;
      default: return 1;
    }
  }
};

}  // namespace

GGUFHeader gguf_parse_header(std::span<const uint8_t> file, const std::string& what) {
  Reader r{file, what};
  GGUFHeader h;
  auto magic = r.get<uint32_t>("magic");
  if (magic != 0x46554747u) r.pos = 0, r.fail("magic", cat("not a GGUF file (magic 0x", std::hex, magic, ")"));
  h.version = r.get<uint32_t>("version");
  if (h.version != 2 && h.version != 3)
    r.pos -= 4, r.fail("version", cat("version ", h.version, " is not supported (2 and 3 are)"));
  auto n_tensors = r.get<uint64_t>("n_tensors");
  auto n_kv = r.get<uint64_t>("n_kv");
  // a key-value pair takes at least 8 + 4 + 1 bytes, a tensor info 8 + 4 + 8 + 4 + 8
  if (n_kv > file.size() / 13) r.pos -= 8, r.fail("n_kv", cat(n_kv, " pairs can't fit in ", file.size(), " bytes"));
  if (n_tensors > file.size() / 32)
    r.pos -= 16, r.fail("n_tensors", cat(n_tensors, " tensors can't fit in ", file.size(), " bytes"));
  for (uint64_t i = 0; i < n_kv; i++) {
    std::string key = r.str(cat("key ", i));
    auto t = r.get<uint32_t>(cat("type of ", py_str_repr(key)));
    if (t > 12) r.pos -= 4, r.fail(cat("type of ", py_str_repr(key)), cat("unknown value type ", t));
    GGUFValue v = r.value(GGUFValue::Type(t), py_str_repr(key), 0);
    if (gguf_find(h.kv, key) != nullptr) r.fail(py_str_repr(key), "the key appears twice");
    h.kv.emplace_back(std::move(key), std::move(v));
  }
  if (const GGUFValue* a = gguf_find(h.kv, "general.alignment")) {
    int64_t al = std::holds_alternative<uint64_t>(a->v) || std::holds_alternative<int64_t>(a->v) ? a->as_int() : 0;
    TG_CHECK_AS(ValueError, al > 0 && (al & (al - 1)) == 0 && al <= (1 << 20), "gguf_load: ", what,
                ": general.alignment must be a power of two, got ", al);
    h.alignment = static_cast<uint64_t>(al);
  }
  for (uint64_t i = 0; i < n_tensors; i++) {
    GGUFTensorInfo ti;
    ti.name = r.str(cat("name of tensor ", i));
    std::string f = cat("tensor ", py_str_repr(ti.name));
    auto nd = r.get<uint32_t>(f + " n_dims");
    if (nd > 4) r.pos -= 4, r.fail(f + " n_dims", cat(nd, " dims (ggml has at most 4)"));
    int64_t n = 1;
    for (uint32_t d = 0; d < nd; d++) {
      auto x = r.get<uint64_t>(f + " dims");
      if (x > uint64_t(INT64_MAX) || (x != 0 && n > INT64_MAX / static_cast<int64_t>(x)))
        r.pos -= 8, r.fail(f + " dims", cat("dim ", x, " makes the element count overflow"));
      ti.ne.push_back(static_cast<int64_t>(x));
      n *= static_cast<int64_t>(x);
    }
    ti.type = r.get<uint32_t>(f + " type");
    auto tr = ggml_type_traits(ti.type);
    if (!tr) r.pos -= 4, r.fail(f + " type", cat("unknown ggml type ", ti.type));
    if (!ti.ne.empty() && ti.ne[0] % tr->block_size != 0)
      r.fail(f, cat("its rows of ", ti.ne[0], " elements are not whole ", tr->name, " blocks of ", tr->block_size));
    if (n / tr->block_size > INT64_MAX / tr->type_size) r.fail(f, cat(n, " elements overflow the byte size"));
    ti.nbytes = n / tr->block_size * tr->type_size;
    ti.offset = r.get<uint64_t>(f + " offset");
    if (ti.offset % h.alignment != 0)
      r.pos -= 8, r.fail(f + " offset", cat(ti.offset, " is not a multiple of the alignment ", h.alignment));
    h.tensors.push_back(std::move(ti));
  }
  h.data_start = (r.pos + h.alignment - 1) / h.alignment * h.alignment;
  if (!h.tensors.empty() && h.data_start > file.size())
    r.fail("data",
           cat("the data section starts at ", h.data_start, ", past the end of the ", file.size(), "-byte file"));
  uint64_t data_size = file.size() - std::min<uint64_t>(h.data_start, file.size());
  for (const GGUFTensorInfo& ti : h.tensors)
    if (ti.offset > data_size || static_cast<uint64_t>(ti.nbytes) > data_size - ti.offset)
      throw ValueError(cat("gguf_load: ", what, ": tensor ", py_str_repr(ti.name), " at data offset ", ti.offset,
                           " with ", ti.nbytes, " bytes runs past the end of the data (", data_size, " bytes)"));
  return h;
}

// *** dequantization: what ggml's dequantize_row_* compute, as lazy tensor ops on the blocks' bytes ***
//
// Each type's block is laid out as axes (Q4_0: 2 halves x 16 bytes), and every value is computed elementwise from
// views of the packed bytes broadcast over that layout, picking a byte's bit field by selects on tiny index tensors.
// No computed value is ever broadcast or concatenated: the scheduler would store those (it realizes before an
// expand), so written this way the whole dequantization fuses into the kernel that reads the weight.

namespace {

Tensor as_f32(const Tensor& x) { return x.cast(dtypes::float32); }
Tensor as_i32(const Tensor& x) { return x.cast(dtypes::int32); }

// the index (0 or 1) along axis `axis` (of size 2) of `shape`, as a bool: a padded constant the codegen folds once
// the axis is unrolled (a select on it becomes the branch of that lane)
Tensor axis_bit(const Shape& shape, size_t axis, const std::string& device) {
  Shape one(shape.size(), 1);
  Mask pad(shape.size(), {0, 0});
  pad[axis] = {1, 0};
  return Tensor::full(one, true, {.device = device, .dtype = dtypes::bool_}).pad(pad).expand(shape);
}

struct Blocks {
  Tensor b;                   // (nb, type_size) uint8
  int64_t nb;                 // blocks
  std::vector<int64_t> dims;  // the layout of one block's values

  // (nb, shape..., last): a layout of the blocks
  Shape with_nb(const std::vector<int64_t>& shape, std::optional<int64_t> last = std::nullopt) const {
    Shape s{sint(nb)};
    for (int64_t d : shape) s.push_back(d);
    if (last) s.push_back(*last);
    return s;
  }
  Shape full(std::optional<int64_t> last = std::nullopt) const { return with_nb(dims, last); }
  // bytes [a, e) of each block as `shape` (1 on the axes they don't vary along), broadcast over the layout: uint32
  Tensor u8(int64_t a, int64_t e, const std::vector<int64_t>& shape) const {
    return b.shrink({{0, nb}, {a, e}}).reshape(with_nb(shape)).expand(full()).cast(dtypes::uint32);
  }
  // the same as int8 (Q6_K's scales, Q8_0's values), then float32
  Tensor i8(int64_t a, int64_t e, const std::vector<int64_t>& shape) const {
    return b.shrink({{0, nb}, {a, e}})
        .reshape(with_nb(shape))
        .expand(full())
        .bitcast(dtypes::int8)
        .cast(dtypes::float32);
  }
  // the block's half at byte a, as float32 over the layout
  Tensor f16(int64_t a) const {
    std::vector<int64_t> ones(dims.size(), 1);
    Tensor bytes = b.shrink({{0, nb}, {a, a + 2}}).reshape(with_nb(ones, 2)).expand(full(2));
    if (is_dtype_supported(dtypes::float16, b.device()))
      return bytes.bitcast(dtypes::float16).reshape(full()).cast(dtypes::float32);  // (..., 2) bytes -> (..., 1) half
    // a device without half (PoCL on a CPU without cl_khr_fp16): the half's bits rebuilt as a float's, exactly
    Tensor h = bytes.cast(dtypes::uint32);
    h = (h.shrink(last_byte(0)) | h.shrink(last_byte(1)).lshift(8)).reshape(full());
    Tensor sign = h.rshift(15).lshift(31), exp = h.rshift(10) & 31, man = h & 1023;
    Tensor normal = (sign | (exp + 112).lshift(23) | man.lshift(13)).bitcast(dtypes::float32);
    Tensor special = (sign | man.lshift(13) | 0x7F800000u).bitcast(dtypes::float32);  // inf and NaN
    Tensor sub = as_f32(man) * float(1.0 / (1 << 24));                                // subnormal: man * 2^-24
    sub = (h.rshift(15) == 1).where(-sub, sub);
    return (exp == 0).where(sub, (exp == 31).where(special, normal));
  }
  // the byte at i of a (..., 2) pair of bytes, keeping the pair axis
  Mask last_byte(int64_t i) const {
    Mask m;
    for (const sint& d : full(2)) m.push_back({0, d});
    m.back() = {i, i + 1};
    return m;
  }
  // the index (0 or 1) along layout axis `axis`, of size 2, as a bool over the layout (axis_bit)
  Tensor index_bit(size_t axis) const {
    TG_ASSERT(dims.at(axis) == 2, "a selector axis has size 2, got ", dims.at(axis));
    return axis_bit(full(), axis + 1, b.device());
  }
};

// leaves[i], where bit l of i is levels[l] (a bool): a tree of selects, elementwise (it fuses into the consumer)
Tensor select(std::vector<Tensor> leaves, const std::vector<Tensor>& levels) {
  for (const Tensor& sel : levels) {
    std::vector<Tensor> next;
    for (size_t k = 0; k < leaves.size(); k += 2) next.push_back(sel.where(leaves[k + 1], leaves[k]));
    leaves = std::move(next);
  }
  return leaves.at(0);
}
// field i (`bits` wide) of x, where bit l of i is levels[l] (a bool over the layout)
Tensor field(const Tensor& x, int bits, const std::vector<Tensor>& levels) {
  std::vector<Tensor> leaves;
  for (int i = 0; i < (1 << levels.size()); i++) leaves.push_back(i == 0 ? x : x.rshift(bits * i));
  return select(std::move(leaves), levels) & ((1 << bits) - 1);
}

// kvalues_iq4nl: the 16 non-linear levels of IQ4_NL and IQ4_XS
constexpr std::array<int, 16> kIQ4NL{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
// kIQ4NL[q] for 4-bit q (uint32), as int32: a tree of selects on q's bits
Tensor iq4nl_lookup(const Tensor& q) {
  std::vector<Tensor> values, bits;
  Tensor qi = as_i32(q);
  for (int v : kIQ4NL) values.push_back(qi.scalar_like(int64_t(v)));
  for (int bit = 0; bit < 4; bit++) bits.push_back((q.rshift(bit) & 1) == 1);
  return select(std::move(values), bits);
}

// A block type's weights as y = q * d (+ c): q integers within 8 bits (uint32 or int32), d and c float32, each
// broadcast over the layout; c (a min) constant over runs of `run` weights. What dequantize computes, and what
// ggml_int8_linear multiplies x's int8 blocks with
struct IntBlocks {
  IntBlocks(Tensor q, Tensor d, std::optional<Tensor> c = std::nullopt, int64_t run = 32)
      : q(std::move(q)), d(std::move(d)), c(std::move(c)), run(run) {}
  Tensor q, d;
  std::optional<Tensor> c;
  int64_t run;
};

std::optional<IntBlocks> int_blocks(const Tensor& bytes, GGMLType type) {
  const int64_t nb = bytes.shape()[0].as_int();
  auto L = [&](std::vector<int64_t> dims) { return Blocks{bytes, nb, std::move(dims)}; };
  switch (type) {
    case GGMLType::Q4_0: {  // (h, l): y = ((qs[l] >> 4h) & 15) - 8) * d
      Blocks k = L({2, 16});
      return IntBlocks{as_i32(field(k.u8(2, 18, {1, 16}), 4, {k.index_bit(0)})) - 8, k.f16(0)};
    }
    case GGMLType::Q4_1: {  // y = q * d + m
      Blocks k = L({2, 16});
      return IntBlocks{field(k.u8(4, 20, {1, 16}), 4, {k.index_bit(0)}), k.f16(0), k.f16(2)};
    }
    case GGMLType::Q5_0:
    case GGMLType::Q5_1: {
      // (h, l8, lb2, lb1, lb0), j = h*16 + l8*8 + lb: the 5th bit is bit j of qh, i.e. bit lb of qh[2h + l8]
      bool one = type == GGMLType::Q5_1;
      int64_t qh_at = one ? 4 : 2;
      Blocks k = L({2, 2, 2, 2, 2});
      Tensor hi = field(k.u8(qh_at, qh_at + 4, {2, 2, 1, 1, 1}), 1, {k.index_bit(4), k.index_bit(3), k.index_bit(2)});
      // the bits are disjoint: + where | would do, so the integers' bounds stay known (a | b has none)
      Tensor q = field(k.u8(qh_at + 4, qh_at + 20, {1, 2, 2, 2, 2}), 4, {k.index_bit(0)}) + hi.lshift(4);
      if (!one) return IntBlocks{as_i32(q) - 16, k.f16(0)};
      return IntBlocks{q, k.f16(0), k.f16(2)};
    }
    case GGMLType::Q8_0: {
      Blocks k = L({32});
      return IntBlocks{as_i32(bytes.shrink({{0, nb}, {2, 34}}).reshape(k.full()).bitcast(dtypes::int8)), k.f16(0)};
    }
    case GGMLType::Q2_K: {
      // (n, j1, j0, h, l), j = 2*j1 + j0: q = (qs[n*32 + h*16 + l] >> 2j) & 3, sc = scales[n*8 + j*2 + h]
      Blocks k = L({2, 2, 2, 2, 16});
      Tensor q = field(k.u8(16, 80, {2, 1, 1, 2, 16}), 2, {k.index_bit(2), k.index_bit(1)});
      Tensor sc = k.u8(0, 16, {2, 2, 2, 2, 1});
      return IntBlocks{q, k.f16(80) * as_f32(sc & 0xF), -(k.f16(82) * as_f32(sc.rshift(4))), 16};
    }
    case GGMLType::Q3_K: {
      // (n, j1, j0, h, l), j = 2*j1 + j0: q = (qs[n*32+h*16+l] >> 2j) & 3, minus 4 unless bit 4n+j of hmask[h*16+l];
      // the 6-bit scale is = n*8 + j*2 + h: ((s[j1*4 + j0*2 + h] >> 4n) & 15) | (((s[8 + j0*2 + h] >> 2(2n+j1)) & 3) <<
      // 4)
      Blocks k = L({2, 2, 2, 2, 16});
      Tensor n = k.index_bit(0), j1 = k.index_bit(1), j0 = k.index_bit(2);
      Tensor q = field(k.u8(32, 96, {2, 1, 1, 2, 16}), 2, {j0, j1});
      Tensor hm = field(k.u8(0, 32, {1, 1, 1, 2, 16}), 1, {j0, j1, n});
      Tensor lo = field(k.u8(96, 104, {1, 2, 2, 2, 1}), 4, {n});
      Tensor hi = field(k.u8(104, 108, {1, 1, 2, 2, 1}), 2, {j1, n});
      Tensor sc = as_i32(lo | hi.lshift(4)) - 32;
      Tensor qi = as_i32(q);
      return IntBlocks{qi - (hm == 0).where(qi.scalar_like(int64_t(4)), qi.scalar_like(int64_t(0))),
                       k.f16(108) * as_f32(sc)};
    }
    case GGMLType::Q4_K:
    case GGMLType::Q5_K: {
      // (g, c2, h, l): chunk c = 2g + c2, sub-block j = 2c + h = 4g + 2*c2 + h, r = j % 4;
      // q = (qs[c*32+l] >> 4h) & 15 (+16 if bit j of qh[l]); scale and min from the 12 bytes (get_scale_min_k4)
      bool five = type == GGMLType::Q5_K;
      Blocks k = L({2, 2, 2, 32});
      Tensor g = k.index_bit(0), c2 = k.index_bit(1), h = k.index_bit(2);
      int64_t qs_at = five ? 48 : 16;
      Tensor q = field(k.u8(qs_at, qs_at + 128, {2, 2, 1, 32}), 4, {h});
      if (five) q = q + field(k.u8(16, 48, {1, 1, 1, 32}), 1, {h, c2, g}).lshift(4);
      Tensor qa = k.u8(4, 8, {1, 2, 2, 1}), qb = k.u8(8, 12, {1, 2, 2, 1}), qc = k.u8(12, 16, {1, 2, 2, 1});
      Tensor sc = g.where((qc & 0xF) | qa.rshift(6).lshift(4), qa & 63);
      Tensor m = g.where(qc.rshift(4) | qb.rshift(6).lshift(4), qb & 63);
      return IntBlocks{q, k.f16(0) * as_f32(sc), -(k.f16(2) * as_f32(m))};
    }
    case GGMLType::Q6_K: {
      // (n, gh, gl, l16, ll), g = 2*gh + gl, l = 16*l16 + ll: q = ((ql[n*64 + gl*32 + l] >> 4gh) & 15 |
      // ((qh[n*32+l] >> 2g) & 3) << 4) - 32, y = d * sc[n*8 + 2g + l16] * q
      Blocks k = L({2, 2, 2, 2, 16});
      Tensor gh = k.index_bit(1), gl = k.index_bit(2);
      Tensor lo = field(k.u8(0, 128, {2, 1, 2, 2, 16}), 4, {gh});
      Tensor hi = field(k.u8(128, 192, {2, 1, 1, 2, 16}), 2, {gl, gh});
      return IntBlocks{as_i32(lo + hi.lshift(4)) - 32, k.f16(208) * k.i8(192, 208, {2, 2, 2, 2, 1})};
    }
    case GGMLType::IQ4_NL: {
      Blocks k = L({2, 16});
      return IntBlocks{iq4nl_lookup(field(k.u8(2, 18, {1, 16}), 4, {k.index_bit(0)})), k.f16(0)};
    }
    case GGMLType::IQ4_XS: {
      // (k1, k0, ib0, h, l), sub-block ib = 4*k1 + 2*k0 + ib0: ls = ((scales_l[2k1+k0] >> 4*ib0) & 15) |
      // (((scales_h >> 2ib) & 3) << 4), scales_h's bits 2ib.. are in its byte k1 at 2*(2*k0 + ib0)
      Blocks k = L({2, 2, 2, 2, 16});
      Tensor k0 = k.index_bit(1), ib0 = k.index_bit(2), h = k.index_bit(3);
      Tensor lo = field(k.u8(4, 8, {2, 2, 1, 1, 1}), 4, {ib0});
      Tensor hi = field(k.u8(2, 4, {2, 1, 1, 1, 1}), 2, {ib0, k0});
      Tensor dl = k.f16(0) * as_f32(as_i32(lo | hi.lshift(4)) - 32);
      return IntBlocks{iq4nl_lookup(field(k.u8(8, 136, {2, 2, 2, 1, 16}), 4, {h})), dl};
    }
    default: return std::nullopt;
  }
}

Tensor dequantize(const Tensor& bytes, GGMLType type) {
  std::optional<IntBlocks> b = int_blocks(bytes, type);
  if (!b) throw ValueError(cat("GGML type ", static_cast<uint32_t>(type), " is not supported"));
  Tensor y = as_f32(b->q) * b->d;
  return b->c ? y + *b->c : y;
}

}  // namespace

Tensor ggml_data_to_tensor(const Tensor& t, int64_t n, uint32_t type) {
  auto tr = ggml_type_traits(type);
  TG_CHECK_AS(ValueError, tr.has_value(), "GGML type '", type, "' is not supported!");
  TG_CHECK_AS(ValueError, n >= 0 && n % tr->block_size == 0, "ggml_data_to_tensor: ", n, " elements are not whole ",
              tr->name, " blocks of ", tr->block_size);
  TG_CHECK_AS(ValueError, t.ndim() == 1 && t.dtype() == dtypes::uint8,
              "ggml_data_to_tensor needs a 1-D uint8 tensor, got ", t.dtype(), " of shape ", shape_str(t.shape()));
  int64_t nbytes = n / tr->block_size * tr->type_size, have = t.shape()[0].as_int();
  TG_CHECK_AS(ValueError, have >= nbytes, "ggml_data_to_tensor: ", n, " ", tr->name, " elements take ", nbytes,
              " bytes, the tensor has ", have);
  Tensor bytes = t.shrink({{0, nbytes}});
  if (std::optional<DType> dt = plain_dtype(type)) return bytes.bitcast(*dt);
  if (n == 0) return Tensor::empty({0}, {.device = t.device(), .dtype = dtypes::float32});
  return dequantize(bytes.reshape({n / tr->block_size, tr->type_size}), static_cast<GGMLType>(type)).reshape({n});
}

bool ggml_int8_dot(uint32_t type) {
  switch (static_cast<GGMLType>(type)) {
    case GGMLType::Q4_0:
    case GGMLType::Q4_1:
    case GGMLType::Q5_0:
    case GGMLType::Q5_1:
    case GGMLType::Q8_0:
    case GGMLType::Q2_K:
    case GGMLType::Q3_K:
    case GGMLType::Q4_K:
    case GGMLType::Q5_K:
    case GGMLType::Q6_K:
    case GGMLType::IQ4_NL:
    case GGMLType::IQ4_XS: return true;
    default: return false;
  }
}

bool ggml_int8_narrow(uint32_t type) {
  const auto t = static_cast<GGMLType>(type);
  return ggml_int8_dot(type) && t != GGMLType::Q8_0 && t != GGMLType::Q3_K && t != GGMLType::IQ4_NL &&
         t != GGMLType::IQ4_XS;
}

namespace {
// x (..., k) as Q8_0 blocks (ggml's quantize_row_q8_0: d = amax / 127, q = round(x / d)), kept apart: the int8
// values (rows, k / 32, 32) and the scales (rows, k / 32, 1), each realized by its own small kernel
struct Int8Rows {
  Tensor qx, dx;
  int64_t rows, k;
  // the sums of each block's int8 values over runs of `run` (32: the block's, (rows, k / 32); 16: (rows, k / 32, 2)),
  // as float32
  Tensor block_sums(int64_t run = 32) const {
    Tensor q = run == 32 ? qx : qx.reshape({rows, k / 32, 32 / run, run});
    return q.cast(dtypes::int32).sum(-1).cast(dtypes::float32);
  }
};
Int8Rows quantize_rows(const Tensor& x) {
  const int64_t k = x.shape().back().as_int(), rows = x.numel() / std::max<int64_t>(k, 1);
  Tensor xb = x.reshape({rows, k / 32, 32}).cast(dtypes::float32);
  Tensor dx = xb.abs().max(-1, true) / 127.0f;
  Tensor inv = (dx == 0.0f).where(dx.zeros_like(), 1.0f / dx);
  // rounded half away from zero, as ggml's quantize_row_q8_0_ref rounds (roundf): a half of x's sign added, then
  // truncated by the cast. Tensor::round (half to even) selects between two branches per lane, which kept this
  // kernel scalar
  Tensor v = xb * inv;
  return {(v + (v < 0.0f).where(v.full_like(-0.5), v.full_like(0.5))).cast(dtypes::int8).contiguous(), dx.contiguous(),
          rows, k};
}
}  // namespace

Tensor ggml_int8_linear(const Tensor& x, const Tensor& bytes, uint32_t type, int64_t n) {
  TG_CHECK_AS(ValueError, ggml_int8_dot(type), "ggml_int8_linear: GGML type ", type,
              " has no int8 dot product (the block types do)");
  auto tr = ggml_type_traits(type);
  const int64_t k = x.shape().back().as_int();
  TG_CHECK_AS(ValueError, k > 0 && k % tr->block_size == 0, "ggml_int8_linear: the input's last axis (", k,
              ") is not whole blocks of ", tr->block_size, " (", tr->name, ")");
  const int64_t nb = k / tr->block_size, nbytes = n * nb * tr->type_size;
  TG_CHECK_AS(ValueError, bytes.ndim() == 1 && bytes.dtype() == dtypes::uint8 && bytes.shape()[0].as_int() >= nbytes,
              "ggml_int8_linear: ", n, "x", k, " ", tr->name, " weights take ", nbytes, " bytes, got ", bytes.dtype(),
              " of shape ", shape_str(bytes.shape()));
  IntBlocks w = *int_blocks(bytes.shrink({{0, nbytes}}).reshape({n * nb, tr->type_size}), static_cast<GGMLType>(type));
  const Int8Rows xq = quantize_rows(x);
  const Tensor &qx = xq.qx, &dx = xq.dx;
  const int64_t rows = xq.rows;
  // (rows, n, nb, layout...): the products of the integers, scaled by d * dx (each constant over 4 or more
  // consecutive weights: the devectorizer's groups), summed
  Shape wl{1, n, nb}, xl{rows, 1, nb};
  for (size_t i = 1; i < w.q.shape().size(); i++) wl.push_back(w.q.shape()[i]), xl.push_back(w.q.shape()[i]);
  Shape full = xl;
  full[1] = n;
  Tensor prod =
      as_i32(w.q).reshape(wl) * qx.reshape(xl).expand(full).cast(dtypes::int32);  // widened after the broadcast
  Tensor dxl = dx.expand({rows, k / 32, 32}).reshape(xl);
  Tensor y = (prod.cast(dtypes::float32) * (w.d.reshape(wl) * dxl)).reshape({rows, n, k}).sum(-1);
  if (w.c) {  // + sum c * x: c is constant over each run, so x's int8 sums over runs, scaled, times c once a run
    const int64_t runs = k / w.run;
    Tensor c = w.c->reshape({n, runs, w.run}).shrink({{0, n}, {0, runs}, {0, 1}}).reshape({1, n, runs});
    Tensor sums = qx.reshape({rows, runs, w.run}).cast(dtypes::int32).sum(-1).cast(dtypes::float32);
    Tensor dr = dx.reshape({rows, k / 32, 1}).expand({rows, k / 32, 32 / w.run}).reshape({rows, runs});
    y = y + (c * (sums * dr).reshape({rows, 1, runs})).sum(-1);
  }
  Shape out = x.shape();
  out.back() = n;
  return y.reshape(out);
}

// *** the int8 matvec's own layout ***

namespace {
// GGMLInt8Weight's layout: a tile of 64 consecutive rows (t: rows 64t ..) is 4 groups of 16 (G), and each group's rows
// lie in a far-apart part of memory (all tiles' group G together), so that a tile reads four places of memory (four
// streams of the hardware prefetcher, where one stream read at 60% of the machine's bandwidth here) and its outputs
// come out in the rows' order (a view of them in another order kept the next kernel, the activations' quantization,
// from vectorizing). Within a group's 16 rows and a block of 32, the integers are in
// the order of a dot-product instruction's operand: (8 quads of the block, 16 rows, 4 weights), so that each 64 bytes
// are four weights of 16 rows, multiplied by the same four of x in every 32-bit lane, and the 8 quads' products sum
// as whole vectors into the block's 16 integer sums. q (G, T, blocks, 8, 16, 4) (Q8_0: its int8 + 128, as uint8; Q4_0,
// Q4_K and Q6_K: (G, T, blocks, 4, 16, 4), quad c's nibble low and quad c + 4's high; Q6_K's top two bits follow as
// (G, T, blocks, 4 + 2, 16, 4), quads j, j + 2, j + 4 and j + 6 in byte j's bits 0-1, 2-3, 4-5 and 6-7), d (G, T,
// blocks, 16) half. Row r of the weight is 64 * t + 16 * G + i
constexpr int64_t kInt8Streams = 4, kInt8Rows = 16, kQuads = 8;
int64_t int8_tiles(int64_t n) { return n / (kInt8Streams * kInt8Rows); }

// a weight's tensor with `rows` rows of activations in front, (rows, shape...): the broadcast made on the stored
// tensor itself, before any arithmetic (the scheduler realizes a computed value it sees expanded: here that would be
// a copy of the weight's integers, widened, per product)
Tensor leading(const Tensor& t, const Shape& shape, int64_t rows) {
  Shape one{1}, full{rows};
  for (const sint& s : shape) one.push_back(s), full.push_back(s);
  return t.reshape(one).expand(full);
}

// the weight's integers over (rows, G, T, blocks, 8, 16, 4) as int32: Q4_0's and Q4_K's nibbles (a byte's low one in
// quads 0-3, its high one in quads 4-7, computed in bytes), Q8_0's bytes; less the type's offset (int8_offset: Q4_0's
// 8, Q8_0's 128) unless `offset` is false (the caller adds offset times x's block sums itself)
int64_t int8_offset(uint32_t type) {
  switch (static_cast<GGMLType>(type)) {
    case GGMLType::Q4_0: return 8;
    case GGMLType::Q8_0: return 128;
    case GGMLType::Q6_K: return 32;
    default: return 0;
  }
}
// the weights one scale covers: 16 for Q6_K (a block of 32 has two), else the block's 32
int64_t int8_scale_run(uint32_t type) { return type == static_cast<uint32_t>(GGMLType::Q6_K) ? 16 : 32; }
Tensor int8_values(const GGMLInt8Weight& w, int64_t rows, bool offset = true) {
  const int64_t t = int8_tiles(w.n), nb = w.k / 32, c = offset ? int8_offset(w.type) : 0;
  if (w.type == static_cast<uint32_t>(GGMLType::Q8_0)) {
    Tensor q = as_i32(leading(w.q, {kInt8Streams, t, nb, kQuads, kInt8Rows, 4}, rows));
    return c ? q - c : q;
  }
  if (w.type == static_cast<uint32_t>(GGMLType::Q6_K)) {
    // quad 4a + 2b + j: its low four bits q's byte (b, j)'s nibble a, its top two qh's byte j's bits s = 2 * (2a + b),
    // shifted straight to bits 4-5 (left by 4 - s, or right by 2) and masked: one shift and a ternary logic op a vector
    // (a shift down, a mask and a shift up took three)
    Shape full{rows, kInt8Streams, t, nb, 2, 2, 2, kInt8Rows, 4};
    Tensor a = axis_bit(full, 4, w.q.device()), b = axis_bit(full, 5, w.q.device());
    auto vectors = [&](int64_t from, int64_t to) {  // the block's 64-byte vectors [from, to)
      return w.q.shrink({{0, kInt8Streams}, {0, t}, {0, nb}, {from, to}, {0, kInt8Rows}, {0, 4}});
    };
    Tensor lo = field(vectors(0, 4).reshape({1, kInt8Streams, t, nb, 1, 2, 2, kInt8Rows, 4}).expand(full), 4, {a});
    Tensor qh = vectors(4, 6).reshape({1, kInt8Streams, t, nb, 1, 1, 2, kInt8Rows, 4}).expand(full);
    Tensor hi = select({qh.lshift(4), qh.lshift(2), qh, qh.rshift(2)}, {b, a}) & 48;
    Tensor q = as_i32(lo | hi);
    return (c ? q - c : q).reshape({rows, kInt8Streams, t, nb, kQuads, kInt8Rows, 4});
  }
  Shape full{rows, kInt8Streams, t, nb, 2, kQuads / 2, kInt8Rows, 4};
  Tensor b = w.q.reshape({1, kInt8Streams, t, nb, 1, kQuads / 2, kInt8Rows, 4}).expand(full);
  Tensor q = as_i32(axis_bit(full, 4, w.q.device()).where(b.rshift(4), b) & 15);
  return (c ? q - c : q).reshape({rows, kInt8Streams, t, nb, kQuads, kInt8Rows, 4});
}

// Q4_K's d and dmin (G, T, super-blocks, 2, 16), its scales and mins (G, T, blocks, 2, 16): the first or the second of
// each pair, (G, T, blocks or super-blocks, 16)
Tensor k4_pair(const Tensor& v, int64_t i, int64_t blocks) {
  const int64_t t = v.shape()[1].as_int();
  return v.shrink({{0, kInt8Streams}, {0, t}, {0, blocks}, {i, i + 1}, {0, kInt8Rows}})
      .reshape({kInt8Streams, t, blocks, kInt8Rows});
}

// each weight's scale, float32 over (rows, G, T, blocks, 8, 16, 4): the block's d (Q4_K: d * its 6-bit scale; Q6_K:
// d * the int8 scale of its half of the block)
Tensor int8_scales(const GGMLInt8Weight& w, int64_t rows) {
  const int64_t t = int8_tiles(w.n), nb = w.k / 32;
  Shape full{rows, kInt8Streams, t, nb, kQuads, kInt8Rows, 4};
  auto per_block = [&](const Tensor& v) {  // (G, T, blocks, 16) over the 32 weights of each block
    return v.reshape({1, kInt8Streams, t, nb, 1, kInt8Rows, 1}).expand(full).cast(dtypes::float32);
  };
  const bool k4 = w.type == static_cast<uint32_t>(GGMLType::Q4_K), k6 = w.type == static_cast<uint32_t>(GGMLType::Q6_K);
  if (!k4 && !k6) return per_block(w.d);
  // a K-quant's d is a super-block's (G, T, super-blocks, 16): over its 8 blocks of 32 first
  Tensor d = (k4 ? k4_pair(w.d, 0, nb / 8) : w.d)
                 .reshape({kInt8Streams, t, nb / 8, 1, kInt8Rows})
                 .expand({kInt8Streams, t, nb / 8, 8, kInt8Rows})
                 .reshape({kInt8Streams, t, nb, kInt8Rows});
  if (k4) return per_block(d) * per_block(k4_pair(*w.sc, 0, nb));
  // Q6_K's scales (G, T, blocks, 2, 16), one over each half's 4 quads
  Tensor sc = w.sc->reshape({1, kInt8Streams, t, nb, 2, 1, kInt8Rows, 1})
                  .expand({rows, kInt8Streams, t, nb, 2, kQuads / 2, kInt8Rows, 4})
                  .reshape(full)
                  .cast(dtypes::float32);
  return per_block(d) * sc;
}
// Q4_K's min of each block, -dmin * m, float32 over (rows, G, T, blocks, 8, 16, 4): the stored dmin and m broadcast
// before they multiply (a product broadcast over the lanes would be realized on its own)
Tensor int8_mins(const GGMLInt8Weight& w, int64_t rows) {
  const int64_t t = int8_tiles(w.n), nb = w.k / 32;
  Tensor dmin = k4_pair(w.d, 1, nb / 8)
                    .reshape({1, kInt8Streams, t, nb / 8, 1, 1, kInt8Rows, 1})
                    .expand({rows, kInt8Streams, t, nb / 8, 8, kQuads, kInt8Rows, 4})
                    .reshape({rows, kInt8Streams, t, nb, kQuads, kInt8Rows, 4});
  Tensor m = k4_pair(*w.sc, 1, nb)
                 .reshape({1, kInt8Streams, t, nb, 1, kInt8Rows, 1})
                 .expand({rows, kInt8Streams, t, nb, kQuads, kInt8Rows, 4});
  return -(dmin.cast(dtypes::float32) * m.cast(dtypes::float32));
}
}  // namespace

bool ggml_int8_packs(uint32_t type, int64_t n) {
  const auto t = static_cast<GGMLType>(type);
  return (t == GGMLType::Q4_0 || t == GGMLType::Q8_0 || t == GGMLType::Q4_K || t == GGMLType::Q6_K) && n > 0 &&
         n % (kInt8Streams * kInt8Rows) == 0;
}

GGMLInt8Weight ggml_int8_pack(const Tensor& bytes, uint32_t type, int64_t n, int64_t k) {
  auto tr = ggml_type_traits(type);
  TG_CHECK_AS(ValueError, tr.has_value() && ggml_int8_packs(type, n), "ggml_int8_pack: ", n, " rows of GGML type ",
              type, " have no int8 layout (Q4_0, Q8_0, Q4_K and Q6_K do, in rows of ", kInt8Streams * kInt8Rows, ")");
  TG_CHECK_AS(ValueError, k > 0 && k % tr->block_size == 0, "ggml_int8_pack: a row of ", k, " is not whole blocks of ",
              tr->block_size, " (", tr->name, ")");
  const int64_t nb = k / 32, nbt = k / tr->block_size, ts = tr->type_size, nbytes = n * nbt * ts, t = int8_tiles(n);
  TG_CHECK_AS(ValueError, bytes.ndim() == 1 && bytes.dtype() == dtypes::uint8 && bytes.shape()[0].as_int() >= nbytes,
              "ggml_int8_pack: ", n, "x", k, " ", tr->name, " weights take ", nbytes, " bytes, got ", bytes.dtype(),
              " of shape ", shape_str(bytes.shape()));
  const auto type_ = static_cast<GGMLType>(type);
  Tensor raw = bytes.shrink({{0, nbytes}}).reshape({n, nbt, ts});
  auto field = [&](int64_t a, int64_t e) { return raw.shrink({{0, n}, {0, nbt}, {a, e}}); };
  // (n, blocks, last) -> (G, T, blocks, 16 rows, last)
  auto tiled = [&](const Tensor& v, int64_t blocks, int64_t last) {
    return v.reshape({t, kInt8Streams, kInt8Rows, blocks, last}).permute({1, 0, 3, 2, 4});
  };
  // each type block's half at byte a, (n, type blocks, 1); a device without half (PoCL without cl_khr_fp16) keeps
  // them as float32, rebuilt from the bits (Blocks::f16)
  const bool half = is_dtype_supported(dtypes::float16, bytes.device());
  auto halves = [&](int64_t a) {
    return half ? field(a, a + 2).bitcast(dtypes::float16)
                : Blocks{raw.reshape({n * nbt, ts}), n * nbt, {1}}.f16(a).reshape({n, nbt, 1});
  };
  // (n, blocks, m) -> (G, T, blocks, m, 16): each block's m values of a group's 16 rows, the rows side by side
  auto by_block = [&](const Tensor& v, int64_t blocks, int64_t m) {
    return tiled(v, blocks, m).permute({0, 1, 2, 4, 3}).contiguous();
  };
  auto half_at = [&](int64_t a) {  // the same tiled: (G, T, type blocks, 16)
    return by_block(halves(a), nbt, 1).reshape({kInt8Streams, t, nbt, kInt8Rows});
  };
  // (n, blocks, 32) -> (G, T, blocks, 8 quads, 16 rows, 4)
  auto quads = [&](const Tensor& v) {
    return v.reshape({t, kInt8Streams, kInt8Rows, nb, kQuads, 4}).permute({1, 0, 3, 4, 2, 5});
  };
  // Q6_K's weights as their six bits (0..63), (n, blocks, 32) uint8 in the rows' order
  auto q6k_bits = [&]() {
    return (int_blocks(raw.reshape({n * nbt, ts}), type_)->q + 32).cast(dtypes::uint8).reshape({n, nb, 32});
  };
  auto integers = [&]() {
    if (type_ == GGMLType::Q8_0)  // + 128: the dot product's unsigned operand
      return quads((field(2, 34).bitcast(dtypes::int8).cast(dtypes::int32) + 128).cast(dtypes::uint8));
    // each block of 32's nibbles, weight j at j's place: Q4_0's bytes hold weights l and l + 16, Q4_K's 32 bytes
    // two blocks (low nibbles the first), Q6_K's the low four of its six bits. A select on a padded constant, not a
    // cat: one kernel lays the weight out
    const bool k4 = type_ == GGMLType::Q4_K;
    auto nibbles = [&]() {
      if (type_ == GGMLType::Q6_K) return q6k_bits() & 15;
      Shape both = k4 ? Shape{n, nbt, 4, 2, 32} : Shape{n, nb, 2, 16};
      Tensor qs = k4 ? field(16, 144).reshape({n, nbt, 4, 1, 32}).expand(both)
                     : field(2, 18).reshape({n, nb, 1, 16}).expand(both);
      return (axis_bit(both, k4 ? 3 : 2, bytes.device()).where(qs.rshift(4), qs) & 15).reshape({n, nb, 32});
    };
    Tensor v = nibbles();
    // quads 0-3 in the low nibbles, 4-7 in the high ones
    v = quads(v).reshape({kInt8Streams, t, nb, 2, kQuads / 2, kInt8Rows, 4});
    Mask lo{{0, kInt8Streams}, {0, t}, {0, nb}, {0, 1}, {0, kQuads / 2}, {0, kInt8Rows}, {0, 4}}, hi = lo;
    hi[3] = {1, 2};
    return (v.shrink(lo) | v.shrink(hi).lshift(4)).reshape({kInt8Streams, t, nb, kQuads / 2, kInt8Rows, 4});
  };
  GGMLInt8Weight w{integers().contiguous(), half_at(type_ == GGMLType::Q6_K ? 208 : 0), type, n, k};
  if (type_ == GGMLType::Q4_K) {
    // get_scale_min_k4: blocks 0-3 from the low 6 bits of bytes 0-3 (scales) and 4-7 (mins), blocks 4-7 from bytes
    // 8-11's nibbles with bytes 0-7's top two bits above them
    Tensor a = field(4, 8), b = field(8, 12), c = field(12, 16);
    // the scales and the mins tiled as d, side by side (G, T, blocks, 2, 16), and d with dmin (G, T, super-blocks, 2,
    // 16): the matvec reads them in the streams it reads the scales in, and sums the mins' term in its own loop (as a
    // small matvec of its own, ~90 us a token and layer of TinyLlama)
    Tensor scales = (a & 63).cat({(c & 15) | a.rshift(6).lshift(4)}, -1).reshape({n, nb, 1});
    Tensor mins = (b & 63).cat({c.rshift(4) | b.rshift(6).lshift(4)}, -1).reshape({n, nb, 1});
    w.sc = by_block(scales.cat({mins}, -1), nb, 2);
    w.d = by_block(halves(0).cat({halves(2)}, -1), nbt, 2);
  }
  if (type_ == GGMLType::Q6_K) {
    // each half block's int8 scale, (G, T, blocks, 2, 16)
    w.sc = by_block(field(192, 208).bitcast(dtypes::int8).reshape({n, nb, 2}), nb, 2);
    // the top two bits of quad 4a + 2b + j at bits 2 * (2a + b) of byte j
    Tensor hi = quads(q6k_bits().rshift(4)).reshape({kInt8Streams, t, nb, 2, 2, 2, kInt8Rows, 4});
    auto bits = [&](int64_t a, int64_t b) {
      Mask m{{0, kInt8Streams}, {0, t}, {0, nb}, {a, a + 1}, {b, b + 1}, {0, 2}, {0, kInt8Rows}, {0, 4}};
      return hi.shrink(m).lshift(2 * (2 * a + b));
    };
    // after each block's nibbles, in the same run of memory: a tile reads one stream per group where two were
    // (4096x11008: 0.84-1.08 -> 0.67-0.95 ms; the scales beside them too, 416 bytes a block, ran slower)
    Tensor qh = (bits(0, 0) + bits(0, 1) + bits(1, 0) + bits(1, 1)).reshape({kInt8Streams, t, nb, 2, kInt8Rows, 4});
    w.q = w.q.cat({qh}, 3).contiguous();
  }
  return w;
}

std::vector<Tensor> GGMLInt8Weight::tensors() const {
  std::vector<Tensor> out{q, d};
  if (sc) out.push_back(*sc);
  return out;
}

Tensor GGMLInt8Weight::dequantize() const {
  const int64_t t = int8_tiles(n), nb = k / 32;
  // (G, T, blocks, 8, 16, 4) -> (T, G, 16 rows, blocks, 8, 4): row by row, a row's blocks in order
  Tensor v = as_f32(int8_values(*this, 1)) * int8_scales(*this, 1);
  if (type == static_cast<uint32_t>(GGMLType::Q4_K)) v = v + int8_mins(*this, 1);
  return v.reshape({kInt8Streams, t, nb, kQuads, kInt8Rows, 4}).permute({1, 0, 4, 2, 3, 5}).reshape({n, k});
}

Tensor ggml_int8_linear(const Tensor& x, const GGMLInt8Weight& w) {
  TG_CHECK_AS(ValueError, x.shape().back().as_int() == w.k, "ggml_int8_linear: the input's last axis (",
              x.shape().back().as_int(), ") is not the weight's ", w.k);
  const Int8Rows xq = quantize_rows(x);
  const int64_t rows = xq.rows, t = int8_tiles(w.n), nb = w.k / 32, c = int8_offset(w.type);
  // Several rows of x (a prefill chunk) take the weight's offset out of the integer products: it is offset times each
  // of x's block sums, summed once for all rows (a small kernel) and added to each block's float sum (the
  // devectorizer's integer_block_sum takes it), so that the main kernel's tile of rows and tokens multiplies the
  // stored integers only: each token's block sum in the tile took as many instructions as its dot products. A
  // decode step's one row sums its blocks inside the matvec, as the renderer's dot helper's offset
  const bool split = rows > 1 && c != 0;
  Shape full{rows, kInt8Streams, t, nb, kQuads, kInt8Rows, 4};
  Tensor prod =
      int8_values(w, rows, !split) * xq.qx.reshape({rows, 1, 1, nb, kQuads, 1, 4}).expand(full).cast(dtypes::int32);
  Tensor prod_f = prod.cast(dtypes::float32);
  // - offset * x's sum over each scale's run of weights (the block; Q6_K's half block), spread over the run's lanes
  // (exact: a power of two)
  const int64_t run = int8_scale_run(w.type), runs = 32 / run;
  if (split)
    prod_f = prod_f + (xq.block_sums(run) * (-static_cast<double>(c) / static_cast<double>(run)))
                          .reshape({rows, 1, 1, nb, runs, 1, 1, 1})
                          .expand({rows, kInt8Streams, t, nb, runs, kQuads / runs, kInt8Rows, 4})
                          .reshape(full);
  // the scales broadcast before they multiply (a product of the two small tensors would be realized on its own)
  Tensor s = int8_scales(w, rows) * xq.dx.reshape({rows, 1, 1, nb, 1, 1, 1}).expand(full);
  Tensor v = prod_f * s;
  if (w.type == static_cast<uint32_t>(GGMLType::Q4_K)) {  // + each block's min times x's block sum, a 32nd a lane
    Tensor sums = (xq.block_sums() * xq.dx.reshape({rows, nb})).reshape({rows, 1, 1, nb, 1, 1, 1}).expand(full);
    v = v + int8_mins(w, rows) * (sums * (1.0 / 32));
  }
  // summed over (T, G, 16 rows): a tile of 64 rows, 16 from each group, which is the rows' order
  Tensor y = v.permute({0, 2, 1, 5, 3, 4, 6}).reshape({rows, w.n, w.k}).sum(-1);
  Shape out = x.shape();
  out.back() = w.n;
  return y.reshape(out);
}

// *** loading ***

namespace {
// a tensor of the file, shaped, from its packed bytes (uint8, dequantized lazily), or from a plain type's values
Tensor tensor_of(const Tensor& raw, const GGUFTensorInfo& ti) {
  return (raw.dtype() == dtypes::uint8 ? ggml_data_to_tensor(raw, ti.numel(), ti.type) : raw).reshape(ti.shape());
}
}  // namespace

GGUFFile gguf_load(const Tensor& file, std::optional<std::string> device) {
  TG_CHECK_AS(ValueError, file.ndim() == 1 && file.dtype() == dtypes::uint8,
              "gguf_load needs a 1-D uint8 tensor of the file's bytes, got ", file.dtype(), " of shape ",
              shape_str(file.shape()));
  const std::string dev = file.device();
  const bool disk = state::is_disk_file(file);
  // a file mapped into host memory (Tensor::from_file onto the CPU): its tensors are views of the mapping, read in
  // place by the kernels, never copied
  std::optional<Buffer> mapped;
  if (!disk && file.uop().op() == Ops::BUFFER)
    if (std::optional<Buffer> b = uop_realized(file.uop()); b && b->host_ptr() != nullptr) mapped = b;
  GGUFHeader h;
  if (disk) {  // the header from the mapping: only its pages are read
    h = gguf_parse_header(state::DiskBytes(file, "gguf_load").bytes(), dev);
  } else if (mapped) {
    h = gguf_parse_header({static_cast<const uint8_t*>(mapped->host_ptr()), static_cast<size_t>(mapped->nbytes())},
                          "tensor on " + dev);
  } else {
    std::vector<uint8_t> bytes = file.data_bytes();
    h = gguf_parse_header(bytes, "tensor on " + dev);
  }
  std::string target = disk ? state::canonical_device(device) : dev;
  GGUFFile out;
  out.kv = std::move(h.kv);
  for (const GGUFTensorInfo& ti : h.tensors) {
    auto start = static_cast<int64_t>(h.data_start + ti.offset);
    std::optional<DType> plain = plain_dtype(ti.type);
    Tensor raw = [&] {
      if (mapped && ti.nbytes > 0) {
        // a view of the mapping: a plain type's values as that dtype where they start 32 bytes aligned (GGUF's
        // default; a kernel may load them four at a time, aligned), else as bytes put together in the kernels
        const DType dt = plain && start % 32 == 0 ? *plain : dtypes::uint8;
        const int64_t n = ti.nbytes / dt.itemsize();
        UOp buf = uop_new_buffer(dev, n, dt);
        uop_set_buffer(buf, mapped->view(n, dt, start).allocate());
        return Tensor(buf, {.device = dev, .dtype = dt});
      }
      Tensor r = file.shrink({{start, start + ti.nbytes}});
      // a plain type (F32, F16 ...) from a file: its bytes read as the type on the DISK (a view), and copied so: a
      // buffer of halves, where bytes bitcast on the device would be put together two at a time in every kernel
      if (disk && plain) r = r.bitcast(*plain);
      return disk ? r.to(target) : r;
    }();
    Tensor t = tensor_of(raw, ti);
    TG_CHECK_AS(ValueError, !out.tensors.contains(ti.name), "gguf_load: ", dev, ": tensor ", py_str_repr(ti.name),
                " appears twice");
    out.tensors.insert_or_assign(ti.name, t);
    out.packed.insert_or_assign(ti.name, GGUFFile::Packed{raw, ti});
  }
  return out;
}

Tensor gguf_resident(const GGUFFile& f, const std::string& name) {
  auto it = f.packed.find(name);
  TG_CHECK_AS(ValueError, it != f.packed.end(), "GGUF file has no tensor ", py_str_repr(name));
  Tensor bytes = it->second.bytes;
  return tensor_of(bytes.realize(), it->second.info);
}

GGUFFile gguf_load(const std::string& path, std::optional<std::string> device) {
  // onto host memory the file is mapped (copy-on-write), as llama.cpp maps it: no copy of the weights is made
  const std::string target = state::canonical_device(device);
  if (Device::get(target).allocator->maps_files()) return gguf_load(Tensor::from_file(path, {.device = target}));
  return gguf_load(Tensor::from_file(path), std::move(device));
}

// *** quantization (ggml's quantize_row_*_ref) and saving ***

namespace {

// ggml's fp32 -> fp16 / bf16 conversions (round to nearest even)
uint16_t fp32_to_fp16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xFF, man = x & 0x7FFFFF;
  if (exp == 0xFF) return static_cast<uint16_t>(sign | 0x7C00 | (man != 0 ? 0x200 | (man >> 13) : 0));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7C00);  // overflow: inf
  if (e <= 0) {  // a half subnormal (or 0): the 24-bit significand shifted right, rounded to nearest even
    if (e < -10) return static_cast<uint16_t>(sign);
    uint32_t m = man | 0x800000;
    int shift = 14 - e;
    uint32_t half = m >> shift, rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (man >> 13), rem = man & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;  // a carry into the exponent is right (up to inf)
  return static_cast<uint16_t>(sign | half);
}

uint16_t fp32_to_bf16(float f) {  // ggml_compute_fp32_to_bf16: NaN stays a quiet NaN, else round to nearest even
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((u >> 16) | 64);
  return static_cast<uint16_t>((u + (0x7FFF + ((u >> 16) & 1))) >> 16);
}

void put16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

// a float stored as half: its bits, and the value a reader gets back
std::pair<uint16_t, float> as_half(float f) {
  const uint16_t h = fp32_to_fp16(f);
  uint8_t bytes[2];
  put16(bytes, h);
  return {h, static_cast<float>(as_double(read_value(bytes, dtypes::float16)))};
}

// the K-quants' sub-block fit: n values x as a * q + b with integer q in [lo, hi]. Starts from the range's ends, then
// alternates rounding q and a least-squares refit of (a, b), keeping the best squared error. With `affine` unset b is 0
// (Q6_K); with it set b is at most 0 (Q4_K keeps -b as an unsigned min). Not ggml's search (make_qkx2_quants tries a
// grid of scales), a simpler one of our own: its error is checked against ggml's quantizer in
// tests/python/test_gguf.py.
struct SubFit {
  float a = 0, b = 0;
};
SubFit fit_sub_block(const float* x, int n, int lo, int hi, bool affine) {
  float mn = 0, mx = 0, amax = 0, sgn_max = 0;
  for (int i = 0; i < n; i++) {
    mn = std::min(mn, x[i]), mx = std::max(mx, x[i]);
    if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), sgn_max = x[i];
  }
  SubFit f;
  if (affine)
    f = {(mx - mn) / static_cast<float>(hi - lo), mn};
  else
    f = {sgn_max / static_cast<float>(sgn_max > 0 ? hi : lo), 0};  // the largest magnitude maps to an end
  if (f.a == 0) return {0, affine ? mn : 0};
  auto err = [&](const SubFit& g) {
    float e = 0;
    for (int i = 0; i < n; i++) {
      const float q = g.a != 0 ? std::clamp(std::round((x[i] - g.b) / g.a), float(lo), float(hi)) : 0;
      e += (g.a * q + g.b - x[i]) * (g.a * q + g.b - x[i]);
    }
    return e;
  };
  SubFit best = f;
  float best_err = err(f);
  for (int it = 0; it < 4; it++) {
    double sq = 0, sqq = 0, sx = 0, sqx = 0;
    for (int i = 0; i < n; i++) {
      const double q = std::clamp(std::round((x[i] - f.b) / f.a), float(lo), float(hi));
      sq += q, sqq += q * q, sx += x[i], sqx += q * x[i];
    }
    SubFit g;
    if (affine) {
      const double det = n * sqq - sq * sq;
      if (det <= 0) break;
      g = {static_cast<float>((n * sqx - sq * sx) / det), static_cast<float>((sqq * sx - sq * sqx) / det)};
      if (g.b > 0) g = {static_cast<float>(sqq > 0 ? sqx / sqq : 0), 0};
    } else {
      if (sqq <= 0) break;
      g = {static_cast<float>(sqx / sqq), 0};
    }
    if (g.a <= 0 && affine) break;
    if (g.a == 0) break;
    const float e = err(g);
    if (e >= best_err) break;
    best = f = g, best_err = e;
  }
  return best;
}

// one super-block of 256 floats -> Q4_K's 144 bytes: half d, half dmin, 12 bytes of 6-bit scales and mins, 128 of
// nibbles (sub-blocks 2j and 2j+1 share bytes 32j..32j+31, low and high nibble). x = d*sc*q - dmin*m.
void quantize_q4_k(const float* x, uint8_t* out) {
  SubFit fit[8];
  float max_a = 0, max_m = 0;
  for (int j = 0; j < 8; j++) {
    fit[j] = fit_sub_block(x + 32 * j, 32, 0, 15, true);
    max_a = std::max(max_a, fit[j].a), max_m = std::max(max_m, -fit[j].b);
  }
  const auto [dh, d] = as_half(max_a / 63);
  const auto [mh, dmin] = as_half(max_m / 63);
  put16(out, dh), put16(out + 2, mh);
  uint8_t sc[8], m[8];
  for (int j = 0; j < 8; j++) {
    sc[j] = static_cast<uint8_t>(d > 0 ? std::min(63.0f, std::round(fit[j].a / d)) : 0);
    m[j] = static_cast<uint8_t>(dmin > 0 ? std::min(63.0f, std::round(-fit[j].b / dmin)) : 0);
  }
  uint8_t* s = out + 4;
  for (int j = 0; j < 4; j++) {
    s[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
    s[j + 4] = static_cast<uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | (m[j + 4] & 0xF) << 4);
  }
  uint8_t q[256];
  for (int j = 0; j < 8; j++) {
    const float a = d * sc[j], b = dmin * m[j];
    for (int i = 0; i < 32; i++)
      q[32 * j + i] = static_cast<uint8_t>(a > 0 ? std::clamp(std::round((x[32 * j + i] + b) / a), 0.0f, 15.0f) : 0);
  }
  for (int j = 0; j < 4; j++)
    for (int l = 0; l < 32; l++) out[16 + 32 * j + l] = static_cast<uint8_t>(q[64 * j + l] | q[64 * j + 32 + l] << 4);
}

// one super-block of 256 floats -> Q6_K's 210 bytes: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 scales
// (one per 16 weights), half d. x = d*sc*(q - 32), q in 0..63.
void quantize_q6_k(const float* x, uint8_t* out) {
  SubFit fit[16];
  float max_a = 0;
  for (int j = 0; j < 16; j++) {
    fit[j] = fit_sub_block(x + 16 * j, 16, -32, 31, false);
    if (std::fabs(fit[j].a) > std::fabs(max_a)) max_a = fit[j].a;
  }
  const auto [dh, d] = as_half(max_a / -128);  // the largest scale takes -128, the int8's full range
  int8_t sc[16];
  for (int j = 0; j < 16; j++)
    sc[j] = static_cast<int8_t>(d != 0 ? std::clamp(std::round(fit[j].a / d), -128.0f, 127.0f) : 0);
  uint8_t q[256];
  for (int i = 0; i < 256; i++) {
    const float a = d * sc[i / 16];
    q[i] = static_cast<uint8_t>(32 + (a != 0 ? std::clamp(std::round(x[i] / a), -32.0f, 31.0f) : 0));
  }
  uint8_t *ql = out, *qh = out + 128;
  for (int h = 0; h < 2; h++) {
    const uint8_t* y = q + 128 * h;
    for (int l = 0; l < 32; l++) {
      ql[64 * h + l] = static_cast<uint8_t>((y[l] & 0xF) | (y[l + 64] & 0xF) << 4);
      ql[64 * h + l + 32] = static_cast<uint8_t>((y[l + 32] & 0xF) | (y[l + 96] & 0xF) << 4);
      qh[32 * h + l] =
          static_cast<uint8_t>(y[l] >> 4 | (y[l + 32] >> 4) << 2 | (y[l + 64] >> 4) << 4 | (y[l + 96] >> 4) << 6);
    }
  }
  std::memcpy(out + 192, sc, 16);
  put16(out + 208, dh);
}

// one block of floats (32, or 256 for the K-quants) -> its bytes
void quantize_block(GGMLType type, const float* x, uint8_t* out) {
  switch (type) {
    case GGMLType::Q4_K: return quantize_q4_k(x, out);
    case GGMLType::Q6_K: return quantize_q6_k(x, out);
    case GGMLType::Q8_0: {
      float amax = 0;
      for (int j = 0; j < 32; j++) amax = std::max(amax, std::fabs(x[j]));
      const float d = amax / 127, id = d != 0 ? 1.0f / d : 0.0f;
      put16(out, fp32_to_fp16(d));
      for (int j = 0; j < 32; j++) out[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::roundf(x[j] * id)));
      return;
    }
    case GGMLType::Q4_0:
    case GGMLType::Q5_0: {
      const bool five = type == GGMLType::Q5_0;
      float amax = 0, max = 0;
      for (int j = 0; j < 32; j++)
        if (amax < std::fabs(x[j])) amax = std::fabs(x[j]), max = x[j];
      const float d = max / (five ? -16.0f : -8.0f), id = d != 0 ? 1.0f / d : 0.0f;
      put16(out, fp32_to_fp16(d));
      uint32_t qh = 0;
      uint8_t* qs = out + (five ? 6 : 2);
      for (int j = 0; j < 16; j++) {
        const float x0 = x[j] * id, x1 = x[j + 16] * id;
        const int lim = five ? 31 : 15;
        const float off = five ? 16.5f : 8.5f;
        const auto xi0 = static_cast<uint8_t>(std::min(lim, static_cast<int>(static_cast<int8_t>(x0 + off))));
        const auto xi1 = static_cast<uint8_t>(std::min(lim, static_cast<int>(static_cast<int8_t>(x1 + off))));
        qs[j] = static_cast<uint8_t>((xi0 & 0xF) | ((xi1 & 0xF) << 4));
        qh |= static_cast<uint32_t>((xi0 & 0x10) >> 4) << j;
        qh |= static_cast<uint32_t>((xi1 & 0x10) >> 4) << (j + 16);
      }
      if (five) std::memcpy(out + 2, &qh, 4);
      return;
    }
    case GGMLType::Q4_1:
    case GGMLType::Q5_1: {
      const bool five = type == GGMLType::Q5_1;
      float min = INFINITY, max = -INFINITY;
      for (int j = 0; j < 32; j++) min = std::min(min, x[j]), max = std::max(max, x[j]);
      const float d = (max - min) / (five ? 31.0f : 15.0f), id = d != 0 ? 1.0f / d : 0.0f;
      put16(out, fp32_to_fp16(d));
      put16(out + 2, fp32_to_fp16(min));
      uint32_t qh = 0;
      uint8_t* qs = out + (five ? 8 : 4);
      for (int j = 0; j < 16; j++) {
        const float x0 = (x[j] - min) * id, x1 = (x[j + 16] - min) * id;
        uint8_t xi0, xi1;
        if (five) {
          xi0 = static_cast<uint8_t>(x0 + 0.5f), xi1 = static_cast<uint8_t>(x1 + 0.5f);
        } else {
          xi0 = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 0.5f))));
          xi1 = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 0.5f))));
        }
        qs[j] = static_cast<uint8_t>((xi0 & 0xF) | ((xi1 & 0xF) << 4));
        qh |= static_cast<uint32_t>((xi0 & 0x10) >> 4) << j;
        qh |= static_cast<uint32_t>((xi1 & 0x10) >> 4) << (j + 16);
      }
      if (five) std::memcpy(out + 4, &qh, 4);
      return;
    }
    default:
      throw ValueError(cat("gguf_save: quantizing to ggml type ", static_cast<uint32_t>(type),
                           " is not supported (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q6_K are; other "
                           "types can be written raw)"));
  }
}

// the bytes of a tensor stored as `type`
std::vector<uint8_t> encode(const GGUFSaveTensor& st, const GGMLTypeTraits& tr, int64_t& numel) {
  if (st.raw) {
    numel = 1;
    for (const sint& d : st.shape) numel *= d.as_int();
    TG_CHECK_AS(ValueError, st.values.dtype() == dtypes::uint8, "gguf_save: raw tensor ", py_str_repr(st.name),
                " must be uint8 bytes, got ", st.values.dtype());
    TG_CHECK_AS(ValueError, numel % tr.block_size == 0 && st.values.numel() == numel / tr.block_size * tr.type_size,
                "gguf_save: raw tensor ", py_str_repr(st.name), " of shape ", shape_str(st.shape), " as ", tr.name,
                " needs ", numel / tr.block_size * tr.type_size, " bytes, got ", st.values.numel());
    return st.values.data_bytes();
  }
  numel = st.values.numel();
  auto type = static_cast<GGMLType>(st.type);
  if (std::optional<DType> dt = plain_dtype(st.type); dt && type != GGMLType::F16 && type != GGMLType::BF16)
    return st.values.cast(*dt).data_bytes();
  std::vector<float> x = st.values.cast(dtypes::float32).tolist<float>();
  if (type == GGMLType::F16 || type == GGMLType::BF16) {
    std::vector<uint8_t> out(x.size() * 2);
    for (size_t i = 0; i < x.size(); i++)
      put16(out.data() + 2 * i, type == GGMLType::F16 ? fp32_to_fp16(x[i]) : fp32_to_bf16(x[i]));
    return out;
  }
  const Shape shape = st.values.shape();
  TG_CHECK_AS(ValueError, !shape.empty() && shape.back().as_int() % tr.block_size == 0, "gguf_save: tensor ",
              py_str_repr(st.name), " of shape ", shape_str(shape), ": rows must be whole ", tr.name, " blocks of ",
              tr.block_size);
  std::vector<uint8_t> out(x.size() / static_cast<size_t>(tr.block_size) * static_cast<size_t>(tr.type_size));
  const auto bs = static_cast<size_t>(tr.block_size);
  for (size_t blk = 0; blk * bs < x.size(); blk++)
    quantize_block(type, x.data() + blk * bs, out.data() + blk * tr.type_size);
  return out;
}

struct Writer {
  std::vector<uint8_t> b;
  template <class T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof(T));
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
  }
  void value(const GGUFValue& v) {  // NOTE: iterative would be overkill: metadata nests a few levels at most
    using T = GGUFValue::Type;
    switch (v.type) {
      case T::UINT8: put<uint8_t>(static_cast<uint8_t>(v.as_int())); break;
      case T::INT8: put<int8_t>(static_cast<int8_t>(v.as_int())); break;
      case T::UINT16: put<uint16_t>(static_cast<uint16_t>(v.as_int())); break;
      case T::INT16: put<int16_t>(static_cast<int16_t>(v.as_int())); break;
      case T::UINT32: put<uint32_t>(static_cast<uint32_t>(v.as_int())); break;
      case T::INT32: put<int32_t>(static_cast<int32_t>(v.as_int())); break;
      case T::UINT64: put<uint64_t>(std::get<uint64_t>(v.v)); break;
      case T::INT64: put<int64_t>(v.as_int()); break;
      case T::FLOAT32: put<float>(static_cast<float>(v.as_double())); break;
      case T::FLOAT64: put<double>(v.as_double()); break;
      case T::BOOL: put<uint8_t>(v.as_bool() ? 1 : 0); break;
      case T::STRING: str(v.as_string()); break;
      case T::ARRAY:
        TG_CHECK_AS(ValueError, v.elem_type != T::ARRAY, "gguf_save: arrays of arrays are not written");
        put<uint32_t>(static_cast<uint32_t>(v.elem_type));
        put<uint64_t>(v.as_array().size());
        for (const GGUFValue& x : v.as_array()) {
          TG_CHECK_AS(ValueError, x.type == v.elem_type, "gguf_save: an array of type ",
                      static_cast<uint32_t>(v.elem_type), " holds a value of type ", static_cast<uint32_t>(x.type));
          value(x);
        }
        break;
    }
  }
  void pad(uint64_t alignment) { b.resize((b.size() + alignment - 1) / alignment * alignment, 0); }
};

}  // namespace

void gguf_save(const std::string& path, const GGUFMetadata& kv, const std::vector<GGUFSaveTensor>& tensors) {
  uint64_t alignment = 32;
  if (const GGUFValue* a = gguf_find(kv, "general.alignment")) alignment = static_cast<uint64_t>(a->as_int());
  TG_CHECK_AS(ValueError, alignment > 0 && (alignment & (alignment - 1)) == 0,
              "gguf_save: general.alignment must be a power of two, got ", alignment);
  std::vector<std::vector<uint8_t>> data;
  Writer w;
  w.put<uint32_t>(0x46554747u);
  w.put<uint32_t>(3);
  w.put<uint64_t>(tensors.size());
  w.put<uint64_t>(kv.size());
  for (const auto& [k, v] : kv) {
    w.str(k);
    w.put<uint32_t>(static_cast<uint32_t>(v.type));
    w.value(v);
  }
  uint64_t offset = 0;
  for (const GGUFSaveTensor& st : tensors) {
    auto tr = ggml_type_traits(st.type);
    TG_CHECK_AS(ValueError, tr.has_value(), "gguf_save: unknown ggml type ", st.type, " for ", py_str_repr(st.name));
    int64_t numel = 0;
    data.push_back(encode(st, *tr, numel));
    Shape shape = st.raw ? st.shape : st.values.shape();
    TG_CHECK_AS(ValueError, shape.size() <= 4, "gguf_save: ", py_str_repr(st.name), " has ", shape.size(),
                " dims (at most 4)");
    w.str(st.name);
    w.put<uint32_t>(static_cast<uint32_t>(std::max<size_t>(shape.size(), 1)));
    if (shape.empty()) w.put<uint64_t>(1);
    for (auto it = shape.rbegin(); it != shape.rend(); ++it) w.put<uint64_t>(static_cast<uint64_t>(it->as_int()));
    w.put<uint32_t>(st.type);
    w.put<uint64_t>(offset);
    offset += (data.back().size() + alignment - 1) / alignment * alignment;
  }
  w.pad(alignment);
  for (const auto& d : data) {
    w.b.insert(w.b.end(), d.begin(), d.end());
    w.pad(alignment);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  TG_CHECK(f.good(), "gguf_save: can't open ", py_str_repr(path), " for writing");
  f.write(reinterpret_cast<const char*>(w.b.data()), static_cast<std::streamsize>(w.b.size()));
  TG_CHECK(f.good(), "gguf_save: writing ", py_str_repr(path), " failed");
}

}  // namespace tg::nn
