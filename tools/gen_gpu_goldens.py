#!/usr/bin/env python3
"""Writes tests/data/gpu/<renderer>/<program>.txt: what the reference's OpenCLRenderer and CUDARenderer("sm_90")
print for the kernels of a few programs, with the reference's own hand-coded opts (tensor cores where it uses them).
Run once with the reference checkout, then commit the outputs (test data, not its code):
  TINYGRAD_PATH=/path/to/tinygrad python3 tools/gen_gpu_goldens.py
tests/renderer/test_gpu_golden.cpp builds the same programs and compares our text with these files."""
import os, sys, pathlib
sys.path.insert(0, os.environ["TINYGRAD_PATH"])
from tinygrad import Tensor, dtypes
from tinygrad.engine.realize import get_kernel
from tinygrad.codegen.kernel import Kernel
from tinygrad.renderer.cstyle import OpenCLRenderer, CUDARenderer
from tinygrad.uop.ops import Ops
from tinygrad.helpers import to_function_name

E = lambda *shape, dtype=dtypes.float: Tensor.empty(*shape, dtype=dtype)
def elementwise():
  a, b, c = E(1024, 1024), E(1024, 1024), E(1024, 1024)
  return ((a*b+c).relu()*2-a).exp2()
PROGRAMS = {  # keep in step with tests/renderer/test_gpu_golden.cpp
  "t347": lambda: E(4) + 3 + 4,
  "mm_relu_sum": lambda: (E(4, 4) @ E(4, 4)).relu().sum(),
  "matmul": lambda: E(256, 256) @ E(256, 256),
  "matvec": lambda: E(1, 1024) @ E(1024, 1024),
  "softmax": lambda: E(64, 128).softmax(-1),
  "sum_grouped": lambda: E(4096).sum(),
  "row_sum": lambda: E(256, 512).sum(1),
  "elementwise": elementwise,
  "conv2d": lambda: E(8, 16, 12, 12).conv2d(E(32, 16, 3, 3)),
  "matmul_half": lambda: E(256, 256, dtype=dtypes.half) @ E(256, 256, dtype=dtypes.half),
}
RENDERERS = {"opencl": OpenCLRenderer, "cuda": lambda: CUDARenderer("sm_90")}

out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "gpu"
for rname, make in RENDERERS.items():
  (out / rname).mkdir(parents=True, exist_ok=True)
  for pname, prog in PROGRAMS.items():
    Kernel.kernel_cnt.clear()  # each program named as in a fresh process (the test resets ours the same way)
    srcs = []
    for si in prog().schedule():
      if si.ast.op is not Ops.SINK: continue
      k = get_kernel(make(), si.ast)
      srcs.append(f"// {to_function_name(k.name)} {[str(o) for o in k.applied_opts]}\n" + k.to_program().src)
    (out / rname / f"{pname}.txt").write_text("\n\n".join(srcs) + "\n")
    print(f"{rname}/{pname}: {len(srcs)} kernels")
