#!/usr/bin/env bash
# Installs llama.cpp's prebuilt CPU build (npm's node-llama-cpp, pinned) into the git-ignored .deps/llama-cpp: the peer
# the GGUF tests cross-check against (its libggml's dequantize_row_*, quantizers and GGUF reader, tests/python/
# test_gguf.py) and the LLM benchmarks run. A test and bench dependency only: nothing builds against it.
#   bash tools/fetch_llama_cpp.sh        # idempotent; TG_LLAMA_CPP=<dir> installs (and the tests look) elsewhere
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=${TG_LLAMA_CPP:-.deps/llama-cpp}
lib=$dir/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so
if [[ -f $lib ]]; then
  echo "fetch_llama_cpp: present in $dir"
  exit 0
fi
command -v npm >/dev/null || { echo "fetch_llama_cpp: npm is missing (bash tools/setup.sh --deps-only)" >&2; exit 1; }
mkdir -p "$dir"
echo "fetch_llama_cpp: npm install node-llama-cpp@3.21.1 into $dir"
(cd "$dir" && npm init -y >/dev/null &&
  npm i -E node-llama-cpp@3.21.1 @node-llama-cpp/linux-x64@3.21.1 --omit=optional --no-audit --no-fund --loglevel=error)
[[ -f $lib ]] || { echo "fetch_llama_cpp: $lib is missing after the install" >&2; exit 1; }
