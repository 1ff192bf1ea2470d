# tinygrad-llm against llama.cpp (its npm build, tools/fetch_llama_cpp.sh) on the same GGUF files, side by side in one
# run: prefill and decode tokens/s on 2 threads. The files have a model's geometry and random weights (no weights
# are reachable from here), written once into --dir and reused.
#   python3 bench/bench_llm.py [--geometry tinyllama|small] [--types q4_0,q8_0,f16] [--prompt 64] [-n 32] [--ttft]
# --ttft adds the time to the first token of a whole new process (ours with the kernel cache warm and empty).
# Decode is also shown against its bandwidth bound: the machine's read bandwidth (a sum over a 512 MiB float32 buffer,
# as bench_gguf_matvec.py reads it, before and after each type's runs: a cloud VM's moves by half between minutes)
# over the bytes a token reads, the file's weights less the token embedding (one row of it is read) and the KV cache's
# keys and values up to the mean decode position (float32 ours, half llama.cpp's).
import argparse, json, os, pathlib, platform, subprocess, sys, tempfile, time
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build" / "python"))
from tinygrad import Tensor  # noqa: E402
from tinygrad.nn.state import gguf_save  # noqa: E402

GEOMETRY = {  # dim, layers, heads, kv heads, hidden, vocab
  "tinyllama": (2048, 22, 32, 4, 5632, 32000),  # TinyLlama-1.1B
  "small": (512, 8, 8, 4, 1408, 32000),
}
TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 8, "q4_K": 12, "q6_K": 14}
BITS = {"f32": 32, "f16": 16, "q4_0": 4.5, "q8_0": 8.5, "q4_K": 4.5, "q6_K": 6.5625}  # a weight's bits in the file

def read_bandwidth(big):
  ts = []
  for _ in range(5):
    t0 = time.perf_counter()
    big.sum().realize()
    ts.append(time.perf_counter() - t0)
  return big.nbytes() / sorted(ts)[len(ts) // 2]

def token_bytes(path, geometry, typ, pos, kv_bytes):
  # the bytes one decode step reads at position pos: the weights but the embedding table, and the cache's keys and values
  dim, layers, heads, kvh, hidden, vocab = GEOMETRY[geometry]
  return os.path.getsize(path) - vocab * dim * BITS[typ] / 8 + 2 * layers * kvh * (dim // heads) * pos * kv_bytes

def write_model(path, geometry, typ):
  dim, layers, heads, kvh, hidden, vocab = GEOMETRY[geometry]
  hd, rng = dim // heads, np.random.default_rng(0)
  toks = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)] + [f"\u2581w{i}" for i in range(vocab - 259)]
  meta = {"general.architecture": "llama", "llama.context_length": 2048, "llama.embedding_length": dim,
          "llama.block_count": layers, "llama.feed_forward_length": hidden, "llama.attention.head_count": heads,
          "llama.attention.head_count_kv": kvh, "llama.attention.layer_norm_rms_epsilon": 1e-5, "llama.rope.freq_base": 10000.0,
          "tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": toks, "tokenizer.ggml.scores": [0.0] * vocab,
          "tokenizer.ggml.token_type": [2, 3, 3] + [6] * 256 + [1] * (vocab - 259)}
  t = TYPES[typ]
  def w(*shape, q=True):
    x = Tensor((rng.standard_normal(shape, dtype=np.float32) * 0.02))
    return (x, t) if q and t != 0 else x
  tensors = {"token_embd.weight": w(vocab, dim)}
  for i in range(layers):
    tensors.update({f"blk.{i}.attn_norm.weight": Tensor(np.ones(dim, np.float32)), f"blk.{i}.attn_q.weight": w(dim, dim),
                    f"blk.{i}.attn_k.weight": w(kvh * hd, dim), f"blk.{i}.attn_v.weight": w(kvh * hd, dim),
                    f"blk.{i}.attn_output.weight": w(dim, dim), f"blk.{i}.ffn_norm.weight": Tensor(np.ones(dim, np.float32)),
                    f"blk.{i}.ffn_gate.weight": w(hidden, dim), f"blk.{i}.ffn_up.weight": w(hidden, dim),
                    f"blk.{i}.ffn_down.weight": w(dim, hidden)})
  tensors["output_norm.weight"] = Tensor(np.ones(dim, np.float32))
  tensors["output.weight"] = w(vocab, dim)
  gguf_save(path, tensors, meta)

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--geometry", default="small", choices=list(GEOMETRY))
  ap.add_argument("--types", default="q4_0,q8_0,f16")
  ap.add_argument("--prompt", type=int, default=64, help="prompt tokens")
  ap.add_argument("-n", type=int, default=32, help="decoded tokens")
  ap.add_argument("--dir", default="/tmp/tg_bench_llm")
  ap.add_argument("--ttft", action="store_true", help="also time to the first token: a whole new process, -n 1")
  args = ap.parse_args()
  llama_dir = os.environ.get("TG_LLAMA_CPP", str(ROOT / ".deps" / "llama-cpp"))
  if not (pathlib.Path(llama_dir) / "node_modules" / "node-llama-cpp").exists():
    subprocess.run(["bash", str(ROOT / "tools" / "fetch_llama_cpp.sh")], check=True)
  os.makedirs(args.dir, exist_ok=True)
  cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
  print(f"machine: {cpu}, {os.cpu_count()} cpus; geometry {args.geometry}; prompt {args.prompt} tokens, {args.n} decoded")
  print(f"{'type':>6} | {'prefill tok/s':>22} | {'decode tok/s':>22} | {'of the bandwidth bound':>28}")
  print(f"{'':>6} | {'ours':>6} {'llama.cpp':>9} {'ratio':>5} | {'ours':>6} {'llama.cpp':>9} {'ratio':>5} | "
        f"{'GiB/s':>6} {'bound':>6} {'ours':>6} {'llama.cpp':>9}")
  big = Tensor(np.random.default_rng(1).standard_normal(2**27).astype(np.float32)).realize()
  big.sum().realize()
  # the vocabulary has no piece for plain text: each byte is a token, after BOS and the 3 bytes of the leading "\u2581"
  prompt = "x" * max(1, args.prompt - 4)
  ttfts = []
  for typ in args.types.split(","):
    path = f"{args.dir}/{args.geometry}-{typ}.gguf"
    if not os.path.exists(path):
      t0 = time.perf_counter()
      write_model(path, args.geometry, typ)
      print(f"  (wrote {path}: {os.path.getsize(path) / 2**20:.0f} MiB in {time.perf_counter() - t0:.0f} s)")
    run = lambda: json.loads(subprocess.run([str(ROOT / "build" / "tinygrad-llm"), "--model", path, "--prompt", prompt,
                                             "-n", str(args.n), "--json", "--warmup"], check=True, capture_output=True, text=True).stdout)
    run()  # fills the compiler's disk cache; each run also warms up in-process (--warmup) before it is timed
    bw0 = read_bandwidth(big)
    ours = run()
    ref = json.loads(subprocess.run(["node", str(ROOT / "tools" / "llama_cpp_eval.mjs"), llama_dir, path, "bench",
                                     json.dumps(ours["prompt_tokens"]), str(args.n)], check=True, capture_output=True,
                                    text=True).stdout)[0]
    bw = (bw0 + read_bandwidth(big)) / 2
    lp, ld = ref["prompt_tokens"] / ref["prefill_s"], ref["decode_tokens"] / ref["decode_s"]
    pos = len(ours["prompt_tokens"]) + args.n / 2
    ours_bound, ref_bound = (bw / token_bytes(path, args.geometry, typ, pos, kv) for kv in (4, 2))
    assert len(ours["prompt_tokens"]) == ref["prompt_tokens"], (len(ours["prompt_tokens"]), ref["prompt_tokens"])
    if len(ours["prompt_tokens"]) != args.prompt: print(f"  (the prompt is {len(ours['prompt_tokens'])} tokens)")
    print(f"{typ:>6} | {ours['prefill_tok_s']:6.1f} {lp:9.1f} {ours['prefill_tok_s'] / lp:5.2f} | "
          f"{ours['decode_tok_s']:6.1f} {ld:9.1f} {ours['decode_tok_s'] / ld:5.2f} | "
          f"{bw / 2**30:6.1f} {ours_bound:6.1f} {ours['decode_tok_s'] / ours_bound:6.0%} {ld / ref_bound:9.0%}")
    if args.ttft: ttfts.append((typ, *time_to_first_token(path, prompt, ours["prompt_tokens"], llama_dir)))
  if args.ttft:
    print("time to the first token, s (a new process each; ours with the kernel cache warm, and empty):")
    print(f"{'type':>6} | {'warm':>6} {'empty':>6} {'llama.cpp':>9}")
    for typ, warm, cold, ref in ttfts: print(f"{typ:>6} | {warm:6.2f} {cold:6.2f} {ref:9.2f}")

def wall(cmd, env=None):
  t0 = time.perf_counter()
  subprocess.run(cmd, check=True, capture_output=True, env=env)
  return time.perf_counter() - t0

# the wall time of a whole process that loads the file, prefills the prompt and samples one token (and exits): ours
# with the kernel cache warm and empty (a fresh XDG_CACHE_HOME: every kernel compiled), llama.cpp's (through node)
def time_to_first_token(path, prompt, prompt_ids, llama_dir):
  ours = [str(ROOT / "build" / "tinygrad-llm"), "--model", path, "--prompt", prompt, "-n", "1", "--json"]
  warm = min(wall(ours) for _ in range(2))
  with tempfile.TemporaryDirectory() as cache:
    cold = wall(ours, {**os.environ, "XDG_CACHE_HOME": cache})
  ref = min(wall(["node", str(ROOT / "tools" / "llama_cpp_eval.mjs"), llama_dir, path, "bench", json.dumps(prompt_ids),
                  "1"]) for _ in range(2))
  return warm, cold, ref

if __name__ == "__main__":
  main()
