// state dicts and safetensors (tinygrad's nn/state.py get_state_dict, load_state_dict, safe_save, safe_load)
#include "tg/nn/state.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>

#include "tg/nn/mapped_file.h"
#include "tg/nn/state_internal.h"
#include "tg/runtime/buffers.h"
#include "tg/shape/uop_shape.h"

namespace tg::nn {

// *** StateVisitor ***

std::vector<std::string_view> StateVisitor::split_names(std::string_view names) {
  std::vector<std::string_view> out;
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  size_t start = 0;
  for (size_t i = 0; i <= names.size(); i++)
    if (i == names.size() || names[i] == ',') out.push_back(trim(names.substr(start, i - start))), start = i + 1;
  return out;
}

// *** StateDict ***

StateDict::StateDict(std::initializer_list<std::pair<std::string, Tensor>> items) {
  for (const auto& [k, v] : items) insert_or_assign(k, v);
}
const Tensor& StateDict::at(const std::string& key) const {
  auto it = index_.find(key);
  TG_CHECK(it != index_.end(), "state dict has no key ", py_str_repr(key));
  return items_[it->second].second;
}
Tensor& StateDict::at(const std::string& key) {
  return const_cast<Tensor&>(static_cast<const StateDict&>(*this).at(key));
}
void StateDict::insert_or_assign(const std::string& key, Tensor t) {
  if (auto it = index_.find(key); it != index_.end()) {
    items_[it->second].second = std::move(t);
    return;
  }
  index_.emplace(key, items_.size());
  items_.emplace_back(key, std::move(t));
}
bool StateDict::erase(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(it->second));
  index_.clear();
  for (size_t i = 0; i < items_.size(); i++) index_.emplace(items_[i].first, i);
  return true;
}
std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  for (const auto& kv : items_) out.push_back(kv.first);
  return out;
}

// *** load_state_dict ***

namespace state {

std::vector<Tensor> load_state_dict_into(StateDict model_state, StateDict& state_dict, const LoadOptions& opts) {
  std::vector<std::string> missing, unexpected;
  for (const auto& [k, v] : model_state)
    if (!state_dict.contains(k)) missing.push_back(k);
  for (const auto& [k, v] : state_dict)
    if (!model_state.contains(k)) unexpected.push_back(k);
  auto quoted = [](const std::vector<std::string>& ks) {
    std::vector<std::string> q;
    for (const auto& k : ks) q.push_back(py_str_repr(k));
    return "[" + join(q, ", ") + "]";
  };
  if (opts.strict) {
    TG_CHECK(missing.empty() && unexpected.empty(),
             "load_state_dict: ", missing.empty() ? "" : cat("missing keys ", quoted(missing)),
             !missing.empty() && !unexpected.empty() ? ", " : "",
             unexpected.empty() ? "" : cat("unexpected keys ", quoted(unexpected)));
  } else if (opts.verbose && !unexpected.empty()) {
    std::cout << "WARNING: unused weights in state_dict " << quoted(unexpected) << "\n";
  }
  // check everything before changing anything, so a bad state dict leaves the model as it was
  for (auto& [k, v] : model_state) {
    if (!state_dict.contains(k)) continue;
    const Tensor& src = state_dict.at(k);
    TG_CHECK_AS(ValueError, v.shape() == src.shape(), "load_state_dict: shape mismatch in ", py_str_repr(k),
                ": the model has ", shape_str(v.shape()), ", the state dict ", shape_str(src.shape()));
    TG_CHECK(!opts.same_dtype || v.dtype() == src.dtype(), "load_state_dict: dtype mismatch in ", py_str_repr(k),
             ": the model has ", v.dtype(), ", the state dict ", src.dtype());
  }
  std::vector<Tensor> loaded;
  for (auto& [k, v] : model_state) {
    if (!state_dict.contains(k)) {
      if (opts.verbose) std::cout << "WARNING: not loading " << k << "\n";
      continue;
    }
    const Tensor& src = state_dict.at(k);
    v.replace(src.device() == v.device() ? src : Tensor(src.uop(), TensorOptions{v.device(), std::nullopt, false}));
    loaded.push_back(v);
  }
  if (opts.consume)
    for (auto& [k, v] : model_state) state_dict.erase(k);
  if (opts.realize) Tensor::realize(loaded);
  if (opts.verbose) {
    int64_t bytes = 0;
    for (const Tensor& t : loaded) bytes += t.nbytes();
    std::cout << "loaded " << loaded.size() << " tensors, " << double(bytes) / 1e6 << " MB\n";
  }
  return loaded;
}

// *** safetensors ***

namespace {

struct SafeDType {
  const char* name;
  const DType* dtype;
};
// tinygrad's safe_dtypes, in its order
const SafeDType safe_dtypes[] = {{"BOOL", &dtypes::bool_},  {"I8", &dtypes::int8},       {"U8", &dtypes::uint8},
                                 {"I16", &dtypes::int16},   {"U16", &dtypes::uint16},    {"I32", &dtypes::int32},
                                 {"U32", &dtypes::uint32},  {"I64", &dtypes::int64},     {"U64", &dtypes::uint64},
                                 {"F16", &dtypes::float16}, {"BF16", &dtypes::bfloat16}, {"F32", &dtypes::float32},
                                 {"F64", &dtypes::float64}};

std::string safe_dtype_names() {
  std::vector<std::string> names;
  for (const auto& d : safe_dtypes) names.emplace_back(d.name);
  return join(names, ", ");
}

// a realized tensor holding a copy of `info`'s bytes at `data` (the data section)
Tensor safe_tensor(const uint8_t* data, const SafeTensorInfo& info, const std::string& device) {
  return realized_from_bytes(data + info.start, info.dtype, info.shape, device);
}

StateDict safe_tensors(std::span<const uint8_t> file, const std::string& what,
                       const std::string& device) {  // FileParser
  SafetensorsHeader h = safe_parse_header(file, what);
  StateDict out;
  for (const SafeTensorInfo& info : h.tensors)
    out.insert_or_assign(info.name, safe_tensor(file.data() + h.data_start, info, device));
  return out;
}

}  // namespace

Tensor realized_from_bytes(const uint8_t* data, DType dtype, const Shape& shape, const std::string& device) {
  int64_t numel = tg::prod(shape);
  UOp buf = uop_new_buffer(device, numel, dtype);
  if (numel > 0)  // as Tensor's host constructors: no data, no allocation
    uop_buffer(buf).allocate().copyin(data, static_cast<size_t>(numel * dtype.itemsize()));
  return Tensor(uop_reshape(buf, shape), TensorOptions{device, std::nullopt, std::nullopt});
}

std::string canonical_device(const std::optional<std::string>& device) {
  std::string d = Device::canonicalize(device ? std::string_view(*device) : std::string_view(Device::DEFAULT.str()));
  Device::get(d);
  return d;
}

std::string safe_dtype_name(DType dt) {
  for (const auto& d : safe_dtypes)
    if (*d.dtype == dt) return d.name;
  throw Error(cat("safetensors can't hold ", dt, " (its dtypes: ", safe_dtype_names(), ")"));
}

DType safe_dtype(const std::string& name) {
  for (const auto& d : safe_dtypes)
    if (name == d.name) return *d.dtype;
  throw Error(cat("unknown safetensors dtype ", py_str_repr(name), " (known: ", safe_dtype_names(), ")"));
}

SafetensorsHeader safe_parse_header(std::span<const uint8_t> file, const std::string& what) {
  auto fail = [&](const auto&... xs) { throw Error(cat("safetensors ", what, ": ", xs...)); };
  if (file.size() < 8) fail("the file is ", file.size(), " bytes, too short for the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | file[static_cast<size_t>(i)];
  if (n > file.size() - 8) fail("header length ", n, " goes beyond the file: 8 + ", n, " > ", file.size(), " bytes");
  SafetensorsHeader h;
  h.data_start = static_cast<int64_t>(8 + n);
  try {
    h.json = json::parse(std::string_view(reinterpret_cast<const char*>(file.data() + 8), n));
  } catch (const Error& e) {
    fail("bad JSON header (", n, " bytes from byte 8): ", e.what());
  }
  if (!h.json.is_object()) fail("the header must be a JSON object, got ", json::Value::kind_name(h.json.kind()));
  const int64_t data_size = static_cast<int64_t>(file.size()) - h.data_start;
  for (const auto& [name, entry] : h.json.as_object()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        fail("\"__metadata__\" must be an object, got ", json::Value::kind_name(entry.kind()), " ", entry.dump());
      h.metadata = entry.as_object();
      continue;
    }
    std::string tname = cat("tensor ", py_str_repr(name));
    if (!entry.is_object()) fail(tname, ": the entry must be an object, got ", entry.dump());
    const json::Value* dtype = entry.find("dtype");
    const json::Value* shape = entry.find("shape");
    const json::Value* offsets = entry.find("data_offsets");
    for (auto [field, v] : {std::pair{"dtype", dtype}, {"shape", shape}, {"data_offsets", offsets}})
      if (v == nullptr) fail(tname, " has no \"", field, "\": ", entry.dump());
    SafeTensorInfo info;
    info.name = name;
    if (!dtype->is_string()) fail(tname, ": dtype must be a string, got ", dtype->dump());
    const SafeDType* sd = nullptr;
    for (const auto& d : safe_dtypes)
      if (dtype->as_string() == d.name) sd = &d;
    if (sd == nullptr)
      fail(tname, ": unknown dtype ", py_str_repr(dtype->as_string()), " (known: ", safe_dtype_names(), ")");
    info.dtype = *sd->dtype;
    bool shape_ok = shape->is_array();
    if (shape_ok)
      for (const json::Value& d : shape->as_array()) shape_ok = shape_ok && d.is_int() && d.as_int() >= 0;
    if (!shape_ok) fail(tname, ": shape must be a list of non-negative ints, got ", shape->dump());
    for (const json::Value& d : shape->as_array()) info.shape.push_back(d.as_int());
    bool offsets_ok = offsets->is_array() && offsets->as_array().size() == 2;
    if (offsets_ok)
      for (const json::Value& o : offsets->as_array()) offsets_ok = offsets_ok && o.is_int() && o.as_int() >= 0;
    if (!offsets_ok) fail(tname, ": data_offsets must be two non-negative ints, got ", offsets->dump());
    info.start = offsets->as_array()[0].as_int(), info.end = offsets->as_array()[1].as_int();
    if (info.end < info.start) fail(tname, ": data_offsets [", info.start, ", ", info.end, "] end before they start");
    if (info.end > data_size)
      fail(tname, ": data_offsets [", info.start, ", ", info.end, "] go beyond the data: ", data_size,
           " bytes (from byte ", h.data_start, " of a ", file.size(), "-byte file)");
    int64_t nbytes = info.dtype.itemsize();  // no overflow: a shape too large can't match the offsets anyway
    bool too_big = false;
    for (int64_t d : info.shape) too_big = too_big || __builtin_mul_overflow(nbytes, d, &nbytes);
    if (too_big || nbytes != info.end - info.start)
      fail(tname, ": data_offsets [", info.start, ", ", info.end, "] hold ", info.end - info.start, " bytes, but ",
           sd->name, " ", shape_str(info.shape), " needs ",
           too_big ? std::string("more than 2**63") : std::to_string(nbytes));
    h.tensors.push_back(std::move(info));
  }
  // no two tensors may share a byte (an empty tensor has none to share)
  std::vector<const SafeTensorInfo*> order;
  for (const SafeTensorInfo& t : h.tensors)
    if (t.end > t.start) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const SafeTensorInfo* a, const SafeTensorInfo* b) {
    return a->start != b->start ? a->start < b->start : a->end < b->end;
  });
  for (size_t i = 1; i < order.size(); i++)
    if (order[i]->start < order[i - 1]->end)
      fail("tensors ", py_str_repr(order[i - 1]->name), " [", order[i - 1]->start, ", ", order[i - 1]->end, "] and ",
           py_str_repr(order[i]->name), " [", order[i]->start, ", ", order[i]->end, "] overlap");
  return h;
}

SafetensorsHeader safe_load_metadata(const std::string& path) {
  MappedFile f(path, "safetensors");
  return safe_parse_header(f.bytes(), py_str_repr(path));
}

bool is_disk_file(const Tensor& file) {
  return file.device().starts_with("DISK") && file.ndim() == 1 && file.dtype() == dtypes::uint8;
}
DiskBytes::DiskBytes(const Tensor& file, const char* what)
    : path_(file.device().substr(file.device().find(':') + 1)),
      map_(path_, what),
      n_(std::min<size_t>(map_.bytes().size(), static_cast<size_t>(file.numel()))) {}
std::span<const uint8_t> DiskBytes::bytes() const { return map_.bytes().subspan(0, n_); }

StateDict load_file(const Tensor& file, const std::optional<std::string>& device, const char* loader,
                    FileParser parse) {
  TG_CHECK(file.ndim() == 1 && file.dtype() == dtypes::uint8, loader,
           ": the tensor must be 1-D uint8 (a file's bytes), got ", file.dtype(), " ", shape_str(file.shape()));
  std::string dev = canonical_device(device ? device : std::optional<std::string>(file.device()));
  std::vector<uint8_t> bytes = file.data_bytes();
  return parse(bytes, "<tensor>", dev);
}

// the tensors of a file on DISK, lazily: each a view of its bytes, copied to `device` when it is realized
static StateDict safe_load_disk(const Tensor& file, const std::string& device) {
  SafetensorsHeader h;
  {
    DiskBytes f(file, "safetensors");  // only the header's pages are read
    h = safe_parse_header(f.bytes(), py_str_repr(file.device()));
  }
  StateDict out;
  for (const SafeTensorInfo& info : h.tensors) {
    int64_t start = h.data_start + info.start, end = h.data_start + info.end;
    Tensor t = start == end ? Tensor::empty(info.shape, {.device = device, .dtype = info.dtype})
                            : file.shrink({{start, end}}).bitcast(info.dtype).reshape(info.shape).to(device);
    out.insert_or_assign(info.name, t);
  }
  return out;
}

StateDict safe_load(const std::string& path, std::optional<std::string> device) {
  return safe_load_disk(Tensor::from_file(path), canonical_device(device));
}
StateDict safe_load(const Tensor& file, std::optional<std::string> device) {
  if (is_disk_file(file)) return safe_load_disk(file, canonical_device(device));
  return load_file(file, device, "safe_load", safe_tensors);
}

void safe_save(const StateDict& tensors, const std::string& path, const json::Object& metadata) {
  json::Object header;
  if (!metadata.empty()) header.emplace_back("__metadata__", metadata);
  int64_t offset = 0;
  std::vector<Tensor> ts;
  for (const auto& [name, t] : tensors) {
    TG_CHECK(name != "__metadata__", "safe_save: a tensor can't be named \"__metadata__\"");
    std::string dt;
    try {
      dt = safe_dtype_name(t.dtype());
    } catch (const Error& e) {
      throw Error(cat("safe_save: tensor ", py_str_repr(name), ": ", e.what()));
    }
    json::Array shape;
    for (int64_t d : t.shape()) shape.emplace_back(d);
    header.emplace_back(name, json::Object{{"dtype", dt},
                                           {"shape", std::move(shape)},
                                           {"data_offsets", json::Array{offset, offset + t.nbytes()}}});
    offset += t.nbytes();
    ts.push_back(t);
  }
  std::string j = json::Value(std::move(header)).dump();
  j.append((8 - j.size() % 8) % 8, ' ');
  Tensor::realize(ts);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), std::fclose);
  TG_CHECK(f != nullptr, "safe_save: can't open ", py_str_repr(path), " for writing: ", std::strerror(errno));
  auto write = [&](const void* p, size_t n) {
    TG_CHECK(n == 0 || std::fwrite(p, 1, n, f.get()) == n, "safe_save: writing ", py_str_repr(path),
             " failed: ", std::strerror(errno));
  };
  uint8_t len[8];
  for (size_t i = 0; i < 8; i++) len[i] = static_cast<uint8_t>(static_cast<uint64_t>(j.size()) >> (8 * i));
  write(len, 8);
  write(j.data(), j.size());
  for (const Tensor& t : ts) {
    std::vector<uint8_t> bytes = t.data_bytes();
    write(bytes.data(), bytes.size());
  }
  TG_CHECK(std::fclose(f.release()) == 0, "safe_save: writing ", py_str_repr(path), " failed: ", std::strerror(errno));
}

}  // namespace state
}  // namespace tg::nn
