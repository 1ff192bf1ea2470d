#include "tg/llm/llama.h"

#include <cmath>
#include <limits>

#include "tg/uop/uop.h"

namespace tg::llm {

namespace {

const nn::GGUFValue& need(const nn::GGUFMetadata& kv, const std::string& key) {
  const nn::GGUFValue* v = nn::gguf_find(kv, key);
  TG_CHECK_AS(ValueError, v != nullptr, "GGUF metadata has no ", py_str_repr(key), ", which the model needs");
  return *v;
}
int64_t get_int(const nn::GGUFMetadata& kv, const std::string& key, std::optional<int64_t> dflt = {}) {
  if (const nn::GGUFValue* v = nn::gguf_find(kv, key)) return v->as_int();
  if (dflt) return *dflt;
  return need(kv, key).as_int();
}
double get_double(const nn::GGUFMetadata& kv, const std::string& key, double dflt) {
  const nn::GGUFValue* v = nn::gguf_find(kv, key);
  return v != nullptr ? v->as_double() : dflt;
}

const Tensor& weight(const nn::GGUFFile& f, const std::string& name, const Shape& shape) {
  TG_CHECK_AS(ValueError, f.tensors.contains(name), "GGUF file has no tensor ", py_str_repr(name));
  const Tensor& t = f.tensors.at(name);
  TG_CHECK_AS(ValueError, t.shape() == shape, "GGUF tensor ", py_str_repr(name), " has shape ", shape_str(t.shape()),
              ", the model needs ", shape_str(shape));
  return t;
}

Tensor rms_norm(const Tensor& x, const Tensor& w, double eps) {
  return x * (x.square().mean(-1, true) + eps).rsqrt() * w;
}

}  // namespace

LlamaConfig LlamaConfig::from_gguf(const nn::GGUFMetadata& kv) {
  LlamaConfig c;
  c.arch = need(kv, "general.architecture").as_string();
  TG_CHECK_AS(ValueError, c.arch == "llama", "GGUF architecture ", py_str_repr(c.arch),
              " is not supported (these are: 'llama')");
  const std::string a = c.arch + ".";
  c.dim = get_int(kv, a + "embedding_length");
  c.n_layers = get_int(kv, a + "block_count");
  c.n_heads = get_int(kv, a + "attention.head_count");
  c.n_kv_heads = get_int(kv, a + "attention.head_count_kv", c.n_heads);
  c.hidden = get_int(kv, a + "feed_forward_length");
  c.context = get_int(kv, a + "context_length");
  c.norm_eps = get_double(kv, a + "attention.layer_norm_rms_epsilon", 1e-5);
  c.rope_base = get_double(kv, a + "rope.freq_base", 10000.0);
  TG_CHECK_AS(ValueError, c.dim > 0 && c.n_heads > 0 && c.dim % c.n_heads == 0, "embedding_length ", c.dim,
              " is not a multiple of head_count ", c.n_heads);
  TG_CHECK_AS(ValueError, c.n_kv_heads > 0 && c.n_heads % c.n_kv_heads == 0, "head_count ", c.n_heads,
              " is not a multiple of head_count_kv ", c.n_kv_heads);
  c.head_dim = get_int(kv, a + "attention.key_length", c.dim / c.n_heads);
  TG_CHECK_AS(ValueError, c.head_dim % 2 == 0, "the head dim ", c.head_dim, " is odd (rotary pairs)");
  if (const nn::GGUFValue* t = nn::gguf_find(kv, "tokenizer.ggml.tokens"))
    c.vocab = static_cast<int64_t>(t->as_array().size());
  c.vocab = get_int(kv, a + "vocab_size", c.vocab > 0 ? std::optional<int64_t>(c.vocab) : std::nullopt);
  return c;
}

namespace {

LlamaConfig with_context(LlamaConfig c, int64_t max_context) {
  TG_CHECK_AS(ValueError, max_context >= 0 && max_context <= c.context, "a context of ", max_context,
              " tokens is more than the model's ", c.context);
  if (max_context > 0) c.context = max_context;
  return c;
}

// rotary tables (context, head_dim / 2): angle(p, i) = p * base^(-2i / head_dim), for the consecutive pairs (2i, 2i+1)
Tensor rope_table(const LlamaConfig& c, bool sine, const std::string& device) {
  const int64_t half = c.head_dim / 2;
  std::vector<float> t(static_cast<size_t>(c.context * half));
  for (int64_t p = 0; p < c.context; p++)
    for (int64_t i = 0; i < half; i++) {
      double angle = static_cast<double>(p) * std::pow(c.rope_base, -2.0 * static_cast<double>(i) / c.head_dim);
      t[static_cast<size_t>(p * half + i)] = static_cast<float>(sine ? std::sin(angle) : std::cos(angle));
    }
  return Tensor(t, Shape{c.context, half}, {.device = device});
}

}  // namespace

Transformer::Transformer(const nn::GGUFFile& f, int64_t max_context)
    : cfg_(with_context(LlamaConfig::from_gguf(f.kv), max_context)),
      tok_embd_(weight(f, "token_embd.weight", {cfg_.vocab, cfg_.dim})),
      out_norm_(weight(f, "output_norm.weight", {cfg_.dim})),
      output_(f.tensors.contains("output.weight") ? weight(f, "output.weight", {cfg_.vocab, cfg_.dim}) : tok_embd_),
      rope_cos_(rope_table(cfg_, false, tok_embd_.device())),
      rope_sin_(rope_table(cfg_, true, tok_embd_.device())) {
  const LlamaConfig& c = cfg_;
  const int64_t kv_dim = c.n_kv_heads * c.head_dim, q_dim = c.n_heads * c.head_dim;
  const std::string device = tok_embd_.device();
  auto cache = [&] {
    return Tensor::zeros({1, c.context, c.n_kv_heads, c.head_dim}, {.device = device}).contiguous().realize();
  };
  for (int64_t i = 0; i < c.n_layers; i++) {
    auto w = [&](const std::string& n, const Shape& s) { return weight(f, cat("blk.", i, ".", n, ".weight"), s); };
    layers_.push_back(Layer{w("attn_norm", {c.dim}), w("attn_q", {q_dim, c.dim}), w("attn_k", {kv_dim, c.dim}),
                            w("attn_v", {kv_dim, c.dim}), w("attn_output", {c.dim, q_dim}), w("ffn_norm", {c.dim}),
                            w("ffn_gate", {c.hidden, c.dim}), w("ffn_up", {c.hidden, c.dim}),
                            w("ffn_down", {c.dim, c.hidden}), cache(), cache()});
  }
}

Tensor Transformer::embed(const std::vector<int64_t>& tokens, const UOp& token_var) const {
  const auto T = static_cast<int64_t>(tokens.size());
  if (T == 1) {  // one row, at the bound Variable: the same kernel for every token id
    sint id(token_var);
    return tok_embd_.shrink({{id, id + 1}, {0, cfg_.dim}}).reshape({1, 1, cfg_.dim});
  }
  std::vector<Tensor> rows;
  for (int64_t t : tokens) rows.push_back(tok_embd_.shrink({{t, t + 1}, {0, cfg_.dim}}));
  return rows[0].cat({rows.begin() + 1, rows.end()}, 0).reshape({1, T, cfg_.dim});
}

Tensor Transformer::attention(Layer& l, const Tensor& x, const sint& start_pos, int64_t T) {
  const LlamaConfig& c = cfg_;
  const int64_t H = c.n_heads, KVH = c.n_kv_heads, hd = c.head_dim, half = hd / 2;
  Tensor h = rms_norm(x, l.attn_norm, c.norm_eps);
  Tensor q = h.matmul(l.wq.T()).reshape({1, T, H, hd});
  Tensor k = h.matmul(l.wk.T()).reshape({1, T, KVH, hd});
  Tensor v = h.matmul(l.wv.T()).reshape({1, T, KVH, hd});
  // rotary positions on each consecutive pair (a, b): (a cos - b sin, a sin + b cos)
  Tensor cs = rope_cos_.shrink({{start_pos, start_pos + T}, {0, half}}).reshape({1, T, 1, half, 1});
  Tensor sn = rope_sin_.shrink({{start_pos, start_pos + T}, {0, half}}).reshape({1, T, 1, half, 1});
  auto rope = [&](const Tensor& t, int64_t heads) {
    Tensor p = t.reshape({1, T, heads, half, 2});
    Tensor a = p.shrink({{0, 1}, {0, T}, {0, heads}, {0, half}, {0, 1}});
    Tensor b = p.shrink({{0, 1}, {0, T}, {0, heads}, {0, half}, {1, 2}});
    return (a * cs - b * sn).cat({a * sn + b * cs}, 4).reshape({1, T, heads, hd});
  };
  q = rope(q, H), k = rope(k, KVH);
  // the new keys and values into the caches, then attention over everything up to here
  Mask window{{0, 1}, {start_pos, start_pos + T}, {0, KVH}, {0, hd}};
  Tensor ck = l.cache_k.shrink(window), cv = l.cache_v.shrink(window);
  ck.assign(k.contiguous());
  cv.assign(v.contiguous());
  Tensor::realize({ck, cv});
  const sint S = start_pos + T;
  Mask upto{{0, 1}, {0, S}, {0, KVH}, {0, hd}};
  auto expand_heads = [&](const Tensor& t) {
    return t.reshape({1, S, KVH, 1, hd}).expand({1, S, KVH, H / KVH, hd}).reshape({1, S, H, hd}).transpose(1, 2);
  };
  Tensor keys = expand_heads(l.cache_k.shrink(upto)), values = expand_heads(l.cache_v.shrink(upto));
  Tensor scores = q.transpose(1, 2).matmul(keys.transpose(2, 3)) * (1.0 / std::sqrt(static_cast<double>(hd)));
  if (T > 1) {  // causal: query i (at start_pos + i) sees keys up to start_pos + i
    Tensor mask = Tensor::full({1, 1, T, S}, -std::numeric_limits<double>::infinity()).triu(start_pos.as_int() + 1);
    scores = scores + mask;
  }
  Tensor out = scores.softmax(-1).matmul(values).transpose(1, 2).reshape({1, T, H * hd});
  return out.matmul(l.wo.T());
}

Tensor Transformer::step(const std::vector<int64_t>& tokens, const sint& start_pos, const UOp& token_var) {
  const auto T = static_cast<int64_t>(tokens.size());
  Tensor x = embed(tokens, token_var);
  for (Layer& l : layers_) {
    x = x + attention(l, x, start_pos, T);
    Tensor h = rms_norm(x, l.ffn_norm, cfg_.norm_eps);
    x = x + (h.matmul(l.w_gate.T()).silu() * h.matmul(l.w_up.T())).matmul(l.w_down.T());
  }
  Tensor last = x.shrink({{0, 1}, {T - 1, T}, {0, cfg_.dim}});
  return rms_norm(last, out_norm_, cfg_.norm_eps).matmul(output_.T()).reshape({cfg_.vocab}).realize();
}

Tensor Transformer::forward(const std::vector<int64_t>& tokens, int64_t start_pos) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  TG_CHECK_AS(ValueError, T > 0, "forward needs at least one token");
  TG_CHECK_AS(ValueError, start_pos >= 0 && start_pos + T <= cfg_.context, "positions ", start_pos, "..",
              start_pos + T - 1, " are past the context of ", cfg_.context, " tokens");
  for (int64_t t : tokens)
    TG_CHECK_AS(ValueError, t >= 0 && t < cfg_.vocab, "token ", t, " is outside the vocabulary of ", cfg_.vocab);
  if (T > 1) return step(tokens, start_pos, UOp());
  // one token: the position and the token are bound Variables, so every call runs the same kernels, under TinyJit
  UOp pos = UOp::variable("start_pos", 0, cfg_.context - 1).bind(start_pos);
  UOp tok = UOp::variable("token", 0, cfg_.vocab - 1).bind(tokens[0]);
  JitArgs args;
  args.add_var(pos);
  args.add_var(tok);
  return decode_jit_.call(args, [&] { return std::vector<Tensor>{step(tokens, sint(pos), tok)}; }).at(0);
}

std::vector<int64_t> Transformer::generate(const std::vector<int64_t>& prompt, int64_t n,
                                           const SamplingParams& sampling, std::optional<int64_t> eos) {
  std::vector<int64_t> out = prompt;
  if (n <= 0) return out;
  Sampler sampler(sampling);
  Tensor logits = forward(prompt, 0);
  for (int64_t i = 0; i < n; i++) {
    int64_t next = sampler.sample(logits.tolist<float>(), out);
    out.push_back(next);
    if ((eos && next == *eos) || i + 1 == n) break;
    logits = forward({next}, static_cast<int64_t>(out.size()) - 1);
  }
  return out;
}

}  // namespace tg::llm
