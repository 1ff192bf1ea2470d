#pragma once
// llm: a transformer language model from a GGUF file (the newest tinygrad's tinygrad/llm/model.py and its
// examples/llama.py, gpt2.py, read from llama.cpp's tensor names and metadata). One decoder, the architectures as
// options of it:
//   llama  (Llama 2/3, TinyLlama, Mistral, SmolLM)  RMSNorm, rotary pairs (2i, 2i+1), grouped-query attention, SwiGLU;
//          llama 3's frequency scaling through the file's rope_freqs.weight, linear scaling through rope.scaling.*
//   qwen2  the same with biases on q, k and v, rotary halves (i, i + head_dim/2)
//   qwen3  the same without biases, RMSNorm on each head's q and k before the rotation
//   gpt2   learned positions, LayerNorm with biases, one fused qkv projection, GELU (tanh) feed-forward, every
//          projection with a bias
// The output projection is tied to the embedding when the file has no output.weight.
//
//   nn::GGUFFile f = nn::gguf_load("tinyllama.Q4_0.gguf");
//   llm::Transformer model(f);
//   std::vector<int64_t> ids = model.generate({1, 15043, 29892}, 32);   // greedy; or {.temperature = 0.8, ...}
//
// Weights stay as gguf_load returns them: packed, dequantized inside the kernels that use them. Each layer keeps a
// KV cache of the context length; a decode step (one token) runs at a symbolic position and reads its token through a
// bound Variable, so one set of compiled kernels serves every position, and it runs under TinyJit (JIT=0: not).
// A prompt is prefilled in chunks of at most prefill_chunk tokens. Activations are float32 unless asked otherwise.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tg/llm/sampling.h"
#include "tg/nn/gguf.h"
#include "tg/tensor/jit.h"
#include "tg/tensor/tensor.h"

namespace tg::llm {

struct ModelConfig {
  std::string arch = "llama";
  int64_t dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, hidden = 0, vocab = 0, context = 0, head_dim = 0;
  double norm_eps = 1e-5, rope_base = 10000.0;
  double rope_scale = 1.0;   // positions are multiplied by it (rope.scaling.type linear: 1 / rope.scaling.factor)
  bool rope_halves = false;  // rotary pairs (i, i + head_dim/2) (NEOX), not (2i, 2i+1)
  // the architectures this runs, and general.architecture's keys read into a config; a missing key is a ValueError
  // naming it, another architecture one naming it and these
  static const std::vector<std::string>& supported();
  static ModelConfig from_gguf(const nn::GGUFMetadata& kv);
};

class Transformer {
 public:
  // max_context 0: the file's context length (a larger one is a ValueError). activations: float32, or float16 /
  // bfloat16 (the residual stream, the projections' inputs and outputs and the KV cache in that type, half the
  // cache's memory; norms and the softmax still computed in float32); another dtype is a ValueError
  explicit Transformer(const nn::GGUFFile& file, int64_t max_context = 0, DType activations = dtypes::float32);

  const ModelConfig& config() const { return cfg_; }
  DType activations() const { return act_; }
  const JitFunction& decode_jit() const { return decode_jit_; }  // the one-token step's TinyJit
  // the logits (vocab,) of the next token after `tokens`, placed at positions start_pos.. (the cache holds what came
  // before); a position past the context is a ValueError. More than prefill_chunk tokens run in chunks.
  Tensor forward(const std::vector<int64_t>& tokens, int64_t start_pos);
  // the prompt, then up to n new tokens chosen by a Sampler (default: greedy); stops after eos when given
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, int64_t n, const SamplingParams& sampling = {},
                                std::optional<int64_t> eos = {});
  int64_t prefill_chunk = 256;

  // a projection's weight: the lazy dequantization every path can use, and, for a type with an int8 dot product on a
  // device that computes it, what the decode step's matvec reads instead: Q4_0, Q8_0 and Q4_K laid out for it once
  // (`packed`; `bytes` then the file's, which a prefill reads through w), the other types' bytes as stored
  struct Weight {
    Tensor w;
    std::optional<Tensor> bytes;
    uint32_t type = 0;
    std::optional<nn::GGMLInt8Weight> packed = std::nullopt;
  };

 private:
  std::vector<const Weight*> projections() const;
  void release_file_pages() const;
  struct Layer {
    Layer(Tensor attn_norm, Weight wo, Tensor ffn_norm, Weight w_up, Weight w_down, Tensor cache_k, Tensor cache_v)
        : attn_norm(std::move(attn_norm)),
          wo(std::move(wo)),
          ffn_norm(std::move(ffn_norm)),
          w_up(std::move(w_up)),
          w_down(std::move(w_down)),
          cache_k(std::move(cache_k)),
          cache_v(std::move(cache_v)) {}
    Tensor attn_norm;
    Weight wo;
    Tensor ffn_norm;
    Weight w_up, w_down;
    Tensor cache_k, cache_v;
    // by architecture: gpt2's fused qkv and biases, qwen2's q/k/v biases, qwen3's q/k norms, the SwiGLU gate
    std::optional<Weight> wqkv, wq, wk, wv, w_gate;
    std::optional<Tensor> attn_norm_b, bqkv, bq, bk, bv, q_norm, k_norm, bo, ffn_norm_b, b_up, b_down;
  };
  Tensor norm(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) const;
  Tensor embed(const std::vector<int64_t>& tokens, const UOp& token_var, const sint& start_pos);
  Tensor rope(const Tensor& x, const sint& start_pos, int64_t T, int64_t heads) const;
  Tensor attention(Layer& l, const Tensor& x, const sint& start_pos, int64_t T);
  Tensor feed_forward(const Layer& l, const Tensor& x) const;
  // the realized tensors a prefill chunk's layer reads (its norms, caches and the projections' int8 layouts), in a
  // fixed order, into out, and into kind what tells layers apart for TinyJit (the layouts' types, the tensors' shapes
  // and dtypes); false where a projection has no int8 layout (that layer runs without TinyJit)
  static bool layer_tensors(Layer& l, std::vector<Tensor*>& out, std::string* kind = nullptr);
  Tensor step(const std::vector<int64_t>& tokens, const sint& start_pos, const UOp& token_var);

  ModelConfig cfg_;
  DType act_;
  Tensor tok_embd_, out_norm_;
  Weight output_;
  std::optional<Tensor> pos_embd_, out_norm_b_, rope_cos_, rope_sin_, embed_buf_;
  std::vector<Layer> layers_;
  JitFunction decode_jit_;  // the one-token step under TinyJit: captured on the second token, replayed after
  JitFunction embed_jit_;   // a prompt's embedding, one row at a time (embed)
};

}  // namespace tg::llm
