#!/usr/bin/env python3
"""The OpenBLAS kernels a peer should run on this CPU.

OpenBLAS 0.3.21 picks its kernels by the CPU's model number: a CPU newer than it knows (the Xeon model 207, Emerald
Rapids) gets its generic Prescott kernels (sgemm 2048: 57 GFLOP/s there, 306 with SkylakeX's), and so does every
library that calls it (PyTorch's linear layers: a GPT training step 6.3 s there). The benchmarks then tell it the
kernels its ISA runs, as a user tuning it would.

  python3 bench/openblas_core.py   prints the OPENBLAS_CORETYPE to set (SkylakeX, Haswell), or nothing
"""
import os, subprocess, sys

PROBE = r"""
import ctypes, numpy
for l in sorted(set(l.split()[-1] for l in open("/proc/self/maps") if "openblas" in l and ".so" in l)):
  try:
    f = ctypes.CDLL(l).openblas_get_corename
    f.restype = ctypes.c_char_p
    print(f().decode())
  except (OSError, AttributeError):
    pass
"""


def best_core(env=None):
  """The OPENBLAS_CORETYPE for this CPU when OpenBLAS (run with env) falls back to Prescott, else None."""
  env = dict(os.environ if env is None else env)
  env.pop("OPENBLAS_CORETYPE", None)
  out = subprocess.run(["/usr/bin/python3", "-c", PROBE], env=env, capture_output=True, text=True).stdout
  flags = next((l.split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
  if "Prescott" not in out.split() or "avx2" not in flags: return None
  return "SkylakeX" if "avx512f" in flags else "Haswell"


if __name__ == "__main__":
  core = best_core()
  if core: print(core)
  sys.exit(0)
