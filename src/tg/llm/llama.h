#pragma once
// llm: the llama family from a GGUF file (tinygrad's examples/llama.py and the newest tinygrad/llm/model.py, read from
// llama.cpp's tensor names and metadata): token embedding, n blocks of RMSNorm -> attention with rotary positions
// (consecutive pairs, as llama.cpp's llama architecture) and grouped-query heads -> RMSNorm -> SwiGLU feed-forward,
// a final RMSNorm and the output projection (tied to the embedding when the file has no output.weight).
//
//   nn::GGUFFile f = nn::gguf_load("tinyllama.Q4_0.gguf");
//   llm::Transformer model(f);
//   std::vector<int64_t> ids = model.generate({1, 15043, 29892}, 32);   // greedy; or {.temperature = 0.8, ...}
//
// Weights stay as gguf_load returns them: packed, dequantized inside the kernels that use them. Each layer keeps a
// KV cache of the context length; a decode step (one token) runs at a symbolic position and reads its token through a
// bound Variable, so one set of compiled kernels serves every position, and it runs under TinyJit (JIT=0: not).
// Activations are float32.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tg/llm/sampling.h"
#include "tg/nn/gguf.h"
#include "tg/tensor/jit.h"
#include "tg/tensor/tensor.h"

namespace tg::llm {

struct LlamaConfig {
  std::string arch = "llama";
  int64_t dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, hidden = 0, vocab = 0, context = 0, head_dim = 0;
  double norm_eps = 1e-5, rope_base = 10000.0;
  // from general.architecture's keys; a missing one is a ValueError naming it, another architecture one naming it
  static LlamaConfig from_gguf(const nn::GGUFMetadata& kv);
};

class Transformer {
 public:
  // max_context 0: the file's context length (a larger one is a ValueError)
  explicit Transformer(const nn::GGUFFile& file, int64_t max_context = 0);

  const LlamaConfig& config() const { return cfg_; }
  const JitFunction& decode_jit() const { return decode_jit_; }  // the one-token step's TinyJit
  // the logits (vocab,) of the next token after `tokens`, placed at positions start_pos.. (the cache holds what came
  // before); a position past the context is a ValueError
  Tensor forward(const std::vector<int64_t>& tokens, int64_t start_pos);
  // the prompt, then up to n new tokens chosen by a Sampler (default: greedy); stops after eos when given
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, int64_t n, const SamplingParams& sampling = {},
                                std::optional<int64_t> eos = {});

 private:
  struct Layer {
    Tensor attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down, cache_k, cache_v;
  };
  Tensor embed(const std::vector<int64_t>& tokens, const UOp& token_var) const;
  Tensor attention(Layer& l, const Tensor& x, const sint& start_pos, int64_t T);
  Tensor step(const std::vector<int64_t>& tokens, const sint& start_pos, const UOp& token_var);

  LlamaConfig cfg_;
  Tensor tok_embd_, out_norm_, output_, rope_cos_, rope_sin_;
  std::vector<Layer> layers_;
  JitFunction decode_jit_;  // the one-token step under TinyJit: captured on the second token, replayed after
};

}  // namespace tg::llm
