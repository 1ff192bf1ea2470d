#!/usr/bin/env bash
# Runs tinygrad's own test/test_ops.py, unchanged, against our Python package, each test in its own process, with
# Debian's PyTorch as the judge (tools/conformance.py does the work; its --help lists the options):
#   git clone <tinygrad> ref && git -C ref checkout 24e7aed74b    # the reference version, 0.10.3
#   bash tools/conformance.sh ref                                  # the whole table; exit 1 on a regression or crash
#   bash tools/conformance.sh ref -k test_cat -k test_pad          # some tests
# Installs python3-torch (the judge) when it is missing and builds the module into build/ first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if (($# < 1)); then
  echo "usage: bash tools/conformance.sh TINYGRAD_CHECKOUT [tools/conformance.py options]" >&2
  exit 2
fi
if ! /usr/bin/python3 -c "import torch, numpy" 2>/dev/null; then
  sudo=()
  if [[ $(id -u) != 0 ]]; then sudo=(sudo); fi
  echo "conformance: installing python3-torch and python3-numpy (the judge)"
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends python3-torch python3-numpy
fi
if [[ ! -f build/CMakeCache.txt ]]; then cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null; fi
ninja -C build -j2 tinygrad_python tinygrad_python_sources >/dev/null
exec /usr/bin/python3 tools/conformance.py "$@"
