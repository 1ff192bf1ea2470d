# Decode-shaped matvecs on GGUF weights (issue 35's speed item): y = x @ W.T with x (1, K) float32 and W (N, K) held
# packed in F16, Q8_0, Q4_0, Q4_K and Q6_K, dequantized inside the matvec's kernel. Reported as weight bytes read per
# second against the machine's read bandwidth, measured here the same way (a sum over a float32 buffer twice the
# last-level cache, at least 512 MiB, which is a read at full speed on every core) in turns with the matvec's runs: a
# cloud VM's bandwidth moves by half between minutes (41 to 79 GiB/s here), so each row has its own. Weights are rotated over copies
# that take twice the last-level cache (at least 256 MiB; a 2-core cloud VM may sit on a 480 MiB L3) to leave it; the
# matvec runs under TinyJit, as a decode step does, so the time is the kernel's and not Python's. The quantized types are
# also timed with integers: ggml_int8_linear (x quantized to int8 blocks, integer dot products; its x quantization's
# kernels included) on the file's bytes ("int8") and, for Q4_0, Q8_0, Q4_K and Q6_K, on the weight laid out by ggml_int8_pack
# ("packed": as the LLM decode step runs them on the CPU).
# --prefill M times prefill-shaped matmuls instead: M rows of x by the packed weight (ggml_int8_linear on
# ggml_int8_pack's layout, x's quantization kernels included) against our float32 matmul of the same shape, in
# GOP/s (2*M*K*N / time), the weight's one copy staying in the caches as a prefill chunk's does.
#   PYTHONPATH=build/python python3 bench/bench_gguf_matvec.py [--shapes 4096x4096,4096x11008] [--types q4_0,q8_0]
#   PYTHONPATH=build/python python3 bench/bench_gguf_matvec.py --prefill 512 [--shapes 4096x4096] [--types q4_0,q8_0]
import argparse, os, platform, time
import numpy as np
from tinygrad import Tensor, Device, TinyJit
from tinygrad.nn.state import ggml_data_to_tensor, ggml_int8_linear, ggml_int8_pack, GGMLInt8Weight

TYPES = {"f16": (1, 1, 2), "q8_0": (8, 32, 34), "q4_0": (2, 32, 18), "q4_K": (12, 256, 144), "q6_K": (14, 256, 210)}
PACKS = ("q4_0", "q8_0", "q4_K", "q6_K")
SCALE_AT = {"q8_0": [0], "q4_0": [0], "q4_K": [0, 2], "q6_K": [208]}

def median_time(f, n):
  ts = []
  for _ in range(n):
    t0 = time.perf_counter()
    f()
    ts.append(time.perf_counter() - t0)
  return sorted(ts)[len(ts) // 2]

def weights(name, n, k, rng):
  typ, bs, ts = TYPES[name]
  if name == "f16": raw = rng.standard_normal(n * k).astype(np.float16).view(np.uint8)
  else:
    raw = rng.integers(0, 256, n * k // bs * ts, dtype=np.uint8)
    for at in SCALE_AT[name]: raw.reshape(-1, ts)[:, at:at + 2] = np.frombuffer(np.float16(0.01).tobytes(), np.uint8)
  return Tensor(raw).realize(), raw.nbytes

# a packed weight's tensors (TinyJit's inputs are tensors: the weight's passed apart) by field, and the weight again
def parts(w): return {f: getattr(w, f) for f in ("q", "d", "sc") if getattr(w, f) is not None}
def rebuilt(names, ts, typ, n, k): return GGMLInt8Weight(ggml_type=typ, n=n, k=k, **dict(zip(names, ts)))

def cpu_name():
  try:
    for line in open("/proc/cpuinfo"):
      if line.startswith("model name"): return line.split(":", 1)[1].strip()
  except OSError: pass
  return platform.processor()

def last_level_cache():
  best = 0
  for index in range(8):
    try: text = open(f"/sys/devices/system/cpu/cpu0/cache/index{index}/size").read().strip()
    except OSError: continue
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1], 1)
    best = max(best, int(text.rstrip("KMG")) * scale)
  return best

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--shapes", default="4096x4096,4096x11008", help="KxN: x is (1, K), W is (N, K)")
  ap.add_argument("--types", default=",".join(TYPES))
  ap.add_argument("--runs", type=int, default=20)
  ap.add_argument("--prefill", type=int, default=0, help="rows of x: time prefill-shaped matmuls instead")
  args = ap.parse_args()
  rng = np.random.default_rng(0)
  if args.prefill: return prefill(args, rng)
  span = max(512 * 2**20, 2 * last_level_cache())
  big = Tensor(rng.standard_normal(span // 4).astype(np.float32)).realize()
  big.sum().realize()
  print(f"machine: {cpu_name()}, {os.cpu_count()} cpus, device {Device.DEFAULT}")
  print(f"read bandwidth: a sum of {span // 2**20} MiB float32, in turns with each row's runs")
  print(f"{'shape':>12} {'type':>10} {'ms':>8} {'GiB/s':>7} {'read GiB/s':>10} {'of read bw':>10}")
  for shape in args.shapes.split(","):
    k, n = (int(v) for v in shape.split("x"))
    x = Tensor.ones(1, k).contiguous().realize()
    for name in args.types.split(","):
      copies = []
      nbytes = 0
      while len(copies) < 2 or nbytes * len(copies) < max(256 * 2**20, 2 * last_level_cache()):
        w, nbytes = weights(name, n, k, rng)
        copies.append(w)
      typ = TYPES[name][0]
      paths = [("", copies, lambda x, raw: (x @ ggml_data_to_tensor(raw, n * k, typ).reshape(n, k).T).realize())]
      if name != "f16": paths.append((" int8", copies, lambda x, raw: ggml_int8_linear(x, raw, typ, n).realize()))
      if name in PACKS:  # the LLM's decode step: the weight laid out once at load (ggml_int8_pack), then multiplied
        # TinyJit's inputs are tensors: the weight's passed apart
        packed = [parts(ggml_int8_pack(c, typ, n, k)) for c in copies]
        names = list(packed[0])
        paths.append((" packed", [tuple(p.values()) for p in packed],
                      lambda x, *ts: ggml_int8_linear(x, rebuilt(names, ts, typ, n, k)).realize()))
      for label, ws, f in paths:
        matvec = TinyJit(f)
        i = [0]
        def step():
          w = ws[i[0] % len(ws)]
          matvec(x, *(w if isinstance(w, tuple) else (w,)))
          i[0] += 1
        for _ in range(3): step()  # captured, then replayed
        t, tp = [], []
        for _ in range(args.runs):
          tp.append(median_time(lambda: big.sum().realize(), 1)), t.append(median_time(step, 1))
        t, bw = sorted(t)[len(t) // 2], big.nbytes() / sorted(tp)[len(tp) // 2]
        print(f"{shape:>12} {name + label:>10} {t * 1e3:8.3f} {nbytes / t / 2**30:7.2f} {bw / 2**30:10.1f} "
              f"{nbytes / t / bw:9.0%}")

def prefill(args, rng):
  m = args.prefill
  print(f"machine: {cpu_name()}, {os.cpu_count()} cpus, device {Device.DEFAULT}; x of {m} rows")
  print(f"{'shape':>12} {'type':>10} {'ms':>8} {'GOP/s':>7} {'float32 ms':>10} {'GFLOP/s':>8} {'ratio':>6}")
  for shape in args.shapes.split(","):
    k, n = (int(v) for v in shape.split("x"))
    x = Tensor(rng.standard_normal((m, k)).astype(np.float32)).realize()
    wf = Tensor(rng.standard_normal((n, k)).astype(np.float32)).realize()
    sgemm = TinyJit(lambda x, w: (x @ w.T).realize())
    def timed(f, *a):
      for _ in range(3): f(*a)  # captured, then replayed
      return median_time(lambda: f(*a), args.runs)
    tf = timed(sgemm, x, wf)
    for name in args.types.split(","):
      if name not in PACKS: continue
      typ = TYPES[name][0]
      w, _ = weights(name, n, k, rng)
      p = parts(ggml_int8_pack(w, typ, n, k))
      mm = TinyJit(lambda x, *ts: ggml_int8_linear(x, rebuilt(list(p), ts, typ, n, k)).realize())
      t = timed(mm, x, *p.values())
      ops = 2 * m * k * n
      print(f"{shape:>12} {name:>10} {t * 1e3:8.2f} {ops / t / 1e9:7.0f} {tf * 1e3:10.2f} {ops / tf / 1e9:8.0f} {tf / t:6.2f}")

if __name__ == "__main__":
  main()
