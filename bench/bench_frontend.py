#!/usr/bin/env python3
# The Python side of bench/bench_frontend.cpp: the same graph built and differentiated in tinygrad (Python), and the
# table with tinygrad.cpp's figures, as ratios.
#
#   ./build/bench/bench_frontend 500 --json /tmp/fe_cpp.json
#   (cd /path/to/tinygrad && PYTHONPATH=. CPU=1 python3 /path/to/bench/bench_frontend.py 500 /tmp/fe_tg.json)
#   python3 bench/bench_frontend.py table /tmp/fe_cpp.json /tmp/fe_tg.json
import json, sys, time

def run(layers, out):
  from tinygrad import Tensor
  params = []
  for _ in range(layers): params += [Tensor.empty(32, 32, requires_grad=True), Tensor.empty(32, requires_grad=True)]
  x = Tensor.empty(16, 32)
  best_build = best_grad = float("inf")
  for _ in range(3):
    st = time.perf_counter()
    h = x
    for i in range(layers): h = (h.matmul(params[2*i]) + params[2*i+1]).relu()
    loss = h.sum()
    mid = time.perf_counter()
    loss.gradient(*params)
    end = time.perf_counter()
    best_build, best_grad = min(best_build, mid - st), min(best_grad, end - mid)
  nodes = len(loss.uop.toposort())
  print(f"layers {layers}: forward graph {nodes} UOps\nmlp_build     {best_build*1e3:8.2f} ms\nmlp_gradient  {best_grad*1e3:8.2f} ms")
  json.dump({"layers": layers, "nodes": nodes, "mlp_build": best_build*1e3, "mlp_gradient": best_grad*1e3}, open(out, "w"))

def table(cpp, tg):
  c, t = json.load(open(cpp)), json.load(open(tg))
  print(f"{c['layers']} layers, {c['nodes']} forward UOps (tinygrad: {t['nodes']})")
  print("| benchmark | tinygrad (Python) | tinygrad.cpp | C++ faster by |\n|---|---|---|---|")
  for k in ("mlp_build", "mlp_gradient"): print(f"| {k} | {t[k]:.1f} ms | {c[k]:.2f} ms | {t[k]/c[k]:.0f}x |")

if __name__ == "__main__":
  if sys.argv[1] == "table": table(sys.argv[2], sys.argv[3])
  else: run(int(sys.argv[1]), sys.argv[2])
