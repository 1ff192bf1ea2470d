# Decode-shaped matvecs on GGUF weights (issue 35's speed item): y = x @ W.T with x (1, K) float32 and W (N, K) held
# packed in F16, Q8_0, Q4_0, Q4_K and Q6_K, dequantized inside the matvec's kernel. Reported as weight bytes read per
# second against the machine's read bandwidth, measured here the same way (a sum over a 512 MiB float32 buffer, which
# is a read at full speed on every core). Weights are rotated over enough copies to leave the last-level cache; the
# matvec runs under TinyJit, as a decode step does, so the time is the kernel's and not Python's. The quantized types are
# also timed as the LLM decode step runs them on the CPU: ggml_int8_linear (x quantized to int8 blocks, integer dot
# products; its x quantization's kernels included), the rows marked "int8".
#   PYTHONPATH=build/python python3 bench/bench_gguf_matvec.py [--shapes 4096x4096,4096x11008] [--types q4_0,q8_0]
import argparse, os, platform, time
import numpy as np
from tinygrad import Tensor, Device, TinyJit
from tinygrad.nn.state import ggml_data_to_tensor, ggml_int8_linear

TYPES = {"f16": (1, 1, 2), "q8_0": (8, 32, 34), "q4_0": (2, 32, 18), "q4_K": (12, 256, 144), "q6_K": (14, 256, 210)}
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

def cpu_name():
  try:
    for line in open("/proc/cpuinfo"):
      if line.startswith("model name"): return line.split(":", 1)[1].strip()
  except OSError: pass
  return platform.processor()

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--shapes", default="4096x4096,4096x11008", help="KxN: x is (1, K), W is (N, K)")
  ap.add_argument("--types", default=",".join(TYPES))
  ap.add_argument("--runs", type=int, default=20)
  args = ap.parse_args()
  rng = np.random.default_rng(0)
  big = Tensor(rng.standard_normal(128 * 1024 * 1024).astype(np.float32)).realize()
  big.sum().realize()
  bw = big.nbytes() / median_time(lambda: big.sum().realize(), 10)
  del big
  print(f"machine: {cpu_name()}, {os.cpu_count()} cpus, device {Device.DEFAULT}")
  print(f"read bandwidth (sum of 512 MiB float32): {bw / 2**30:.1f} GiB/s")
  print(f"{'shape':>12} {'type':>10} {'ms':>8} {'GiB/s':>7} {'of read bw':>10}")
  for shape in args.shapes.split(","):
    k, n = (int(v) for v in shape.split("x"))
    x = Tensor.ones(1, k).contiguous().realize()
    for name in args.types.split(","):
      copies = []
      nbytes = 0
      while len(copies) < 2 or nbytes * len(copies) < 256 * 2**20:  # more than any last-level cache here
        w, nbytes = weights(name, n, k, rng)
        copies.append(w)
      typ = TYPES[name][0]
      paths = [("", lambda x, raw: (x @ ggml_data_to_tensor(raw, n * k, typ).reshape(n, k).T).realize())]
      if name != "f16": paths.append((" int8", lambda x, raw: ggml_int8_linear(x, raw, typ, n).realize()))
      for label, f in paths:
        matvec = TinyJit(f)
        i = [0]
        def step():
          matvec(x, copies[i[0] % len(copies)])
          i[0] += 1
        for _ in range(3): step()  # captured, then replayed
        t = median_time(step, args.runs)
        print(f"{shape:>12} {name + label:>10} {t * 1e3:8.3f} {nbytes / t / 2**30:7.2f} {nbytes / t / bw:9.0%}")

if __name__ == "__main__":
  main()
