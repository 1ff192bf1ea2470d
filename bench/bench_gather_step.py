#!/usr/bin/env python3
# The MNIST training step with the batch gathered on the device, as tinygrad's own examples/beautiful_mnist.py does
# (`X_train[samples]` with a tensor of random indices), against our examples/beautiful_mnist.py, which gathers on the
# host and passes the batch in. Both run unmodified on our package, one after the other in this process's children:
#
#   PYTHONPATH=build/python TINYGRAD_PATH=/path/to/tinygrad python3 bench/bench_gather_step.py [--steps 23] [--bs 512]
#
# Each step is timed from the example's own loop (its `trange` wrapped to time every iteration, through
# `loss.item()`); the JIT's first three steps and the steps that also run the test set (i % 10 == 9) are left out.
# FUSE_ARANGE=0 gives the reference's one-hot gather (O(samples x rows)) for comparison.
import argparse, json, os, subprocess, sys, time

def child(path, out):
  import tinygrad.helpers as helpers
  ms = []
  def timed_trange(n, *args, **kwargs):
    class T:
      total = n
      def set_description(self, *_): pass
      def __iter__(self):
        for i in range(n):
          st = time.perf_counter()
          yield i
          if i >= 3 and i % 10 != 9: ms.append((time.perf_counter() - st) * 1e3)
    return T()
  helpers.trange = timed_trange
  import runpy
  sys.argv = [path]
  runpy.run_path(path, run_name="__main__")
  ms.sort()
  json.dump({"ms": ms[len(ms) // 2], "n": len(ms)}, open(out, "w"))

def run(path, env, steps, bs):
  out = f"/tmp/bench_gather_step_{os.getpid()}.json"
  e = dict(os.environ, STEPS=str(steps), BS=str(bs), **env)
  subprocess.run([sys.executable, __file__, "--child", path, out], env=e, check=True, stdout=subprocess.DEVNULL)
  r = json.load(open(out))
  os.unlink(out)
  return r

if __name__ == "__main__":
  if len(sys.argv) == 4 and sys.argv[1] == "--child": sys.exit(child(sys.argv[2], sys.argv[3]))
  ap = argparse.ArgumentParser()
  ap.add_argument("--steps", type=int, default=23)
  ap.add_argument("--bs", type=int, default=512)
  ap.add_argument("--one-hot", action="store_true", help="also time the reference example with FUSE_ARANGE=0")
  a = ap.parse_args()
  ref = os.environ.get("TINYGRAD_PATH")
  if not ref: sys.exit("set TINYGRAD_PATH to a checkout of tinygrad (its examples/beautiful_mnist.py is the workload)")
  here = os.path.dirname(os.path.abspath(__file__))
  rows = [("ours, batch gathered on the host (examples/beautiful_mnist.py)", os.path.join(here, "..", "examples", "beautiful_mnist.py"), {}),
          ("tinygrad's examples/beautiful_mnist.py, X_train[samples] (gated load)", os.path.join(ref, "examples", "beautiful_mnist.py"), {})]
  if a.one_hot:
    rows.append(("same, FUSE_ARANGE=0 (one-hot sum over every row)", rows[1][1], {"FUSE_ARANGE": "0"}))
  res = [(name, run(path, env, a.steps, a.bs)) for name, path, env in rows]
  base = res[0][1]["ms"]
  print(f"| step (batch {a.bs}, median of {res[0][1]['n']}) | ms | vs host gather |\n|---|---:|---:|")
  for name, r in res: print(f"| {name} | {r['ms']:.0f} | {r['ms'] / base:.2f}x |")
