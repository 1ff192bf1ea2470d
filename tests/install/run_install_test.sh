#!/usr/bin/env bash
# Installs a built tree into a temporary prefix, then builds tests/install/consumer against it twice: with CMake's
# find_package (CMAKE_PREFIX_PATH) and with pkg-config (PKG_CONFIG_PATH), runs both and checks what they print.
#   run_install_test.sh <build dir> <c++ compiler> [extra compile/link flags, e.g. for a sanitizer build]
set -euo pipefail
build=$(cd "$1" && pwd)
cxx=$2
flags=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
expected='UOp(Ops.CONST, dtypes.int, arg=4, src=())'

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tg-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

check() {  # check <what> <output>
  if [[ "$2" != "$expected" ]]; then
    echo "FAIL ($1): got '$2', expected '$expected'" >&2
    exit 1
  fi
  echo "ok ($1): $2"
}

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }

# *** find_package ***
cmake -S "$here/consumer" -B "$tmp/consumer-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/consumer-build" >"$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
check find_package "$("$tmp/consumer-build/consumer")"

# *** pkg-config ***
pcdir=$(dirname "$(find "$tmp/prefix" -name tinygrad.pc -print -quit)")
# shellcheck disable=SC2046,SC2086  # pkg-config's output is a list of words
"$cxx" $flags "$here/consumer/main.cpp" -o "$tmp/consumer-pc" $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs tinygrad)
check pkg-config "$("$tmp/consumer-pc")"
