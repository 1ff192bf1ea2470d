#!/usr/bin/env bash
# The first MNIST training step from empty caches, as a new user meets it: tinygrad's own examples/beautiful_mnist.py
# with STEPS=1 (one train step, batch 512, every kernel compiled), run by our Python package on CPU and LLVM and by
# the reference tinygrad on the same devices, each run a fresh process with a fresh cache directory. Prints the
# median wall time of the whole process over N runs and the ratios against the reference's CPU run.
#   TINYGRAD_PATH=/path/to/tinygrad bash bench/bench_cold_start.sh [build dir] [runs]
# Run from the repository root (our package reads data/mnist; tools/fetch_mnist.py puts it there).
set -euo pipefail
build=${1:-build}
runs=${2:-3}
ref=${TINYGRAD_PATH:-}
example=${ref:+$ref/examples/beautiful_mnist.py}
[[ -n "$example" ]] || { echo "set TINYGRAD_PATH to the reference tinygrad's source tree"; exit 1; }
py=/usr/bin/python3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# the reference fetches MNIST into its download cache (md5 of the URL); ours reads data/mnist: give it the same files
seed_downloads() {
  mkdir -p "$1/tinygrad/downloads"
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    h=$($py -c "import hashlib,sys; print(hashlib.md5(sys.argv[1].encode()).hexdigest())" \
      "https://storage.googleapis.com/cvdf-datasets/mnist/$f.gz")
    ln -sf "$PWD/data/mnist/$f" "$1/tinygrad/downloads/$h.gunzip"
  done
}
run_one() {  # who device -> seconds
  local cache="$scratch/cache.$RANDOM$RANDOM" path
  seed_downloads "$cache"
  if [[ $1 == ours ]]; then path=$build/python; else path=$ref; fi
  local st en
  st=$(date +%s.%N)
  env XDG_CACHE_HOME="$cache" PYTHONPATH="$path" "$2=1" DEV="$2" STEPS=1 "$py" "$example" >/dev/null 2>&1
  en=$(date +%s.%N)
  $py -c "print(f'{$en - $st:.2f}')"
}
median() { tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A med
for who in ours ref; do
  for dev in CPU LLVM; do
    ts=()
    for ((i = 0; i < runs; i++)); do ts+=("$(run_one $who $dev)"); done
    med[$who.$dev]=$(echo "${ts[*]}" | median)
    echo "$who $dev: ${ts[*]} s (median ${med[$who.$dev]} s)"
  done
done
for k in ours.CPU ours.LLVM ref.LLVM; do
  $py -c "print(f'$k: {${med[ref.CPU]} / ${med[$k]}:.1f}x faster than the reference on CPU')"
done
