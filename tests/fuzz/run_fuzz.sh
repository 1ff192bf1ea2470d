#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time on its seed corpus (tests/fuzz/corpus/<format>, plus extra seed dirs),
# keeping what it learns in a scratch dir and any crashing input in the current dir (fuzz-<name>-crash-*):
#   tests/fuzz/run_fuzz.sh FUZZER SECONDS SEED_DIR...
set -euo pipefail
fuzzer=$1 seconds=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
name=$(basename "$fuzzer")
# FUZZ_SEED=n: the same mutations each run (the suite's, so CI is repeatable); unset, libFuzzer picks a new seed
seed=()
if [[ -n ${FUZZ_SEED:-} ]]; then seed=(-seed="$FUZZ_SEED"); fi
exec "$fuzzer" "$work" "$@" "${seed[@]}" -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=10 -max_len=65536 \
  -artifact_prefix="$PWD/$name-" -print_final_stats=1
