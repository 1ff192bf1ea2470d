#!/usr/bin/env bash
# onnx's backend test suite (Debian's libonnx-testdata, onnx 1.12) run through the reference's own
# test/external/external_test_onnx_backend.py and its exclude list, unchanged, against our Python package:
#   bash tools/onnx_conformance.sh REF            # ours: the pass count, and every test the reference passes here
#                                                  # that we don't (exit 1 if any)
#   bash tools/onnx_conformance.sh REF --ref      # also (re)run the reference itself for its pass list (~minutes)
# REF is a tinygrad checkout at 24e7aed74b (0.10.3). Results go to build/onnx_conformance/{ours,ref}.txt, a line per
# test: PASSED/FAILED/SKIPPED name. The harness needs three shims on Debian's onnx 1.12 and numpy 1.24; they are a
# pytest plugin of ours (tools/onnx_conformance/onnx_shims.py), not changes to tinygrad's file.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
if (($# < 1)); then
  echo "usage: bash tools/onnx_conformance.sh TINYGRAD_CHECKOUT [--ref]" >&2
  exit 2
fi
REF=$(cd "$1" && pwd)
HARNESS=$REF/test/external/external_test_onnx_backend.py
[[ -f $HARNESS ]] || { echo "onnx_conformance: $HARNESS not found" >&2; exit 2; }
missing=()
for p in python3-onnx python3-tabulate libonnx-testdata python3-pytest; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=()
  if [[ $(id -u) != 0 ]]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
if [[ ! -f build/CMakeCache.txt ]]; then cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null; fi
ninja -C build -j2 tinygrad_python tinygrad_python_sources >/dev/null
OUT=$ROOT/build/onnx_conformance
mkdir -p "$OUT"

# run_side NAME PYTHONPATH: the harness in a scratch folder (its pytest report plugin writes there)
run_side() {
  local name=$1 path=$2 work
  work=$(mktemp -d)
  cp "$HARNESS" "$work/"
  (cd "$work" && PYTHONPATH="$path:$ROOT/tools/onnx_conformance" timeout 3600 /usr/bin/python3 -m pytest -q -rA \
    -p no:cacheprovider -p onnx_shims external_test_onnx_backend.py 2>&1 || true) |
    sed -nE 's/^(PASSED|FAILED|SKIPPED|ERROR) external_test_onnx_backend.py::[A-Za-z]+::([A-Za-z0-9_]+).*/\1 \2/p' |
    sort -k2 >"$OUT/$name.txt"
  rm -rf "$work"
  echo "$name: $(grep -c '^PASSED' "$OUT/$name.txt") passed, $(grep -c '^FAILED' "$OUT/$name.txt") failed"
}
if [[ ${2:-} == --ref || ! -s $OUT/ref.txt ]]; then run_side ref "$REF"; fi
run_side ours "$ROOT/build/python"
lost=$(comm -23 <(awk '$1=="PASSED"{print $2}' "$OUT/ref.txt" | sort) <(awk '$1=="PASSED"{print $2}' "$OUT/ours.txt" | sort))
gained=$(comm -13 <(awk '$1=="PASSED"{print $2}' "$OUT/ref.txt" | sort) <(awk '$1=="PASSED"{print $2}' "$OUT/ours.txt" | sort))
echo "ours passes $(echo -n "$gained" | grep -c . || true) the reference fails"
if [[ -n $lost ]]; then
  echo "the reference passes $(echo "$lost" | wc -l) that ours does not:"
  echo "$lost" | sed 's/^/  /'
  exit 1
fi
echo "ours passes every test the reference passes"
