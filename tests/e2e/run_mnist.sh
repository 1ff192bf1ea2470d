#!/usr/bin/env bash
# e2e: trains examples/beautiful_mnist on real MNIST digits and requires the stated test accuracy.
#   run_mnist.sh <beautiful_mnist executable> <source dir>
# The data comes from tools/fetch_mnist.py (data/mnist/, fetched once). E2E_STEPS, E2E_BS and E2E_TARGET override
# the defaults (30 steps of batch 128, at least 90% on the held-out digits; with FASHION=1, at least 70% on
# Fashion-MNIST's held-out clothes).
set -euo pipefail
exe=$1
src=$2
if [[ -n ${FASHION:-} ]]; then  # Fashion-MNIST: Debian's files (tools/setup.sh installs dataset-fashion-mnist)
  data=${MNIST_DIR:-/usr/share/datasets/fashion-mnist}
  target=${E2E_TARGET:-70}
else
  data=${MNIST_DIR:-$src/data/mnist}
  python3 "$src/tools/fetch_mnist.py" --dir "$data"
  target=${E2E_TARGET:-90}
fi
STEPS=${E2E_STEPS:-30} BS=${E2E_BS:-128} TARGET_EVAL_ACC_PCT=$target MNIST_DIR=$data "$exe"
