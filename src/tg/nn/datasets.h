#pragma once
// datasets (tinygrad's nn/datasets.py): MNIST from IDX files on disk
#include <optional>
#include <string>

#include "tg/tensor/tensor.h"

namespace tg::nn::datasets {

struct MNIST {
  Tensor X_train, Y_train, X_test, Y_test;  // uint8: images (N, 1, 28, 28), labels (N,)
};

// reads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte from
// `dir`, each raw or gzipped (the same name plus .gz). tools/fetch_mnist.sh puts them in data/mnist/.
//   auto [X_train, Y_train, X_test, Y_test] = nn::datasets::mnist();
// A missing or malformed file (wrong magic number, sizes that disagree with the data) is a tg::Error naming it.
MNIST mnist(const std::string& dir = "data/mnist", std::optional<std::string> device = std::nullopt);

// one IDX file of unsigned bytes as a uint8 tensor of the shape in its header (raw or gzipped)
Tensor load_idx(const std::string& path, std::optional<std::string> device = std::nullopt);

}  // namespace tg::nn::datasets
