# A character-level GPT trained on text, with tinygrad's API: examples/train_gpt.cpp's model (GPT-2's architecture),
# corpus, schedule and checkpoints, from Python on the C++ engine.
#   PYTHONPATH=build/python python3 examples/train_gpt.py
#   STEPS=400 STOP_AFTER=200 CKPT=/tmp/gpt.safetensors PYTHONPATH=build/python python3 examples/train_gpt.py
#   STEPS=400 RESUME=/tmp/gpt.safetensors PYTHONPATH=build/python python3 examples/train_gpt.py
# The same environment variables as the C++ program (the README lists them); a run resumed from a checkpoint prints
# the losses of a run that never stopped.
import math, os, sys, time
import numpy as np
from tinygrad import Tensor, TinyJit, nn, dtypes
from tinygrad.helpers import getenv
from tinygrad.nn.state import get_state_dict, load_state_dict, safe_save, safe_load, safe_load_metadata

class Block:
  def __init__(self, n_embd:int, n_head:int, dropout:float):
    self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
    self.c_attn, self.attn_proj = nn.Linear(n_embd, 3*n_embd), nn.Linear(n_embd, n_embd)
    self.c_fc, self.mlp_proj = nn.Linear(n_embd, 4*n_embd), nn.Linear(4*n_embd, n_embd)
    self.n_head, self.dropout = n_head, dropout

  def attention(self, x:Tensor) -> Tensor:
    B, T, C = x.shape
    q, k, v = [t.squeeze(0) for t in self.c_attn(x).reshape(B, T, 3, self.n_head, C//self.n_head).permute(2, 0, 3, 1, 4).split(1)]
    y = q.scaled_dot_product_attention(k, v, is_causal=True)
    return self.attn_proj(y.transpose(1, 2).reshape(B, T, C)).dropout(self.dropout)

  def __call__(self, x:Tensor) -> Tensor:
    h = x + self.attention(self.ln_1(x))
    return h + self.mlp_proj(self.c_fc(self.ln_2(h)).gelu()).dropout(self.dropout)

class GPT:
  def __init__(self, vocab_size:int, block_size:int, n_layer:int, n_head:int, n_embd:int, dropout:float):
    self.wte, self.wpe = nn.Embedding(vocab_size, n_embd), nn.Embedding(block_size, n_embd)
    self.h = [Block(n_embd, n_head, dropout) for _ in range(n_layer)]
    self.ln_f, self.dropout = nn.LayerNorm(n_embd), dropout
    # GPT-2's initialization: N(0, 0.02), the residual projections N(0, 0.02/sqrt(2*n_layer)), biases zero
    self.wte.weight, self.wpe.weight = Tensor.normal(vocab_size, n_embd, std=0.02), Tensor.normal(block_size, n_embd, std=0.02)
    for b in self.h:
      for l in (b.c_attn, b.attn_proj, b.c_fc, b.mlp_proj):
        l.weight = Tensor.normal(*l.weight.shape, std=0.02/math.sqrt(2*n_layer) if l in (b.attn_proj, b.mlp_proj) else 0.02)
        l.bias = Tensor.zeros(*l.bias.shape)
    Tensor.realize(*nn.state.get_parameters(self))

  def __call__(self, idx:Tensor) -> Tensor:
    T = idx.shape[1]
    x = (self.wte(idx) + self.wpe(Tensor.arange(T).reshape(1, T))).dropout(self.dropout)
    for b in self.h: x = b(x)
    return self.ln_f(x) @ self.wte.weight.T  # the head is the token embedding, transposed

def load_corpus(path:str) -> str:
  if not os.path.exists(path): raise FileNotFoundError(f"corpus {path} doesn't exist")
  files = sorted(os.path.join(path, f) for f in os.listdir(path)) if os.path.isdir(path) else [path]
  files = [f for f in files if os.path.isfile(f) and not os.path.islink(f) and not f.endswith(".dat")]
  text = "".join(open(f, "rb").read().decode("utf-8") for f in files)
  if not text: raise ValueError(f"corpus {path} is empty ({len(files)} files)")
  return text

if __name__ == "__main__":
  corpus_path = getenv("CORPUS", "/usr/share/games/fortunes")
  text = load_corpus(corpus_path)
  vocab = sorted(set(text))
  tokens = np.array([{c:i for i,c in enumerate(vocab)}[c] for c in text], dtype=np.int32)
  T, BS, STEPS, WARMUP = getenv("CTX", 256), getenv("BS", 16), getenv("STEPS", 2000), getenv("WARMUP", 100)
  STOP_AFTER, EVAL_EVERY, EVAL_BATCHES = min(STEPS, getenv("STOP_AFTER", STEPS)), getenv("EVAL_EVERY", 100), getenv("EVAL_BATCHES", 8)
  LR, WD, SEED = float(getenv("LR", 1e-3)), float(getenv("WD", 0.1)), getenv("SEED", 1337)
  config = dict(vocab_size=len(vocab), block_size=T, n_layer=getenv("N_LAYER", 6), n_head=getenv("N_HEAD", 6), n_embd=getenv("N_EMBD", 384))
  config_str = " ".join(f"{k}={v}" for k,v in config.items())
  n_train = len(tokens) * 9 // 10
  train, val = tokens[:n_train], tokens[n_train:]

  Tensor.manual_seed(SEED)
  model = GPT(**config, dropout=float(getenv("DROPOUT", 0.1)))
  params = get_state_dict(model)
  # AdamW as GPT-2 is trained: weight decay on the matrices, none on biases and norms; fused (one update per group)
  decay = nn.optim.AdamW([t for t in params.values() if t.ndim >= 2], lr=LR, b1=0.9, b2=0.95, weight_decay=WD, fused=True)
  no_decay = nn.optim.AdamW([t for t in params.values() if t.ndim < 2], lr=LR, b1=0.9, b2=0.95, weight_decay=0.0, fused=True)
  opt = nn.optim.OptimizerGroup(decay, no_decay)
  print(f"corpus {corpus_path}: {len(tokens)} characters ({len(train)} train, {len(val)} val), {len(vocab)} distinct")
  print(f"model: {config_str}, {sum(t.numel() for t in params.values())/1e6:.2f}M parameters; batch {BS} x {T} tokens, {STEPS} steps")

  def training_state():  # everything a step reads that isn't its batch (the C++ program's names)
    sd = dict(get_state_dict(model))
    for name, o in (("decay", decay), ("no_decay", no_decay)):
      for i, (m, v) in enumerate(zip(o.m, o.v)): sd[f"optim.m.{name}.{i}"], sd[f"optim.v.{name}.{i}"] = m, v
      sd[f"optim.{name}.b1_t"], sd[f"optim.{name}.b2_t"] = o.b1_t, o.b2_t
    for dev, counter in Tensor._device_rng_counters.items(): sd[f"rng.counter.{dev}"] = counter
    return sd

  start = 0
  if (resume := getenv("RESUME", "")):
    meta = safe_load_metadata(resume)[2].get("__metadata__", {})
    if meta.get("config") != config_str: raise ValueError(f"checkpoint {resume} is of another model: {meta.get('config')}; this run's: {config_str}")
    if meta.get("vocab") != "".join(vocab): raise ValueError(f"checkpoint {resume} was trained on text with other characters than {corpus_path}")
    load_state_dict(training_state(), safe_load(resume), verbose=False)
    start = int(meta["step"])
    print(f"resumed from {resume} at step {start}")

  @TinyJit
  def train_step(x:Tensor, y:Tensor) -> Tensor:
    with Tensor.train():
      opt.zero_grad()
      loss = model(x).sparse_categorical_crossentropy(y).backward()
      Tensor.realize(loss, *opt.schedule_step())  # the loss is read before the params change
      return loss
  @TinyJit
  def eval_step(x:Tensor, y:Tensor) -> Tensor: return model(x).sparse_categorical_crossentropy(y)

  def batch(data, offs): return Tensor(np.stack([data[o:o+T] for o in offs])), Tensor(np.stack([data[o+1:o+T+1] for o in offs]))
  def val_loss():
    span, n = len(val) - T - 1, EVAL_BATCHES * BS
    return sum(eval_step(*batch(val, [span * (b*BS+i) // n for i in range(BS)])).item() for b in range(EVAL_BATCHES)) / EVAL_BATCHES
  def lr_at(step):
    if step < WARMUP: return LR * (step + 1) / WARMUP
    t = min(1.0, (step - WARMUP) / max(1, STEPS - WARMUP))
    return LR / 10 + 0.5 * (LR - LR / 10) * (1 + math.cos(math.pi * t))

  last_val, st = float("nan"), time.perf_counter()
  for step in range(start, STOP_AFTER):
    rng = np.random.default_rng([SEED, step])  # the batch of step i comes from (SEED, i) alone
    x, y = batch(train, rng.integers(0, len(train) - T - 1, BS))
    for o in (decay, no_decay): o.lr.assign(Tensor([lr_at(step)], dtype=o.lr.dtype, device=o.lr.device)).realize()
    loss = train_step(x, y).item()
    print(f"step {step+1:5d}  loss {loss:.6f}  lr {lr_at(step):.3e}  {(step+1-start)*BS*T/(time.perf_counter()-st):6.0f} tok/s", flush=True)
    if (step + 1) % EVAL_EVERY == 0 or step + 1 == STOP_AFTER:
      print(f"step {step+1:5d}  val loss {(last_val := val_loss()):.6f}")
      if (ckpt := getenv("CKPT", "")):
        safe_save(training_state(), ckpt + ".tmp", {"step": str(step + 1), "config": config_str, "vocab": "".join(vocab)})
        os.replace(ckpt + ".tmp", ckpt)
  if start >= STOP_AFTER: last_val = val_loss()

  if (n := getenv("SAMPLE", 300)) > 0:  # a window of the last T characters; the next drawn from its last position
    forward = TinyJit(lambda x: model(x).softmax(-1).realize())
    rng, out = np.random.default_rng(SEED), [vocab.index("\n") if "\n" in vocab else 0]
    for _ in range(n):
      window = out[-T:]
      probs = forward(Tensor(np.array([window + [0] * (T - len(window))], dtype=np.int32))).numpy()[0, len(window) - 1]
      out.append(int(rng.choice(len(vocab), p=probs / probs.sum())))
    print("--- sample ---\n" + "".join(vocab[i] for i in out) + "\n--- end of sample ---")
  print(f"final val loss {last_val:.6f}")
  if (target := float(getenv("TARGET_LOSS", 0))) and not last_val <= target: sys.exit(f"val loss {last_val:.4f} is above TARGET_LOSS={target}")
