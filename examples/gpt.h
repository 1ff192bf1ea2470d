#pragma once
// A GPT-2 for characters, shared by examples/train_gpt.cpp and bench/bench_gpt_step.cpp: token and position
// embeddings, pre-LayerNorm blocks of causal self-attention (scaled_dot_product_attention) and a GELU MLP, a final
// LayerNorm and a head tied to the token embedding. Initialized as GPT-2 is: weights N(0, 0.02), the residual
// projections N(0, 0.02/sqrt(2 * n_layer)), biases zero, LayerNorms one.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "tg/nn/nn.h"
#include "tg/nn/optim.h"
#include "tg/nn/state.h"
#include "tg/tensor/tensor.h"

namespace tg::gpt {

struct GPTConfig {
  int64_t vocab_size = 0, block_size = 256, n_layer = 6, n_head = 6, n_embd = 384;
  double dropout = 0.1;
};

struct Block {
  nn::LayerNorm ln_1, ln_2;
  nn::Linear c_attn, attn_proj, c_fc, mlp_proj;
  int64_t n_head;
  double dropout;
  explicit Block(const GPTConfig& c)
      : ln_1(c.n_embd),
        ln_2(c.n_embd),
        c_attn(c.n_embd, 3 * c.n_embd),
        attn_proj(c.n_embd, c.n_embd),
        c_fc(c.n_embd, 4 * c.n_embd),
        mlp_proj(4 * c.n_embd, c.n_embd),
        n_head(c.n_head),
        dropout(c.dropout) {}
  TG_PARAMS(ln_1, c_attn, attn_proj, ln_2, c_fc, mlp_proj)

  Tensor attention(const Tensor& x) const {
    int64_t B = x.shape()[0].as_int(), T = x.shape()[1].as_int(), C = x.shape()[2].as_int();
    // (B, T, 3C) -> q, k, v of (B, n_head, T, head_size)
    std::vector<Tensor> qkv = c_attn(x).reshape({B, T, 3, n_head, C / n_head}).permute({2, 0, 3, 1, 4}).split(1);
    Tensor q = qkv[0].squeeze(0), k = qkv[1].squeeze(0), v = qkv[2].squeeze(0);
    Tensor y = q.scaled_dot_product_attention(k, v, std::nullopt, 0.0, /*is_causal=*/true);
    return attn_proj(y.transpose(1, 2).reshape({B, T, C})).dropout(dropout);
  }
  Tensor operator()(const Tensor& x) const {
    Tensor h = x + attention(ln_1(x));
    return h + mlp_proj(c_fc(ln_2(h)).gelu()).dropout(dropout);
  }
};

struct GPT {
  GPTConfig config;
  nn::Embedding wte, wpe;
  std::vector<Block> h;
  nn::LayerNorm ln_f;
  TG_PARAMS(wte, wpe, h, ln_f)

  explicit GPT(const GPTConfig& c)
      : config(c), wte(c.vocab_size, c.n_embd), wpe(c.block_size, c.n_embd), h(init_blocks(c)), ln_f(c.n_embd) {
    double std = 0.02, proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.n_layer));
    wte.weight = Tensor::normal(wte.weight.shape(), 0.0, std);
    wpe.weight = Tensor::normal(wpe.weight.shape(), 0.0, std);
    for (Block& b : h) {
      for (nn::Linear* l : {&b.c_attn, &b.attn_proj, &b.c_fc, &b.mlp_proj}) {
        bool proj = l == &b.attn_proj || l == &b.mlp_proj;
        l->weight = Tensor::normal(l->weight.shape(), 0.0, proj ? proj_std : std);
        l->bias = Tensor::zeros(l->bias->shape());
      }
    }
    Tensor::realize(nn::state::get_parameters(*this));
  }

  // idx: int32 tokens (B, T), T <= block_size; the logits (B, T, vocab_size)
  Tensor operator()(const Tensor& idx) const {
    int64_t T = idx.shape()[1].as_int();
    Tensor x = (wte(idx) + wpe(Tensor::arange(T).reshape({1, T}))).dropout(config.dropout);
    for (const Block& b : h) x = b(x);
    return ln_f(x).matmul(wte.weight.T());  // the head is the token embedding, transposed
  }

  int64_t num_params() {
    int64_t n = 0;
    for (auto& kv : nn::state::get_state_dict(*this)) n += kv.second.numel();
    return n;
  }

 private:
  static std::vector<Block> init_blocks(const GPTConfig& c) {
    std::vector<Block> out;
    for (int64_t i = 0; i < c.n_layer; i++) out.emplace_back(c);
    return out;
  }
};

// AdamW as GPT-2 is trained: weight decay on the matrices (embeddings, linear weights), none on biases and norms.
// Each group's params come with their state-dict names, in the model's order. Fused (one update kernel per group):
// fewer kernels, and the schedule of the first step under TinyJit is the schedule of every later one, which a
// resumed run needs to reproduce the steps of a run that never stopped.
struct GPTOptimizer {
  std::vector<std::string> decay_names, no_decay_names;
  nn::optim::LAMB decay, no_decay;
  nn::optim::OptimizerGroup group;

  GPTOptimizer(GPT& model, double lr, double weight_decay)
      : GPTOptimizer(nn::state::get_state_dict(model), lr, weight_decay) {}

  void zero_grad() { group.zero_grad(); }
  // the update and `also` (the loss) realized in one schedule: the loss is read before the params change, and the
  // forward it shares with the gradients runs once
  void step(const std::vector<Tensor>& also = {}) {
    std::vector<Tensor> ts = group.schedule_step();
    ts.insert(ts.end(), also.begin(), also.end());
    Tensor::realize(ts);
  }
  void set_lr(double lr) {  // both groups' in one schedule
    for (nn::optim::LAMB* o : {&decay, &no_decay}) o->lr.assign(Tensor::full(o->lr.shape(), lr));
    Tensor::realize({decay.lr, no_decay.lr});
  }
  // the optimizer's state under names (for checkpoints): the moments of each param, the betas' powers
  nn::StateDict state_dict() {
    nn::StateDict out;
    auto add = [&](const std::string& group_name, nn::optim::LAMB& o, const std::vector<std::string>& names) {
      // one moment per param, or one for all of the group's when fused (FUSE_OPTIM=1)
      bool per_param = o.m.size() == names.size();
      for (size_t i = 0; i < o.m.size(); i++) {
        std::string key = per_param ? names[i] : group_name + "." + std::to_string(i);
        out.insert_or_assign("optim.m." + key, o.m[i]);
        out.insert_or_assign("optim.v." + key, o.v[i]);
      }
      out.insert_or_assign("optim." + group_name + ".b1_t", o.b1_t);
      out.insert_or_assign("optim." + group_name + ".b2_t", o.b2_t);
    };
    add("decay", decay, decay_names);
    add("no_decay", no_decay, no_decay_names);
    return out;
  }

 private:
  GPTOptimizer(const nn::StateDict& params, double lr, double weight_decay)
      : decay_names(names_of(params, true)),
        no_decay_names(names_of(params, false)),
        decay(nn::optim::AdamW(
            tensors_of(params, decay_names),
            {.lr = lr, .b1 = 0.9, .b2 = 0.95, .eps = 1e-8, .weight_decay = weight_decay, .fused = true})),
        no_decay(nn::optim::AdamW(tensors_of(params, no_decay_names),
                                  {.lr = lr, .b1 = 0.9, .b2 = 0.95, .eps = 1e-8, .weight_decay = 0.0, .fused = true})),
        group({&decay, &no_decay}) {}
  static std::vector<std::string> names_of(const nn::StateDict& params, bool matrices) {
    std::vector<std::string> out;
    for (auto& kv : params)
      if ((kv.second.ndim() >= 2) == matrices) out.push_back(kv.first);
    return out;
  }
  static std::vector<Tensor> tensors_of(const nn::StateDict& params, const std::vector<std::string>& names) {
    std::vector<Tensor> out;
    for (const std::string& n : names) out.push_back(params.at(n));
    return out;
  }
};

// one training step (run under TinyJit by the callers): forward, the loss, backward, the update; the loss is realized
// with the update, before the params change
inline Tensor train_step_body(GPT& model, GPTOptimizer& opt, const Tensor& x, const Tensor& y) {
  Tensor::train t;
  opt.zero_grad();
  Tensor loss = model(x).sparse_categorical_crossentropy(y);
  loss.backward();
  opt.step({loss});
  return loss;
}

// the learning rate of step `step` (0-based): a linear warm-up to max_lr over `warmup` steps, then a cosine decay to
// max_lr / 10 at step `steps`
inline double cosine_lr(int64_t step, int64_t steps, int64_t warmup, double max_lr) {
  if (step < warmup) return max_lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  double min_lr = max_lr / 10, span = static_cast<double>(std::max<int64_t>(1, steps - warmup));
  double t = std::min(1.0, static_cast<double>(step - warmup) / span);
  return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + std::cos(std::numbers::pi * t));
}

}  // namespace tg::gpt
