#pragma once
// tinygrad's nn/state.py: state dicts of models, and the one-line model declaration that makes them work.
//
// tinygrad has no nn.Module: get_state_dict walks an object's attributes. C++ has no reflection, so a model lists
// its members once, in declaration order, with TG_PARAMS:
//
//   struct Net {
//     nn::Conv2d c1{1, 32, 5};
//     nn::BatchNorm bn{32};
//     std::vector<nn::Linear> layers;        // "layers.0.weight", "layers.1.bias", ...
//     Tensor scale = Tensor::ones({1});      // a bare tensor
//     std::optional<Tensor> extra;           // skipped while empty (tinygrad's None)
//     TG_PARAMS(c1, bn, layers, scale, extra)
//     Tensor operator()(const Tensor& x) { ... }
//   };
//   nn::state::get_state_dict(net);          // {"c1.weight", "c1.bias", "bn.weight", ..., "layers.0.weight", ...}
//
// TG_PARAMS(a, b, ...) defines `void visit(tg::nn::StateVisitor&)`, which names each member after its identifier.
// A member may be a Tensor, std::optional<Tensor>, anything with such a visit (a nested model: dotted names),
// std::vector / std::array of those (".0", ".1", ...), std::map<std::string, T> (".key"), std::optional<T>,
// std::unique_ptr<T> or std::shared_ptr<T> (skipped while empty); members not named are not in the state. A model
// that needs other names writes visit by hand: `void visit(StateVisitor& v) { v("weight", w); v("bias", b); }`,
// and a derived model that adds members calls its base's first: `{ Base::visit(v); v("extra", extra); }`.
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tg/helpers/json.h"
#include "tg/tensor/tensor.h"

namespace tg::nn {

class StateVisitor;

template <class T>
concept Visitable = requires(T& t, StateVisitor& v) {
  t.visit(v);
};

class StateVisitor {
 public:
  using Fn = std::function<void(const std::string& name, Tensor& t)>;
  explicit StateVisitor(Fn fn, std::string prefix = "") : fn_(std::move(fn)), prefix_(std::move(prefix)) {}

  // one member under `name` (relative to the enclosing model)
  template <class T>
  void operator()(std::string_view name, T& member) {
    size_t len = prefix_.size();
    if (!name.empty()) prefix_.append(name).push_back('.');
    visit_member(member);
    prefix_.resize(len);
  }
  // TG_PARAMS' body: `names` is the stringized argument list "a, b, c"
  template <class... Ts>
  void fields(std::string_view names, Ts&... members) {
    std::vector<std::string_view> split = split_names(names);
    size_t i = 0;
    ((*this)(split.at(i++), members), ...);
  }

 private:
  static std::vector<std::string_view> split_names(std::string_view names);
  void emit(Tensor& t) { fn_(prefix_.empty() ? prefix_ : prefix_.substr(0, prefix_.size() - 1), t); }

  void visit_member(Tensor& t) { emit(t); }
  template <class T>
  void visit_member(std::optional<T>& o) {
    if (o) visit_member(*o);
  }
  template <class T>
  void visit_member(std::unique_ptr<T>& p) {
    if (p) visit_member(*p);
  }
  template <class T>
  void visit_member(std::shared_ptr<T>& p) {
    if (p) visit_member(*p);
  }
  template <class T>
  void visit_member(std::vector<T>& xs) {
    for (size_t i = 0; i < xs.size(); i++) (*this)(std::to_string(i), xs[i]);
  }
  template <class T, size_t N>
  void visit_member(std::array<T, N>& xs) {
    for (size_t i = 0; i < N; i++) (*this)(std::to_string(i), xs[i]);
  }
  template <class T>
  void visit_member(std::map<std::string, T>& xs) {
    for (auto& kv : xs) (*this)(kv.first, kv.second);
  }
  template <Visitable T>
  void visit_member(T& m) {
    m.visit(*this);
  }

  Fn fn_;
  std::string prefix_;  // "layers.0." while inside layers[0]
};

#define TG_PARAMS(...) \
  void visit(::tg::nn::StateVisitor& tg_visitor_) { tg_visitor_.fields(#__VA_ARGS__, __VA_ARGS__); }

// an insertion-ordered name -> Tensor map (tinygrad's state dicts are ordered dicts)
class StateDict {
 public:
  StateDict() = default;
  StateDict(std::initializer_list<std::pair<std::string, Tensor>> items);

  bool contains(const std::string& key) const { return index_.count(key) != 0; }
  const Tensor& at(const std::string& key) const;
  Tensor& at(const std::string& key);
  void insert_or_assign(const std::string& key, Tensor t);
  bool erase(const std::string& key);
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::vector<std::string> keys() const;
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }

 private:
  std::vector<std::pair<std::string, Tensor>> items_;
  std::unordered_map<std::string, size_t> index_;
};

namespace state {

// every tensor of the model under its dotted name, in declaration order
template <class M>
StateDict get_state_dict(M&& model, const std::string& prefix = "") {
  StateDict out;
  StateVisitor v([&](const std::string& name, Tensor& t) { out.insert_or_assign(name, t); }, prefix);
  v("", model);
  return out;
}

// the tensors of get_state_dict, in order (handles: they share storage and grads with the model's tensors)
template <class M>
std::vector<Tensor> get_parameters(M&& model) {
  std::vector<Tensor> out;
  for (auto& kv : get_state_dict(std::forward<M>(model))) out.push_back(kv.second);
  return out;
}

struct LoadOptions {
  bool strict = true;      // every key of the model must be in the state dict, and nothing else may be there
  bool verbose = false;    // print what was loaded, and the keys not loaded
  bool consume = false;    // erase loaded entries from the state dict
  bool realize = true;     // realize the loaded tensors (in one schedule)
  bool same_dtype = true;  // a dtype that differs from the model's is an error (false: the model's tensor takes the
                           // state dict's dtype, as tinygrad's Python load_state_dict, whose replace() keeps it)
};

// points each of the model's tensors at the state dict's tensor of the same name (shape and dtype must match, the
// dtype unless opts.same_dtype is false; a tensor on another device is copied to the model's). Returns the loaded
// tensors.
std::vector<Tensor> load_state_dict_into(StateDict model_state, StateDict& state_dict, const LoadOptions& opts);

template <class M>
std::vector<Tensor> load_state_dict(M& model, StateDict& state_dict, const LoadOptions& opts = {}) {
  return load_state_dict_into(get_state_dict(model), state_dict, opts);
}
template <class M>
std::vector<Tensor> load_state_dict(M& model, const StateDict& state_dict, LoadOptions opts = {}) {
  TG_CHECK(!opts.consume, "load_state_dict: consume needs a mutable state dict");
  StateDict copy = state_dict;
  return load_state_dict_into(get_state_dict(model), copy, opts);
}

// *** safetensors (tinygrad's safe_save, safe_load, safe_load_metadata) ***
//
// A .safetensors file: an 8-byte little-endian header length N, N bytes of JSON, then the data. The JSON object maps
// each tensor's name to {"dtype":"F32","shape":[2,3],"data_offsets":[start,end]}, byte offsets into the data (which
// starts at 8 + N), and may hold "__metadata__", an object (of strings, by the format; tinygrad writes any JSON).
// dtypes: BOOL I8 U8 I16 U16 I32 U32 I64 U64 F16 BF16 F32 F64 (tinygrad's safe_dtypes; no F8 types).
//
//   nn::state::safe_save(nn::state::get_state_dict(net), "net.safetensors", {{"epoch", "3"}});
//   nn::state::load_state_dict(net, nn::state::safe_load("net.safetensors"));
//
// safe_load reads the header (only its pages of the file) and returns each tensor as a lazy view of the file on the
// DISK device copied to `device`: nothing else is read until a tensor is realized, and then only its own bytes
// (tinygrad keeps them on DISK; here they come to the device asked for, Device::DEFAULT unless named).
// A corrupt file is a tg::Error naming the file, the tensor and the values: too short, a header length beyond the
// file, bad JSON, an entry without dtype/shape/data_offsets, an unknown dtype, offsets out of range or reversed, a
// byte size that disagrees with the shape, overlapping tensors.

struct SafeTensorInfo {
  std::string name;
  DType dtype;
  Shape shape;
  int64_t start = 0, end = 0;  // data_offsets: bytes, counted from data_start
};

struct SafetensorsHeader {
  json::Value json;                     // the whole header as parsed (what tinygrad's safe_load_metadata returns)
  int64_t data_start = 0;               // 8 + the header length
  std::vector<SafeTensorInfo> tensors;  // in the header's order, checked against the file
  json::Object metadata;                // "__metadata__", empty without one
};

// writes the tensors (realized in one schedule, then copied out) in the state dict's order; the header is written
// as tinygrad writes it (compact JSON, "__metadata__" first when metadata is not empty, spaces up to a multiple of
// 8 bytes), so the same dict gives the same bytes
void safe_save(const StateDict& tensors, const std::string& path, const json::Object& metadata = {});

// every tensor of the file, in the header's order, on `device` (default: Device::DEFAULT)
StateDict safe_load(const std::string& path, std::optional<std::string> device = std::nullopt);
// the same from a 1-D uint8 tensor holding a file's bytes; default device: the tensor's
StateDict safe_load(const Tensor& file, std::optional<std::string> device = std::nullopt);

// the header of the file, checked as safe_load checks it; reads no tensor data
SafetensorsHeader safe_load_metadata(const std::string& path);
// the header of a whole file's bytes; `what` names it in errors
SafetensorsHeader safe_parse_header(std::span<const uint8_t> file, const std::string& what);

// *** PyTorch checkpoints (tinygrad's torch_load) ***
//
// The zip archive torch.save writes (PyTorch 1.6 and later; the older pickle/tar format is an Error that says so):
// every tensor reachable from the saved object through dicts, lists and tuples, under its dotted path, in the
// pickle's order; other values (numbers, strings, objects) are left out. A state dict loads as it was saved
// ("conv.weight"); a checkpoint {"model": state_dict, "epoch": 3} gives "model.conv.weight". Tensors are copied
// out of the archive into realized contiguous buffers on `device` (default: Device::DEFAULT): views (a storage
// offset, strides, expanded dims) are gathered; stored and deflated entries and zip64 archives are read. The pickle
// is interpreted, never executed: a class other than the tensor rebuilders is an opaque value. A corrupt file is a
// tg::Error naming the file and what is wrong (the entry, the pickle byte, the tensor).
//
//   nn::state::load_state_dict(net, nn::state::torch_load("resnet18.pth"));
StateDict torch_load(const std::string& path, std::optional<std::string> device = std::nullopt);
// the same from a 1-D uint8 tensor holding a file's bytes; default device: the tensor's
StateDict torch_load(const Tensor& file, std::optional<std::string> device = std::nullopt);

// the safetensors name of a dtype ("F32"), and back; a dtype safetensors can't hold is an Error
std::string safe_dtype_name(DType dt);
DType safe_dtype(const std::string& name);

}  // namespace state
}  // namespace tg::nn
