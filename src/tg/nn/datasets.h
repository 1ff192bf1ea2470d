#pragma once
// datasets (tinygrad's nn/datasets.py): MNIST and Fashion-MNIST from IDX files on disk
#include <optional>
#include <string>

#include "tg/tensor/tensor.h"

namespace tg::nn::datasets {

struct MNIST {
  Tensor X_train, Y_train, X_test, Y_test;  // uint8: images (N, 1, 28, 28), labels (N,)
};

// where the files are: MNIST's digits in data/mnist (tools/fetch_mnist.py), Fashion-MNIST's clothes in Debian's
// dataset-fashion-mnist (tools/setup.sh installs it); `dir` overrides either
inline constexpr const char* kMnistDir = "data/mnist";
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

struct MNISTOptions {
  bool fashion = false;                 // Fashion-MNIST (Zalando's clothes, the same format and sizes)
  std::optional<std::string> dir{};     // default: kMnistDir, or kFashionMnistDir with fashion
  std::optional<std::string> device{};  // where the tensors live (default: Device::DEFAULT)
};

// reads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte from
// the folder, each raw or gzipped (the same name plus .gz).
//   auto [X_train, Y_train, X_test, Y_test] = nn::datasets::mnist();
//   auto fashion = nn::datasets::mnist({.fashion = true});
// A missing or malformed file (wrong magic number, sizes that disagree with the data) is a tg::Error naming it and
// saying how to get it.
MNIST mnist(const MNISTOptions& opts = {});
MNIST mnist(const std::string& dir, std::optional<std::string> device = std::nullopt);

// one IDX file of unsigned bytes as a uint8 tensor of the shape in its header (raw or gzipped)
Tensor load_idx(const std::string& path, std::optional<std::string> device = std::nullopt);

}  // namespace tg::nn::datasets
