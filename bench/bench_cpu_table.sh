#!/usr/bin/env bash
# bench/bench_cpu_table.py on both targets of this machine: the native ISA, then AVX2 (x86-64-v3, with the peers held
# to AVX2), after installing the peers (PyTorch, numpy with OpenBLAS) and building the module and bench_reduce.
#   bash bench/bench_cpu_table.sh [--repeats N]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/install_peers.sh
if [[ ! -f build/CMakeCache.txt ]]; then cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null; fi
ninja -C build -j2 tinygrad_python tinygrad_python_sources bench_reduce >/dev/null
export PYTHONPATH=$PWD/build/python
/usr/bin/python3 bench/bench_cpu_table.py --isa native "$@"
if grep -q -w avx512f /proc/cpuinfo; then /usr/bin/python3 bench/bench_cpu_table.py --isa avx2 "$@"; fi
