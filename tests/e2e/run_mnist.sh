#!/usr/bin/env bash
# e2e: trains examples/beautiful_mnist on real MNIST digits and requires the stated test accuracy.
#   run_mnist.sh <beautiful_mnist executable> <source dir>
# The data comes from tools/fetch_mnist.py (data/mnist/, fetched once). E2E_STEPS, E2E_BS and E2E_TARGET override
# the defaults (30 steps of batch 128, at least 90% on the held-out digits).
set -euo pipefail
exe=$1
src=$2
data=${MNIST_DIR:-$src/data/mnist}
python3 "$src/tools/fetch_mnist.py" --dir "$data"
STEPS=${E2E_STEPS:-30} BS=${E2E_BS:-128} TARGET_EVAL_ACC_PCT=${E2E_TARGET:-90} MNIST_DIR=$data "$exe"
