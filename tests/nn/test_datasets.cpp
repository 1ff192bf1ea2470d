// mnist(dir): IDX files written here, raw and gzipped, and every way they can be broken
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "tinygrad/tinygrad.h"

using namespace tg;
namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

namespace {

// an IDX file of unsigned bytes: 0, 0, 0x08, ndim, the dims as big-endian uint32, the data
Bytes idx(const std::vector<uint32_t>& dims, const Bytes& data) {
  Bytes out = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(d >> s));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}
Bytes images(uint32_t n, uint8_t seed) {
  Bytes d(n * 28 * 28);
  for (size_t i = 0; i < d.size(); i++) d[i] = static_cast<uint8_t>(i * 7 + seed);
  return idx({n, 28, 28}, d);
}
Bytes labels(uint32_t n, uint8_t seed) {
  Bytes d(n);
  for (size_t i = 0; i < n; i++) d[i] = static_cast<uint8_t>((i + seed) % 10);
  return idx({n}, d);
}

struct Datasets : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          cat("tg_mnist_", getpid(), "_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  void write(const std::string& name, const Bytes& b) {
    std::ofstream f(dir / name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  void write_gz(const std::string& name, const Bytes& b) {
    gzFile f = gzopen((dir / name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, b.data(), static_cast<unsigned>(b.size())), static_cast<int>(b.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
  }
  Bytes read(const std::string& name) {
    std::ifstream f(dir / name, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), {});
  }
  // the four files, each raw or gzipped
  void write_all(bool gz) {
    auto put = [&](const std::string& name, const Bytes& b) { gz ? write_gz(name + ".gz", b) : write(name, b); };
    put("train-images-idx3-ubyte", images(3, 1));
    put("train-labels-idx1-ubyte", labels(3, 1));
    put("t10k-images-idx3-ubyte", images(2, 5));
    put("t10k-labels-idx1-ubyte", labels(2, 5));
  }
  std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  std::string mnist_error() {
    return error_of([&] { nn::datasets::mnist(dir.string()); });
  }
};

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void check_mnist(const nn::datasets::MNIST& m) {
  EXPECT_EQ(m.X_train.shape(), (Shape{3, 1, 28, 28}));
  EXPECT_EQ(m.Y_train.shape(), Shape{3});
  EXPECT_EQ(m.X_test.shape(), (Shape{2, 1, 28, 28}));
  EXPECT_EQ(m.Y_test.shape(), Shape{2});
  EXPECT_EQ(m.X_train.dtype(), dtypes::uint8);
  EXPECT_EQ(m.Y_train.dtype(), dtypes::uint8);
  Bytes file = images(2, 5), want_x(file.begin() + 16, file.end());
  EXPECT_EQ(m.X_test.tolist<uint8_t>(), want_x);
  EXPECT_EQ(m.Y_train.tolist<uint8_t>(), (Bytes{1, 2, 3}));
  EXPECT_EQ(m.Y_test.tolist<uint8_t>(), (Bytes{5, 6}));
}

}  // namespace

TEST_F(Datasets, MnistRaw) {
  write_all(false);
  check_mnist(nn::datasets::mnist(dir.string()));
}

TEST_F(Datasets, MnistGzipped) {
  write_all(true);
  check_mnist(nn::datasets::mnist(dir.string()));
  auto [X_train, Y_train, X_test, Y_test] = nn::datasets::mnist(dir.string());  // as the reference's tuple
  EXPECT_EQ(X_train.shape()[0], 3);
}

TEST_F(Datasets, MissingFileSaysHowToGetIt) {
  write_all(false);
  fs::remove(dir / "t10k-labels-idx1-ubyte");
  std::string m = mnist_error();
  EXPECT_TRUE(has(m, "t10k-labels-idx1-ubyte") && has(m, "fetch_mnist")) << m;
}

TEST_F(Datasets, BadMagicNumber) {
  write_all(false);
  Bytes b = read("train-labels-idx1-ubyte");
  b[2] = 0x0D;  // float data
  write("train-labels-idx1-ubyte", b);
  std::string m = mnist_error();
  EXPECT_TRUE(has(m, "magic") && has(m, "0x00000d01") && has(m, "train-labels")) << m;
  write("train-labels-idx1-ubyte", {'P', 'K', 3, 4, 0, 0});
  EXPECT_TRUE(has(mnist_error(), "magic")) << mnist_error();
}

TEST_F(Datasets, SizesMustMatchTheData) {
  write_all(false);
  Bytes b = read("t10k-images-idx3-ubyte");
  b.pop_back();
  write("t10k-images-idx3-ubyte", b);
  std::string m = mnist_error();
  EXPECT_TRUE(has(m, "(2, 28, 28)") && has(m, "1568") && has(m, "1567")) << m;
  b.push_back(0), b.push_back(0);  // one byte too many
  write("t10k-images-idx3-ubyte", b);
  EXPECT_TRUE(has(mnist_error(), "1569")) << mnist_error();
  write("t10k-images-idx3-ubyte", {0, 0, 8, 3, 0, 0});  // header cut short
  EXPECT_TRUE(has(mnist_error(), "truncated IDX header")) << mnist_error();
  write("t10k-images-idx3-ubyte", {0, 0});
  EXPECT_TRUE(has(mnist_error(), "too short")) << mnist_error();
  write("t10k-images-idx3-ubyte", idx({0xFFFFFFFF, 0xFFFFFFFF, 28}, {1, 2, 3}));  // no overflow in the size
  EXPECT_TRUE(has(mnist_error(), "need")) << mnist_error();
}

TEST_F(Datasets, ShapesMustBeMnist) {
  write_all(false);
  write("train-labels-idx1-ubyte", labels(4, 1));
  EXPECT_TRUE(has(mnist_error(), "3 train images but 4 train labels")) << mnist_error();
  write_all(false);
  write("t10k-images-idx3-ubyte", idx({2, 27, 28}, Bytes(2 * 27 * 28)));
  EXPECT_TRUE(has(mnist_error(), "28x28")) << mnist_error();
  write("t10k-images-idx3-ubyte", idx({2, 784}, Bytes(2 * 784)));
  EXPECT_TRUE(has(mnist_error(), "expected 3 dims")) << mnist_error();
}

TEST_F(Datasets, CorruptGzip) {
  write_all(true);
  Bytes b = read("train-images-idx3-ubyte.gz");
  write("train-images-idx3-ubyte.gz", Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(b.size() / 2)));
  std::string m = mnist_error();
  EXPECT_TRUE(has(m, "train-images-idx3-ubyte.gz") && has(m, "gzip")) << m;
  b[b.size() / 2] ^= 0xFF;  // a flipped byte in the deflate stream (or the CRC catches it)
  write("train-images-idx3-ubyte.gz", b);
  m = mnist_error();
  EXPECT_TRUE(has(m, "gzip")) << m;
  Bytes crc = read("train-labels-idx1-ubyte.gz");
  crc[crc.size() - 6] ^= 0x01;  // the CRC-32 in the trailer
  write("train-labels-idx1-ubyte.gz", crc);
  write_gz("train-images-idx3-ubyte.gz", images(3, 1));
  m = mnist_error();
  EXPECT_TRUE(has(m, "train-labels-idx1-ubyte.gz") && has(m, "gzip")) << m;
}

TEST_F(Datasets, LoadIdxAnyShape) {
  write("x", idx({2, 3}, {1, 2, 3, 4, 5, 6}));
  Tensor t = nn::datasets::load_idx((dir / "x").string());
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.tolist<uint8_t>(), (Bytes{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(error_of([&] { nn::datasets::load_idx((dir / "nope").string()); }), "can't open"));
}

TEST_F(Datasets, FashionOptions) {
  write_all(true);
  check_mnist(nn::datasets::mnist({.fashion = true, .dir = dir.string()}));
  std::string m = error_of([&] { nn::datasets::mnist({.fashion = true, .dir = (dir / "nope").string()}); });
  EXPECT_TRUE(has(m, "nope/train-images-idx3-ubyte") && has(m, "dataset-fashion-mnist")) << m;
}

// the real 60,000 + 10,000 images of Debian's dataset-fashion-mnist (tools/setup.sh installs it)
TEST(FashionMnist, DebianFiles) {
  if (!fs::exists(nn::datasets::kFashionMnistDir)) GTEST_SKIP() << "no " << nn::datasets::kFashionMnistDir;
  auto [X_train, Y_train, X_test, Y_test] = nn::datasets::mnist({.fashion = true});
  EXPECT_EQ(X_train.shape(), (Shape{60000, 1, 28, 28}));
  EXPECT_EQ(Y_train.shape(), Shape{60000});
  EXPECT_EQ(X_test.shape(), (Shape{10000, 1, 28, 28}));
  EXPECT_EQ(Y_test.shape(), Shape{10000});
  // the first training and test images are ankle boots (class 9); each of the 10 classes has 6,000 training images
  EXPECT_EQ(Y_train[0].item<uint8_t>(), 9);
  EXPECT_EQ(Y_test[0].item<uint8_t>(), 9);
  Tensor counts = (Y_train.unsqueeze(1) == Tensor::arange(10).cast(dtypes::uint8)).cast(dtypes::int32).sum(0);
  EXPECT_EQ(counts.tolist<int32_t>(), std::vector<int32_t>(10, 6000));
}
