#!/usr/bin/env python3
# The PyTorch side of bench/bench_gpt_step.cpp: the same character-level GPT (examples/gpt.h) written the obvious way
# in PyTorch, its training step (forward, backward, AdamW with decay on the matrices) in CPU eager mode with 2 threads,
# dropout on, and the table with tinygrad.cpp's figure.
#
#   ./build/bench/bench_gpt_step --json /tmp/gpt_cpp.json
#   python3 bench/bench_gpt_step.py --json /tmp/gpt_torch.json   # needs python3-torch
#   python3 bench/bench_gpt_step.py table /tmp/gpt_cpp.json /tmp/gpt_torch.json
import argparse, json, math, resource, sys, time

def run(bs, ctx, layers, embd, heads, steps, out):
  import numpy as np, torch
  from torch import nn
  import torch.nn.functional as F
  torch.set_num_threads(2)
  torch.manual_seed(0)
  V = 113

  class Block(nn.Module):
    def __init__(self):
      super().__init__()
      self.ln_1, self.ln_2 = nn.LayerNorm(embd), nn.LayerNorm(embd)
      self.c_attn, self.attn_proj = nn.Linear(embd, 3 * embd), nn.Linear(embd, embd)
      self.c_fc, self.mlp_proj = nn.Linear(embd, 4 * embd), nn.Linear(4 * embd, embd)
      self.drop = nn.Dropout(0.1)
      self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx, dtype=torch.bool)))
    def forward(self, x):
      B, T, C = x.shape
      q, k, v = self.c_attn(self.ln_1(x)).view(B, T, 3, heads, C // heads).permute(2, 0, 3, 1, 4)
      att = (q @ k.transpose(-2, -1)) / math.sqrt(C // heads)  # (torch 1.13 has no scaled_dot_product_attention)
      att = att.masked_fill(~self.mask[:T, :T], float("-inf")).softmax(-1)
      x = x + self.drop(self.attn_proj((att @ v).transpose(1, 2).reshape(B, T, C)))
      return x + self.drop(self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")))

  class GPT(nn.Module):
    def __init__(self):
      super().__init__()
      self.wte, self.wpe = nn.Embedding(V, embd), nn.Embedding(ctx, embd)
      self.h = nn.ModuleList([Block() for _ in range(layers)])
      self.ln_f, self.drop = nn.LayerNorm(embd), nn.Dropout(0.1)
    def forward(self, idx):
      x = self.drop(self.wte(idx) + self.wpe(torch.arange(idx.shape[1])))
      for b in self.h: x = b(x)
      return self.ln_f(x) @ self.wte.weight.T

  model = GPT()
  with torch.no_grad():  # GPT-2's initialization, as examples/gpt.h's
    for name, p in model.named_parameters():
      if name.endswith("bias"): p.zero_()
      elif p.dim() >= 2: p.normal_(0.0, 0.02 / math.sqrt(2 * layers) if name.endswith("proj.weight") else 0.02)
  decay = [p for p in model.parameters() if p.dim() >= 2]
  no_decay = [p for p in model.parameters() if p.dim() < 2]
  opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                          lr=3e-4, betas=(0.9, 0.95))
  i = np.arange(bs * ctx, dtype=np.uint64)
  xs = torch.tensor(((i * 2654435761 >> 8) % V).astype(np.int64).reshape(bs, ctx))
  ys = torch.tensor(((i * 40503 >> 4) % V).astype(np.int64).reshape(bs, ctx))
  model.train()
  ms = []
  for k in range(steps + 3):
    st = time.perf_counter()
    opt.zero_grad()
    loss = F.cross_entropy(model(xs).view(-1, V), ys.view(-1))
    loss.backward()
    opt.step()
    loss.item()
    if k >= 3: ms.append((time.perf_counter() - st) * 1e3)
    print(f"step {k}: {(time.perf_counter() - st) * 1e3:.1f} ms (loss {loss.item():.3f})", file=sys.stderr)
  ms.sort()
  med = ms[len(ms) // 2]
  rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
  nparams = sum(p.numel() for p in model.parameters())
  print(f"pytorch {torch.__version__}: {med:.1f} ms per step, {bs * ctx / (med / 1e3):.0f} tokens/s ({nparams / 1e6:.2f}M params, "
        f"batch {bs} x {ctx}, median of {len(ms)}), peak RSS {rss:.0f} MB")
  if out: json.dump({"bs": bs, "ctx": ctx, "ms_per_step": med, "tokens_per_s": bs * ctx / (med / 1e3), "peak_rss_mb": rss}, open(out, "w"))

def table(cpp, pt):
  c, t = json.load(open(cpp)), json.load(open(pt))
  print("| batch x context | PyTorch CPU (2 threads) | tinygrad.cpp | tinygrad.cpp / PyTorch (time) | peak RSS PyTorch / ours |")
  print("|---|---|---|---|---|")
  print(f"| {c['bs']} x {c['ctx']} | {t['ms_per_step']:.0f} ms ({t['tokens_per_s']:.0f} tok/s) | {c['ms_per_step']:.0f} ms "
        f"({c['tokens_per_s']:.0f} tok/s) | {c['ms_per_step'] / t['ms_per_step']:.2f}x | {t['peak_rss_mb']:.0f} / {c['peak_rss_mb']:.0f} MB |")

if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == "table": table(sys.argv[2], sys.argv[3]); sys.exit(0)
  ap = argparse.ArgumentParser()
  for a, d in (("--bs", 16), ("--ctx", 256), ("--layers", 6), ("--embd", 384), ("--heads", 6), ("--steps", 5)): ap.add_argument(a, type=int, default=d)
  ap.add_argument("--json")
  a = ap.parse_args()
  run(a.bs, a.ctx, a.layers, a.embd, a.heads, a.steps, a.json)
