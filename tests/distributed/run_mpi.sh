#!/usr/bin/env bash
# The distributed tests: tests/distributed/mpi_cases.cpp under mpirun (Open MPI, on this machine), each case's output
# checked here. Exit 77 (a skip) where mpirun is missing or the library was built without MPI.
#   run_mpi.sh <mpi_cases executable> allreduce|train|mismatch|hang|die
set -uo pipefail
exe=$1
case=$2
command -v mpirun >/dev/null || {
  echo "mpirun not found (apt-get install openmpi-bin): skipped"
  exit 77
}
# as root in CI; more ranks than cores on a small machine
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2)
out=$(mktemp)
trap 'rm -f "$out" "$out.1"' EXIT
run() { "$@" >"$out" 2>&1; }
fail() {
  echo "run_mpi.sh $case: FAILED: $*"
  echo "--- output:"
  cat "$out"
  exit 1
}
has() { grep -q -- "$1" "$out" || fail "no '$1' in the output"; }

if [[ $case != die ]] && ! "$exe" allreduce >/dev/null 2>&1; then fail "one process alone failed"; fi
case $case in
  allreduce)
    run "${MPIRUN[@]}" "$exe" allreduce || fail "exit status $?"
    grep -q "built without MPI" "$out" && exit 77
    has "rank 0 of 2"
    has "rank 1 of 2"
    has "allreduce cases: ok"
    ;;
  train)  # 2 ranks on halves of each global batch: the loss curve of 1 process on the whole batch
    "$exe" train >"$out.1" 2>&1 || {
      cat "$out.1"
      fail "one process: exit status $?"
    }
    run "${MPIRUN[@]}" "$exe" train || fail "exit status $?"
    has "rank 1 of 2"
    python3 - "$out.1" "$out" <<'EOF' || fail "the loss curves differ"
import re, sys
def losses(path): return [float(m.group(1)) for m in re.finditer(r"^step \d+ loss (\S+)$", open(path).read(), re.M)]
one, two = losses(sys.argv[1]), losses(sys.argv[2])
print("1 process:", one)
print("2 ranks:  ", two)
assert len(one) == 12 and len(two) == 12, "12 steps each"
assert sum(one[-3:]) < sum(one[:3]) - 0.3, "the loss falls"
for a, b in zip(one, two): assert abs(a - b) <= 1e-4 * max(1.0, abs(a)), (a, b)
EOF
    ;;
  mismatch)
    run "${MPIRUN[@]}" "$exe" mismatch && fail "a mismatch exited 0"
    has "rank 0 of 2: allreduce #0 mismatch: this rank has 4 float32, rank 1 has 5 float32"
    has "rank 1 of 2: allreduce #0 mismatch: this rank has 5 float32, rank 0 has 4 float32"
    ;;
  hang)
    start=$SECONDS
    MPI_TIMEOUT=3 run timeout 120 "${MPIRUN[@]}" -x MPI_TIMEOUT "$exe" hang && fail "a hung rank exited 0"
    has "rank 0 of 2: allreduce of 4 float32 (allreduce #1) waited 3 s (MPI_TIMEOUT): rank(s) 1 never arrived"
    ((SECONDS - start < 60)) || fail "took $((SECONDS - start)) s"
    ;;
  die)
    start=$SECONDS
    run timeout 120 "${MPIRUN[@]}" "$exe" die && fail "a dead rank exited 0"
    # mpirun's own report names the process that died
    grep -q -E "rank 1|\[\[[0-9]+,[0-9]+\],1\]|Process name: .*,1\]" "$out" || fail "the dead rank is not named"
    ((SECONDS - start < 60)) || fail "took $((SECONDS - start)) s"
    ;;
  *) fail "unknown case" ;;
esac
echo "run_mpi.sh $case: ok"
