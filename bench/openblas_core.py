#!/usr/bin/env python3
"""The OpenBLAS kernels a peer should run on this CPU.

OpenBLAS 0.3.21 picks its kernels by the CPU's model number: a CPU newer than it knows (the Xeon model 207, Emerald
Rapids) gets its generic Prescott kernels (sgemm 2048: 57 GFLOP/s there, 306 with SkylakeX's), and so does every
library that calls it (PyTorch's linear layers: a GPT training step 6.3 s there). The benchmarks then tell it the
kernels its ISA runs, as a user tuning it would.

  python3 bench/openblas_core.py   prints the OPENBLAS_CORETYPE to set (SkylakeX, Haswell), or nothing
"""
import ctypes, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def loaded_blas():
  """(the BLAS libraries this process has loaded, the kernels OpenBLAS among them picked or "?")"""
  libs = sorted(set(l.split()[-1] for l in open("/proc/self/maps") if "blas" in l and ".so" in l))
  core = "?"
  for l in libs:  # OpenBLAS names the kernels it picked
    try:
      f = ctypes.CDLL(l).openblas_get_corename
      f.restype = ctypes.c_char_p
      core = f().decode()
    except (OSError, AttributeError):
      pass
  return libs, core


# numpy loads OpenBLAS; a child process, so that env (OPENBLAS_CORETYPE unset) is what it starts with
PROBE = f"import sys, numpy; sys.path.insert(0, {HERE!r}); from openblas_core import loaded_blas; print(loaded_blas()[1])"


def best_core(env=None):
  """The OPENBLAS_CORETYPE for this CPU when OpenBLAS (run with env) falls back to Prescott, else None."""
  env = dict(os.environ if env is None else env)
  env.pop("OPENBLAS_CORETYPE", None)
  out = subprocess.run(["/usr/bin/python3", "-c", PROBE], env=env, capture_output=True, text=True).stdout
  flags = next((l.split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
  if out.strip() != "Prescott" or "avx2" not in flags: return None
  return "SkylakeX" if "avx512f" in flags else "Haswell"


if __name__ == "__main__":
  core = best_core()
  if core: print(core)
  sys.exit(0)
