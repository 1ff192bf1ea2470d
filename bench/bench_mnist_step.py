#!/usr/bin/env python3
# The PyTorch side of bench/bench_mnist_step.cpp: the same model (tinygrad's beautiful_mnist), batch and Adam step in
# PyTorch's CPU eager mode with 2 threads, and the table with tinygrad.cpp's figure.
#
#   ./build/bench/bench_mnist_step --bs 512 --json /tmp/mnist_cpp.json
#   python3 bench/bench_mnist_step.py --bs 512 --json /tmp/mnist_torch.json   # needs python3-torch
#   python3 bench/bench_mnist_step.py table /tmp/mnist_cpp.json /tmp/mnist_torch.json
import argparse, json, sys, time

def run(bs, steps, out):
  import numpy as np, torch
  from torch import nn
  torch.set_num_threads(2)
  torch.manual_seed(0)
  model = nn.Sequential(nn.Conv2d(1, 32, 5), nn.ReLU(), nn.Conv2d(32, 32, 5), nn.ReLU(), nn.BatchNorm2d(32), nn.MaxPool2d(2),
                        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(), nn.BatchNorm2d(64), nn.MaxPool2d(2),
                        nn.Flatten(1), nn.Linear(576, 10))
  opt = torch.optim.Adam(model.parameters(), lr=0.001)
  i = np.arange(bs * 784, dtype=np.uint64)
  xs = torch.tensor(((i * 2654435761) % 2**32 >> 24).astype(np.uint8).reshape(bs, 1, 28, 28))
  ys = torch.tensor(np.arange(bs) % 10)
  model.train()
  ms = []
  for k in range(steps + 3):
    st = time.perf_counter()
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(xs.float()), ys)
    loss.backward()
    opt.step()
    loss.item()
    if k >= 3: ms.append((time.perf_counter() - st) * 1e3)
  ms.sort()
  print(f"pytorch {torch.__version__}: {ms[len(ms)//2]:.1f} ms per step (batch {bs}, median of {len(ms)})")
  if out: json.dump({"bs": bs, "ms_per_step": ms[len(ms)//2]}, open(out, "w"))

def table(cpp, pt):
  c, t = json.load(open(cpp)), json.load(open(pt))
  print(f"| batch | PyTorch CPU (2 threads) | tinygrad.cpp | tinygrad.cpp / PyTorch |\n|---|---|---|---|")
  print(f"| {c['bs']} | {t['ms_per_step']:.0f} ms | {c['ms_per_step']:.0f} ms | {c['ms_per_step']/t['ms_per_step']:.2f}x |")

if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == "table": table(sys.argv[2], sys.argv[3]); sys.exit()
  ap = argparse.ArgumentParser()
  ap.add_argument("--bs", type=int, default=512); ap.add_argument("--steps", type=int, default=10); ap.add_argument("--json")
  a = ap.parse_args()
  run(a.bs, a.steps, a.json)
