// safetensors: safe_save / safe_load / safe_load_metadata, the bytes tinygrad writes, and every corrupt file
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "dtype_skip.h"
#include "tinygrad/tinygrad.h"

using namespace tg;
namespace fs = std::filesystem;
namespace state = tg::nn::state;
using Bytes = std::vector<uint8_t>;
using nn::StateDict;

namespace {

struct Safetensors : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          cat("tg_safetensors_", getpid(), "_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string path(const std::string& name = "t.safetensors") const { return (dir / name).string(); }
  void write(const Bytes& b, const std::string& name = "t.safetensors") const {
    std::ofstream f(dir / name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  Bytes read(const std::string& name = "t.safetensors") const {
    std::ifstream f(dir / name, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), {});
  }
  // safe_load of these bytes must fail with a message containing every one of `parts`
  void expect_corrupt(const Bytes& b, std::initializer_list<std::string> parts) const {
    write(b);
    for (int which = 0; which < 2; which++) {  // safe_load and safe_load_metadata check the same things
      try {
        if (which == 0)
          state::safe_load(path());
        else
          state::safe_load_metadata(path());
        ADD_FAILURE() << "no error for a file with " << *parts.begin();
      } catch (const Error& e) {
        for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
      }
    }
  }
};

// a file: the 8-byte little-endian length of `header` (as it is, no padding), the header, the data
Bytes file(const std::string& header, const Bytes& data = {}, std::optional<uint64_t> len = std::nullopt) {
  Bytes out;
  uint64_t n = len.value_or(header.size());
  for (int i = 0; i < 8; i++) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Bytes from_hex(std::string_view hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// a tensor of dt holding these 16-bit patterns (half and bfloat16 without casts)
Tensor raw(std::vector<uint16_t> v, Shape shape, DType dt) {
  return Tensor(v, Shape{static_cast<int64_t>(v.size())}).bitcast(dt).reshape(shape);
}

struct Mlp {
  nn::Linear l1{3, 4}, l2{4, 2};
  TG_PARAMS(l1, l2)
  Tensor operator()(const Tensor& x) { return l2(l1(x).relu()); }
};

}  // namespace

TEST_F(Safetensors, RoundTripEveryDtypeAndShape) {
  TG_SKIP_UNLESS_SUPPORTED(dtypes::float16);
  StateDict sd{{"f32", Tensor({1.5f, -2.f, 0.25f, 3.f, 1e-8f, -0.f}).reshape({2, 3})},
               {"i8", Tensor(std::vector<int8_t>{-128, 0, 127}, {3})},
               {"u8", Tensor(std::vector<uint8_t>{0, 200, 255}, {3, 1})},
               {"i16", Tensor(std::vector<int16_t>{-32768, 7}, {2})},
               {"u16", Tensor(std::vector<uint16_t>{65535, 1}, {1, 2})},
               {"i32", Tensor(std::vector<int32_t>{-5, 1 << 30}, {2})},
               {"u32", Tensor(std::vector<uint32_t>{4000000000u}, {1})},
               {"i64", Tensor(std::vector<int64_t>{-(int64_t(1) << 62), 3}, {2})},
               {"u64", Tensor(std::vector<uint64_t>{uint64_t(1) << 63}, {1})},
               {"f16", raw(std::vector<uint16_t>{0x3C00, 0xB800, 0x7C00}, {3}, dtypes::float16)},  // 1, -0.5, inf
               {"f64", Tensor(std::vector<double>{2.5}, {})},                                      // 0-d
               {"bool", Tensor({true, false, true})},
               {"empty", Tensor::zeros({0, 3})},  // 0-size
               {"empty_i64", Tensor::zeros({2, 0}, {.dtype = dtypes::int64})}};
  state::safe_save(sd, path());
  StateDict back = state::safe_load(path());
  ASSERT_EQ(back.keys(), sd.keys());
  for (const auto& [k, t] : sd) {
    const Tensor& b = back.at(k);
    EXPECT_EQ(b.dtype(), t.dtype()) << k;
    EXPECT_EQ(b.shape(), t.shape()) << k;
    EXPECT_EQ(b.device(), Device::canonicalize()) << k;
    EXPECT_EQ(b.data_bytes(), t.data_bytes()) << k;
  }
  EXPECT_EQ(back.at("f32").tolist<float>(), (std::vector<float>{1.5f, -2.f, 0.25f, 3.f, 1e-8f, -0.f}));
  EXPECT_EQ(back.at("f64").item<double>(), 2.5);
  EXPECT_EQ(back.at("u64").tolist<uint64_t>(), (std::vector<uint64_t>{uint64_t(1) << 63}));
  // the loaded tensors compute like any other
  EXPECT_EQ((back.at("i32") + 1).tolist<int32_t>(), (std::vector<int32_t>{-4, (1 << 30) + 1}));

  // the header: in the dict's order, offsets back to back, padded with spaces to 8 bytes
  Bytes bytes = read();
  auto h = state::safe_load_metadata(path());
  EXPECT_EQ(h.data_start % 8, 0);
  EXPECT_EQ(bytes[static_cast<size_t>(h.data_start) - 1], ' ');
  EXPECT_TRUE(h.metadata.empty());
  EXPECT_EQ(h.json.find("__metadata__"), nullptr);
  ASSERT_EQ(h.tensors.size(), sd.size());
  int64_t off = 0;
  for (size_t i = 0; i < h.tensors.size(); i++) {
    const Tensor& t = sd.at(sd.keys()[i]);
    EXPECT_EQ(h.tensors[i].name, sd.keys()[i]);
    EXPECT_EQ(h.tensors[i].start, off);
    EXPECT_EQ(h.tensors[i].end, off + t.nbytes());
    off += t.nbytes();
  }
  EXPECT_EQ(static_cast<int64_t>(bytes.size()), h.data_start + off);
  EXPECT_EQ(h.json.find("f64")->dump(), R"({"dtype":"F64","shape":[],"data_offsets":[80,88]})");
}

// bfloat16 can't be computed with on CPU here (clang has no __bf16 for this target), so its tensors come from a
// hand-written file; saving them again copies their bytes out without a kernel
TEST_F(Safetensors, Bfloat16WithoutKernels) {
  write(file(R"({"bf":{"dtype":"BF16","shape":[2,1],"data_offsets":[0,4]}})", {0x80, 0x3F, 0x00, 0xC0}));  // 1, -2
  StateDict sd = state::safe_load(path());
  EXPECT_EQ(sd.at("bf").dtype(), dtypes::bfloat16);
  EXPECT_EQ(sd.at("bf").shape(), (Shape{2, 1}));
  EXPECT_EQ(sd.at("bf").data_bytes(), (Bytes{0x80, 0x3F, 0x00, 0xC0}));
  state::safe_save(sd, path("again.safetensors"));
  EXPECT_EQ(read("again.safetensors"), file(R"({"bf":{"dtype":"BF16","shape":[2,1],"data_offsets":[0,4]}})"
                                            "      ",
                                            {0x80, 0x3F, 0x00, 0xC0}));
}

TEST_F(Safetensors, MetadataRoundTrip) {
  json::Object meta{{"format", "pt"}, {"note", "h\xC3\xA9llo \"q\"\n\t\\ \xF0\x9F\x98\x80"}, {"", "empty key"}};
  state::safe_save({{"x", Tensor({1.f, 2.f})}}, path(), meta);
  auto h = state::safe_load_metadata(path());
  EXPECT_EQ(h.metadata, meta);
  EXPECT_EQ(h.json.as_object().front().first, "__metadata__");  // first, as tinygrad writes it
  EXPECT_EQ(state::safe_load(path()).keys(), std::vector<std::string>{"x"});
  // non-ASCII is written as \u escapes, as python's json.dumps writes it
  Bytes b = read();
  std::string header(b.begin() + 8, b.begin() + h.data_start);
  EXPECT_NE(header.find(R"("note":"h\u00e9llo \"q\"\n\t\\ \ud83d\ude00")"), std::string::npos) << header;
}

// the bytes the reference's safe_save writes for the same dict and metadata (its Python, run while writing this test)
TEST_F(Safetensors, SameBytesAsTinygrad) {
  TG_SKIP_UNLESS_SUPPORTED(dtypes::float16);
  StateDict sd{{"w", Tensor({1.5f, -2.0f, 0.25f, 3.0f}).reshape({2, 2})},
               {"b", Tensor(std::vector<int8_t>{-1, 2, 3}, {3})},
               {"s", Tensor(std::vector<double>{2.5}, {})},
               {"m", Tensor({true, false})},
               {"h", raw(std::vector<uint16_t>{0x3C00, 0xB800}, {2}, dtypes::float16)},
               {"u", Tensor(std::vector<uint16_t>{1, 65535}, {2})},
               {"l", Tensor(std::vector<int64_t>{-3}, {1})}};
  state::safe_save(sd, path(), {{"format", "pt"}, {"note", "h\xC3\xA9llo"}});
  std::string header =
      R"({"__metadata__":{"format":"pt","note":"h\u00e9llo"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("b":{"dtype":"I8","shape":[3],"data_offsets":[16,19]},"s":{"dtype":"F64","shape":[],"data_offsets":[19,27]},)"
      R"("m":{"dtype":"BOOL","shape":[2],"data_offsets":[27,29]},"h":{"dtype":"F16","shape":[2],"data_offsets":[29,33]},)"
      R"("u":{"dtype":"U16","shape":[2],"data_offsets":[33,37]},"l":{"dtype":"I64","shape":[1],"data_offsets":[37,45]}})"
      "   ";
  ASSERT_EQ(header.size(), 440u);
  Bytes want = file(
      header, from_hex("0000c03f000000c00000803e00004040ff020300000000000004400100003c00b80100fffffdffffffffffffff"));
  EXPECT_EQ(read(), want);
  // no tensors: "{}" and six spaces; no metadata key for empty metadata
  state::safe_save({}, path("empty.safetensors"), {});
  EXPECT_EQ(read("empty.safetensors"), file("{}      "));
  EXPECT_TRUE(state::safe_load(path("empty.safetensors")).empty());
}

TEST_F(Safetensors, HandWrittenFile) {
  // whitespace in the JSON, offsets in another order than the entries, a gap, unknown fields, no padding
  std::string header = R"( { "b" : {"dtype":"I16", "shape":[2], "data_offsets":[12, 16], "extra": null},)"
                       "\n"
                       R"( "a":{"data_offsets":[0,8],"shape":[1,2],"dtype":"F32"}, "__metadata__": {"k": "v"}} )";
  Bytes data(16, 0);
  float a[2] = {0.5f, -7.f};
  std::memcpy(data.data(), a, 8);
  data[8] = 0xAA;                    // the gap: nobody's bytes
  data[12] = 0xFE, data[13] = 0xFF;  // -2
  data[14] = 0x39, data[15] = 0x30;  // 12345
  write(file(header, data));
  StateDict sd = state::safe_load(path());
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(sd.at("b").dtype(), dtypes::int16);
  EXPECT_EQ(sd.at("b").tolist<int16_t>(), (std::vector<int16_t>{-2, 12345}));
  EXPECT_EQ(sd.at("a").shape(), (Shape{1, 2}));
  EXPECT_EQ(sd.at("a").tolist<float>(), (std::vector<float>{0.5f, -7.f}));
  auto h = state::safe_load_metadata(path());
  EXPECT_EQ(h.data_start, 8 + static_cast<int64_t>(header.size()));
  EXPECT_EQ(h.metadata, (json::Object{{"k", "v"}}));
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "b");
  EXPECT_EQ(h.tensors[0].dtype, dtypes::int16);
  EXPECT_EQ(h.tensors[0].shape, (Shape{2}));
  EXPECT_EQ(h.tensors[0].start, 12);
  EXPECT_EQ(h.tensors[0].end, 16);
  EXPECT_EQ(h.json.find("b")->find("extra")->is_null(), true);

  // the same bytes as a uint8 tensor (tinygrad's safe_load takes a Tensor too)
  Bytes whole = read();
  StateDict from_t = state::safe_load(Tensor(whole, {static_cast<int64_t>(whole.size())}));
  EXPECT_EQ(from_t.at("b").tolist<int16_t>(), (std::vector<int16_t>{-2, 12345}));
  EXPECT_THROW(state::safe_load(Tensor({1.f, 2.f})), Error);
}

TEST_F(Safetensors, CorruptFiles) {
  auto entry = [](const std::string& dtype, const std::string& shape, const std::string& offsets) {
    return R"({"t":{"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}}";
  };
  Bytes data8(8, 0);
  expect_corrupt({1, 2, 3, 4, 5}, {"5 bytes", "too short", "8-byte header length"});
  expect_corrupt({}, {"0 bytes", "too short"});
  expect_corrupt(file("{}", {}, 100), {"header length 100 goes beyond the file", "8 + 100 > 10 bytes"});
  expect_corrupt(file("{}", {}, ~uint64_t(0)), {"header length 18446744073709551615 goes beyond the file"});
  expect_corrupt(file(R"({"t":)"), {"bad JSON header", "expected a value, got end of input at byte 5"});
  expect_corrupt(file(R"({"t":{},})"), {"bad JSON header", "expected a string key"});
  expect_corrupt(file(R"({"t":1} x)"), {"bad JSON header", "unexpected 'x' after the value at byte 8"});
  expect_corrupt(file(R"({"t":{},"t":{}})"), {"duplicate key 't'"});
  expect_corrupt(file("[1,2]"), {"the header must be a JSON object, got array"});
  expect_corrupt(file(R"({"t":[1]})"), {"tensor 't': the entry must be an object, got [1]"});
  expect_corrupt(file(R"({"t":{"shape":[2],"data_offsets":[0,8]}})", data8), {"tensor 't' has no \"dtype\""});
  expect_corrupt(file(R"({"t":{"dtype":"F32","data_offsets":[0,8]}})", data8), {"tensor 't' has no \"shape\""});
  expect_corrupt(file(R"({"t":{"dtype":"F32","shape":[2]}})", data8), {"tensor 't' has no \"data_offsets\""});
  expect_corrupt(file(entry("F8_E4M3", "[8]", "[0,8]"), data8), {"tensor 't': unknown dtype 'F8_E4M3'", "F32"});
  expect_corrupt(file(R"({"t":{"dtype":5,"shape":[2],"data_offsets":[0,8]}})", data8),
                 {"dtype must be a string, got 5"});
  expect_corrupt(file(entry("F32", "[2,-1]", "[0,8]"), data8),
                 {"shape must be a list of non-negative ints, got [2,-1]"});
  expect_corrupt(file(entry("F32", "[2.0]", "[0,8]"), data8), {"shape must be a list of non-negative ints, got [2.0]"});
  expect_corrupt(file(entry("F32", "2", "[0,8]"), data8), {"shape must be a list of non-negative ints, got 2"});
  expect_corrupt(file(entry("F32", "[2]", "[0]"), data8), {"data_offsets must be two non-negative ints, got [0]"});
  expect_corrupt(file(entry("F32", "[2]", "[-8,0]"), data8), {"data_offsets must be two non-negative ints"});
  expect_corrupt(file(entry("F32", "[2]", "[0,16]"), data8),
                 {"tensor 't': data_offsets [0, 16] go beyond the data: 8 bytes"});
  expect_corrupt(file(entry("F32", "[0]", "[8,0]"), data8), {"tensor 't': data_offsets [8, 0] end before they start"});
  expect_corrupt(file(entry("F32", "[3]", "[0,8]"), data8),
                 {"tensor 't': data_offsets [0, 8] hold 8 bytes, but F32 (3,) needs 12"});
  expect_corrupt(file(entry("I64", "[4611686018427387904,4]", "[0,8]"), data8), {"needs more than 2**63"});
  expect_corrupt(file(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                      R"("b":{"dtype":"U8","shape":[5],"data_offsets":[3,8]}})",
                      data8),
                 {"tensors 'a' [0, 4] and 'b' [3, 8] overlap"});
  expect_corrupt(file(R"({"__metadata__":["x"]})"), {"\"__metadata__\" must be an object, got array"});
  // a file that isn't there, or isn't a file
  EXPECT_THROW(
      {
        try {
          state::safe_load(path("missing.safetensors"));
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("can't open"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(state::safe_load(dir.string()), Error);
  // these are fine: empty tensors share no bytes, so they may sit anywhere in range
  write(file(
      R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"e":{"dtype":"F32","shape":[0,5],"data_offsets":[4,4]}})",
      data8));
  EXPECT_EQ(state::safe_load(path()).at("e").shape(), (Shape{0, 5}));
}

TEST_F(Safetensors, SavesViewsAndUnrealizedGraphs) {
  Tensor x = Tensor::arange(6).reshape({2, 3});
  state::safe_save({{"t", x.T()}, {"sum", x.sum(1)}, {"lazy", x + 1}, {"col", x.shrink({{0, 2}, {1, 2}})}}, path());
  StateDict sd = state::safe_load(path());
  EXPECT_EQ(sd.at("t").shape(), (Shape{3, 2}));
  EXPECT_EQ(sd.at("t").tolist<int32_t>(), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));  // row-major
  EXPECT_EQ(sd.at("sum").tolist<int32_t>(), (std::vector<int32_t>{3, 12}));
  EXPECT_EQ(sd.at("lazy").tolist<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(sd.at("col").tolist<int32_t>(), (std::vector<int32_t>{1, 4}));
}

// every truncation and many one-byte changes of a good file: each loads or is an Error, nothing else
TEST_F(Safetensors, MangledFilesLoadOrThrow) {
  state::safe_save({{"a", Tensor({1.f, 2.f})}, {"b", Tensor(std::vector<int16_t>{3}, {})}}, path(), {{"k", "v"}});
  const Bytes good = read();
  auto try_load = [&](const Bytes& b) {  // the checks of safe_load, in memory (writing files is slow here)
    try {
      state::safe_parse_header(b, "mangled");
      return true;
    } catch (const Error&) {
      return false;
    }
  };
  EXPECT_TRUE(try_load(good));
  for (size_t n = 0; n < good.size(); n++) EXPECT_FALSE(try_load(Bytes(good.begin(), good.begin() + n))) << n;
  int loaded = 0;
  for (size_t i = 0; i < good.size(); i++)
    for (uint8_t v : Bytes{0x00, 0xFF, 0x80, '"', '9', '-', ',', '}', ' '}) {
      Bytes b = good;
      b[i] = v;
      loaded += try_load(b);
    }
  EXPECT_GT(loaded, 0);  // some changes are harmless (spaces, data bytes)
}

TEST_F(Safetensors, SaveErrors) {
  EXPECT_THROW(state::safe_save({{"x", Tensor::zeros({2}, {.dtype = dtypes::fp8e4m3})}}, path()), Error);
  EXPECT_THROW(state::safe_save({{"__metadata__", Tensor::zeros({2})}}, path()), Error);
  EXPECT_THROW(state::safe_save({{"x", Tensor::zeros({2})}}, (dir / "no_such_dir" / "x.safetensors").string()), Error);
  EXPECT_THROW(state::safe_save({{"x", Tensor::zeros({2})}}, path(), {{"bad", std::nan("")}}), Error);
}

TEST_F(Safetensors, LoadStateDictIntoAModel) {
  Tensor::manual_seed(3);
  Mlp a, b;
  state::safe_save(state::get_state_dict(a), path());
  Tensor x = Tensor({0.5f, -1.f, 2.f, 1.f, 0.f, -3.f}).reshape({2, 3});
  std::vector<float> want = a(x).tolist<float>();
  ASSERT_NE(b(x).tolist<float>(), want);
  state::load_state_dict(b, state::safe_load(path()));
  EXPECT_EQ(b(x).tolist<float>(), want);
  EXPECT_EQ(b.l1.weight.tolist<float>(), a.l1.weight.tolist<float>());
  // a file with a key the model lacks is refused (strict), as load_state_dict refuses any state dict
  StateDict more = state::get_state_dict(a);
  more.insert_or_assign("l3.weight", Tensor::zeros({1}));
  state::safe_save(more, path());
  EXPECT_THROW(state::load_state_dict(b, state::safe_load(path())), Error);
}
