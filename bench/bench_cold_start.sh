#!/usr/bin/env bash
# The first MNIST training step from empty caches, per device: examples/beautiful_mnist with STEPS=1 (one train step
# and one evaluation, every kernel compiled: DISABLE_COMPILER_CACHE=1), the wall time of the whole process, each of
# N runs. The CPU device runs one clang process per kernel; LLVM compiles in this process.
#   bash bench/bench_cold_start.sh [build dir] [runs]
set -euo pipefail
build=${1:-build}
runs=${2:-3}
exe=$build/examples/beautiful_mnist
TIMEFORMAT=%R
for dev in CPU LLVM; do
  times=()
  for ((i = 0; i < runs; i++)); do
    t=$({ time DEV=$dev DISABLE_COMPILER_CACHE=1 STEPS=1 BS=128 TARGET_EVAL_ACC_PCT=0 "$exe" >/dev/null 2>&1; } 2>&1)
    times+=("$t")
  done
  echo "$dev: ${times[*]} s"
done
