#!/usr/bin/env python3
# The Python side of bench/bench_baseline.cpp: the same figures for numpy and for tinygrad (Python), and the table
# that puts them side by side with tinygrad.cpp's, as ratios.
#
#   python3 bench/bench_baseline.py numpy    numpy.json
#   cd /path/to/tinygrad && PYTHONPATH=. CPU=1 python3 /path/to/bench/bench_baseline.py tinygrad tinygrad.json
#   python3 bench/bench_baseline.py table cpp.json numpy.json tinygrad.json
#
# The workloads (keep in step with bench_baseline.cpp): 16M floats, best (minimum time) of several repeats.
#   ew6        GB/s     ((x*1.5+0.5)*x-2).relu().sqrt(), bytes = 16M floats read + 16M written
#   sum        GB/s     x.sum(), bytes = 16M floats read
#   matmul     GFLOP/s  1024x1024 @ 1024x1024 float32, 2*1024^3 flops
#   t347_cold  ms       (t+3+4).tolist() on a fresh Tensor of a never-seen shape, empty compiler cache (tinygrad only)
#   t347_warm  ms       the same on a fresh Tensor of a seen shape
import json, os, sys, tempfile, time

N, M = 16 * 1024 * 1024, 1024

def best_of(repeats, fn, warmup=True):
  if warmup: fn()
  best = float("inf")
  for _ in range(repeats):
    st = time.perf_counter()
    fn()
    best = min(best, time.perf_counter() - st)
  return best

def host_data(n):
  import numpy as np
  return (np.arange(n, dtype=np.int64) % 1000).astype(np.float32) * np.float32(0.001)

def bench_numpy():
  import numpy as np
  r = {}
  r["t347_warm"] = best_of(20, lambda: (np.array([1, 2, 3, 4], dtype=np.int32) + 3 + 4).tolist()) * 1e3
  x = host_data(N)
  r["ew6"] = 2.0 * N * 4 / best_of(5, lambda: np.sqrt(np.maximum((x * np.float32(1.5) + np.float32(0.5)) * x - np.float32(2), 0))) / 1e9
  r["sum"] = 1.0 * N * 4 / best_of(5, lambda: x.sum()) / 1e9
  a, b = host_data(M * M).reshape(M, M), host_data(M * M).reshape(M, M)
  r["matmul"] = 2.0 * M ** 3 / best_of(3, lambda: a @ b) / 1e9
  return r

def bench_tinygrad():
  # an empty compiler cache for the cold figure: tinygrad reads XDG_CACHE_HOME when it is imported
  cache = tempfile.mkdtemp(prefix="tg_bench_")
  os.environ["XDG_CACHE_HOME"] = cache
  from tinygrad import Tensor
  r = {}
  Tensor([1, 2]).realize()  # the devices open first, as in bench_baseline.cpp
  cold_n = [5]
  def t347(n):
    assert (Tensor(list(range(1, n + 1))) + 3 + 4).tolist()[0] == 8
  def cold():
    t347(cold_n[0]); cold_n[0] += 1
  r["t347_cold"] = best_of(5, cold, warmup=False) * 1e3
  r["t347_warm"] = best_of(20, lambda: t347(4)) * 1e3
  x = Tensor(host_data(N)).realize()
  r["ew6"] = 2.0 * N * 4 / best_of(5, lambda: ((x * 1.5 + 0.5) * x - 2).relu().sqrt().realize()) / 1e9
  r["sum"] = 1.0 * N * 4 / best_of(5, lambda: x.sum().realize()) / 1e9
  a, b = Tensor(host_data(M * M).reshape(M, M)).realize(), Tensor(host_data(M * M).reshape(M, M)).realize()
  r["matmul"] = 2.0 * M ** 3 / best_of(3, lambda: (a @ b).realize()) / 1e9
  import shutil; shutil.rmtree(cache, ignore_errors=True)
  return r

def table(cpp, npy, tg):
  rows = [("ew6", "GB/s", True), ("sum", "GB/s", True), ("matmul", "GFLOP/s", True),
          ("t347_cold", "ms", False), ("t347_warm", "ms", False)]
  def f(d, k): return f"{d[k]:.3g}" if k in d else "n/a"
  def ratio(d, k, higher):  # how many times better tinygrad.cpp is
    if k not in d or k not in cpp: return "n/a"
    return f"{(cpp[k] / d[k]) if higher else (d[k] / cpp[k]):.2f}x"
  print("| benchmark | unit | numpy | tinygrad (Python) | tinygrad.cpp | cpp vs numpy | cpp vs tinygrad |")
  print("|---|---|---:|---:|---:|---:|---:|")
  for k, unit, higher in rows:
    print(f"| `{k}` | {unit} | {f(npy, k)} | {f(tg, k)} | {f(cpp, k)} | {ratio(npy, k, higher)} | {ratio(tg, k, higher)} |")

if __name__ == "__main__":
  mode = sys.argv[1] if len(sys.argv) > 1 else ""
  if mode in ("numpy", "tinygrad"):
    res = bench_numpy() if mode == "numpy" else bench_tinygrad()
    for k, v in res.items(): print(f"{k:10s} {v:12.4g}")
    if len(sys.argv) > 2: json.dump(res, open(sys.argv[2], "w"))
  elif mode == "table":
    table(*(json.load(open(p)) for p in sys.argv[2:5]))
  else:
    print(__doc__ or "usage: bench_baseline.py numpy|tinygrad OUT.json | table CPP.json NUMPY.json TINYGRAD.json")
    sys.exit(1)
