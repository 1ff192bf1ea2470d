// GGUF from C++ (nn/gguf.h): typed metadata and tensors round trip through gguf_save and gguf_load, quantized
// weights stay packed (the dequantization fuses into the kernel that reads them), corrupt headers are ValueErrors.
// Bit-exactness against ggml per type is tests/python/test_gguf.py's (numpy and llama.cpp's libggml).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>

#include "error_of.h"
#include "small_ints.h"
#include "tg/engine/realize.h"
#include "tg/nn/gguf.h"
#include "tg/renderer/cstyle.h"
#include "tg/runtime/buffers.h"
#include "tg/runtime/device.h"

using namespace tg;
using namespace tg::nn;
using tg::test::error_of;

namespace {

struct GGUF : ::testing::Test {
  void SetUp() override {
    Device::DEFAULT.reset();
    path = (std::filesystem::temp_directory_path() /
            ("tg_gguf_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".gguf"))
               .string();
  }
  void TearDown() override { std::filesystem::remove(path); }
  void write(const std::vector<uint8_t>& bytes) const {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  std::string path;
};

std::vector<float> ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) v[static_cast<size_t>(i)] = std::sin(0.37f * static_cast<float>(i)) * 4.0f;
  return v;
}

}  // namespace

TEST_F(GGUF, MetadataAndTensorsRoundTrip) {
  GGUFMetadata kv{{"general.architecture", GGUFValue::str("llama")},
                  {"llama.block_count", GGUFValue::u32(2)},
                  {"llama.rope.freq_base", GGUFValue::f32(10000.0f)},
                  {"tokenizer.ggml.tokens",
                   GGUFValue::array(GGUFValue::Type::STRING, {GGUFValue::str("<s>"), GGUFValue::str("é")})},
                  {"flag", GGUFValue::boolean(true)}};
  std::vector<float> w = ramp(4 * 64);
  Tensor wt(w, Shape{4, 64});
  gguf_save(path, kv,
            {{"f32", wt},
             {"f16", wt, uint32_t(GGMLType::F16)},
             {"q8", wt, uint32_t(GGMLType::Q8_0)},
             {"q4", wt, uint32_t(GGMLType::Q4_0)},
             {"q5", wt, uint32_t(GGMLType::Q5_1)}});
  GGUFFile f = gguf_load(path);
  ASSERT_EQ(f.kv.size(), kv.size());
  EXPECT_EQ(gguf_find(f.kv, "general.architecture")->as_string(), "llama");
  EXPECT_EQ(gguf_find(f.kv, "llama.block_count")->type, GGUFValue::Type::UINT32);
  EXPECT_EQ(gguf_find(f.kv, "llama.block_count")->as_int(), 2);
  EXPECT_EQ(gguf_find(f.kv, "llama.rope.freq_base")->as_double(), 10000.0);
  EXPECT_EQ(gguf_find(f.kv, "tokenizer.ggml.tokens")->as_array().at(1).as_string(), "é");
  EXPECT_TRUE(gguf_find(f.kv, "flag")->as_bool());
  EXPECT_EQ(f.tensors.keys(), (std::vector<std::string>{"f32", "f16", "q8", "q4", "q5"}));
  EXPECT_EQ(f.tensors.at("f32").tolist<float>(), w);
  EXPECT_EQ(f.tensors.at("f16").dtype(), dtypes::float16);  // a half tensor; quantized ones are float32 everywhere
  float amax = 4.0f;
  for (const char* name : {"q8", "q4", "q5"}) {
    const Tensor& t = f.tensors.at(name);
    EXPECT_EQ(t.shape(), (Shape{4, 64}));
    EXPECT_EQ(t.dtype(), dtypes::float32);
    std::vector<float> got = t.tolist<float>();
    float tol = std::string(name) == "q8" ? amax / 100 : amax / 6;
    for (size_t i = 0; i < w.size(); i++) ASSERT_NEAR(got[i], w[i], tol) << name << " at " << i;
  }
}

// Q4_K and Q6_K are written too (super-blocks of 256): each weight comes back within its sub-block's step, the
// all-zero and one-signed super-blocks included; a row that isn't whole super-blocks is a ValueError naming them
TEST_F(GGUF, KQuantsAreWrittenInSuperBlocks) {
  std::vector<float> w = ramp(4 * 512);
  for (size_t i = 0; i < 256; i++) w[i] = 0, w[512 + i] = std::fabs(w[512 + i]), w[1024 + i] = -std::fabs(w[1024 + i]);
  w[1536] = 40.0f;  // one outlier: its sub-block's scale, and the super-block's, are far from the others'
  Tensor wt(w, Shape{4, 512});
  gguf_save(path, {}, {{"q4k", wt, uint32_t(GGMLType::Q4_K)}, {"q6k", wt, uint32_t(GGMLType::Q6_K)}});
  GGUFFile f = gguf_load(path);
  struct Case {
    const char* name;
    size_t width;  // a sub-block's weights, that share a scale (and for Q4_K a min)
    float levels;
  };
  for (Case c : {Case{"q4k", 32, 15.0f}, Case{"q6k", 16, 63.0f}}) {
    SCOPED_TRACE(c.name);
    std::vector<float> got = f.tensors.at(c.name).tolist<float>();
    ASSERT_EQ(got.size(), w.size());
    // each weight within 1.5 steps of its sub-block's range (0 included; the fit may clip an end to serve the rest),
    // plus its scale's rounding to the super-block's grid (the largest step over 63 or 127 levels) times q; the
    // squared error near a uniform rounding's, step^2 / 12
    auto step_of = [&](size_t sb) {
      float lo = 0, hi = 0;
      for (size_t i = sb; i < sb + c.width; i++) lo = std::min(lo, w[i]), hi = std::max(hi, w[i]);
      return (c.levels == 63.0f ? 2 * std::max(hi, -lo) : hi - lo) / c.levels;
    };
    double err2 = 0, uniform2 = 0;
    for (size_t sb = 0; sb < w.size(); sb += c.width) {
      float largest = 0;
      for (size_t s = sb / 256 * 256; s < sb / 256 * 256 + 256; s += c.width) largest = std::max(largest, step_of(s));
      const float step = step_of(sb), grid = largest / (c.levels == 63.0f ? 127.0f : 63.0f);
      for (size_t i = sb; i < sb + c.width; i++) {
        ASSERT_NEAR(got[i], w[i], 1.5f * step + 0.5f * grid * c.levels + 1e-6f) << "at " << i;
        err2 += (got[i] - w[i]) * (got[i] - w[i]), uniform2 += step * step / 12;
      }
    }
    EXPECT_LT(err2, 1.2 * uniform2);
    for (size_t i = 0; i < 256; i++) ASSERT_EQ(got[i], 0.0f) << "the zero super-block, at " << i;
  }
  auto save_64 = [&] { gguf_save(path, {}, {{"w", Tensor(ramp(4 * 64), Shape{4, 64}), uint32_t(GGMLType::Q4_K)}}); };
  EXPECT_THROW(save_64(), ValueError);
  EXPECT_NE(tg::test::error_of(save_64).find("rows must be whole q4_K blocks of 256"), std::string::npos);
}

// The weight's packed blocks are what the matvec reads, dequantized inside its one kernel: loaded onto the CPU they are
// the file's mapping itself (no copy at all; writing the tensor doesn't reach the file), from a DISK tensor they are
// copied once, 4.5 bits a weight
TEST_F(GGUF, QuantizedWeightsStayPackedAndFuseIntoTheMatvec) {
  const int64_t rows = 64, cols = 256;
  Tensor wt(ramp(rows * cols), Shape{rows, cols});
  gguf_save(path, {}, {{"w", wt, uint32_t(GGMLType::Q4_0)}});
  for (bool mapped : {true, false}) {
    SCOPED_TRACE(mapped ? "mapped" : "from DISK");
    GGUFFile f = mapped ? gguf_load(path, "CPU") : gguf_load(Tensor::from_file(path), "CPU");
    Tensor w = f.tensors.at("w");
    Tensor x = Tensor::ones({1, cols}, {.device = "CPU"}).contiguous().realize();
    Tensor y = x.matmul(w.T());
    auto [sched, vars] = Tensor::schedule_with_vars({y});
    int64_t from_disk = 0, kernels = 0, reads_mapping = 0;
    for (const ScheduleItem& si : sched) {
      kernels += si.ast.op() == Ops::SINK;
      if (si.ast.op() == Ops::COPY && si.bufs.at(1).device().starts_with("DISK")) from_disk += si.bufs.at(0).nbytes();
      for (const Buffer& b : si.bufs) {  // never a float copy of the weight, not even a half one
        EXPECT_LT(b.nbytes(), rows * cols * 2) << "a buffer of " << b.nbytes() << " bytes in " << si.ast.op();
        reads_mapping += si.ast.op() == Ops::SINK && b.spec().file == std::filesystem::canonical(path).string();
      }
    }
    EXPECT_EQ(from_disk, mapped ? 0 : rows * cols / 32 * 18);
    EXPECT_EQ(reads_mapping, mapped ? 1 : 0);
    EXPECT_EQ(kernels, 1);  // the dequantization is inside the matvec's kernel
    run_schedule(sched);
    std::vector<float> want = f.tensors.at("w").sum(std::vector<int64_t>{1}).tolist<float>();
    std::vector<float> got = y.tolist<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-3f * (1 + std::fabs(want[i])));
  }
  // copy-on-write: a write into the mapped bytes stays in memory, the file keeps its own
  std::ifstream in(path, std::ios::binary);
  std::vector<char> before((std::istreambuf_iterator<char>(in)), {});
  GGUFFile f = gguf_load(path, "CPU");
  Tensor bytes = f.packed.at("w").bytes;
  bytes.assign(Tensor::full(bytes.shape(), 7, {.device = "CPU", .dtype = dtypes::uint8})).realize();
  EXPECT_EQ(bytes.tolist<uint8_t>()[5], 7);
  std::ifstream again(path, std::ios::binary);
  EXPECT_EQ(std::vector<char>((std::istreambuf_iterator<char>(again)), {}), before);
}

// an empty tensor, last in the file, loads as one from the mapping and from DISK; so do tensors a file aligns to
// 4 bytes only (a mapped view of those is bytes, put together in the kernel)
TEST_F(GGUF, EmptyAndUnalignedTensorsLoad) {
  gguf_save(path, {},
            {{"a", Tensor(std::vector<float>{1, 2, 3, 4}, Shape{4})}, {"z", Tensor::zeros({0}).contiguous()}});
  for (GGUFFile f : {gguf_load(path, "CPU"), gguf_load(Tensor::from_file(path), "CPU")}) {
    EXPECT_EQ(f.tensors.at("z").numel(), 0);
    EXPECT_EQ(f.tensors.at("a").tolist<float>(), (std::vector<float>{1, 2, 3, 4}));
  }
  std::vector<float> v = ramp(40);
  gguf_save(path, {{"general.alignment", GGUFValue::u32(4)}},
            {{"a", Tensor(std::vector<float>{1, 2, 3}, Shape{3})},
             {"b", Tensor(v, Shape{40})},
             {"h", Tensor(v, Shape{40}), uint32_t(GGMLType::F16)}});
  for (GGUFFile f : {gguf_load(path, "CPU"), gguf_load(Tensor::from_file(path), "CPU")}) {
    EXPECT_EQ(f.tensors.at("b").tolist<float>(), v);
    EXPECT_NEAR((f.tensors.at("b") * 2).sum().item<float>(), (Tensor(v, Shape{40}) * 2).sum().item<float>(), 1e-4f);
    std::vector<float> h = f.tensors.at("h").cast(dtypes::float32).tolist<float>();
    for (size_t i = 0; i < v.size(); i++) EXPECT_NEAR(h[i], v[i], 4e-3f);
  }
}

TEST_F(GGUF, MappedWeightsThatStartOffARegisterMultiply) {
  // an F32 weight mapped from the file starts 32 bytes aligned (GGUF's default), so 32 bytes past a 64-byte line for
  // one of the two prefixes: the CPU tile that multiplies by it loads whole registers of it from there (their vector
  // types assume a float's alignment, renderer/renderer.h unaligned_vector_type). Small integers: every sum is exact
  const int64_t M = 128, K = 128, N = 128;
  std::vector<float> xv = test::small_ints(M * K, 37, 11), wv = test::small_ints(K * N, 53, 7);
  std::vector<float> want = test::host_matmul(xv, wv, M, K, N);
  for (int64_t prefix : {8, 16}) {
    gguf_save(path, {}, {{"p", Tensor::ones({prefix}).contiguous()}, {"w", Tensor(wv, Shape{K, N})}});
    GGUFFile f = gguf_load(path, "CPU");
    EXPECT_EQ(Tensor(xv, Shape{M, K}).to("CPU").matmul(f.tensors.at("w")).tolist<float>(), want) << prefix;
  }
}

TEST_F(GGUF, RawBlocksOfEveryType) {
  for (uint32_t type : {2u, 3u, 6u, 7u, 8u, 10u, 11u, 12u, 13u, 14u, 20u, 23u}) {
    GGMLTypeTraits tr = *ggml_type_traits(type);
    std::vector<uint8_t> blocks(static_cast<size_t>(2 * tr.type_size), 0);  // zero blocks dequantize to zeros
    gguf_save(path, {}, {{"t", Tensor(blocks, Shape{2 * tr.type_size}), type, true, Shape{2, tr.block_size}}});
    Tensor t = gguf_load(path).tensors.at("t");
    EXPECT_EQ(t.shape(), (Shape{2, tr.block_size})) << tr.name;
    EXPECT_EQ(t.tolist<float>(), std::vector<float>(static_cast<size_t>(2 * tr.block_size), 0.0f)) << tr.name;
  }
}

TEST_F(GGUF, CorruptHeadersAreValueErrors) {
  write({'G', 'G', 'U', 'F', 3, 0, 0, 0});
  EXPECT_THROW(gguf_load(path), ValueError);
  EXPECT_NE(error_of([&] { gguf_load(path); }).find("n_tensors at byte 8"), std::string::npos);
  write({'G', 'G', 'M', 'L', 3, 0, 0, 0});
  EXPECT_NE(error_of([&] { gguf_load(path); }).find("not a GGUF file"), std::string::npos);
  std::vector<uint8_t> huge{'G', 'G', 'U', 'F', 3, 0, 0, 0};
  for (int i = 0; i < 8; i++) huge.push_back(0);
  for (int i = 0; i < 8; i++) huge.push_back(i == 7 ? 0x10 : 0);  // n_kv = 2^60: nothing is allocated for it
  write(huge);
  EXPECT_NE(error_of([&] { gguf_load(path); }).find("n_kv"), std::string::npos);
  EXPECT_THROW(gguf_load((std::filesystem::temp_directory_path() / "tg_no_such.gguf").string()), Error);
  EXPECT_THROW(ggml_data_to_tensor(Tensor::zeros({64}, {.dtype = dtypes::uint8}), 32, 1337), ValueError);
}

// ggml_int8_linear: llama.cpp's arithmetic for a matvec on a block type's weights. x becomes blocks of 32 int8 (d =
// amax / 127, q = round(x / d)); each weight block's integers times x's, scaled, summed (and the mins times x's
// sums). So the result is x rounded to its int8 grid times the dequantized weight (ggml's dequantization, bit-exact
// here), up to float rounding: the test computes that in double, for every type, from random blocks. The kernel's
// integer products are the renderer's dot-product helper on the CPU
TEST_F(GGUF, Int8MatvecIsLlamaCppsArithmetic) {
  const int64_t rows = 64, cols = 1024;  // a decode step's shape in small: the CPU's matvec opts
  std::vector<float> xv = ramp(cols);
  for (size_t i = 0; i < 32; i++) xv[i] = 0.0f;  // an all-zero block of x: scale 0
  Tensor x = Tensor(xv, {1, cols}).realize();
  // x on its int8 grid, as ggml's quantize_row_q8_0 makes it
  std::vector<double> xq(static_cast<size_t>(cols));
  std::vector<double> step(static_cast<size_t>(cols / 32));
  for (int64_t b = 0; b < cols / 32; b++) {
    float amax = 0;
    for (int64_t i = 0; i < 32; i++) amax = std::max(amax, std::fabs(xv[static_cast<size_t>(b * 32 + i)]));
    const float d = amax / 127.0f, inv = d == 0 ? 0.0f : 1.0f / d;
    step[static_cast<size_t>(b)] = d;
    for (int64_t i = 0; i < 32; i++)
      xq[static_cast<size_t>(b * 32 + i)] = std::nearbyint(xv[static_cast<size_t>(b * 32 + i)] * inv) * double(d);
  }
  // each type's half-precision fields (scales, mins) at these byte offsets of a block: small, finite
  const std::vector<std::pair<GGMLType, std::vector<int>>> types{
      {GGMLType::Q4_0, {0}},    {GGMLType::Q4_1, {0, 2}},   {GGMLType::Q5_0, {0}},   {GGMLType::Q5_1, {0, 2}},
      {GGMLType::Q8_0, {0}},    {GGMLType::Q2_K, {80, 82}}, {GGMLType::Q3_K, {108}}, {GGMLType::Q4_K, {0, 2}},
      {GGMLType::Q5_K, {0, 2}}, {GGMLType::Q6_K, {208}},    {GGMLType::IQ4_NL, {0}}, {GGMLType::IQ4_XS, {0}}};
  std::mt19937 rng(7);
  for (const auto& [type, halves] : types) {
    GGMLTypeTraits tr = *ggml_type_traits(uint32_t(type));
    SCOPED_TRACE(tr.name);
    ASSERT_TRUE(ggml_int8_dot(uint32_t(type)));
    const bool narrow = ggml_int8_narrow(uint32_t(type));  // (a lambda can't capture a structured binding in C++20)
    const bool full_bytes = type == GGMLType::Q8_0 || type == GGMLType::Q3_K || type == GGMLType::IQ4_NL ||
                            type == GGMLType::IQ4_XS;  // integers beyond 0..127 past an offset
    EXPECT_EQ(narrow, !full_bytes);
    std::vector<uint8_t> raw(static_cast<size_t>(rows * cols / tr.block_size * tr.type_size));
    for (uint8_t& v : raw) v = static_cast<uint8_t>(rng());
    for (size_t blk = 0; blk < raw.size(); blk += static_cast<size_t>(tr.type_size))
      for (int at : halves) {
        const uint16_t h = static_cast<uint16_t>(0x2000 + (rng() & 0x3ff)) | ((rng() & 1) ? 0x8000 : 0);  // ~±0.01
        raw[blk + static_cast<size_t>(at)] = static_cast<uint8_t>(h), raw[blk + static_cast<size_t>(at) + 1] = h >> 8;
      }
    Tensor bytes = Tensor(raw, Shape{static_cast<int64_t>(raw.size())}).realize();
    std::vector<float> w = ggml_data_to_tensor(bytes, rows * cols, uint32_t(type)).tolist<float>();
    // y's rows: x's product, then, for more rows (a prefill's), -0.5 x's: x's int8 values negated, its scales halved
    auto check = [&](const Tensor& y) {
      const int64_t xrows = y.shape()[0].as_int();
      EXPECT_EQ(y.shape(), (Shape{xrows, rows}));
      auto [sched, vars] = Tensor::schedule_with_vars({y});
      std::string src;
      for (const ScheduleItem& si : sched) {
        if (si.ast.op() != Ops::SINK) continue;
        if (auto r = std::dynamic_pointer_cast<CompiledRunner>(lower_schedule_item(si).prg)) src += r->p.src;
      }
      if (dynamic_cast<ClangRenderer*>(Device::get(Device::DEFAULT.str()).renderer.get()) != nullptr) {
        EXPECT_NE(src.find("__tg_dot4_"), std::string::npos) << src.substr(0, 3000);
        // integers within 0..127 past their offset: the helper AVX2's pmaddubsw may take (its name ends in n)
        if (narrow) {
          EXPECT_TRUE(std::regex_search(src, std::regex("__tg_dot4_[0-9]+n"))) << src.substr(0, 3000);
        }
      }
      run_schedule(sched, vars);
      std::vector<float> got = y.tolist<float>();
      for (int64_t r = 0; r < rows; r++) {
        double want = 0, mag = 0;
        for (int64_t i = 0; i < cols; i++) {
          want += double(w[static_cast<size_t>(r * cols + i)]) * xq[static_cast<size_t>(i)];
          mag += std::fabs(double(w[static_cast<size_t>(r * cols + i)]) * xq[static_cast<size_t>(i)]);
        }
        ASSERT_NEAR(got[static_cast<size_t>(r)], want, 1e-5 * mag + 1e-6) << "row " << r;
        if (xrows > 1) {
          ASSERT_NEAR(got[static_cast<size_t>(rows + r)], -0.5 * want, 1e-5 * mag + 1e-6) << "second row " << r;
        }
      }
    };
    Tensor x2 = x.cat({x * -0.5f}, 0).realize();
    check(ggml_int8_linear(x, bytes, uint32_t(type), rows));
    // Q4_0, Q8_0, Q4_K and Q6_K laid out for the matvec (ggml_int8_pack): the same weights (bit-exact), the same
    // arithmetic
    EXPECT_EQ(ggml_int8_packs(uint32_t(type), rows),
              type == GGMLType::Q4_0 || type == GGMLType::Q8_0 || type == GGMLType::Q4_K || type == GGMLType::Q6_K);
    if (ggml_int8_packs(uint32_t(type), rows)) {
      GGMLInt8Weight packed = ggml_int8_pack(bytes, uint32_t(type), rows, cols);
      EXPECT_EQ(packed.dequantize().reshape({rows * cols}).tolist<float>(), w);
      check(ggml_int8_linear(x, packed));
      check(ggml_int8_linear(x2, packed));  // a prefill's rows: the int8 matmul
    }
  }
  std::string err = error_of([&] { ggml_int8_linear(x, x, uint32_t(GGMLType::F16), 1); });
  EXPECT_NE(err.find("has no int8 dot product"), std::string::npos) << err;
  err =
      error_of([&] { ggml_int8_linear(x, Tensor(std::vector<uint8_t>(18), Shape{18}), uint32_t(GGMLType::Q4_0), 4); });
  EXPECT_NE(err.find("weights take 2304 bytes"), std::string::npos) << err;
  err = error_of([&] { ggml_int8_linear(Tensor::ones({1, 96}), x, uint32_t(GGMLType::Q4_K), 4); });
  EXPECT_NE(err.find("is not whole blocks of 256 (q4_K)"), std::string::npos) << err;
  // the packed layout takes Q4_0 and Q8_0 in rows of 64, the bytes they need, and an x as long as its rows
  Tensor q40 = Tensor(std::vector<uint8_t>(64 * 2 * 18), Shape{64 * 2 * 18});
  err = error_of([&] { ggml_int8_pack(q40, uint32_t(GGMLType::Q4_0), 16, 64); });
  EXPECT_NE(err.find("16 rows of GGML type 2 have no int8 layout"), std::string::npos) << err;
  err = error_of([&] { ggml_int8_pack(q40, uint32_t(GGMLType::Q5_K), 64, 256); });
  EXPECT_NE(err.find("64 rows of GGML type 13 have no int8 layout"), std::string::npos) << err;
  err = error_of([&] { ggml_int8_pack(q40, uint32_t(GGMLType::Q4_K), 64, 64); });
  EXPECT_NE(err.find("a row of 64 is not whole blocks of 256 (q4_K)"), std::string::npos) << err;
  err = error_of([&] { ggml_int8_pack(q40, uint32_t(GGMLType::Q4_0), 64, 96); });
  EXPECT_NE(err.find("64x96 q4_0 weights take 3456 bytes"), std::string::npos) << err;
  err = error_of([&] { ggml_int8_pack(q40, uint32_t(GGMLType::Q4_0), 64, 48); });
  EXPECT_NE(err.find("a row of 48 is not whole blocks of 32 (q4_0)"), std::string::npos) << err;
  GGMLInt8Weight small = ggml_int8_pack(q40, uint32_t(GGMLType::Q4_0), 64, 64);
  err = error_of([&] { ggml_int8_linear(Tensor::ones({1, 32}), small); });
  EXPECT_NE(err.find("the input's last axis (32) is not the weight's 64"), std::string::npos) << err;
}

// the packed layout's matvec reads the packed weight in one kernel (no float copy of it, nor of its integers) and
// gives rows in the weight's order, for a row count whose four groups are far apart
TEST_F(GGUF, Int8PackedMatvecIsOneKernelOverThePackedWeight) {
  const int64_t rows = 192, cols = 512;
  std::vector<uint8_t> raw(static_cast<size_t>(rows * cols / 32 * 18));
  for (size_t i = 0; i < raw.size(); i++) raw[i] = static_cast<uint8_t>(i * 37 + 11);
  for (size_t blk = 0; blk < raw.size(); blk += 18) raw[blk] = 0, raw[blk + 1] = 0x20;  // d = 2^-7
  Tensor bytes = Tensor(raw, Shape{static_cast<int64_t>(raw.size())}).realize();
  GGMLInt8Weight w = ggml_int8_pack(bytes, uint32_t(GGMLType::Q4_0), rows, cols);
  Tensor::realize(w.tensors());
  // (groups, tiles, blocks, quads c | c + 4 a byte, rows, weights)
  EXPECT_EQ(w.q.shape(), (Shape{4, 3, 16, 4, 16, 4}));
  EXPECT_EQ(w.d.shape(), (Shape{4, 3, 16, 16}));
  EXPECT_EQ(w.d.dtype(), is_dtype_supported(dtypes::float16) ? dtypes::float16 : dtypes::float32);
  Tensor x = Tensor(ramp(cols), {1, cols}).realize();
  Tensor y = ggml_int8_linear(x, w);
  auto [sched, vars] = Tensor::schedule_with_vars({y});
  int reads_q = 0;
  for (const ScheduleItem& si : sched)
    for (const Buffer& b : si.bufs) {
      EXPECT_LT(b.nbytes(), size_t(rows * cols)) << "a buffer as big as the weight's integers";
      reads_q += b == uop_buffer(uop_base(w.q.uop()));
    }
  EXPECT_EQ(reads_q, 1);
  run_schedule(sched, vars);
  // a prefill multiplies a float copy of the dequantized weight: once freed, nothing of it stays (a realized cast
  // of the scales would, held by the weight's graph from then on)
  Tensor chunk = Tensor(ramp(17 * cols), {17, cols}).realize();
  const int64_t held = GlobalCounters::mem_used;
  { chunk.matmul(w.dequantize().contiguous().T()).realize(); }
  EXPECT_EQ(GlobalCounters::mem_used, held);
  std::vector<float> got = y.tolist<float>(), dense = x.matmul(w.dequantize().T()).tolist<float>();
  for (int64_t r = 0; r < rows; r++)
    EXPECT_NEAR(got[size_t(r)], dense[size_t(r)], 0.02 * std::fabs(dense[size_t(r)]) + 0.05) << r;

  // Q4_K: one kernel reads all of the packed weight (its nibbles, d and dmin, scales and mins): the mins' term is
  // summed in the matvec's loop, not in a small matvec of its own; for a decode step's row and a prefill's rows
  std::vector<uint8_t> k4(static_cast<size_t>(rows * cols / 256 * 144));
  for (size_t i = 0; i < k4.size(); i++) k4[i] = static_cast<uint8_t>(i * 29 + 5);
  for (size_t blk = 0; blk < k4.size(); blk += 144) k4[blk + 1] = k4[blk + 3] = 0x20;  // d, dmin ~2^-7
  GGMLInt8Weight wk = ggml_int8_pack(Tensor(k4, Shape{static_cast<int64_t>(k4.size())}).realize(),
                                     uint32_t(GGMLType::Q4_K), rows, cols);
  const std::vector<Tensor> parts = wk.tensors();
  Tensor::realize(parts);
  EXPECT_EQ(parts.size(), 3u);  // q, d (with dmin), sc (with the mins)
  for (int64_t xr : {int64_t(1), int64_t(8)}) {
    Tensor xk = Tensor(ramp(xr * cols), {xr, cols}).realize();
    auto [ks, kv] = Tensor::schedule_with_vars({ggml_int8_linear(xk, wk)});
    std::vector<std::set<size_t>> reads;
    for (const ScheduleItem& si : ks) {
      std::set<size_t> r;
      for (const Buffer& b : si.bufs)
        for (size_t i = 0; i < parts.size(); i++)
          if (b == uop_buffer(uop_base(parts[i].uop()))) r.insert(i);
      if (!r.empty()) reads.push_back(r);
    }
    ASSERT_EQ(reads.size(), 1u) << xr << " rows: the weight's buffers read by more than one kernel";
    EXPECT_EQ(reads[0].size(), 3u) << xr;
  }
}
