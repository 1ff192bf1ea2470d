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
export STEPS=${E2E_STEPS:-30} BS=${E2E_BS:-128} TARGET_EVAL_ACC_PCT=$target MNIST_DIR=$data
if [[ -z ${MPI_RANKS:-} ]]; then exec "$exe"; fi
# MPI_RANKS=n: data parallel over n ranks (mpirun as root in CI, more ranks than cores on a small machine); each rank
# says which it is, rank 0 alone the accuracy
command -v mpirun >/dev/null || {
  echo "mpirun not found (apt-get install openmpi-bin): skipped"
  exit 77
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$MPI_RANKS" "$exe" 2>&1 | tee "$out" || rc=$?
grep -q "built without MPI" "$out" && exit 77
((rc == 0)) || exit "$rc"
for ((r = 0; r < MPI_RANKS; r++)); do
  grep -q "rank $r of $MPI_RANKS" "$out" || {
    echo "run_mnist.sh: rank $r of $MPI_RANKS did not say so"
    exit 1
  }
done
n=$(grep -c "test accuracy:" "$out")
((n == 1)) || {
  echo "run_mnist.sh: $n accuracy lines, not one (rank 0's)"
  exit 1
}
