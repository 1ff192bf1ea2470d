#!/usr/bin/env bash
# The character-level GPT's training step (examples/gpt.h: 6 layers, 384 wide, batch 16 x 256) in tinygrad.cpp and in
# PyTorch (bench/bench_gpt_step.py), one after the other, and the table. Installs the peer first
# (bench/install_peers.sh: Debian's python3-torch with OpenBLAS).
#   bash bench/bench_gpt_step.sh [--steps N] [--isa native|avx2]
# --isa avx2 compiles our kernels for x86-64-v3 (CPU_ARCH) and holds PyTorch to AVX2 too (ATEN_CPU_CAPABILITY, oneDNN's
# max ISA, OpenBLAS's Haswell kernels), as bench/bench_cpu_table.py does: an AVX-512 machine measures the AVX2 race
set -euo pipefail
isa=native
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --isa) isa="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
unset OPENBLAS_CORETYPE  # natively each side picks its own kernels
if [[ "$isa" == avx2 ]]; then
  export CPU_ARCH=x86-64-v3 ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell
elif [[ "$isa" != native ]]; then
  echo "bench_gpt_step.sh: --isa takes native or avx2, not '$isa'" >&2
  exit 2
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/install_peers.sh
if [[ "$isa" == native ]]; then  # OpenBLAS on a CPU newer than it knows: its ISA's kernels, not Prescott's
  core=$(/usr/bin/python3 bench/openblas_core.py)
  if [[ -n "$core" ]]; then export OPENBLAS_CORETYPE=$core; fi
fi
if [[ ! -f build/CMakeCache.txt ]]; then cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null; fi
ninja -C build -j2 bench_gpt_step >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "$(grep -m1 "model name" /proc/cpuinfo); kernels: $isa"
./build/bench/bench_gpt_step "${args[@]}" --json "$tmp/cpp.json" 2>/dev/null
/usr/bin/python3 bench/bench_gpt_step.py "${args[@]}" --json "$tmp/torch.json" 2>/dev/null
/usr/bin/python3 bench/bench_gpt_step.py table "$tmp/cpp.json" "$tmp/torch.json"
