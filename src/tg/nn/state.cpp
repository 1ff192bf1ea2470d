// state dicts (tinygrad's nn/state.py get_state_dict, load_state_dict)
#include "tg/nn/state.h"

#include <algorithm>
#include <iostream>

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
    TG_CHECK(v.shape() == src.shape(), "load_state_dict: shape mismatch in ", py_str_repr(k), ": the model has ",
             shape_str(v.shape()), ", the state dict ", shape_str(src.shape()));
    TG_CHECK(v.dtype() == src.dtype(), "load_state_dict: dtype mismatch in ", py_str_repr(k), ": the model has ",
             v.dtype(), ", the state dict ", src.dtype());
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

}  // namespace state
}  // namespace tg::nn
