// The llama family from GGUF (llm/model.h), on files the tests write (random weights): the KV cache gives the logits
// a full recompute gives, and greedy tokens and next-token probabilities equal llama.cpp's on the same file (its npm
// build, tools/fetch_llama_cpp.sh; skipped without node or it). Bad files are ValueErrors naming the key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "error_of.h"
#include "llm_util.h"
#include "scoped_env.h"
#include "tg/engine/realize.h"
#include "tg/helpers/json.h"
#include "tg/llm/model.h"
#include "tg/runtime/device.h"
#include "tg/runtime/ops_cpu.h"
#include "tg/schedule/grouper.h"

using namespace tg;
using nn::GGUFValue;
using tg::test::error_of;
using tg::test::write_tiny_llama;

namespace {

struct Llama : ::testing::Test {
  void SetUp() override {
    Device::DEFAULT.reset();
    path = (std::filesystem::temp_directory_path() /
            cat("tg_llama_", ::getpid(), "_", ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".gguf"))
               .string();
  }
  void TearDown() override { std::filesystem::remove(path); }
  std::string path;
};

std::vector<float> softmax_of(const Tensor& logits) { return logits.softmax().tolist<float>(); }

// llama.cpp's greedy tokens and its five likeliest tokens' probabilities at each step equal ours; nullopt: no llama.cpp
std::optional<size_t> steps_agreeing_with_llama_cpp(const std::string& path, float tol) {
  std::vector<int64_t> prompt{1, 299, 5, 77, 260, 3};
  std::vector<std::string> ids;
  for (int64_t t : prompt) ids.push_back(std::to_string(t));
  std::optional<json::Value> ref = tg::test::llama_cpp(path, "greedy", cat("[", join(ids, ","), "]"), 8);
  if (!ref) return std::nullopt;
  llm::Transformer model(nn::gguf_load(path));
  std::vector<int64_t> seq = prompt;
  Tensor logits = model.forward(prompt, 0);
  size_t compared = 0;
  for (const json::Value& step : ref->as_array()) {
    std::vector<float> p = softmax_of(logits);
    EXPECT_TRUE(step.find("top") != nullptr && step.find("token") != nullptr) << step.dump();
    if (step.find("top") == nullptr || step.find("token") == nullptr) break;
    const json::Array& top = step.find("top")->as_array();
    for (const json::Value& e : top)
      EXPECT_NEAR(p[static_cast<size_t>(e.as_array()[0].as_int())], e.as_array()[1].as_double(), tol)
          << "step " << compared << " token " << e.as_array()[0].as_int();
    compared++;
    // where llama.cpp's two likeliest tokens are nearly tied, the tie may break either way: stop there
    if (top.size() > 1 && top[0].as_array()[1].as_double() - top[1].as_array()[1].as_double() < 2 * tol) break;
    int64_t got = static_cast<int64_t>(std::max_element(p.begin(), p.end()) - p.begin());
    EXPECT_EQ(got, step.find("token")->as_int()) << "step " << compared;
    if (got != step.find("token")->as_int()) break;
    seq.push_back(got);
    logits = model.forward({got}, static_cast<int64_t>(seq.size()) - 1);
  }
  return compared;
}

}  // namespace

TEST_F(Llama, KVCacheDecodeMatchesAFullRecompute) {
  write_tiny_llama(path, uint32_t(nn::GGMLType::F32));
  nn::GGUFFile f = nn::gguf_load(path);
  llm::Transformer model(f);
  std::vector<int64_t> seq = model.generate({1, 299, 5, 77}, 5);
  ASSERT_EQ(seq.size(), 9u);
  // the logits after the whole sequence: decoded token by token through the cache, and all at once in a fresh model
  std::vector<float> cached = model.forward({seq.back()}, static_cast<int64_t>(seq.size()) - 1).tolist<float>();
  llm::Transformer fresh(f);
  std::vector<float> full = fresh.forward(seq, 0).tolist<float>();
  ASSERT_EQ(cached.size(), full.size());
  for (size_t i = 0; i < full.size(); i++) ASSERT_NEAR(cached[i], full[i], 1e-3f * (1 + std::fabs(full[i]))) << i;
}

// Half and bfloat16 activations (the residual stream, the projections and the KV cache in that type; norms and the
// softmax in float32): the logits follow float32's within the type's precision, through prefill and cached decode
TEST_F(Llama, HalfActivationsFollowFloat32) {
  tg::test::ScopedEnv float_matvecs("LLM_INT8",
                                    "0");  // the activations' type alone (int8 x rounds in steps of its own)
  write_tiny_llama(path, uint32_t(nn::GGMLType::Q8_0));
  nn::GGUFFile f = nn::gguf_load(path);
  llm::Transformer ref(f);
  std::vector<int64_t> prompt{1, 299, 5, 77, 260};
  std::vector<float> want = ref.forward(prompt, 0).tolist<float>(), next = ref.forward({3}, 5).tolist<float>();
  float scale = 0;
  for (float x : want) scale = std::max(scale, std::fabs(x));
  for (auto [dt, tol] : {std::pair{dtypes::float16, 0.02f}, std::pair{dtypes::bfloat16, 0.1f}}) {
    llm::Transformer model(f, 0, dt);
    EXPECT_EQ(model.activations(), dt);
    Tensor logits = model.forward(prompt, 0);
    EXPECT_EQ(logits.dtype(), dtypes::float32);  // the logits are float32 whatever the activations
    std::vector<float> got = logits.tolist<float>(), got_next = model.forward({3}, 5).tolist<float>();
    ASSERT_EQ(got.size(), want.size());
    EXPECT_NE(got, want) << dt << ": the activations' type rounds differently from float32's";
    for (size_t i = 0; i < want.size(); i++) {
      ASSERT_NEAR(got[i], want[i], tol * scale) << dt << " prefill, logit " << i;
      ASSERT_NEAR(got_next[i], next[i], tol * scale) << dt << " decode, logit " << i;
    }
  }
  EXPECT_THROW(llm::Transformer(f, 0, dtypes::int32), ValueError);
  EXPECT_NE(error_of([&] { llm::Transformer(f, 0, dtypes::int32); }).find("float32, float16 or bfloat16, got"),
            std::string::npos);
}

// The matvecs and matmuls on Q4_0 / Q8_0 weights on the CPU multiply int8 (x quantized to blocks of 32, as llama.cpp
// does; LLM_INT8=1, the default; a prefill's too where the weight is laid out for it): the logits follow the float
// matmuls' (LLM_INT8=0) within x's quantization error, after prefill and after a cached decode step (whose cache the
// int8 prefill wrote: the error compounds, 3.3% of the largest logit for Q8_0 here)
TEST_F(Llama, Int8DecodeFollowsTheFloatMatvecs) {
  for (nn::GGMLType type : {nn::GGMLType::Q4_0, nn::GGMLType::Q8_0}) {
    write_tiny_llama(path, uint32_t(type));
    nn::GGUFFile f = nn::gguf_load(path);
    std::vector<int64_t> prompt{1, 299, 5, 77, 260};
    auto run = [&](const char* int8) {
      tg::test::ScopedEnv e("LLM_INT8", int8);
      llm::Transformer model(f);
      std::vector<float> pre = model.forward(prompt, 0).tolist<float>();
      std::vector<float> next = model.forward({3}, 5).tolist<float>();
      return std::pair{pre, next};
    };
    auto [pre_f, next_f] = run("0");
    auto [pre_i, next_i] = run("1");
    float scale = 0;
    for (float x : next_f) scale = std::max(scale, std::fabs(x));
    ASSERT_EQ(next_i.size(), next_f.size());
    if (Device::DEFAULT == "CPU" && (nn::ggml_int8_narrow(uint32_t(type)) || cpu_target().vnni)) {
      EXPECT_NE(next_i, next_f) << "x is quantized on the CPU";  // Q8_0 without VNNI keeps the float matvec
    }
    ASSERT_EQ(pre_i.size(), pre_f.size());
    for (size_t i = 0; i < next_f.size(); i++) {
      ASSERT_NEAR(pre_i[i], pre_f[i], 0.02f * scale) << "prefill, logit " << i;
      ASSERT_NEAR(next_i[i], next_f[i], 0.04f * scale) << "decode, logit " << i;
    }
  }
}

TEST_F(Llama, SampledGenerationRepeatsForASeed) {
  write_tiny_llama(path, uint32_t(nn::GGMLType::F32));
  llm::Transformer model(nn::gguf_load(path));
  llm::SamplingParams sp{.temperature = 1.5, .top_k = 50, .seed = 11};
  std::vector<int64_t> a = model.generate({1, 299}, 6, sp), b = model.generate({1, 299}, 6, sp);
  EXPECT_EQ(a, b);  // the cache is rewritten from position 0 by each call
  EXPECT_EQ(a.size(), 8u);
  int64_t first = model.generate({1, 299}, 1)[2];  // greedy's first token, taken as the eos:
  EXPECT_EQ(model.generate({1, 299}, 5, {}, first), (std::vector<int64_t>{1, 299, first}));  // generation stops there
}

TEST_F(Llama, JittedDecodeEqualsTheUnjitted) {
  write_tiny_llama(path, uint32_t(nn::GGMLType::Q4_0));
  nn::GGUFFile f = nn::gguf_load(path);
  llm::Transformer jitted(f);
  std::vector<int64_t> a = jitted.generate({1, 299, 5}, 8);
  EXPECT_GE(jitted.decode_jit().cnt(), 7);  // 7 one-token steps: the JIT captured and then replayed
  EXPECT_FALSE(jitted.decode_jit().jit_cache().empty());
  std::vector<float> la = jitted.forward({a.back()}, static_cast<int64_t>(a.size()) - 1).tolist<float>();
  tg::test::ScopedEnv no_jit("JIT", "0");
  llm::Transformer plain(f);
  std::vector<int64_t> b = plain.generate({1, 299, 5}, 8);
  EXPECT_EQ(a, b);
  std::vector<float> lb = plain.forward({b.back()}, static_cast<int64_t>(b.size()) - 1).tolist<float>();
  ASSERT_EQ(la.size(), lb.size());
  for (size_t i = 0; i < la.size(); i++) ASSERT_NEAR(la[i], lb[i], 1e-4f * (1 + std::fabs(lb[i]))) << i;
}

TEST_F(Llama, EveryDecodePositionRunsTheSameKernels) {
  write_tiny_llama(path, uint32_t(nn::GGMLType::Q8_0));
  llm::Transformer model(nn::gguf_load(path));
  std::vector<int64_t> seq{1, 299, 5};
  Tensor logits = model.forward(seq, 0);
  size_t after_first_decode = 0;
  for (int step = 0; step < 12; step++) {  // tokens and positions change; the kernels don't
    int64_t next = logits.argmax().item<int32_t>();
    seq.push_back(next);
    logits = model.forward({next}, static_cast<int64_t>(seq.size()) - 1);
    if (step == 0) after_first_decode = method_cache_size();
  }
  logits.argmax().item<int32_t>();
  EXPECT_EQ(method_cache_size(), after_first_decode);
}

TEST_F(Llama, GreedyTokensAndProbabilitiesEqualLlamaCpp) {
  struct Case {
    nn::GGMLType type;
    float tol;  // llama.cpp keeps its KV cache in half; with quantized weights it multiplies in int8 (q8 activations)
    size_t min_steps;  // steps compared at least: up to the first near-tie of llama.cpp's two likeliest tokens
    tg::test::Dims dims{};
  };
  tg::test::Dims wide;  // the K-quants' rows are whole super-blocks of 256
  wide.dim = 256, wide.hidden = 512, wide.weight_scale = 0.1f;
  for (Case c : {Case{nn::GGMLType::F32, 2e-3f, 6}, Case{nn::GGMLType::F16, 5e-3f, 4},
                 Case{nn::GGMLType::Q8_0, 2e-2f, 3}, Case{nn::GGMLType::Q4_0, 3e-2f, 1},
                 Case{nn::GGMLType::Q4_K, 3e-2f, 1, wide}, Case{nn::GGMLType::Q6_K, 2e-2f, 1, wide}}) {
    SCOPED_TRACE(nn::ggml_type_traits(uint32_t(c.type))->name);
    write_tiny_llama(path, uint32_t(c.type), c.dims);
    std::optional<size_t> steps = steps_agreeing_with_llama_cpp(path, c.tol);
    if (!steps) GTEST_SKIP() << "node or llama.cpp's npm build is missing (tools/fetch_llama_cpp.sh)";
    EXPECT_GE(*steps, c.min_steps);
  }
}

// the other architectures, and llama's variants: tied output, llama 3's rope_freqs, linear rope scaling
TEST_F(Llama, ArchitecturesEqualLlamaCpp) {
  struct Case {
    std::string name, arch;
    tg::test::Dims dims;
    float tol = 2e-3f;
  };
  tg::test::Dims tied, freqs, linear, gpt2;
  tied.tied = true;
  for (int i = 0; i < 8; i++) freqs.rope_freqs.push_back(1.0f + static_cast<float>(i * i) * 0.5f);
  linear.extra_kv = {{"rope.scaling.type", GGUFValue::str("linear")}, {"rope.scaling.factor", GGUFValue::f32(4.0f)}};
  gpt2.kv_heads = gpt2.heads;
  // ggml's GELU reads a half-precision table: the activations it feeds on are rounded to half. The tied output
  // projection is the embedding (5x the output weights' scale): its logits, and llama.cpp's half KV cache's error, grow
  for (const Case& c : {Case{"qwen2", "qwen2", {}}, Case{"qwen3", "qwen3", {}}, Case{"gpt2", "gpt2", gpt2, 5e-3f},
                        Case{"llama tied", "llama", tied, 5e-3f}, Case{"llama rope_freqs", "llama", freqs},
                        Case{"llama linear scaling", "llama", linear}}) {
    SCOPED_TRACE(c.name);
    write_tiny_llama(path, uint32_t(nn::GGMLType::F32), c.dims, c.arch);
    std::optional<size_t> steps = steps_agreeing_with_llama_cpp(path, c.tol);
    if (!steps) GTEST_SKIP() << "node or llama.cpp's npm build is missing (tools/fetch_llama_cpp.sh)";
    EXPECT_GE(*steps, 2U);
  }
}

// the prompt in chunks gives the logits of the prompt at once
TEST_F(Llama, ChunkedPrefillEqualsOneChunk) {
  write_tiny_llama(path, uint32_t(nn::GGMLType::F32), {}, "qwen3");
  nn::GGUFFile f = nn::gguf_load(path);
  std::vector<int64_t> prompt;
  for (int64_t i = 0; i < 23; i++) prompt.push_back((i * 37 + 5) % 300);
  llm::Transformer whole(f);
  std::vector<float> want = whole.forward(prompt, 0).tolist<float>();
  for (int64_t chunk : {1, 4, 7, 22}) {
    llm::Transformer m(f);
    m.prefill_chunk = chunk;
    std::vector<float> got = m.forward(prompt, 0).tolist<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-4) << "chunk " << chunk << " logit " << i;
  }
}

// A prefill chunk's layers run under TinyJit with each layer's tensors passed in: the first two layers of each kind
// run and capture, the ones after replay (no graph built, kernelized or scheduled: fewer kernelizes than layers), and
// the logits are the unjitted ones, bit for bit, over chunks at several positions, for each architecture's layer.
// Every projection is laid out for the int8 matmul (rows a multiple of 64)
TEST_F(Llama, JittedPrefillLayersEqualTheUnjitted) {
  using Case = std::pair<nn::GGMLType, const char*>;  // qwen2's biases, qwen3's q/k norms, gpt2's fused qkv
  for (auto [type, arch] :
       {Case{nn::GGMLType::Q4_0, "llama"}, Case{nn::GGMLType::Q8_0, "llama"}, Case{nn::GGMLType::Q8_0, "qwen2"},
        Case{nn::GGMLType::Q4_0, "qwen3"}, Case{nn::GGMLType::Q8_0, "gpt2"}}) {
    write_tiny_llama(path, uint32_t(type),
                     {.dim = 128, .layers = 7, .heads = 4, .kv_heads = 2, .hidden = 256, .vocab = 320}, arch);
    nn::GGUFFile f = nn::gguf_load(path);
    std::vector<int64_t> prompt;
    for (int64_t i = 0; i < 21; i++) prompt.push_back((i * 37 + 5) % 320);
    auto run = [&](const char* jit) {
      tg::test::ScopedEnv e("JIT", jit);
      llm::Transformer m(f);
      m.prefill_chunk = 8;  // chunks of 8, 8 and 5 tokens at positions 0, 8 and 16
      const size_t before = kernelize_calls();
      std::vector<float> logits = m.forward(prompt, 0).tolist<float>();
      return std::pair{logits, kernelize_calls() - before};
    };
    auto [plain, plain_calls] = run("0");
    auto [jitted, jitted_calls] = run("1");
    EXPECT_EQ(jitted, plain) << nn::ggml_type_traits(uint32_t(type))->name << " " << arch;
    // 7 layers a chunk: 4 run (two JITs' first two calls), 3 replay
    EXPECT_LE(jitted_calls + 3 * 3, plain_calls) << arch << ": " << jitted_calls << " against " << plain_calls;
  }
}

// A model loaded onto a device other than the default runs its prompt there: every tensor it makes (the causal
// mask of a prefill chunk too) is on the weights' device, and the logits are the default device's
TEST_F(Llama, APromptRunsOnTheDeviceTheModelWasLoadedOn) {
  write_tiny_llama(path, uint32_t(nn::GGMLType::F32));
  const std::vector<std::string> avail = Device::get_available_devices();
  const std::string def = Device::canonicalize();
  std::string other;
  for (const char* d : {"LLVM", "PYTHON"})
    if (other.empty() && d != def && std::find(avail.begin(), avail.end(), d) != avail.end()) other = d;
  if (other.empty()) GTEST_SKIP() << "no device besides " << def;
  const std::vector<int64_t> prompt{1, 299, 5, 42};
  llm::Transformer here(nn::gguf_load(path));
  std::vector<float> want = here.forward(prompt, 0).tolist<float>();
  llm::Transformer there(nn::gguf_load(path, other));
  Tensor logits = there.forward(prompt, 0);
  EXPECT_EQ(logits.device(), other);
  std::vector<float> got = logits.tolist<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-4) << other << " logit " << i;
}

// A prompt's layers kernelize alike: from the second layer on each layer's graph is the kernelize cache's, and the
// model's tensors are in a kernelize's view form from the load, so a second prompt finds the first one's graphs (the
// first prompt used to turn them from a realize's reshapes, and the second kernelized each kind of layer graph again:
// 3 here, 4 x 25 ms for TinyLlama). One is left: the first layer's, whose input, the embedding rows' buffer, the rows'
// TinyJit leaves in one form while it runs (its first two calls) and another once it replays. Every projection is
// laid out for the int8 matmul here (rows a multiple of 64): a weight kept as a lazy dequantization settles in its
// first prompt
TEST_F(Llama, ASecondPromptKernelizesAtMostOneGraphAnew) {
  write_tiny_llama(path, uint32_t(nn::GGMLType::Q4_0),
                   {.dim = 128, .heads = 4, .kv_heads = 2, .hidden = 256, .vocab = 320});
  llm::Transformer m(nn::gguf_load(path));
  std::vector<int64_t> prompt{1, 5, 9, 2, 7, 3};
  std::vector<float> first = m.forward(prompt, 0).tolist<float>();
  const size_t misses = kernelize_cache_misses();
  std::vector<float> again = m.forward(prompt, 0).tolist<float>();
  EXPECT_LE(kernelize_cache_misses(), misses + 1);
  EXPECT_EQ(again, first);
}

TEST_F(Llama, BadFilesAreValueErrors) {
  write_tiny_llama(path, uint32_t(nn::GGMLType::F32), {}, "mamba");
  EXPECT_THROW(llm::Transformer(nn::gguf_load(path)), ValueError);
  EXPECT_NE(error_of([&] { llm::Transformer m(nn::gguf_load(path)); }).find("'mamba'"), std::string::npos);
  write_tiny_llama(path, uint32_t(nn::GGMLType::F32));
  nn::GGUFFile f = nn::gguf_load(path);
  nn::GGUFFile no_key = f;
  std::erase_if(no_key.kv, [](const auto& kv) { return kv.first == "llama.block_count"; });
  EXPECT_NE(error_of([&] { llm::Transformer m(no_key); }).find("llama.block_count"), std::string::npos);
  nn::GGUFFile no_tensor = f;
  no_tensor.tensors.erase("blk.1.ffn_up.weight");
  EXPECT_NE(error_of([&] { llm::Transformer m(no_tensor); }).find("blk.1.ffn_up.weight"), std::string::npos);
  llm::Transformer m(f, 16);
  EXPECT_THROW(m.forward({1, 2, 3}, 14), ValueError);   // positions 14..16 of a 16-token context
  EXPECT_THROW(m.forward({300}, 0), ValueError);        // outside the vocabulary
  EXPECT_THROW(llm::Transformer(f, 4096), ValueError);  // more context than the file's
}
