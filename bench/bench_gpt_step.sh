#!/usr/bin/env bash
# The character-level GPT's training step (examples/gpt.h: 6 layers, 384 wide, batch 16 x 256) in tinygrad.cpp and in
# PyTorch (bench/bench_gpt_step.py), one after the other, and the table. Installs the peer first
# (bench/install_peers.sh: Debian's python3-torch with OpenBLAS).
#   bash bench/bench_gpt_step.sh [--steps N]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/install_peers.sh
if [[ ! -f build/CMakeCache.txt ]]; then cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null; fi
ninja -C build -j2 bench_gpt_step >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -m1 "model name" /proc/cpuinfo
./build/bench/bench_gpt_step "$@" --json "$tmp/cpp.json" 2>/dev/null
/usr/bin/python3 bench/bench_gpt_step.py "$@" --json "$tmp/torch.json" 2>/dev/null
/usr/bin/python3 bench/bench_gpt_step.py table "$tmp/cpp.json" "$tmp/torch.json"
