#include "tg/llm/model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "tg/helpers/knobs.h"
#include "tg/runtime/buffers.h"
#include "tg/runtime/device.h"
#include "tg/runtime/ops_cpu.h"
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

Tensor weight(const nn::GGUFFile& f, const std::string& name, const Shape& shape) {
  TG_CHECK_AS(ValueError, f.tensors.contains(name), "GGUF file has no tensor ", py_str_repr(name));
  const Tensor& t = f.tensors.at(name);
  TG_CHECK_AS(ValueError, t.shape() == shape, "GGUF tensor ", py_str_repr(name), " has shape ", shape_str(t.shape()),
              ", the model needs ", shape_str(shape));
  return nn::gguf_resident(f, name);  // the file's bytes, read once and kept packed
}
std::optional<Tensor> optional_weight(const nn::GGUFFile& f, const std::string& name, const Shape& shape) {
  if (!f.tensors.contains(name)) return std::nullopt;
  return weight(f, name, shape);
}
// a projection's weight, with its packed bytes where the int8 matvec takes them: a block type's weight on the CPU
// (whose renderer turns the integer products into dot-product instructions; LLM_INT8=0 turns it off)
Transformer::Weight projection(const nn::GGUFFile& f, const std::string& name, const Shape& shape) {
  Transformer::Weight w{weight(f, name, shape), std::nullopt, 0};
  const nn::GGUFFile::Packed& p = f.packed.at(name);
  // a type whose integers take full bytes only where the target has VNNI: AVX2's plain-C products (Q8_0: 9.3 GiB/s)
  // are slower than its float matvec (14.7)
  const uint32_t t = p.info.type;
  if (!LLM_INT8 || !nn::ggml_int8_dot(t) || w.w.device().rfind("CPU", 0) != 0 ||
      (!nn::ggml_int8_narrow(t) && !cpu_target().vnni))
    return w;
  Tensor bytes = Tensor(p.bytes).realize();
  if (nn::ggml_int8_packs(t, shape[0].as_int())) {  // laid out once for the int8 matmuls (realized with the others)
    w.packed = nn::ggml_int8_pack(bytes, t, shape[0].as_int(), shape[1].as_int());
    w.bytes = bytes;  // read once, to lay it out: its pages are given back after (release_file_pages)
  } else {
    w.bytes = bytes, w.type = t;
  }
  return w;
}

Tensor rms_norm(const Tensor& x, const Tensor& w, double eps) {
  return x * (x.square().mean(-1, true) + eps).rsqrt() * w;
}

// x @ w.T (+ b): GGUF keeps a projection as (out, in). A weight laid out for the int8 matmul (Q4_0, Q8_0, Q4_K on
// the CPU) multiplies integers for any number of rows, a decode step's or a prefill chunk's (nn::ggml_int8_linear: x
// quantized to int8 blocks, as llama.cpp does). Otherwise one row (a decode step) dequantizes w inside the matvec
// (or multiplies its bytes' integers, where the weight kept them); more rows (a prefill chunk) multiply a float copy
// made for this call, so that w itself stays packed (the scheduler would otherwise realize its dequantization, and w
// would be that float copy from then on: 4 GB for TinyLlama's 600 MB). In the activations' type (x's): a float32
// weight converted inside the kernel that reads it (or into the copy).
Tensor project(const Tensor& x, const Transformer::Weight& w, const std::optional<Tensor>& b = std::nullopt) {
  const bool rows = x.numel() > x.shape().back().as_int();
  Tensor wx = w.w.cast(x.dtype());
  Tensor y = w.packed  ? nn::ggml_int8_linear(x, *w.packed).cast(x.dtype())
             : rows    ? x.matmul(wx.contiguous().T())
             : w.bytes ? nn::ggml_int8_linear(x, *w.bytes, w.type, w.w.shape()[0].as_int()).cast(x.dtype())
                       : x.matmul(wx.T());
  return b ? y + b->cast(x.dtype()) : y;
}

}  // namespace

const std::vector<std::string>& ModelConfig::supported() {
  static const std::vector<std::string> archs{"llama", "qwen2", "qwen3", "gpt2"};
  return archs;
}

ModelConfig ModelConfig::from_gguf(const nn::GGUFMetadata& kv) {
  ModelConfig c;
  c.arch = need(kv, "general.architecture").as_string();
  const std::vector<std::string>& archs = supported();
  if (std::find(archs.begin(), archs.end(), c.arch) == archs.end()) {
    std::vector<std::string> names;
    for (const std::string& a : archs) names.push_back(py_str_repr(a));
    TG_CHECK_AS(ValueError, false, "GGUF architecture ", py_str_repr(c.arch),
                " is not supported (these are: ", join(names, ", "), ")");
  }
  const std::string a = c.arch + ".";
  c.dim = get_int(kv, a + "embedding_length");
  c.n_layers = get_int(kv, a + "block_count");
  c.n_heads = get_int(kv, a + "attention.head_count");
  c.n_kv_heads = get_int(kv, a + "attention.head_count_kv", c.n_heads);
  c.hidden = get_int(kv, a + "feed_forward_length");
  c.context = get_int(kv, a + "context_length");
  c.norm_eps = c.arch == "gpt2" ? get_double(kv, a + "attention.layer_norm_epsilon", 1e-5)
                                : get_double(kv, a + "attention.layer_norm_rms_epsilon", 1e-5);
  c.rope_base = get_double(kv, a + "rope.freq_base", 10000.0);
  c.rope_halves = c.arch == "qwen2" || c.arch == "qwen3";
  TG_CHECK_AS(ValueError, c.dim > 0 && c.n_heads > 0 && c.dim % c.n_heads == 0, "embedding_length ", c.dim,
              " is not a multiple of head_count ", c.n_heads);
  TG_CHECK_AS(ValueError, c.n_kv_heads > 0 && c.n_heads % c.n_kv_heads == 0, "head_count ", c.n_heads,
              " is not a multiple of head_count_kv ", c.n_kv_heads);
  TG_CHECK_AS(ValueError, c.context > 0, a, "context_length is ", c.context);
  c.head_dim = get_int(kv, a + "attention.key_length", c.dim / c.n_heads);
  TG_CHECK_AS(ValueError, c.head_dim % 2 == 0, "the head dim ", c.head_dim, " is odd (rotary pairs)");
  if (c.arch != "gpt2") {
    int64_t rot = get_int(kv, a + "rope.dimension_count", c.head_dim);
    TG_CHECK_AS(ValueError, rot == c.head_dim, a, "rope.dimension_count is ", rot, ": rotating part of a head (",
                c.head_dim, ") is not supported");
    std::string scaling = "none";
    if (const nn::GGUFValue* v = nn::gguf_find(kv, a + "rope.scaling.type")) scaling = v->as_string();
    if (scaling == "linear") {
      double factor = need(kv, a + "rope.scaling.factor").as_double();
      TG_CHECK_AS(ValueError, factor > 0, a, "rope.scaling.factor is ", factor);
      c.rope_scale = 1.0 / factor;
    } else {
      TG_CHECK_AS(ValueError, scaling == "none", a, "rope.scaling.type ", py_str_repr(scaling),
                  " is not supported (these are: 'none', 'linear')");
    }
  }
  if (const nn::GGUFValue* t = nn::gguf_find(kv, "tokenizer.ggml.tokens"))
    c.vocab = static_cast<int64_t>(t->as_array().size());
  c.vocab = get_int(kv, a + "vocab_size", c.vocab > 0 ? std::optional<int64_t>(c.vocab) : std::nullopt);
  return c;
}

namespace {

ModelConfig with_context(ModelConfig c, int64_t max_context) {
  TG_CHECK_AS(ValueError, max_context >= 0 && max_context <= c.context, "a context of ", max_context,
              " tokens is more than the model's ", c.context);
  if (max_context > 0) c.context = max_context;
  return c;
}

// rotary tables (context, head_dim / 2): angle(p, i) = p * scale * base^(-2i / head_dim) / factor_i, where llama 3's
// files carry the factors (rope_freqs.weight)
Tensor rope_table(const ModelConfig& c, const std::vector<float>& factors, bool sine, const std::string& device) {
  const int64_t half = c.head_dim / 2;
  std::vector<float> t(static_cast<size_t>(c.context * half));
  for (int64_t p = 0; p < c.context; p++)
    for (int64_t i = 0; i < half; i++) {
      double freq = std::pow(c.rope_base, -2.0 * static_cast<double>(i) / static_cast<double>(c.head_dim));
      if (!factors.empty()) freq /= factors[static_cast<size_t>(i)];
      double angle = static_cast<double>(p) * c.rope_scale * freq;
      t[static_cast<size_t>(p * half + i)] = static_cast<float>(sine ? std::sin(angle) : std::cos(angle));
    }
  return Tensor(t, Shape{c.context, half}, {.device = device});
}

}  // namespace

Transformer::Transformer(const nn::GGUFFile& f, int64_t max_context, DType activations)
    : cfg_(with_context(ModelConfig::from_gguf(f.kv), max_context)),
      act_(activations),
      tok_embd_(weight(f, "token_embd.weight", {cfg_.vocab, cfg_.dim})),
      out_norm_(weight(f, "output_norm.weight", {cfg_.dim})),
      output_(projection(f, f.tensors.contains("output.weight") ? "output.weight" : "token_embd.weight",
                         {cfg_.vocab, cfg_.dim})) {
  const ModelConfig& c = cfg_;
  const bool gpt2 = c.arch == "gpt2";
  const int64_t kv_dim = c.n_kv_heads * c.head_dim, q_dim = c.n_heads * c.head_dim;
  const std::string device = tok_embd_.device();
  TG_CHECK_AS(ValueError, act_ == dtypes::float32 || act_ == dtypes::float16 || act_ == dtypes::bfloat16,
              "activations are float32, float16 or bfloat16, got ", act_);
  TG_CHECK_AS(ValueError, is_dtype_supported(act_, device), "activations of ", act_, " are not supported on ", device);
  if (gpt2) {
    // the file's table may be longer than the context asked for
    const std::string name = "position_embd.weight";
    TG_CHECK_AS(ValueError, f.tensors.contains(name), "GGUF file has no tensor ", py_str_repr(name));
    const Shape& s = f.tensors.at(name).shape();
    TG_CHECK_AS(ValueError, s.size() == 2 && s[0].as_int() >= c.context && s[1].as_int() == c.dim, "GGUF tensor ",
                py_str_repr(name), " has shape ", shape_str(s), ", the model needs (>= ", c.context, ", ", c.dim, ")");
    Tensor pos = f.tensors.at(name);
    pos_embd_ = pos.shrink({{0, c.context}, {0, c.dim}});
    out_norm_b_ = weight(f, "output_norm.bias", {c.dim});
  } else {
    std::vector<float> factors;
    if (std::optional<Tensor> ff = optional_weight(f, "rope_freqs.weight", {c.head_dim / 2}))
      factors = ff->cast(dtypes::float32).to("CPU").tolist<float>();
    rope_cos_ = rope_table(c, factors, false, device);
    rope_sin_ = rope_table(c, factors, true, device);
  }
  embed_buf_ = Tensor::zeros({c.context, c.dim}, {.device = device, .dtype = act_}).contiguous().realize();
  auto cache = [&] {
    return Tensor::zeros({1, c.n_kv_heads, c.context, c.head_dim}, {.device = device, .dtype = act_})
        .contiguous()
        .realize();
  };
  for (int64_t i = 0; i < c.n_layers; i++) {
    auto name = [&](const std::string& n, const char* kind = "weight") { return cat("blk.", i, ".", n, ".", kind); };
    auto w = [&](const std::string& n, const Shape& s) { return weight(f, name(n), s); };
    auto pw = [&](const std::string& n, const Shape& s) { return projection(f, name(n), s); };
    auto b = [&](const std::string& n, int64_t size) { return weight(f, name(n, "bias"), {size}); };
    auto maybe_b = [&](const std::string& n, int64_t size) { return optional_weight(f, name(n, "bias"), {size}); };
    Layer l(w("attn_norm", {c.dim}), pw("attn_output", {c.dim, q_dim}), w("ffn_norm", {c.dim}),
            pw("ffn_up", {c.hidden, c.dim}), pw("ffn_down", {c.dim, c.hidden}), cache(), cache());
    if (gpt2) {
      l.attn_norm_b = b("attn_norm", c.dim), l.ffn_norm_b = b("ffn_norm", c.dim);
      l.wqkv = pw("attn_qkv", {q_dim + 2 * kv_dim, c.dim}), l.bqkv = b("attn_qkv", q_dim + 2 * kv_dim);
      l.bo = b("attn_output", c.dim), l.b_up = b("ffn_up", c.hidden), l.b_down = b("ffn_down", c.dim);
    } else {
      l.wq = pw("attn_q", {q_dim, c.dim}), l.wk = pw("attn_k", {kv_dim, c.dim}), l.wv = pw("attn_v", {kv_dim, c.dim});
      l.bq = maybe_b("attn_q", q_dim), l.bk = maybe_b("attn_k", kv_dim), l.bv = maybe_b("attn_v", kv_dim);
      if (c.arch == "qwen3") l.q_norm = w("attn_q_norm", {c.head_dim}), l.k_norm = w("attn_k_norm", {c.head_dim});
      l.w_gate = pw("ffn_gate", {c.hidden, c.dim});
    }
    layers_.push_back(std::move(l));
  }
  // the weights laid out for the int8 matvec, in one schedule (one realize per weight walked every live graph each
  // time: seconds of a load)
  std::vector<Tensor> laid;
  for (const Weight* w : projections())
    if (w->packed)
      for (const Tensor& t : w->packed->tensors()) laid.push_back(t);
  Tensor::realize(laid);
  release_file_pages();
  free_cached_memory(device);  // what laying the weights out used on the way
  // the model's realized tensors in the form a kernelize leaves them (a view of their buffer, where the realize left
  // a reshape of it), before the first prompt: else the first prompt's graphs read one form and the next prompt's
  // the other, and the second prompt missed the kernelize cache once per kind of layer graph (4 x 25 ms, TinyLlama)
  // (the realized ones only: a kernelize of a lazy one, a weight's dequantization, would make it a buffer to fill)
  std::vector<Tensor> model{tok_embd_, out_norm_, *embed_buf_};
  for (const std::optional<Tensor>& t : {pos_embd_, out_norm_b_, rope_cos_, rope_sin_})
    if (t) model.push_back(*t);
  for (const Weight* w : projections()) {
    model.push_back(w->w);
    if (w->bytes) model.push_back(*w->bytes);
    if (w->packed)
      for (const Tensor& t : w->packed->tensors()) model.push_back(t);
  }
  for (const Layer& l : layers_) {
    model.insert(model.end(), {l.attn_norm, l.ffn_norm, l.cache_k, l.cache_v});
    for (const std::optional<Tensor>& t :
         {l.attn_norm_b, l.bqkv, l.bq, l.bk, l.bv, l.q_norm, l.k_norm, l.bo, l.ffn_norm_b, l.b_up, l.b_down})
      if (t) model.push_back(*t);
  }
  std::vector<Tensor> settled;
  for (const Tensor& t : model)
    if (uop_is_realized(t.uop())) settled.push_back(t);
  Tensor::kernelize(settled);
}

// the file's pages of the weights laid out, given back once they are (they stay in the page cache): a generating or
// serving process holds those weights once (TinyLlama Q4_0: 0.6 GB less resident)
void Transformer::release_file_pages() const {
  for (const Weight* w : projections())
    if (w->packed)
      if (std::optional<Buffer> b = uop_realized(w->bytes->uop())) b->release_file_pages();
}

std::vector<const Transformer::Weight*> Transformer::projections() const {
  std::vector<const Weight*> out{&output_};
  for (const Layer& l : layers_) {
    out.insert(out.end(), {&l.wo, &l.w_up, &l.w_down});
    for (const std::optional<Weight>* w : {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.w_gate})
      if (*w) out.push_back(&**w);
  }
  return out;
}

// in float32 whatever the activations' type (a half's square overflows at 256), back to it after
Tensor Transformer::norm(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) const {
  Tensor xf = x.cast(dtypes::float32);
  if (!b) return rms_norm(xf, w, cfg_.norm_eps).cast(act_);
  return (xf.layernorm({-1}, cfg_.norm_eps) * w + *b).cast(act_);
}

// the prompt's rows of the embedding, copied one at a time into a buffer by one kernel (the row and the token are
// bound Variables) under TinyJit; a cat of T rows would be one kernel whose size grows with T (and clang's time faster)
Tensor Transformer::embed(const std::vector<int64_t>& tokens, const UOp& token_var, const sint& start_pos) {
  const auto T = static_cast<int64_t>(tokens.size());
  Tensor x = [&] {
    if (T == 1) {  // one row, at the bound Variable: the same kernel for every token id
      sint id(token_var);
      return tok_embd_.shrink({{id, id + 1}, {0, cfg_.dim}}).reshape({1, 1, cfg_.dim}).cast(act_);
    }
    for (int64_t i = 0; i < T; i++) {
      UOp row = UOp::variable("embed_row", 0, cfg_.context - 1).bind(i);
      UOp tok = UOp::variable("token", 0, cfg_.vocab - 1).bind(tokens[static_cast<size_t>(i)]);
      JitArgs args;
      args.add_var(row);
      args.add_var(tok);
      embed_jit_.call(args, [&] {
        sint r(row), t(tok);
        Tensor dst = embed_buf_->shrink({{r, r + 1}, {0, cfg_.dim}});
        dst.assign(tok_embd_.shrink({{t, t + 1}, {0, cfg_.dim}}).cast(act_));
        return std::vector<Tensor>{dst.realize()};
      });
    }
    return embed_buf_->shrink({{0, T}, {0, cfg_.dim}}).reshape({1, T, cfg_.dim});
  }();
  if (pos_embd_)
    x = x + pos_embd_->shrink({{start_pos, start_pos + T}, {0, cfg_.dim}}).reshape({1, T, cfg_.dim}).cast(act_);
  return x;
}

// the rotation of each pair (a, b) by its position's angle: (a cos - b sin, a sin + b cos); the pairs are (2i, 2i+1),
// or (i, i + half) for the rope_halves architectures
Tensor Transformer::rope(const Tensor& x, const sint& start_pos, int64_t T, int64_t heads) const {
  const int64_t hd = cfg_.head_dim, half = hd / 2;
  const Shape table{1, T, 1, half, 1};
  Tensor cs = rope_cos_->shrink({{start_pos, start_pos + T}, {0, half}}).reshape(table);
  Tensor sn = rope_sin_->shrink({{start_pos, start_pos + T}, {0, half}}).reshape(table);
  // (1, T, heads, half, 2): the last axis the pair, either way
  Tensor p = cfg_.rope_halves ? x.reshape({1, T, heads, 2, half}).transpose(3, 4) : x.reshape({1, T, heads, half, 2});
  Tensor a = p.shrink({{0, 1}, {0, T}, {0, heads}, {0, half}, {0, 1}});
  Tensor b = p.shrink({{0, 1}, {0, T}, {0, heads}, {0, half}, {1, 2}});
  Tensor r = (a * cs - b * sn).cat({a * sn + b * cs}, 4);
  return (cfg_.rope_halves ? r.transpose(3, 4) : r).reshape({1, T, heads, hd}).cast(act_);
}

Tensor Transformer::attention(Layer& l, const Tensor& x, const sint& start_pos, int64_t T) {
  const ModelConfig& c = cfg_;
  const int64_t H = c.n_heads, KVH = c.n_kv_heads, hd = c.head_dim;
  Tensor h = norm(x, l.attn_norm, l.attn_norm_b);
  std::optional<Tensor> q, k, v;
  if (l.wqkv) {  // gpt2: one projection, then q | k | v
    Tensor qkv = project(h, *l.wqkv, l.bqkv);
    const int64_t qd = H * hd, kd = KVH * hd;
    q = qkv.shrink({{0, 1}, {0, T}, {0, qd}}), k = qkv.shrink({{0, 1}, {0, T}, {qd, qd + kd}});
    v = qkv.shrink({{0, 1}, {0, T}, {qd + kd, qd + 2 * kd}});
  } else {
    q = project(h, *l.wq, l.bq), k = project(h, *l.wk, l.bk), v = project(h, *l.wv, l.bv);
  }
  q = q->reshape({1, T, H, hd}), k = k->reshape({1, T, KVH, hd}), v = v->reshape({1, T, KVH, hd});
  if (l.q_norm) q = norm(*q, *l.q_norm, std::nullopt), k = norm(*k, *l.k_norm, std::nullopt);
  if (rope_cos_) q = rope(*q, start_pos, T, H), k = rope(*k, start_pos, T, KVH);
  // the new keys and values into the caches, then attention over everything up to here. A cache holds each key/value
  // head's positions one after another (1, KVH, context, hd): decode's attention reads each head as one stream (by
  // position, heads interleaved, it read 256 bytes of every 1 KB and its keys' kernel waited on memory: 50 -> 25 us a
  // layer at 515 positions, TinyLlama)
  Mask window{{0, 1}, {0, KVH}, {start_pos, start_pos + T}, {0, hd}};
  Tensor ck = l.cache_k.shrink(window), cv = l.cache_v.shrink(window);
  ck.assign(k->permute({0, 2, 1, 3}).contiguous());
  cv.assign(v->permute({0, 2, 1, 3}).contiguous());
  Tensor::realize({ck, cv});
  const sint S = start_pos + T;
  // grouped-query attention without repeating the caches: each of the KVH key/value heads serves its G query heads
  // (head h = kvh * G + g) as one matmul over their T * G rows. Repeating the keys by an expand made a view of two
  // reshapes whose index took a modulo by the symbolic length in the inner loop of decode's attention (~10 ms of a
  // 22 ms token at 512 positions)
  const int64_t G = H / KVH;
  Mask upto{{0, 1}, {0, KVH}, {0, S}, {0, hd}};
  Tensor keys = l.cache_k.shrink(upto).transpose(2, 3);  // (1, KVH, hd, S)
  Tensor values = l.cache_v.shrink(upto);                // (1, KVH, S, hd)
  Tensor qg = q->reshape({1, T, KVH, G, hd}).permute({0, 2, 1, 3, 4}).reshape({1, KVH, T * G, hd});
  Tensor scores = qg.matmul(keys) * (1.0 / std::sqrt(static_cast<double>(hd)));  // (1, KVH, T * G, S)
  if (T > 1) {  // causal: query i (at start_pos + i) sees keys up to start_pos + i
    Tensor mask = Tensor::full({T, S}, -std::numeric_limits<double>::infinity(), {.device = x.device()})
                      .triu(start_pos.as_int() + 1)
                      .reshape({1, 1, T, 1, S});
    scores = (scores.reshape({1, KVH, T, G, S}) + mask).reshape({1, KVH, T * G, S});
  }
  Tensor out = scores.cast(dtypes::float32).softmax(-1).cast(act_).matmul(values);  // (1, KVH, T * G, hd)
  out = out.reshape({1, KVH, T, G, hd}).permute({0, 2, 1, 3, 4}).reshape({1, T, H * hd});
  return project(out, l.wo, l.bo);
}

Tensor Transformer::feed_forward(const Layer& l, const Tensor& x) const {
  Tensor h = norm(x, l.ffn_norm, l.ffn_norm_b);
  if (!l.w_gate) return project(project(h, l.w_up, l.b_up).gelu(), l.w_down, l.b_down);  // gpt2
  return project(project(h, *l.w_gate).silu() * project(h, l.w_up), l.w_down);
}

bool Transformer::layer_tensors(Layer& l, std::vector<Tensor*>& out, std::string* kind) {
  for (Tensor* t : {&l.attn_norm, &l.ffn_norm, &l.cache_k, &l.cache_v}) out.push_back(t);
  for (std::optional<Tensor>* t :
       {&l.attn_norm_b, &l.bqkv, &l.bq, &l.bk, &l.bv, &l.q_norm, &l.k_norm, &l.bo, &l.ffn_norm_b, &l.b_up, &l.b_down})
    if (*t) out.push_back(&**t);
  bool packed = true;
  auto weight = [&](Weight& w) {
    if (!w.packed) return void(packed = false);
    if (kind) *kind += cat(w.packed->type, ",");
    out.insert(out.end(), {&w.packed->q, &w.packed->d});
    if (w.packed->sc) out.push_back(&*w.packed->sc);
  };
  for (Weight* w : {&l.wo, &l.w_up, &l.w_down}) weight(*w);
  for (std::optional<Weight>* w : {&l.wqkv, &l.wq, &l.wk, &l.wv, &l.w_gate})
    if (*w) weight(**w);
  if (kind)
    for (const Tensor* t : out) *kind += cat(shape_str(t->shape()), t->dtype(), ";");
  return packed;
}

Tensor Transformer::step(const std::vector<int64_t>& tokens, const sint& start_pos, const UOp& token_var) {
  const auto T = static_cast<int64_t>(tokens.size());
  Tensor x = embed(tokens, token_var, start_pos);
  // A prefill chunk's layers run under TinyJit, each layer's tensors passed in: the layers after the first few
  // replay the kernels those ran, where each built, kernelized and scheduled its graph again (~4 ms of host work a
  // layer, TinyLlama Q4_0: 64-token prefill 215 -> 150 ms). Per kind of layer (its tensors' shapes and types), two
  // JITs taken in turn, so that a layer's input is never the output buffer its own replay writes. They live for
  // this chunk only: no memory held between prompts.
  std::map<std::string, std::pair<std::array<JitFunction, 2>, size_t>> jits;
  if (T > 1) x = x.contiguous();
  for (Layer& l : layers_) {
    std::vector<Tensor*> ts;
    std::string kind;
    if (T > 1 && layer_tensors(l, ts, &kind)) {
      JitArgs args;
      args.add("x", x);
      for (size_t i = 0; i < ts.size(); i++) args.add(cat(i), *ts[i]);
      auto& [pair, calls] = jits[kind];
      x = pair[calls++ % 2]
              .call(args,
                    [&] {
                      Layer c = l;  // this layer with the call's tensors: a replay swaps another layer's in
                      std::vector<Tensor*> cs;
                      layer_tensors(c, cs);
                      for (size_t i = 0; i < cs.size(); i++) *cs[i] = args.tensors[i + 1];
                      Tensor y = args.tensors[0];
                      y = y + attention(c, y, start_pos, T);
                      y = y + feed_forward(c, y);
                      return std::vector<Tensor>{y.contiguous()};
                    })
              .at(0);
      continue;
    }
    x = x + attention(l, x, start_pos, T);
    x = x + feed_forward(l, x);
    // a prefill chunk's residual stream realized with each layer's cache write: left lazy, each layer's kernels would
    // sum every earlier layer's outputs again, and each realize would schedule a graph as deep as the layers so far
    // (TinyLlama's 64-token prompt: 42 s, quadratic in the layers, where the int8 matmuls read x only once
    // quantized). A decode step's is captured once (TinyJit) and fuses as it is
    if (T > 1) x = x.contiguous();
  }
  Tensor last = x.shrink({{0, 1}, {T - 1, T}, {0, cfg_.dim}});
  // contiguous: the caller reads the logits each token, and a view of them (the int8 matvec's rows come out in its
  // tiles' order) would need a kernelize there, which walks every live tensor's graph (10 ms a token, TinyLlama)
  return project(norm(last, out_norm_, out_norm_b_), output_).reshape({cfg_.vocab}).cast(dtypes::float32).contiguous();
}

Tensor Transformer::forward(const std::vector<int64_t>& tokens, int64_t start_pos) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  TG_CHECK_AS(ValueError, T > 0, "forward needs at least one token");
  TG_CHECK_AS(ValueError, start_pos >= 0 && start_pos + T <= cfg_.context, "positions ", start_pos, "..",
              start_pos + T - 1, " are past the context of ", cfg_.context, " tokens");
  for (int64_t t : tokens)
    TG_CHECK_AS(ValueError, t >= 0 && t < cfg_.vocab, "token ", t, " is outside the vocabulary of ", cfg_.vocab);
  TG_CHECK_AS(ValueError, prefill_chunk > 0, "prefill_chunk is ", prefill_chunk);
  if (T > 1) {
    // all but the last chunk only fill the caches (each layer's cache write is realized): their logits are not made
    for (int64_t at = 0;; at += prefill_chunk) {
      const int64_t n = std::min(prefill_chunk, T - at);
      std::vector<int64_t> chunk(tokens.begin() + at, tokens.begin() + at + n);
      Tensor logits = n == 1 ? forward(chunk, start_pos + at) : step(chunk, start_pos + at, UOp());
      if (at + n == T) {
        logits.realize();
        // what the prompt used given back: the chunks' float copies of the weights not laid out (the allocator
        // kept them for reuse), so that a served model holds its file's other pages, the layout, its caches and
        // little more. The next prompt asks the system for fresh memory again: where memory advised into huge pages
        // is compacted on first touch and the machine's memory is fragmented, that is slow (MADVISE_HUGEPAGE=0
        // avoids it)
        free_cached_memory(logits.device());
        return logits;
      }
    }
  }
  // one token: the position and the token are bound Variables, so every call runs the same kernels, under TinyJit
  UOp pos = UOp::variable("start_pos", 0, cfg_.context - 1).bind(start_pos);
  UOp tok = UOp::variable("token", 0, cfg_.vocab - 1).bind(tokens[0]);
  JitArgs args;
  args.add_var(pos);
  args.add_var(tok);
  return decode_jit_.call(args, [&] { return std::vector<Tensor>{step(tokens, sint(pos), tok).realize()}; }).at(0);
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
