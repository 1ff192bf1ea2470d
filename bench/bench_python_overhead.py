#!/usr/bin/env python3
# Python-side overhead of the module: build a 200-op elementwise graph on a small tensor, schedule it (kernelize) and
# run it (realize), through tinygrad's Python API. Each figure is CPU time (time.process_time), the best of several
# repeats; the first, cold run (with the kernel compile) is reported apart.
#   PYTHONPATH=build/python python3 bench/bench_python_overhead.py                  # tinygrad.cpp only
#   PYTHONPATH=build/python TINYGRAD_PATH=/work/ref python3 bench/bench_python_overhead.py   # and the reference, with ratios
# Each implementation runs in its own interpreter (both are imported as `tinygrad`).
import json, os, subprocess, sys, time

N_OPS, SIZE, REPEAT = 200, 16, 7

def workload():
  from tinygrad import Tensor
  def build(x):
    y = x
    for i in range(N_OPS // 2): y = y * (1.0 + i * 1e-4) + i * 1e-3  # two elementwise ops per step
    return y
  def timed(fn):
    t0 = time.process_time(); r = fn(); return r, time.process_time() - t0
  x = Tensor([float(i) for i in range(SIZE)]).realize()
  y, t_build = timed(lambda: build(x))
  _, t_kernelize = timed(lambda: y.kernelize())
  _, t_realize = timed(lambda: y.realize())
  cold = {"build": t_build, "kernelize": t_kernelize, "realize": t_realize}
  best = {"build": float("inf"), "kernelize": float("inf"), "realize": float("inf")}
  for _ in range(REPEAT):
    y, t_build = timed(lambda: build(x))
    _, t_kernelize = timed(lambda: y.kernelize())
    _, t_realize = timed(lambda: y.realize())
    for k, v in (("build", t_build), ("kernelize", t_kernelize), ("realize", t_realize)): best[k] = min(best[k], v)
  check = y.tolist()[:2]
  best["total"] = best["build"] + best["kernelize"] + best["realize"]
  return {"cold": cold, "warm": best, "check": check}

def run_in(path:str|None) -> dict:
  env = dict(os.environ)
  if path is not None: env["PYTHONPATH"] = path
  env.pop("DEBUG", None)
  out = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True, env=env, check=True).stdout
  return json.loads(out.strip().splitlines()[-1])

if __name__ == "__main__":
  if "--child" in sys.argv:
    print(json.dumps(workload()))
    sys.exit(0)
  ours = run_in(None)
  ref = run_in(os.environ["TINYGRAD_PATH"]) if os.environ.get("TINYGRAD_PATH") else None
  print(f"{N_OPS}-op elementwise graph on ({SIZE},) float32, CPU time, best of {REPEAT} (cold = first run, with compile)")
  print(f"{'phase':<12}{'tinygrad.cpp':>16}" + (f"{'reference':>16}{'ratio ref/cpp':>16}" if ref else ""))
  for phase in ("build", "kernelize", "realize", "total"):
    a = ours["warm"][phase]
    line = f"{phase:<12}{a*1e3:>13.3f} ms"
    if ref: line += f"{ref['warm'][phase]*1e3:>13.3f} ms{ref['warm'][phase]/a:>15.1f}x"
    print(line)
  for phase in ("build", "kernelize", "realize"):
    line = f"{'cold ' + phase:<12}{ours['cold'][phase]*1e3:>13.3f} ms"
    if ref: line += f"{ref['cold'][phase]*1e3:>13.3f} ms{ref['cold'][phase]/ours['cold'][phase]:>15.1f}x"
    print(line)
  if ref and any(abs(a - b) > 1e-3 * max(1, abs(b)) for a, b in zip(ours["check"], ref["check"])):
    print(f"WARNING: results differ: {ours['check']} vs {ref['check']}")
