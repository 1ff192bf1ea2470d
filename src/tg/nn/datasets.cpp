// MNIST from IDX files (http://yann.lecun.com/exdb/mnist/ describes the format), raw or gzipped through zlib
#include "tg/nn/datasets.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

namespace tg::nn::datasets {

namespace {

// the whole file, inflated when it is gzipped (zlib reads a plain file as it is)
std::vector<uint8_t> read_maybe_gzipped(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  TG_CHECK(f != nullptr, "can't open ", path);
  std::vector<uint8_t> out;
  std::vector<uint8_t> chunk(1 << 20);
  while (true) {
    int n = gzread(f.get(), chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int err = 0;
      const char* msg = gzerror(f.get(), &err);
      throw Error(cat(path, ": corrupt gzip data (", msg ? msg : "unknown error", ")"));
    }
    if (n == 0) break;
    out.insert(out.end(), chunk.begin(), chunk.begin() + n);
  }
  int err = 0;
  gzerror(f.get(), &err);
  TG_CHECK(err == Z_OK, path, ": truncated or corrupt gzip data");
  int rc = gzclose(f.release());
  TG_CHECK(rc == Z_OK, path, ": truncated or corrupt gzip data (gzclose: ", rc, ")");
  return out;
}

}  // namespace

Tensor load_idx(const std::string& path, std::optional<std::string> device) {
  std::vector<uint8_t> d = read_maybe_gzipped(path);
  // header: two zero bytes, the element type (0x08: unsigned byte), the number of dims, then each dim as a
  // big-endian uint32
  TG_CHECK(d.size() >= 4, path, ": not an IDX file: ", d.size(), " bytes, too short for the magic number");
  if (d[0] != 0 || d[1] != 0 || d[2] != 0x08 || d[3] == 0) {
    char magic[16];
    std::snprintf(magic, sizeof(magic), "0x%02x%02x%02x%02x", d[0], d[1], d[2], d[3]);
    throw Error(cat(path, ": not an IDX file of unsigned bytes: magic number ", magic,
                    ", want 0x00000801 (labels) or 0x00000803 (images)"));
  }
  size_t ndim = d[3], header = 4 + 4 * ndim;
  TG_CHECK(d.size() >= header, path, ": truncated IDX header: ", ndim, " dims need ", header, " bytes, the file has ",
           d.size());
  Shape shape;
  uint64_t numel = 1;
  for (size_t i = 0; i < ndim; i++) {
    const uint8_t* p = d.data() + 4 + 4 * i;
    uint64_t dim = uint64_t(p[0]) << 24 | uint64_t(p[1]) << 16 | uint64_t(p[2]) << 8 | p[3];
    shape.push_back(static_cast<int64_t>(dim));
    numel = dim == 0 || numel <= (uint64_t(1) << 40) / dim ? numel * dim : (uint64_t(1) << 41);  // no overflow
  }
  TG_CHECK(numel == d.size() - header, path, ": IDX sizes ", shape_str(shape), " need ", numel,
           " bytes of data, the file has ", d.size() - header);
  return Tensor(d.data() + header, shape, TensorOptions{device, dtypes::uint8, false});
}

MNIST mnist(const MNISTOptions& opts) {
  std::string dir = opts.dir.value_or(opts.fashion ? kFashionMnistDir : kMnistDir);
  const std::optional<std::string>& device = opts.device;
  const char* how = opts.fashion ? "install Debian's dataset-fashion-mnist (tools/setup.sh does)"
                                 : "run tools/fetch_mnist.py to download or build it";
  auto load = [&](const std::string& name, size_t want_ndim) {
    std::filesystem::path base = std::filesystem::path(dir) / name;
    std::filesystem::path gz = base;
    gz += ".gz";
    std::string path = std::filesystem::exists(base) ? base.string() : gz.string();
    TG_CHECK(std::filesystem::exists(path), "mnist: missing ", base.string(), " (or ", gz.string(), "): ", how);
    Tensor t = load_idx(path, device);
    TG_CHECK(static_cast<size_t>(t.ndim()) == want_ndim, path, ": expected ", want_ndim, " dims, got ",
             shape_str(t.shape()));
    return t;
  };
  auto images = [&](const std::string& name) {
    Tensor t = load(name, 3);
    TG_CHECK(t.shape()[1] == 28 && t.shape()[2] == 28, dir, "/", name, ": MNIST images are 28x28, got ",
             shape_str(t.shape()));
    return t.reshape({-1, 1, 28, 28});
  };
  MNIST m{images("train-images-idx3-ubyte"), load("train-labels-idx1-ubyte", 1), images("t10k-images-idx3-ubyte"),
          load("t10k-labels-idx1-ubyte", 1)};
  TG_CHECK(m.X_train.shape()[0] == m.Y_train.shape()[0], "mnist: ", m.X_train.shape()[0], " train images but ",
           m.Y_train.shape()[0], " train labels");
  TG_CHECK(m.X_test.shape()[0] == m.Y_test.shape()[0], "mnist: ", m.X_test.shape()[0], " test images but ",
           m.Y_test.shape()[0], " test labels");
  return m;
}

MNIST mnist(const std::string& dir, std::optional<std::string> device) {
  return mnist(MNISTOptions{.fashion = false, .dir = dir, .device = std::move(device)});
}

}  // namespace tg::nn::datasets
