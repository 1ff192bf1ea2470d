#!/usr/bin/env python3
# The workloads of bench/bench_uop.cpp, timed in tinygrad's Python: same names, same units (time per iteration).
#   TINYGRAD_PATH=/path/to/tinygrad python3 bench/bench_uop_tinygrad.py [bench_uop.json]
# With the JSON of a C++ run (bench_uop --benchmark_out=bench_uop.json), it prints the C++ figures and the ratios too.
# Needs only tinygrad itself (no numpy). Each figure is CPU time (time.process_time, like the CPU column of
# Google Benchmark), the best of several repeats.
import json, os, sys, time

sys.path.insert(0, os.environ.get("TINYGRAD_PATH", "."))
from tinygrad import dtypes  # noqa: E402
from tinygrad.uop.ops import UOp, Ops, UPat, PatternMatcher, graph_rewrite  # noqa: E402

# *** the workloads, shared with bench_uop.cpp: keep the two in step ***

fold_pm = PatternMatcher([
  (UPat(Ops.ADD, src=(UPat(Ops.CONST, name="c1"), UPat(Ops.CONST, name="c2"))), lambda c1,c2: c1.const_like(c1.arg+c2.arg)),
])

a, b, c = UOp.variable("a", 0, 7), UOp.variable("b", 0, 3), UOp.variable("c", 0, 3)
d = UOp.variable("d", 1, 10)
NUM_EXPRS = 10000

def index_expr(i:int) -> UOp:
  k1, k2, k3 = 1 + i % 8, 1 + (i // 8) % 6, (i // 48) % 208  # 9,984 distinct (k1, k2, k3)
  return (((a*4+b)*4+c)//16 % 8 + (a*k1 + b*k1 + c + k3)//(k1*4) + (b*k2 + c) % (k2*4) +
          (c + k3)//8 * d + ((a*2+1) < 2*k1).where(d*k2, a+0))

def count_nodes(roots:list[UOp]) -> int: return len(UOp.sink(*roots).toposort()) - 1

# *** timing: best of `repeat` runs of `number` iterations, as seconds per iteration ***

def timeit(fn, number:int, repeat:int=5, setup=None) -> float:
  best = float("inf")
  for _ in range(repeat):
    arg = setup() if setup is not None else None
    st = time.process_time()
    for _ in range(number): fn(arg)
    best = min(best, (time.process_time() - st) / number)
  return best

CPP: dict[str, float] = {}  # name -> C++ CPU seconds per iteration, from Google Benchmark's JSON
if len(sys.argv) > 1:
  with open(sys.argv[1]) as f:
    for bm in json.load(f)["benchmarks"]:
      CPP[bm["name"]] = bm["cpu_time"] / {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0}[bm["time_unit"]]

def fmt(secs:float) -> str:
  unit, scale = ("ms", 1e3) if secs >= 1e-3 else ("us", 1e6) if secs >= 1e-6 else ("ns", 1e9)
  return f"{secs*scale:10.2f} {unit}"

def report(name:str, secs:float):
  if name in CPP: print(f"{name:<28s} python {fmt(secs)}   c++ {fmt(CPP[name])}   c++ faster by {secs/CPP[name]:6.1f}x")
  else: print(f"{name:<28s} python {fmt(secs)}")

if __name__ == "__main__":
  exprs = [index_expr(i) for i in range(NUM_EXPRS)]
  st = time.process_time()
  out = [e.simplify() for e in exprs]
  first_simplify = time.process_time() - st
  print(f"nodes before simplify: {count_nodes(exprs)}, after: {count_nodes(out)}")
  for i in (0, 1, 4321): print(f"expr {i}: {out[i].render()}")
  del exprs, out

  x, y = UOp.variable("x", 0, 10), UOp.const(dtypes.int, 3)
  keep = UOp(Ops.ADD, dtypes.int, (x, y))
  report("BM_UOpConstructHit", timeit(lambda _: UOp(Ops.ADD, dtypes.int, (x, y)), 100000))

  base = [1000000]
  def miss(_):
    for j in range(1000): UOp.const(dtypes.int, base[0] + j)
    base[0] += 1000
  report("BM_UOpConstructMiss", timeit(miss, 20))

  report("BM_BuildIndexExprs10k", timeit(lambda _: [index_expr(i) for i in range(NUM_EXPRS)], 1))

  two = UOp.const(dtypes.int, 2)
  s = two + two
  report("BM_PatternMatcherRewrite", timeit(lambda _: fold_pm.rewrite(s), 100000))

  chain = UOp.const(dtypes.int, 0)
  for i in range(1, 101): chain = chain + UOp.const(dtypes.int, i)
  report("BM_GraphRewriteFold100", timeit(lambda _: graph_rewrite(chain, fold_pm), 100))

  # built fresh (untimed) before each run, so nothing is cached; the first run above counts as one repeat
  report("BM_SimplifyIndexExprs10k", min(first_simplify, timeit(lambda exprs: [e.simplify() for e in exprs], 1,
                                                                repeat=1, setup=lambda: [index_expr(i) for i in range(NUM_EXPRS)])))
