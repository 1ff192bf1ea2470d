#!/usr/bin/env python3
"""Every kernel a fixed set of workloads compiles, as text: the opts, buffer tables and sources that DEBUG=4 prints, with
the timings and pids left out. Run it on two builds and diff the outputs to show that a change leaves the kernels (their
texts and their count) as they were:

  PYTHONPATH=build/python python3 tools/kernel_texts.py > after.txt
  PYTHONPATH=/other/build/python python3 tools/kernel_texts.py > before.txt && diff before.txt after.txt

Each workload runs in a child process per target (CPU_ARCH=native and x86-64-v3, the AVX2 path, where the host runs it;
LLVM=1 where LLVM loads), with the disk caches off so every kernel is compiled and printed."""
import os, re, subprocess, sys

WORKLOADS = {
  "matmul": "a=Tensor.rand(1024,1024); b=Tensor.rand(1024,1024); (a@b).realize(); (Tensor.rand(64,512)@Tensor.rand(512,2048)).realize()",
  "matmul_packed": "(Tensor.rand(512,4096)@Tensor.rand(4096,1024)).realize()",
  "conv": ("x=Tensor.rand(32,8,28,28,requires_grad=True); w=Tensor.rand(16,8,5,5,requires_grad=True); "
           "x.conv2d(w,padding=2).relu().sum().backward(); Tensor.realize(x.grad, w.grad)"),
  "conv_small": "Tensor.rand(8,1,28,28).conv2d(Tensor.rand(32,1,3,3)).max_pool2d().realize()",
  "reduce": "t=Tensor.rand(4096,4096); t.sum(1).realize(); t.sum().realize(); t.max(0).realize()",
  "elementwise": "t=Tensor.rand(4096,4096); (t.exp()*2+t.log()).sin().realize(); (t*3+1).sqrt().realize()",
  "nn": ("from tinygrad import nn\n"
         "x=Tensor.rand(64,256); l=nn.Linear(256,128); n=nn.LayerNorm(128)\n"
         "opt=nn.optim.Adam([l.weight,l.bias]); Tensor.training=True\n"
         "loss=n(l(x)).softmax(-1).log().mean(); opt.zero_grad(); loss.backward(); opt.step()"),
  # the int8 matvec and matmul on each packed GGUF type (Q4_0, Q8_0, Q4_K, Q6_K): a decode step's row, a chunk's 8
  "gguf_packed": ("from tinygrad.nn.state import ggml_int8_pack, ggml_int8_linear\n"
                  "for typ, bs, ts in ((2, 32, 18), (8, 32, 34), (12, 256, 144), (14, 256, 210)):\n"
                  "  n, k = 256, 1024\n"
                  "  try: w = ggml_int8_pack(Tensor([(i * 37 + 11) % 256 for i in range(n * k // bs * ts)], dtype='uint8'), typ, n, k)\n"
                  "  except ValueError: continue  # a build without that type's layout\n"
                  "  ggml_int8_linear(Tensor.ones(1, k).contiguous(), w).realize(); ggml_int8_linear(Tensor.ones(8, k).contiguous(), w).realize()"),
}
TARGETS = [("native", {"CPU_ARCH": "native"}), ("avx2", {"CPU_ARCH": "x86-64-v3"}), ("llvm", {"LLVM": "1"})]
DROP = re.compile(r"^\*\*\* |opened device|pid:")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

def host_has_avx2() -> bool:
  try: return " avx2 " in open("/proc/cpuinfo").read().replace("\n", " ")
  except OSError: return False

def main() -> int:
  out = []
  for tname, tenv in TARGETS:
    if tname == "avx2" and not host_has_avx2(): continue
    for wname, code in WORKLOADS.items():
      env = {**os.environ, **tenv, "DEBUG": "4", "CACHELEVEL": "0", "DISABLE_COMPILER_CACHE": "1"}
      r = subprocess.run([sys.executable, "-c", f"from tinygrad import Tensor\n{code}"], env=env, capture_output=True,
                         text=True, timeout=600)
      if r.returncode != 0:
        if tname == "llvm" and "LLVM" in r.stderr: break  # no LLVM to load here
        sys.stderr.write(f"{tname}/{wname} failed:\n{r.stderr[-2000:]}\n")
        return 1
      lines = [ANSI.sub("", l).rstrip() for l in r.stdout.splitlines()]
      lines = [l for l in lines if not DROP.search(l)]
      kernels = sum(1 for l in lines if re.match(r"^\s*(void|define|__global__|kernel)\b.*\(", l))
      out.append(f"##### {tname}/{wname}: {kernels} kernels")
      out.extend(lines)
  print("\n".join(out))
  return 0

if __name__ == "__main__":
  sys.exit(main())
