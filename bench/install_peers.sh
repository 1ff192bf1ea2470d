#!/usr/bin/env bash
# The CPU benchmarks' peers, installed when missing: Debian's python3-torch and numpy, with OpenBLAS
# (libopenblas0-pthread) as the BLAS they load (without it, Debian's torch runs on the reference BLAS, ~20x slower).
# Sourced by bench/bench_cpu_table.sh and bench/bench_gpt_step.sh.
need=()
/usr/bin/python3 -c "import torch, numpy" 2>/dev/null || need+=(python3-torch python3-numpy)
dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "install ok installed" || need+=(libopenblas0-pthread)
if ((${#need[@]})); then
  sudo=()
  if [[ $(id -u) != 0 ]]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${need[@]}"
fi
