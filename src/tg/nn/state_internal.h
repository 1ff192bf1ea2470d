#pragma once
// shared by the state loaders (state.cpp, torch_load.cpp, gguf.cpp), not part of the public API
#include <optional>
#include <span>
#include <string>

#include "tg/nn/mapped_file.h"
#include "tg/nn/state.h"

namespace tg::nn::state {

// a realized tensor on `device` holding a copy of prod(shape) * itemsize bytes at `data`
Tensor realized_from_bytes(const uint8_t* data, DType dtype, const Shape& shape, const std::string& device);
// the device a loader puts its tensors on: `device` or Device::DEFAULT, canonical, and opened (an Error if unknown)
std::string canonical_device(const std::optional<std::string>& device);

// a loader on a 1-D uint8 tensor of a file's bytes on a device that holds them (default device: the tensor's): the
// bytes copied to the host and handed to parse(bytes, what the errors call the file, device); `loader` names the
// function in errors
using FileParser = StateDict (*)(std::span<const uint8_t> bytes, const std::string& what, const std::string& device);
StateDict load_file(const Tensor& file, const std::optional<std::string>& device, const char* loader, FileParser parse);

// a 1-D uint8 tensor on DISK (a file's bytes, Tensor::from_file): the loaders read its header through a mapping of
// the file, touching only those pages, and return lazy views of the tensor for the weights
bool is_disk_file(const Tensor& file);
class DiskBytes {
 public:
  DiskBytes(const Tensor& file, const char* what);  // `what` starts the errors: "safetensors", "gguf_load"
  std::span<const uint8_t> bytes() const;           // the tensor's bytes: the file's first numel()
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  MappedFile map_;
  size_t n_;
};

}  // namespace tg::nn::state
