#!/usr/bin/env python3
# BEAM=2's search on the same kernels, ours against the reference tinygrad, each in a fresh process with empty
# caches: a 512x512 matmul and the MNIST model's second conv (forward), searched once (IGNORE_BEAM_CACHE=1), then
# the picked kernel timed against the hand-coded opts (BEAM=0).
#   PYTHONPATH=build/python python3 bench/bench_beam.py [--ref /path/to/tinygrad] [--device CPU]
import argparse, json, os, subprocess, sys, tempfile

CHILD = r"""
import json, sys, time
from tinygrad import Tensor, Device
from tinygrad.helpers import Context
def run(build):
  Tensor.manual_seed(0)
  args = [t.realize() for t in build()]
  def once():
    out = fn(*args).realize()
    Device[Device.DEFAULT].synchronize()
    return out
  st = time.perf_counter()
  with Context(BEAM=2): once()
  search = time.perf_counter() - st
  def best(beam):
    ts = []
    with Context(BEAM=beam):
      once()
      for _ in range(5):
        st = time.perf_counter(); once(); ts.append(time.perf_counter() - st)
    return min(ts)
  return search, best(2), best(0)
out = {}
fn = lambda a, b: a @ b
out["matmul 512"] = run(lambda: [Tensor.rand(512, 512), Tensor.rand(512, 512)])
fn = lambda x, w: x.conv2d(w)
out["conv2 fwd"] = run(lambda: [Tensor.rand(128, 32, 24, 24), Tensor.rand(32, 32, 5, 5)])
print(json.dumps(out))
"""

def measure(pythonpath, device):
  with tempfile.TemporaryDirectory() as cache:
    env = {**os.environ, "PYTHONPATH": pythonpath, "XDG_CACHE_HOME": cache, "IGNORE_BEAM_CACHE": "1", device: "1",
           "DEV": device}
    env.pop("BEAM", None)
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    if r.returncode != 0: raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])

if __name__ == "__main__":
  p = argparse.ArgumentParser()
  p.add_argument("--ref", default=os.environ.get("TINYGRAD_PATH"), help="the reference tinygrad's source tree")
  p.add_argument("--device", default="CPU")
  a = p.parse_args()
  ours = measure(os.environ.get("PYTHONPATH", "build/python"), a.device)
  ref = measure(a.ref, a.device) if a.ref else None
  print(f"BEAM=2 on {a.device}: search time (fresh caches), and the pick's run time against the hand-coded opts")
  print(f"{'kernel':<12} {'ours search':>12} {'ref search':>12} {'faster':>7} {'ours pick':>10} {'ours hand':>10} "
        f"{'ref pick':>10}")
  for k, (s, pick, hand) in ours.items():
    rs, rp, _ = ref[k] if ref else (float("nan"),) * 3
    print(f"{k:<12} {s:>10.2f} s {rs:>10.2f} s {rs / s:>6.1f}x {pick * 1e3:>7.2f} ms {hand * 1e3:>7.2f} ms "
          f"{rp * 1e3:>7.2f} ms")
