#!/usr/bin/env bash
# Runs tinygrad's own examples/beautiful_mnist.py, unchanged, with FASHION=1 on our module and on the reference, and
# prints each one's test accuracy (the script's own progress line) and time:
#   bash tools/fashion_mnist_check.sh REF_CHECKOUT            # ours, then the reference (~17 minutes here)
#   bash tools/fashion_mnist_check.sh REF_CHECKOUT --ours     # ours only
# Both read Debian's dataset-fashion-mnist. Ours reads the files itself (mnist(fashion=True)); the reference
# downloads them with Tensor.from_url, so its download cache (under a temporary XDG_CACHE_HOME) is filled first with
# the same files, gunzipped and named as its fetch() names them. STEPS and BS pass through (default 70 and 512).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ref=${1:?usage: bash tools/fashion_mnist_check.sh REF_CHECKOUT [--ours]}
data=/usr/share/datasets/fashion-mnist
[[ -f $data/train-images-idx3-ubyte.gz ]] || { echo "no $data: install dataset-fashion-mnist (tools/setup.sh)" >&2; exit 2; }
ninja -C build -j2 tinygrad_python tinygrad_python_sources >/dev/null

last_line() { tr '\r' '\n' <"$1" | grep "test_accuracy" | tail -1 | sed 's/ *[0-9]*%|.*//'; }
run() {  # run <label> <log> <env...>
  local label=$1 log=$2
  shift 2
  local st=$SECONDS
  (cd "$ref" && env "$@" FASHION=1 python3 examples/beautiful_mnist.py) >"$log" 2>&1 || { tail -5 "$log"; exit 1; }
  echo "$label: $(last_line "$log") ($((SECONDS - st)) s)"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run "ours (tinygrad.cpp)" "$tmp/ours.log" PYTHONPATH="$PWD/build/python"
[[ ${2:-} == --ours ]] && exit 0
python3 - "$tmp/cache/tinygrad/downloads" "$data" <<'EOF'
import gzip, hashlib, pathlib, sys
out, data = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
out.mkdir(parents=True)
base = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"  # the reference's mnist(fashion=True)
for f in ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]:
  (out / (hashlib.md5((base + f).encode()).hexdigest() + ".gunzip")).write_bytes(gzip.decompress((data / f).read_bytes()))
EOF
run "reference (tinygrad $(git -C "$ref" describe --tags --always 2>/dev/null || echo "?"))" "$tmp/ref.log" \
  PYTHONPATH="$ref" XDG_CACHE_HOME="$tmp/cache"
