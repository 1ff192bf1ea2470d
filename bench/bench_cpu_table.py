#!/usr/bin/env python3
"""Issue 17's table: our CPU kernels against their peers, measured side by side in one run on this machine, for one
target ISA, printed as one table of ratios with the target each one has to meet.

  PYTHONPATH=build/python /usr/bin/python3 bench/bench_cpu_table.py [--isa native|avx2] [--arch MARCH] [--repeats 5]

--isa avx2 compiles our kernels for x86-64-v3 (CPU_ARCH) and holds the peers to AVX2 as well: PyTorch through
ATEN_CPU_CAPABILITY=avx2 and oneDNN's ONEDNN_MAX_CPU_ISA/DNNL_MAX_CPU_ISA=AVX2, OpenBLAS through
OPENBLAS_CORETYPE=Haswell (the table prints what each peer says it runs). So an AVX-512 machine measures the AVX2
path too. Natively, OpenBLAS on a CPU newer than it knows is told its ISA's kernels (bench/openblas_core.py).
--arch MARCH compiles ours for another machine's -march (cascadelake: the AVX-512 VNNI Xeon's), the peers
native. Every workload runs in a child process started with that environment:

  MNIST step, convs   bench/bench_vs_torch.py (PyTorch's CPU eager mode; the fastest of runs in turns); the convs
                      under TinyJit (the target) and realized each call (with the scheduling, for information)
  sgemm               float32 n x n @ n x n for n = 512 .. 4096, ours against numpy's BLAS (OpenBLAS:
                      libopenblas0-pthread); the fastest of --repeats in turns after a warm-up
  sum, row sum, exp2  build/bench/bench_reduce: 16M floats in turns with its read-bandwidth probe (fastest of runs);
                      the sums realized each call and under TinyJit (the target: the kernels alone)

Needs python3-torch, python3-numpy and libopenblas0-pthread (bench/bench_cpu_table.sh installs them) and the build's
Python module and bench_reduce. Both sides use CPU_THREADS threads (default: the CPUs this process may run on).
"""
import argparse, os, platform, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from openblas_core import best_core  # noqa: E402

ROOT = os.path.dirname(HERE)
PEER_AVX2 = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "DNNL_MAX_CPU_ISA": "AVX2",
             "OPENBLAS_CORETYPE": "Haswell", "CPU_ARCH": "x86-64-v3"}

SGEMM = f"import sys; sys.path.insert(0, {HERE!r})\n" + r"""
import os, time
import numpy as np
from openblas_core import loaded_blas
from tinygrad import Tensor
reps = int(sys.argv[1])
libs, core = loaded_blas()
print("blas:", [os.path.basename(l) for l in libs] or "none loaded", "core:", core, flush=True)
def warm(h):  # untimed runs for 20 ms: after the other side's turn (its threads may still spin) or an idle moment,
  # this VM's cores take a few ms to come back to speed (a 512 sgemm 10 ms after an idle gap: 1.6-2.9 ms, then 0.9)
  st = time.perf_counter()
  while True:
    h()
    if time.perf_counter() - st > 0.02: return
def fastest(f, g, each):  # the fastest of reps turns of each side (this VM's speed drifts within a minute), `each`
  f(), g()  # timed runs a turn
  tf, tg = [], []
  for _ in range(reps):
    for h, ts in ((f, tf), (g, tg)):
      warm(h)
      for _ in range(each):
        st = time.perf_counter(); h(); ts.append(time.perf_counter() - st)
  return min(tf), min(tg)
for n in (512, 1024, 2048, 4096):
  rng = np.random.default_rng(n)
  a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
  ta, tb = Tensor(a).realize(), Tensor(b).realize()
  t_ours, t_np = fastest(lambda: (ta @ tb).realize(), lambda: a @ b, 5 if n <= 1024 else 1)
  err = float(np.abs((ta @ tb).numpy() - a @ b).max())
  print(f"sgemm {n} {t_ours} {t_np} {err}", flush=True)
"""


def run(cmd, env, timeout=3600):
  out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
  if out.returncode != 0:
    sys.exit(f"bench_cpu_table: {' '.join(cmd[:3])} failed:\n{out.stdout}\n{out.stderr}")
  return out.stdout


def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--isa", choices=["native", "avx2"], default="native")
  ap.add_argument("--arch", help="our kernels for this -march (CPU_ARCH: another machine's target, e.g. cascadelake "
                  "for an AVX-512 VNNI Xeon), the peers native")
  ap.add_argument("--repeats", type=int, default=5)
  ap.add_argument("--skip", default="", help="comma-separated: torch, sgemm, reduce")
  args = ap.parse_args()
  env = dict(os.environ)
  # natively the peers pick their own kernels: a machine-wide OPENBLAS_CORETYPE (this workplace sets Haswell) or
  # OPENBLAS_L2_SIZE would hold OpenBLAS below this CPU (AVX-512 here: 380 GFLOP/s at 2048 against Haswell's 205)
  for k in PEER_AVX2: env.pop(k, None)
  env.pop("OPENBLAS_L2_SIZE", None)
  if args.isa == "avx2": env.update(PEER_AVX2)
  elif core := best_core(env):  # OpenBLAS does not know this CPU: its ISA's kernels, not Prescott's
    env["OPENBLAS_CORETYPE"] = core
    print(f"OpenBLAS does not know this CPU (it chose Prescott): OPENBLAS_CORETYPE={core}", flush=True)
  if args.arch: env["CPU_ARCH"] = args.arch
  env.setdefault("CPU_THREADS", str(len(os.sched_getaffinity(0))))
  env["OPENBLAS_NUM_THREADS"] = env["CPU_THREADS"]
  env.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
  env["PYTHONPATH"] = env.get("PYTHONPATH", os.path.join(ROOT, "build", "python"))
  skip = set(filter(None, args.skip.split(",")))
  model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
  rows = []  # (workload, ours, peer, ratio text, target text, met)

  if "torch" not in skip:
    convs = [f"conv{i}_{d}{j}" for i in range(1, 5) for d in ("fwd", "fwdbwd") for j in ("_jit", "")]
    keys = ",".join(["mnist_step"] + convs)
    out = run([sys.executable, os.path.join(HERE, "bench_vs_torch.py"), "--only", keys, "--repeats",
               str(args.repeats)], env)
    header = out.splitlines()[0]
    for line in out.splitlines()[2:]:
      m = re.match(r"(.+?)\s+([\d.]+) ms\s+([\d.]+) ms\s+([\d.]+)x", line)
      if not m: continue
      name, ours, peer = m.group(1).strip(), float(m.group(2)), float(m.group(3))
      # the convs' target is on their TinyJit rows (the kernels, as the train step runs them); realized each call
      # they add the scheduling (~1.5-4 ms a call here), shown for information
      target = 0.8 if name.startswith("mnist") else 1.0
      info = name.startswith("conv") and not name.endswith(" jit")
      label = name[:-4] + ", TinyJit" if name.endswith(" jit") else name + (", realize() each call" if info else "")
      rows.append((f"{label} (PyTorch)", f"{ours:.1f} ms", f"{peer:.1f} ms", f"{ours / peer:.2f}x time",
                   "-" if info else f"<= {target}x", None if info else ours / peer <= target))
    print("torch:", header, flush=True)
  if "sgemm" not in skip:
    out = run([sys.executable, "-c", SGEMM, str(args.repeats)], env)
    print("numpy", out.splitlines()[0], flush=True)
    for line in out.splitlines()[1:]:
      _, n, t_ours, t_np, err = line.split()
      n, t_ours, t_np = int(n), float(t_ours), float(t_np)
      gf = lambda t: 2 * n**3 / t / 1e9
      rows.append((f"sgemm {n} (OpenBLAS)", f"{gf(t_ours):.0f} GFLOP/s", f"{gf(t_np):.0f} GFLOP/s",
                   f"{t_np / t_ours:.2f}x speed", ">= 0.8x", t_np / t_ours >= 0.8))
  if "reduce" not in skip:
    out = run([os.path.join(ROOT, "build", "bench", "bench_reduce"), "--runs", str(max(args.repeats, 10))], env)
    print(out.splitlines()[0], flush=True)
    vals = {}  # workload -> (ms, GB/s, the probe's GB/s in the same minutes, ratio)
    for line in out.splitlines():
      cells = [c.strip() for c in line.strip("|").split("|")]
      if len(cells) == 5 and re.match(r"[\d.]+$", cells[1]): vals[cells[0]] = tuple(float(c) for c in cells[1:])
    for key, label in (("sum of 16M floats", "sum of 16M floats"), ("row sum (4096, 4096).sum(1)", "row sum 4096x4096")):
      # under TinyJit (the kernels, as a training loop runs them) the target; realized each call (with the
      # scheduling, ~0.2-0.4 ms here) for information
      for suffix, target in ((", TinyJit", True), ("", False)):
        ms, gbs, probe, r = vals[key + suffix]
        rows.append((f"{label}{suffix or ', realize() each call'} (bandwidth probe)", f"{gbs:.1f} GB/s", f"{probe:.1f} GB/s",
                     f"{r:.2f}x bandwidth", ">= 0.85x" if target else "-", (r >= 0.85) if target else None))
    ew = next(v for k, v in vals.items() if k.startswith("((a*b+c)"))
    ex = vals["same with .exp2()"]
    turns = float(re.search(r"in turns: ([\d.]+)x", out).group(1))
    rows.append(("6-op chain with exp2 (same chain without, in turns)", f"{ex[0]:.2f} ms", f"{ew[0]:.2f} ms",
                 f"{turns:.2f}x time", "<= 1.5x", turns <= 1.5))

  print(f"\n{model}, {platform.machine()}, {env['CPU_THREADS']} threads each; ISA: {args.isa}"
        f" (CPU_ARCH={env.get('CPU_ARCH', 'native')}); fastest of {args.repeats} in turns\n")
  print("| workload (peer) | tinygrad.cpp | peer | ratio | target | met |\n|---|---:|---:|---:|---:|:-:|")
  for w, o, p, r, t, met in rows: print(f"| {w} | {o} | {p} | {r} | {t} | {'-' if met is None else 'yes' if met else 'no'} |")
  targets = [r[5] for r in rows if r[5] is not None]
  print(f"\n{sum(targets)} of {len(targets)} targets met")


if __name__ == "__main__":
  main()
