#pragma once
// tests/llm's shared parts: a tiny llama GGUF with random weights (and a SentencePiece vocabulary llama.cpp accepts, or
// the one given: SentencePiece or byte-level BPE), and llama.cpp run on a file through tools/llama_cpp_eval.mjs
// (nullopt where node or its npm build is missing)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tg/helpers/json.h"
#include "tg/nn/gguf.h"

namespace tg::test {

using nn::GGUFValue;

struct Dims {
  int64_t dim = 64, layers = 2, heads = 4, kv_heads = 2, hidden = 128, vocab = 300, context = 128;
  bool tied = false;                // no output.weight: the embedding is the output projection
  std::vector<float> rope_freqs{};  // llama 3's rope_freqs.weight, when not empty
  std::vector<std::pair<std::string, GGUFValue>> extra_kv{};  // more "<arch>." keys
  float weight_scale = 0.2f;  // the projections' standard deviation: 0.2 * sqrt(64 / dim) keeps the logits' spread
};

// a tokenizer's vocabulary: SentencePiece (model "llama", base_vocab: <unk>, <s>, </s>, the 256 byte tokens, then
// pieces) or byte-level BPE (model "gpt2", with merges and a pre-tokenizer)
struct Vocab {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<int32_t> types;       // llama.cpp's: 1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte
  std::string model = "llama";      // tokenizer.ggml.model
  std::vector<std::string> merges;  // tokenizer.ggml.merges, "left right", when model is "gpt2"
  std::optional<std::string> pre;   // tokenizer.ggml.pre, left out when unset
  int64_t bos = 1, eos = 2;
  void add(std::string p, float score, int32_t type = 1) {
    pieces.push_back(std::move(p)), scores.push_back(score), types.push_back(type);
  }
};
inline Vocab base_vocab() {
  Vocab v;
  v.add("<unk>", 0, 2), v.add("<s>", 0, 3), v.add("</s>", 0, 3);
  for (int i = 0; i < 256; i++) v.add(cat("<0x", "0123456789ABCDEF"[i / 16], "0123456789ABCDEF"[i % 16], ">"), 0, 6);
  return v;
}
// the base vocabulary padded with placeholder pieces up to n tokens
inline Vocab byte_vocab(int64_t n) {
  Vocab v = base_vocab();
  while (static_cast<int64_t>(v.pieces.size()) < n)
    v.add(cat("\xe2\x96\x81w", v.pieces.size()), -static_cast<float>(v.pieces.size()));
  return v;
}

// a llama GGUF with a SentencePiece vocabulary llama.cpp accepts, random weights stored as `type`
inline void write_tiny_llama(const std::string& path, uint32_t type, Dims d = {}, const std::string& arch = "llama",
                             const Vocab* vocab = nullptr) {
  using T = GGUFValue::Type;
  Vocab v = vocab != nullptr ? *vocab : byte_vocab(d.vocab);
  d.vocab = static_cast<int64_t>(v.pieces.size());
  std::vector<GGUFValue> toks, scores, types;
  for (size_t i = 0; i < v.pieces.size(); i++) {
    toks.push_back(GGUFValue::str(v.pieces[i]));
    scores.push_back(GGUFValue::f32(v.scores[i]));
    types.push_back(GGUFValue::i32(v.types[i]));
  }
  const std::string a = arch + ".";
  nn::GGUFMetadata kv{{"general.architecture", GGUFValue::str(arch)},
                      {a + "context_length", GGUFValue::u32(static_cast<uint32_t>(d.context))},
                      {a + "embedding_length", GGUFValue::u32(static_cast<uint32_t>(d.dim))},
                      {a + "block_count", GGUFValue::u32(static_cast<uint32_t>(d.layers))},
                      {a + "feed_forward_length", GGUFValue::u32(static_cast<uint32_t>(d.hidden))},
                      {a + "attention.head_count", GGUFValue::u32(static_cast<uint32_t>(d.heads))},
                      {a + "attention.head_count_kv", GGUFValue::u32(static_cast<uint32_t>(d.kv_heads))},
                      {a + "attention.layer_norm_rms_epsilon", GGUFValue::f32(1e-5f)},
                      {a + "rope.freq_base", GGUFValue::f32(10000.0f)},
                      {"tokenizer.ggml.model", GGUFValue::str(v.model)},
                      {"tokenizer.ggml.tokens", GGUFValue::array(T::STRING, toks)},
                      {"tokenizer.ggml.scores", GGUFValue::array(T::FLOAT32, scores)},
                      {"tokenizer.ggml.token_type", GGUFValue::array(T::INT32, types)},
                      {"tokenizer.ggml.bos_token_id", GGUFValue::u32(static_cast<uint32_t>(v.bos))},
                      {"tokenizer.ggml.eos_token_id", GGUFValue::u32(static_cast<uint32_t>(v.eos))}};
  if (!v.merges.empty()) {
    std::vector<GGUFValue> merges;
    for (const std::string& m : v.merges) merges.push_back(GGUFValue::str(m));
    kv.emplace_back("tokenizer.ggml.merges", GGUFValue::array(T::STRING, merges));
  }
  if (v.pre) kv.emplace_back("tokenizer.ggml.pre", GGUFValue::str(*v.pre));
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal;
  auto w = [&](Shape s, float scale, float shift = 0) {
    std::vector<float> v(static_cast<size_t>(tg::prod(s).as_int()));
    for (float& x : v) x = normal(rng) * scale + shift;
    return Tensor(v, s, {.device = "CPU"});
  };
  const int64_t hd = d.dim / d.heads, kv_dim = d.kv_heads * hd;
  const bool quant = type != uint32_t(nn::GGMLType::F32), gpt2 = arch == "gpt2";
  std::vector<nn::GGUFSaveTensor> ts{{"token_embd.weight", w({d.vocab, d.dim}, 1.0f), type}};
  // norms and biases stay F32, as llama.cpp's files keep them
  if (gpt2) {
    ts.push_back({"position_embd.weight", w({d.context, d.dim}, 0.5f)});
    kv.emplace_back(a + "attention.layer_norm_epsilon", GGUFValue::f32(1e-5f));
  }
  for (int64_t i = 0; i < d.layers; i++) {
    auto name = [&](const char* n, const char* kind = "weight") { return cat("blk.", i, ".", n, ".", kind); };
    ts.push_back({name("attn_norm"), w({d.dim}, 0.1f, 1.0f)});
    if (gpt2) {
      ts.push_back({name("attn_norm", "bias"), w({d.dim}, 0.1f)});
      ts.push_back({name("attn_qkv"), w({d.dim + 2 * kv_dim, d.dim}, d.weight_scale), type});
      ts.push_back({name("attn_qkv", "bias"), w({d.dim + 2 * kv_dim}, 0.1f)});
    } else {
      ts.push_back({name("attn_q"), w({d.dim, d.dim}, d.weight_scale), type});
      ts.push_back({name("attn_k"), w({kv_dim, d.dim}, d.weight_scale), type});
      ts.push_back({name("attn_v"), w({kv_dim, d.dim}, d.weight_scale), type});
    }
    if (arch == "qwen2") {
      ts.push_back({name("attn_q", "bias"), w({d.dim}, 0.1f)});
      ts.push_back({name("attn_k", "bias"), w({kv_dim}, 0.1f)});
      ts.push_back({name("attn_v", "bias"), w({kv_dim}, 0.1f)});
    }
    if (arch == "qwen3") {
      ts.push_back({name("attn_q_norm"), w({hd}, 0.1f, 1.0f)});
      ts.push_back({name("attn_k_norm"), w({hd}, 0.1f, 1.0f)});
    }
    ts.push_back({name("attn_output"), w({d.dim, d.dim}, d.weight_scale), type});
    if (gpt2) ts.push_back({name("attn_output", "bias"), w({d.dim}, 0.1f)});
    ts.push_back({name("ffn_norm"), w({d.dim}, 0.1f, 1.0f)});
    if (gpt2) ts.push_back({name("ffn_norm", "bias"), w({d.dim}, 0.1f)});
    if (!gpt2) ts.push_back({name("ffn_gate"), w({d.hidden, d.dim}, d.weight_scale), type});
    ts.push_back({name("ffn_up"), w({d.hidden, d.dim}, d.weight_scale), type});
    if (gpt2) ts.push_back({name("ffn_up", "bias"), w({d.hidden}, 0.1f)});
    ts.push_back({name("ffn_down"), w({d.dim, d.hidden}, d.weight_scale), type});
    if (gpt2) ts.push_back({name("ffn_down", "bias"), w({d.dim}, 0.1f)});
  }
  ts.push_back({"output_norm.weight", w({d.dim}, 0.1f, 1.0f)});
  if (gpt2) ts.push_back({"output_norm.bias", w({d.dim}, 0.1f)});
  if (d.tied) {
    kv.emplace_back(a + "vocab_size", GGUFValue::u32(static_cast<uint32_t>(d.vocab)));
  } else {
    ts.push_back({"output.weight", w({d.vocab, d.dim}, d.weight_scale), quant ? type : uint32_t(nn::GGMLType::F32)});
  }
  if (!d.rope_freqs.empty())
    ts.push_back({"rope_freqs.weight",
                  Tensor(d.rope_freqs, Shape{static_cast<int64_t>(d.rope_freqs.size())}, {.device = "CPU"})});
  for (auto& [key, value] : d.extra_kv) kv.emplace_back(a + key, value);
  nn::gguf_save(path, kv, ts);
}

// llama.cpp's answer (tools/llama_cpp_eval.mjs MODE) for a JSON argument, or nullopt without node or llama.cpp
inline std::optional<json::Value> llama_cpp(const std::string& model, const std::string& mode, const std::string& arg,
                                            int n = 0) {
  const char* env = std::getenv("TG_LLAMA_CPP");
  std::string dir = env != nullptr ? env : std::string(TG_SOURCE_DIR) + "/.deps/llama-cpp";
  if (!std::filesystem::exists(dir + "/node_modules/node-llama-cpp") || std::system("command -v node >/dev/null") != 0)
    return std::nullopt;
  std::string arg_file = model + ".arg.json";  // the argument in a file: no shell quoting of the texts
  std::ofstream(arg_file) << arg;
  std::string cmd = cat("node ", TG_SOURCE_DIR, "/tools/llama_cpp_eval.mjs ", dir, " ", model, " ", mode, " @",
                        arg_file, " ", n, " 2>&1");
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return std::nullopt;
  std::string out;
  char buf[4096];
  while (size_t k = std::fread(buf, 1, sizeof buf, p)) out.append(buf, k);
  int rc = ::pclose(p);
  std::filesystem::remove(arg_file);
  EXPECT_EQ(rc, 0) << out;
  size_t start = out.find('[');
  EXPECT_NE(start, std::string::npos) << out;
  if (rc != 0 || start == std::string::npos) return std::nullopt;
  return json::parse(out.substr(start, out.rfind(']') - start + 1));
}

}  // namespace tg::test
