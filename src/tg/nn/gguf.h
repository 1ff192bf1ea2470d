#pragma once
// GGUF, llama.cpp's model file (tinygrad's gguf_load and ggml_data_to_tensor; the format is ggml's gguf.h):
//
//   "GGUF", version (2 or 3), n_tensors, n_kv, the metadata (key, type, value)..., the tensor infos (name, dims in
//   ggml order, ggml type, byte offset into the data)..., padding to `general.alignment` (default 32), the data.
//
//   auto [kv, weights] = nn::gguf_load("model.Q4_0.gguf");          // lazy: nothing is read yet
//   kv.find("llama.block_count")->as_int();
//   Tensor y = x.matmul(weights.at("blk.0.attn_q.weight").T());     // reads and dequantizes that tensor, fused
//
// A quantized tensor is a lazy graph over its packed bytes (ggml_data_to_tensor): the dequantization fuses into the
// kernel that uses it, so the float weights are never stored. Dequantization computes what ggml's dequantize_row_*
// computes, in the same order, so the values are bit-exact.
// Bad input (truncated, wrong magic or version, an offset or size past the end, an unknown type, dims that overflow,
// counts larger than the file could hold, strings that aren't UTF-8) is a ValueError naming the field, its byte offset
// and the value; nothing is allocated at a size a corrupt header claims.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tg/nn/state.h"
#include "tg/tensor/tensor.h"

namespace tg::nn {

// ggml's tensor types (ggml.h's enum ggml_type; the ids llama.cpp writes today)
enum class GGMLType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ4_NL = 20,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
};
struct GGMLTypeTraits {
  const char* name;    // "q4_0", as ggml names it
  int64_t block_size;  // elements per block (1 for plain types)
  int64_t type_size;   // bytes per block
};
// the traits of a type this reader knows; nullopt for any other id
std::optional<GGMLTypeTraits> ggml_type_traits(uint32_t type);

// a metadata value with its GGUF type
struct GGUFValue {
  enum class Type : uint32_t {
    UINT8 = 0,
    INT8 = 1,
    UINT16 = 2,
    INT16 = 3,
    UINT32 = 4,
    INT32 = 5,
    FLOAT32 = 6,
    BOOL = 7,
    STRING = 8,
    ARRAY = 9,
    UINT64 = 10,
    INT64 = 11,
    FLOAT64 = 12,
  };
  Type type = Type::UINT32;
  Type elem_type = Type::UINT8;  // an ARRAY's element type
  std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<GGUFValue>> v;

  static GGUFValue u32(uint32_t x) { return {Type::UINT32, Type::UINT8, uint64_t(x)}; }
  static GGUFValue u64(uint64_t x) { return {Type::UINT64, Type::UINT8, x}; }
  static GGUFValue i32(int32_t x) { return {Type::INT32, Type::UINT8, int64_t(x)}; }
  static GGUFValue f32(float x) { return {Type::FLOAT32, Type::UINT8, double(x)}; }
  static GGUFValue boolean(bool x) { return {Type::BOOL, Type::UINT8, x}; }
  static GGUFValue str(std::string s) { return {Type::STRING, Type::UINT8, std::move(s)}; }
  static GGUFValue array(Type elem, std::vector<GGUFValue> xs) { return {Type::ARRAY, elem, std::move(xs)}; }

  int64_t as_int() const;  // any integer type (a uint64 above INT64_MAX is an Error)
  double as_double() const;
  bool as_bool() const;
  const std::string& as_string() const;
  const std::vector<GGUFValue>& as_array() const;
};

using GGUFMetadata = std::vector<std::pair<std::string, GGUFValue>>;  // in the file's order
const GGUFValue* gguf_find(const GGUFMetadata& kv, const std::string& key);

struct GGUFTensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // dims in ggml's order (fastest first); the tensor's shape is them reversed
  uint32_t type = 0;
  uint64_t offset = 0;  // bytes, from the data section's start
  int64_t nbytes = 0;
  int64_t numel() const;
  Shape shape() const;  // ne reversed
};

struct GGUFHeader {
  uint32_t version = 3;
  uint64_t alignment = 32;
  uint64_t data_start = 0;  // bytes into the file
  GGUFMetadata kv;
  std::vector<GGUFTensorInfo> tensors;
};

// the header of a whole file's bytes, checked against its size; `what` names the file in errors
GGUFHeader gguf_parse_header(std::span<const uint8_t> file, const std::string& what);

// n elements of ggml type `type` from the bytes of t (a 1-D uint8 tensor, at least the blocks' bytes long), as a
// lazy 1-D tensor: float32 for quantized types, the type's own dtype for plain ones (F16 stays half, BF16 bfloat16).
// t must be on a device that runs kernels (not DISK) for quantized types. An unknown type or an n that isn't a whole
// number of blocks is a ValueError.
Tensor ggml_data_to_tensor(const Tensor& t, int64_t n, uint32_t type);

// whether ggml_int8_linear computes with type's integers: the block types (Q4_0 ... Q8_0, the K-quants, IQ4_NL/XS)
bool ggml_int8_dot(uint32_t type);
// whether type's integers are, past a constant offset, within 0..127 (Q4_0, Q4_1, Q5_*, Q2_K, Q4_K, Q5_K, Q6_K): the
// products AVX2's pmaddubsw sums in pairs without saturating. The others (Q8_0, Q3_K, IQ4_NL/XS) take full bytes,
// which only VNNI's vpdpbusd (or plain C) multiplies exactly
bool ggml_int8_narrow(uint32_t type);
// x (..., k) @ W.T for W the (n, k) weight of GGML type `type` packed in `bytes` (1-D uint8), as llama.cpp computes it:
// x quantized to blocks of 32 int8 with a float scale each (ggml's Q8_0), each block's integer dot product with the
// weight's integers scaled by both blocks' scales. Not bit-exact with x @ dequantize(W).T: x's rounding to int8 is
// llama.cpp's. A type without ggml_int8_dot, or shapes that don't match the bytes, is a ValueError.
Tensor ggml_int8_linear(const Tensor& x, const Tensor& bytes, uint32_t type, int64_t n);

// A Q4_0, Q8_0, Q4_K or Q6_K weight in the int8 matmul's own layout (ggml_int8_pack, once, as llama.cpp repacks its
// weights for the CPU): the rows in tiles of 64 consecutive rows, each tile's 4 groups of 16 in four far-apart places
// (the outputs come out in the rows' order), each tile's integers and half scales side by side, a block's integers in
// the order of a dot-product instruction's operand (4 weights of 16 rows a 64-byte vector), so that the tile reads
// whole vectors, sums a block as integers, and the prefetcher follows four streams. Holds q (the integers: Q4_0's,
// Q4_K's and Q6_K's nibbles, two quads a byte; Q8_0's int8 + 128) and d (the blocks' scales, half), realized
struct GGMLInt8Weight {
  Tensor q, d;
  uint32_t type = 0;
  int64_t n = 0, k = 0;
  // the K-quants' scales beside d. Q4_K: d holds d and dmin per super-block (half, (G, T, super-blocks, 2, 16)), sc
  // each block of 32's 6-bit scale and min (uint8, (G, T, blocks, 2, 16)). Q6_K: d per super-block (G, T,
  // super-blocks, 16), sc each half block's int8 scale (G, T, blocks, 2, 16); q its weights' low four bits as Q4_K's
  // nibbles, each block's top two bits after them
  std::optional<Tensor> sc = std::nullopt;
  // the (n, k) float32 weight, lazily: bit-exact with ggml_data_to_tensor of the bytes it came from
  Tensor dequantize() const;
  // the tensors it holds (q, d, and the K-quants' others): what to realize, several weights' in one Tensor::realize
  std::vector<Tensor> tensors() const;
};
// whether ggml_int8_pack takes n rows of `type`: Q4_0, Q8_0, Q4_K and Q6_K, rows a multiple of 64
bool ggml_int8_packs(uint32_t type, int64_t n);
// the (n, k) weight of GGML type `type` packed in `bytes` (1-D uint8) in that layout, lazily (realize its tensors(),
// a model's weights together: each realize walks every live tensor's graph); what ggml_int8_packs refuses, or bytes
// that don't match, is a ValueError
GGMLInt8Weight ggml_int8_pack(const Tensor& bytes, uint32_t type, int64_t n, int64_t k);
// ggml_int8_linear's product on a packed weight: the same arithmetic, summed in another order (each block's
// products as integers); any number of x's rows (a decode step's one, a prefill chunk's)
Tensor ggml_int8_linear(const Tensor& x, const GGMLInt8Weight& w);

struct GGUFFile {
  GGUFMetadata kv;
  StateDict tensors;  // by name, in the file's order, shaped as ne reversed
  // each tensor's packed bytes (a lazy copy of its range of the file to the device; a plain type's read as that
  // type) and where the header put it
  struct Packed {
    Tensor bytes;
    GGUFTensorInfo info;
  };
  std::map<std::string, Packed> packed;
};
// The tensor `name` of f with its packed bytes read once: realized on the device (what the file holds, no float copy)
// and dequantized lazily, in whichever kernel uses it. A model's weights: tensors[name] would read the file on every
// use, or, realized, become a float copy four to eight times the size. A missing name is a KeyError-like ValueError.
Tensor gguf_resident(const GGUFFile& f, const std::string& name);
// a GGUF file's metadata and tensors, on `device` (default Device::DEFAULT). Onto host memory (the CPU) the file is
// mapped copy-on-write (Tensor::from_file with a device, as llama.cpp maps it): each tensor's bytes are a view of the
// mapping that kernels read in place, never copied. Elsewhere each tensor reads its own bytes of the file (a DISK
// range, copied to the device) when it is realized. Either way quantized types dequantize lazily, on the device.
GGUFFile gguf_load(const std::string& path, std::optional<std::string> device = std::nullopt);
// the same from a 1-D uint8 tensor of a file's bytes (tinygrad's gguf_load(tensor)): on DISK, each tensor is copied to
// `device` (default Device::DEFAULT); a mapped file (a BUFFER in host memory) gives views of it; on any other device
// the tensors are computed there.
GGUFFile gguf_load(const Tensor& file, std::optional<std::string> device = std::nullopt);

// one tensor for gguf_save: values (any float or int dtype; realized and read on the host) stored as `type`,
// quantized on the host as ggml's quantize_row_*_ref does (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1), or by a
// least-squares fit of each sub-block of our own (Q4_K, Q6_K: ggml's reference searches a grid; the files are the
// same format, the values within a similar error); plain int types as they are. With raw set, `values` is the
// already-packed bytes (uint8) of `shape` elements of `type`: any type this reader knows, for tests that need exact
// blocks.
struct GGUFSaveTensor {
  std::string name;
  Tensor values;
  uint32_t type = static_cast<uint32_t>(GGMLType::F32);
  bool raw = false;
  Shape shape{};  // raw only: the tensor's shape (row-major, as gguf_load returns it)
};
// writes a GGUF v3 file (alignment from kv's general.alignment, else 32), as llama.cpp's gguf writer lays it out
void gguf_save(const std::string& path, const GGUFMetadata& kv, const std::vector<GGUFSaveTensor>& tensors);

}  // namespace tg::nn
