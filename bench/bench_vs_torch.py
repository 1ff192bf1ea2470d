#!/usr/bin/env python3
# tinygrad.cpp against PyTorch's CPU eager mode, in one process, on the shapes of tinygrad's examples/beautiful_mnist.py
# (batch 512). Both sides use the same number of threads (CPU_THREADS for us, torch.set_num_threads for torch; default:
# the CPUs this process may run on; TORCH_THREADS sets torch's alone). Each figure is the fastest of several timed runs
# after a warm-up (which compiles our kernels), the two sides in turns, each timed run after 20 ms of untimed ones of
# the same side (the other's threads may still spin; an idle core takes a few ms to come back to speed): this VM's
# speed drifts within a minute, and PyTorch's, whose big temporaries are fresh pages each call, by up to 5x (13.5 -> 100
# ms for conv3 fwd+bwd); the last column is our time over torch's (below 1: we are faster).
#
#   matmul        1024x1024 @ 1024x1024, float32
#   convN fwd     the model's convs, forward:
#                 conv1 (512,1,28,28) conv (32,1,5,5), conv2 (512,32,24,24) conv (32,32,5,5) (the heaviest),
#                 conv3 (512,32,10,10) conv (64,32,3,3), conv4 (512,64,8,8) conv (64,64,3,3)
#   convN fwd+bwd the same, forward and backward to the input and the weight (loss: (output * G).sum(), G random)
#   convN ... jit the same with ours under TinyJit (the kernels alone, as the train step runs them)
#   mnist step    one training step of the model (Conv2d 1->32 5x5, relu, Conv2d 32->32 5x5, relu, BatchNorm, max_pool,
#                 Conv2d 32->64 3x3, relu, Conv2d 64->64 3x3, relu, BatchNorm, max_pool, flatten, Linear 576->10;
#                 sparse categorical cross-entropy, Adam), ours under TinyJit as the example runs it
#
#   PYTHONPATH=build/python python3 bench/bench_vs_torch.py [--only matmul,conv2_fwd,...] [--repeats N]
#
# PyTorch must be importable by the same interpreter (Debian: apt-get install python3-torch, then /usr/bin/python3).
import argparse
import os
import time

import torch
from tinygrad import Tensor, TinyJit, nn

THREADS = int(os.environ.get("CPU_THREADS", len(os.sched_getaffinity(0))))
TORCH_THREADS = int(os.environ.get("TORCH_THREADS", THREADS))
torch.set_num_threads(TORCH_THREADS)
# ATen's kernels' ISA as torch reports it (ATEN_CPU_CAPABILITY lowers it; oneDNN's convs follow ONEDNN_MAX_CPU_ISA)
CAPABILITY = next((l.split(":", 1)[1].strip() for l in torch.__config__.show().splitlines()
                   if "CPU capability usage" in l), "?")


def fastest_times(f_ours, f_torch, repeats):
  f_ours(), f_ours(), f_torch()  # warm-up: compiles our kernels (TinyJit captures on its second call), lets torch
  # pick its algorithms
  ts_ours, ts_torch = [], []
  for _ in range(repeats):  # in turns: this VM's speed drifts within a minute
    for fn, ts in ((f_ours, ts_ours), (f_torch, ts_torch)):
      w0 = time.perf_counter()
      while True:  # untimed runs for 20 ms: the other side's threads may still spin, and after an idle moment this
        fn()  # VM's cores take a few ms to come back to speed
        if time.perf_counter() - w0 > 0.02: break
      st = time.perf_counter()
      fn()
      ts.append(time.perf_counter() - st)
  return min(ts_ours), min(ts_torch)


def rand_np(*shape, seed=0):  # the same numbers on both sides
  g = torch.Generator().manual_seed(seed)
  return torch.rand(*shape, generator=g) - 0.5


def ours(t):
  return Tensor(t.numpy())


# *** the workloads: (ours, torch), each a function that does one timed run ***

def w_matmul():
  a, b = rand_np(1024, 1024, seed=1), rand_np(1024, 1024, seed=2)
  ta, tb = ours(a).realize(), ours(b).realize()
  return (lambda: (ta @ tb).realize()), (lambda: a @ b)


def conv_pair(xs, ws, backward, jit=False):
  x, w = rand_np(*xs, seed=3), rand_np(*ws, seed=4)
  tx, tw = ours(x).realize(), ours(w).realize()
  wrap = TinyJit if jit else (lambda f: f)
  if not backward:
    fwd = wrap(lambda a, b: a.conv2d(b).realize())
    return (lambda: fwd(tx, tw)), (lambda: torch.nn.functional.conv2d(x, w))
  x.requires_grad_(), w.requires_grad_()
  g = rand_np(*torch.nn.functional.conv2d(x, w).shape, seed=5)  # the gradient flowing back into the conv's output
  tg = ours(g).realize()

  def fb(a, b, c):
    ox, ow = a.detach().requires_grad_(), b.detach().requires_grad_()
    out = ox.conv2d(ow)
    gx, gw = (out * c).sum().gradient(ox, ow)
    return Tensor.realize(out, gx, gw)

  def torch_fb():
    x.grad = w.grad = None
    (torch.nn.functional.conv2d(x, w) * g).sum().backward()

  ours_fb = wrap(fb)
  return (lambda: ours_fb(tx, tw, tg)), torch_fb


class OursModel:
  def __init__(self):
    def conv(cin, cout, k):
      return [Tensor.kaiming_uniform(cout, cin, k, k, a=5**0.5).requires_grad_(),
              Tensor.uniform(cout, low=-1 / (cin * k * k)**0.5, high=1 / (cin * k * k)**0.5).requires_grad_()]
    self.c1, self.c2, self.c3, self.c4 = conv(1, 32, 5), conv(32, 32, 5), conv(32, 64, 3), conv(64, 64, 3)
    self.bn1 = [Tensor.ones(32).requires_grad_(), Tensor.zeros(32).requires_grad_()]
    self.bn2 = [Tensor.ones(64).requires_grad_(), Tensor.zeros(64).requires_grad_()]
    self.l = [Tensor.kaiming_uniform(10, 576, a=5**0.5).requires_grad_(),
              Tensor.uniform(10, low=-1 / 576**0.5, high=1 / 576**0.5).requires_grad_()]

  def params(self):
    return self.c1 + self.c2 + self.c3 + self.c4 + self.bn1 + self.bn2 + self.l

  @staticmethod
  def bn(x, wb):  # nn.BatchNorm in training mode (batch statistics; the running stats are left out)
    mean = x.mean(axis=(0, 2, 3))
    y = x - mean.reshape(1, -1, 1, 1)
    invstd = (y * y).mean(axis=(0, 2, 3)).add(1e-5).rsqrt()
    return x.batchnorm(wb[0], wb[1], mean, invstd)

  def __call__(self, x):
    x = x.conv2d(*self.c1).relu()
    x = self.bn(x.conv2d(*self.c2).relu(), self.bn1).max_pool2d()
    x = x.conv2d(*self.c3).relu()
    x = self.bn(x.conv2d(*self.c4).relu(), self.bn2).max_pool2d()
    return x.flatten(1).linear(self.l[0].transpose(), self.l[1])


def w_mnist():
  X, Y = rand_np(512, 1, 28, 28, seed=5), torch.randint(0, 10, (512,), generator=torch.Generator().manual_seed(6))
  tX, tY = ours(X).realize(), Tensor(Y.numpy().astype("int32")).realize()
  model = OursModel()
  opt = nn.optim.Adam(model.params())

  @TinyJit
  def step():
    Tensor.training = True
    opt.zero_grad()
    loss = model(tX).sparse_categorical_crossentropy(tY).backward()
    opt.step()
    Tensor.training = False
    return loss.realize()

  tm = torch.nn.Sequential(
      torch.nn.Conv2d(1, 32, 5), torch.nn.ReLU(), torch.nn.Conv2d(32, 32, 5), torch.nn.ReLU(), torch.nn.BatchNorm2d(32),
      torch.nn.MaxPool2d(2), torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.Conv2d(64, 64, 3), torch.nn.ReLU(),
      torch.nn.BatchNorm2d(64), torch.nn.MaxPool2d(2), torch.nn.Flatten(1), torch.nn.Linear(576, 10))
  topt = torch.optim.Adam(tm.parameters())

  def torch_step():
    topt.zero_grad()
    loss = torch.nn.functional.cross_entropy(tm(X), Y)
    loss.backward()
    topt.step()

  def ours_step():
    step().item()

  ours_step()  # TinyJit: the first call runs, the second captures, then it replays
  return ours_step, torch_step


WORKLOADS = {
    "matmul": ("1024^3 matmul", w_matmul, 2 * 1024**3),
    "conv1_fwd": ("conv1 fwd", lambda **k: conv_pair((512, 1, 28, 28), (32, 1, 5, 5), False, **k), 2 * 512 * 32 * 24 * 24 * 25),
    "conv1_fwdbwd": ("conv1 fwd+bwd", lambda **k: conv_pair((512, 1, 28, 28), (32, 1, 5, 5), True, **k),
                     3 * 2 * 512 * 32 * 24 * 24 * 25),
    "conv2_fwd": ("conv2 fwd", lambda **k: conv_pair((512, 32, 24, 24), (32, 32, 5, 5), False, **k),
                  2 * 512 * 32 * 20 * 20 * 32 * 25),
    "conv2_fwdbwd": ("conv2 fwd+bwd", lambda **k: conv_pair((512, 32, 24, 24), (32, 32, 5, 5), True, **k),
                     3 * 2 * 512 * 32 * 20 * 20 * 32 * 25),
    "conv3_fwd": ("conv3 fwd", lambda **k: conv_pair((512, 32, 10, 10), (64, 32, 3, 3), False, **k), 2 * 512 * 64 * 8 * 8 * 32 * 9),
    "conv3_fwdbwd": ("conv3 fwd+bwd", lambda **k: conv_pair((512, 32, 10, 10), (64, 32, 3, 3), True, **k),
                     3 * 2 * 512 * 64 * 8 * 8 * 32 * 9),
    "conv4_fwd": ("conv4 fwd", lambda **k: conv_pair((512, 64, 8, 8), (64, 64, 3, 3), False, **k), 2 * 512 * 64 * 6 * 6 * 64 * 9),
    "conv4_fwdbwd": ("conv4 fwd+bwd", lambda **k: conv_pair((512, 64, 8, 8), (64, 64, 3, 3), True, **k),
                     3 * 2 * 512 * 64 * 6 * 6 * 64 * 9),
    "mnist_step": ("mnist train step", w_mnist, None),
}
# the convs once more with ours under TinyJit, as the train step runs them: the kernels without the scheduling
for _k in [k for k in WORKLOADS if k.startswith("conv")]:
  _name, _make, _flops = WORKLOADS[_k]
  WORKLOADS[_k + "_jit"] = (_name + " jit", (lambda m: lambda: m(jit=True))(_make), _flops)


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--only", default=",".join(WORKLOADS))
  ap.add_argument("--repeats", type=int, default=5)
  args = ap.parse_args()
  print(f"threads: ours {THREADS} (CPU_THREADS), torch {TORCH_THREADS} (TORCH_THREADS); torch {torch.__version__} "
        f"({CAPABILITY}); fastest of {args.repeats} runs in turns after a warm-up")
  print(f"{'workload':18s} {'tinygrad.cpp':>14s} {'torch':>14s} {'ours/torch':>11s}   GFLOP/s ours | torch")
  for key in args.only.split(","):
    name, make, flops = WORKLOADS[key]
    f_ours, f_torch = make()
    t_ours, t_torch = fastest_times(f_ours, f_torch, args.repeats)
    gf = f"{flops / t_ours / 1e9:8.1f} | {flops / t_torch / 1e9:.1f}" if flops else ""
    print(f"{name:18s} {t_ours * 1e3:11.1f} ms {t_torch * 1e3:11.1f} ms {t_ours / t_torch:10.2f}x   {gf}", flush=True)


if __name__ == "__main__":
  main()
