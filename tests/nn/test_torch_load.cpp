// torch_load: PyTorch checkpoints written by torch.save (tests/data/nn/make_checkpoints.py made them with PyTorch
// 1.13: every dtype, views with offsets and strides, a nested checkpoint), their deflated copy, the legacy format,
// and corrupt archives (one-byte mutations load or throw, never crash)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "dtype_skip.h"
#include "sanitized.h"
#include "tinygrad/tinygrad.h"

using namespace tg;
namespace fs = std::filesystem;
namespace state = tg::nn::state;
using Bytes = std::vector<uint8_t>;

namespace {

std::string fixture(const std::string& name) { return std::string(TG_TEST_DATA) + "/nn/" + name; }

Bytes read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

struct TorchLoad : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    Device::DEFAULT.reset();  // the env's choice (DEV=...): these run on every device
    dir = fs::temp_directory_path() /
          cat("tg_torch_load_", getpid(), "_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string write(const Bytes& b) const {
    std::string p = (dir / "t.pth").string();
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return p;
  }
};

std::vector<float> f32(const Tensor& t) { return t.cast(dtypes::float32).tolist<float>(); }
std::vector<float> iota_times(int64_t start, int64_t n, float k) {
  std::vector<float> v;
  for (int64_t i = start; i < start + n; i++) v.push_back(static_cast<float>(i) * k);
  return v;
}

// the checkpoint of make_checkpoints.py: {"model": state_dict, "epoch": 3, "note": ..., "lr": 0.125, "hist": [...]}
void expect_fixture(const nn::StateDict& sd) {
  std::vector<std::string> want{"model.f32",        "model.f16",    "model.bf16",     "model.f64",    "model.i64",
                                "model.i32",        "model.i16",    "model.i8",       "model.u8",     "model.b",
                                "model.transposed", "model.sliced", "model.expanded", "model.scalar", "model.empty",
                                "model.param",      "hist.0",       "hist.1"};
  EXPECT_EQ(sd.keys(), want);
  auto shape_dtype = [&](const std::string& k, const Shape& s, DType dt) {
    EXPECT_EQ(sd.at(k).shape(), s) << k;
    EXPECT_EQ(sd.at(k).dtype(), dt) << k;
  };
  shape_dtype("model.f32", {2, 3, 4}, dtypes::float32);
  EXPECT_EQ(sd.at("model.f32").tolist<float>(), iota_times(0, 24, 0.5f));
  shape_dtype("model.f16", {3, 2}, dtypes::float16);
  EXPECT_EQ(f32(sd.at("model.f16")), iota_times(0, 6, 0.25f));
  shape_dtype("model.bf16", {4}, dtypes::bfloat16);
  EXPECT_EQ(sd.at("model.bf16").data_bytes(), (Bytes{0xc0, 0xbf, 0x00, 0xbf, 0x00, 0x3f, 0xc0, 0x3f}));
  EXPECT_EQ(f32(sd.at("model.bf16")), (std::vector<float>{-1.5f, -0.5f, 0.5f, 1.5f}));
  shape_dtype("model.f64", {5}, dtypes::float64);
  std::vector<double> f64 = sd.at("model.f64").tolist<double>();
  for (int i = 0; i < 5; i++) EXPECT_EQ(f64[static_cast<size_t>(i)], i / 3.0);
  shape_dtype("model.i64", {2, 3}, dtypes::int64);
  EXPECT_EQ(sd.at("model.i64").tolist<int64_t>(), (std::vector<int64_t>{-3, -2, -1, 0, 1, 2}));
  EXPECT_EQ(sd.at("model.i32").tolist<int32_t>(), (std::vector<int32_t>{7, -8, 9}));
  EXPECT_EQ(sd.at("model.i16").tolist<int16_t>(), (std::vector<int16_t>{-300, 300}));
  EXPECT_EQ(sd.at("model.i8").tolist<int8_t>(), (std::vector<int8_t>{-5, 5}));
  EXPECT_EQ(sd.at("model.u8").tolist<uint8_t>(), (std::vector<uint8_t>{0, 128, 255}));
  shape_dtype("model.b", {3}, dtypes::bool_);
  EXPECT_EQ(sd.at("model.b").tolist<bool>(), (std::vector<bool>{true, false, true}));
  // base.reshape(4, 6).t(): stride (1, 6)
  shape_dtype("model.transposed", {6, 4}, dtypes::float32);
  std::vector<float> tr;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 4; j++) tr.push_back(static_cast<float>(j * 6 + i) * 0.5f);
  EXPECT_EQ(sd.at("model.transposed").tolist<float>(), tr);
  // base[5:11].reshape(2, 3): offset 5 into the storage it shares with f32
  EXPECT_EQ(sd.at("model.sliced").tolist<float>(), iota_times(5, 6, 0.5f));
  // [[1], [2]].expand(2, 3): stride (1, 0)
  EXPECT_EQ(sd.at("model.expanded").tolist<float>(), (std::vector<float>{1, 1, 1, 2, 2, 2}));
  shape_dtype("model.scalar", {}, dtypes::float32);
  EXPECT_EQ(sd.at("model.scalar").item<float>(), 3.25f);
  shape_dtype("model.empty", {0, 4}, dtypes::float32);
  EXPECT_EQ(sd.at("model.param").tolist<float>(), std::vector<float>(4, 1.5f));  // an nn.Parameter
  EXPECT_EQ(sd.at("hist.0").tolist<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(sd.at("hist.1").tolist<float>(), (std::vector<float>{3.0f}));
}

}  // namespace

TEST_F(TorchLoad, EveryDtypeViewAndNesting) {
  TG_SKIP_UNLESS_SUPPORTED(dtypes::float16);
  expect_fixture(state::torch_load(fixture("checkpoint.pth")));
}

TEST_F(TorchLoad, DeflatedArchive) {  // the same archive rewritten by Python's zipfile with ZIP_DEFLATED
  TG_SKIP_UNLESS_SUPPORTED(dtypes::float16);
  expect_fixture(state::torch_load(fixture("checkpoint_deflated.pth")));
}

TEST_F(TorchLoad, IntoAModel) {  // a state dict saved from a model loads into the same model here
  struct Net {
    nn::Linear l{3, 2};
    TG_PARAMS(l)
  } net;
  nn::StateDict sd = state::torch_load(fixture("checkpoint.pth"));
  nn::StateDict mine{{"l.weight", sd.at("model.transposed").shrink({{0, 2}, {0, 3}})},
                     {"l.bias", sd.at("model.param").flatten().shrink({{0, 2}})}};
  state::load_state_dict(net, mine);
  EXPECT_EQ(net.l.weight.tolist<float>(), (std::vector<float>{0, 3, 6, 0.5f, 3.5f, 6.5f}));
}

TEST_F(TorchLoad, ErrorsNameTheProblem) {
  auto expect_error = [&](const std::string& path, std::initializer_list<std::string> parts) {
    try {
      state::torch_load(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  };
  expect_error(fixture("legacy.pth"), {"legacy.pth", "not a zip archive", "PyTorch 1.6"});
  expect_error((dir / "missing.pth").string(), {"can't open", "missing.pth"});
  Bytes good = read_bytes(fixture("checkpoint.pth"));
  ASSERT_GT(good.size(), 1000u);
  expect_error(write(Bytes(good.begin(), good.begin() + 100)), {"end of central directory"});
  expect_error(write(Bytes(good.begin(), good.end() - 22)), {"end of central directory"});  // without its last record
  // a storage that claims more elements than the archive holds: the first tensor's numel (24) becomes 200
  Bytes big = good;
  std::string pkl_marker = "FloatStorage";
  auto at = std::search(big.begin(), big.end(), pkl_marker.begin(), pkl_marker.end());
  ASSERT_NE(at, big.end());
  auto numel = std::find(at, big.end(), uint8_t(24));  // BININT1 24 after the key and location
  ASSERT_NE(numel, big.end());
  *numel = 200;
  expect_error(write(big), {"model.f32", "storage", "96 bytes"});
}

TEST_F(TorchLoad, OneByteMutationsLoadOrThrow) {
  // every byte of the archive's zip structure and pickle, and a stride of bytes elsewhere, changed: each
  // load returns or throws tg::Error, never crashes or reads out of bounds (the suite also runs under ASan)
  Bytes good = read_bytes(fixture("checkpoint.pth"));
  int loaded = 0, threw = 0;
  const size_t dense = TG_TEST_ASAN ? 3 : 1;  // under ASan a third of the structure's bytes: memory, not rules
  for (size_t i = 0; i < good.size(); i += (i < 1700 || i + 1200 > good.size()) ? dense : 7 * dense) {
    Bytes b = good;
    b[i] = i % 2 ? uint8_t(0xff) : static_cast<uint8_t>(good[i] ^ 0x01);  // a large value, or a nearby one
    try {
      nn::StateDict sd = state::torch_load(write(b));
      for (auto& kv : sd) kv.second.realize();
      loaded++;
    } catch (const Error&) {
      threw++;
    }
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(threw, 0);
}

// from a path (DISK), a tensor that is one run of a stored entry is a lazy view of the file: nothing is read until it
// is used, then only its bytes; the values are the eager reader's (a tensor of the file's bytes on the device)
TEST_F(TorchLoad, StoredTensorsReadLazilyFromDisk) {
  nn::StateDict lazy = state::torch_load(fixture("checkpoint.pth"));
  Bytes bytes = read_bytes(fixture("checkpoint.pth"));
  nn::StateDict eager = state::torch_load(Tensor(bytes, Shape{static_cast<int64_t>(bytes.size())}));
  ASSERT_EQ(lazy.keys(), eager.keys());
  int from_disk = 0;
  for (const auto& [name, t] : lazy) {
    auto [sched, vars] = Tensor::schedule_with_vars({t});
    for (const ScheduleItem& si : sched)
      from_disk += si.ast.op() == Ops::COPY && si.bufs.at(1).device().starts_with("DISK");
    run_schedule(sched, vars);
    EXPECT_EQ(t.data_bytes(), eager.at(name).data_bytes()) << name;
  }
  EXPECT_GT(from_disk, 0);  // some tensors were views of the file
}
