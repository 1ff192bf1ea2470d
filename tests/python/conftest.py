# shared by the python tests: `cpu_only` marks a test of the tutorial's CPU transcript (the reference's golden output,
# printed on CPU); the run on another device (DEV=PYTHON ...) skips it and says why
import ctypes, os, signal, pytest

ON_CPU = os.environ.get("DEV", "CPU").upper() in ("", "CPU")
cpu_only = pytest.mark.skipif(not ON_CPU, reason="the tutorial's CPU transcript (reference golden output)")

def dies_with_us():
  """Popen's preexec_fn for a server the test starts: the kernel kills it when the test process dies (ctest's timeout
  kills pytest, and a server left behind would hold ctest's output pipe open, so ctest would wait for ever)"""
  prctl = ctypes.CDLL(None, use_errno=True).prctl
  return lambda: prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

def write_tiny_llama(path, context=64, seed=0, vocab=300, tokenizer=None):
  """a tiny llama GGUF with random weights and (without tokenizer: the tokenizer.ggml.* keys) a SentencePiece
  vocabulary of 300 tokens (tinygrad.llm's tests)"""
  import numpy as np
  from tinygrad import Tensor
  from tinygrad.nn.state import gguf_save
  rng = np.random.default_rng(seed)
  dim, layers, heads, kvh, hidden = 32, 2, 4, 2, 64
  if tokenizer is None:
    toks = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)] + ["\u2581"] + [f"\u2581w{i}" for i in range(vocab - 260)]
    tokenizer = {"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": toks, "tokenizer.ggml.scores": [0.0] * vocab,
                 "tokenizer.ggml.token_type": [2, 3, 3] + [6] * 256 + [1] * (vocab - 259)}
  meta = {"general.architecture": "llama", "general.name": "tiny", "llama.context_length": context,
          "llama.embedding_length": dim, "llama.block_count": layers, "llama.feed_forward_length": hidden,
          "llama.attention.head_count": heads, "llama.attention.head_count_kv": kvh,
          "llama.attention.layer_norm_rms_epsilon": 1e-5, **tokenizer}
  def w(*s): return Tensor((rng.standard_normal(s) * 0.3).astype(np.float32))
  t = {"token_embd.weight": w(vocab, dim), "output_norm.weight": Tensor(np.ones(dim, np.float32))}
  for i in range(layers):
    t.update({f"blk.{i}.attn_norm.weight": Tensor(np.ones(dim, np.float32)), f"blk.{i}.attn_q.weight": w(dim, dim),
              f"blk.{i}.attn_k.weight": w(kvh * dim // heads, dim), f"blk.{i}.attn_v.weight": w(kvh * dim // heads, dim),
              f"blk.{i}.attn_output.weight": w(dim, dim), f"blk.{i}.ffn_norm.weight": Tensor(np.ones(dim, np.float32)),
              f"blk.{i}.ffn_gate.weight": w(hidden, dim), f"blk.{i}.ffn_up.weight": w(hidden, dim), f"blk.{i}.ffn_down.weight": w(dim, hidden)})
  gguf_save(path, t, meta)  # no output.weight: tied to the embedding
