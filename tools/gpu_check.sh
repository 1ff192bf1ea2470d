#!/usr/bin/env bash
# On a machine with an NVIDIA GPU (driver + the CUDA toolkit's NVRTC): builds the project and checks the CUDA device
# for real, in under 8 minutes on a 16-core machine. Prints a summary at the end; exits non-zero on the first failure.
#   bash tools/gpu_check.sh             # build in build-gpu/, then every step
#   TINYGRAD_PATH=/path/to/tinygrad     # also tinygrad's test_ops with CUDA=1 (tools/conformance.py; needs torch)
# Steps: the op suite with DEV=CUDA; the tensor, gradient, nn and jit suites with DEV=CUDA; MNIST training with
# DEV=CUDA to the e2e target (data/mnist must be there: python3 tools/fetch_mnist.py on a machine with a network);
# matmul 4096^2 in float32, float16 and bfloat16 against the GPU's peak and cuBLAS (bench_gpu_matmul); the MNIST
# train step (bench_mnist_step, batch 512).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
t0=$SECONDS
JOBS=${JOBS:-$(nproc)}
summary=()
step() { echo "=== gpu_check: $* ($((SECONDS - t0))s)"; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)

step "build (Release, build-gpu/)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTG_BUILD_PYTHON=OFF >build-gpu.log 2>&1 ||
  { cat build-gpu.log; exit 1; }
ninja -C build-gpu -j"$JOBS" test_ops test_tensor test_gradient test_nn test_jit beautiful_mnist bench_gpu_matmul \
  bench_mnist_step >>build-gpu.log 2>&1 || { tail -50 build-gpu.log; exit 1; }
step "open the CUDA device (a 64x64 matmul)"
probe=$(./build-gpu/bench/bench_gpu_matmul --device CUDA --n 64 --iters 1)
echo "$probe"
grep -q '^float ' <<<"$probe" || { echo "gpu_check: the CUDA device does not open here"; exit 1; }

for suite in ops tensor gradient nn jit; do
  step "test_$suite with DEV=CUDA"
  st=$SECONDS
  rc=0
  DEV=CUDA ./build-gpu/tests/test_$suite --gtest_brief=1 2>&1 | tail -25 || rc=$?
  summary+=("test_$suite on CUDA: $([[ $rc == 0 ]] && echo passed || echo FAILED) in $((SECONDS - st)) s")
  [[ $rc == 0 ]] || { printf '%s\n' "${summary[@]}"; exit 1; }
done

if [[ -n "${TINYGRAD_PATH:-}" ]] && python3 -c "import torch" 2>/dev/null; then
  step "tinygrad's test_ops with CUDA=1 (tools/conformance.py)"
  cmake -S . -B build-gpu -DTG_BUILD_PYTHON=ON >>build-gpu.log 2>&1 && ninja -C build-gpu -j"$JOBS" >>build-gpu.log 2>&1
  python3 tools/conformance.py "$TINYGRAD_PATH" --ours build-gpu/python --device CUDA -j "$JOBS" | tail -5
fi

step "MNIST training with DEV=CUDA"
st=$SECONDS
DEV=CUDA STEPS=${E2E_STEPS:-70} BS=${E2E_BS:-128} TARGET_EVAL_ACC_PCT=${E2E_TARGET:-95} MNIST_DIR=data/mnist \
  ./build-gpu/examples/beautiful_mnist | tail -3
summary+=("MNIST on CUDA: trained to the target in $((SECONDS - st)) s")

step "matmul 4096x4096"
DEV=CUDA ./build-gpu/bench/bench_gpu_matmul --n 4096 --iters 20 --gpu "$gpu" | tee build-gpu/matmul.txt
step "MNIST train step, batch 512"
DEV=CUDA ./build-gpu/bench/bench_mnist_step --bs 512 --steps 20 | tail -2

echo "=== gpu_check: done in $((SECONDS - t0)) s on ${gpu:-an unknown GPU}"
printf '%s\n' "${summary[@]}"
