#pragma once
// shared by the state loaders (state.cpp, torch_load.cpp), not part of the public API
#include <optional>
#include <span>
#include <string>

#include "tg/nn/state.h"

namespace tg::nn::state {

// a realized tensor on `device` holding a copy of prod(shape) * itemsize bytes at `data`
Tensor realized_from_bytes(const uint8_t* data, DType dtype, const Shape& shape, const std::string& device);
// the device a loader puts its tensors on: `device` or Device::DEFAULT, canonical, and opened (an Error if unknown)
std::string canonical_device(const std::optional<std::string>& device);

// a loader's two forms, a path (the file mapped) or a 1-D uint8 tensor of the file's bytes (default device: the
// tensor's), both handed to parse(bytes, what the errors call the file, device); `loader` names the function in errors
using FileParser = StateDict (*)(std::span<const uint8_t> bytes, const std::string& what, const std::string& device);
StateDict load_file(const std::string& path, const std::optional<std::string>& device, const char* loader,
                    FileParser parse);
StateDict load_file(const Tensor& file, const std::optional<std::string>& device, const char* loader, FileParser parse);

}  // namespace tg::nn::state
