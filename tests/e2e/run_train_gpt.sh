#!/usr/bin/env bash
# e2e: examples/train_gpt on Debian's fortunes, in a small configuration (2 layers, 64 wide, context 64, batch 16).
#   run_train_gpt.sh <train_gpt executable>
# 1. 300 steps bring the validation loss below 2.9 (from ln(113) = 4.7 at the start; ~2.75 when this was written).
# 2. The same 300 steps in two runs, the second resumed from the first's checkpoint at step 150, print the same
#    losses, digit for digit, as the run that never stopped (dropout on: the random numbers' counter is in the
#    checkpoint too).
# 3. Bad input: a corpus that doesn't exist, an empty one, a checkpoint of another model: a clear error, exit 2.
set -euo pipefail
exe=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export N_LAYER=2 N_EMBD=64 N_HEAD=4 CTX=64 BS=16 EVAL_EVERY=50 EVAL_BATCHES=4 WARMUP=20 LR=1e-2 STEPS=300 DROPOUT=0.1
export SEED=7

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
losses() { grep -E '^step' "$1" | awk '{print $1, $2, $3, $4}'; }

SAMPLE=200 TARGET_LOSS=2.9 CKPT=$tmp/whole.safetensors "$exe" >"$tmp/whole.log" 2>&1 ||
  { tail -5 "$tmp/whole.log"; fail "300 steps did not reach a validation loss of 2.9"; }
grep -E 'val loss|final' "$tmp/whole.log"
sed -n '/--- sample ---/,/--- end of sample ---/p' "$tmp/whole.log"
[[ -s $tmp/whole.safetensors ]] || fail "no checkpoint written"

SAMPLE=0 STOP_AFTER=150 CKPT=$tmp/half.safetensors "$exe" >"$tmp/part1.log" 2>&1 || { cat "$tmp/part1.log"; fail "part 1"; }
SAMPLE=0 RESUME=$tmp/half.safetensors "$exe" >"$tmp/part2.log" 2>&1 || { cat "$tmp/part2.log"; fail "part 2"; }
grep -q "resumed from $tmp/half.safetensors at step 150" "$tmp/part2.log" || fail "part 2 did not resume at step 150"
diff <(losses "$tmp/whole.log") <(cat <(losses "$tmp/part1.log") <(losses "$tmp/part2.log")) ||
  fail "the resumed run's losses differ from the run that never stopped"
echo "resumed at step 150: the same $(losses "$tmp/whole.log" | wc -l) loss lines"

expect_error() {  # expect_error <what the message must say> <env assignments...>
  local want=$1
  shift
  local rc=0
  env "$@" SAMPLE=0 STEPS=1 "$exe" >"$tmp/err.log" 2>&1 || rc=$?
  [[ $rc == 2 ]] || { cat "$tmp/err.log"; fail "$* exited $rc, want 2"; }
  grep -qF -- "$want" "$tmp/err.log" || { cat "$tmp/err.log"; fail "$*: no '$want' in the error"; }
  echo "error as expected: $(tail -1 "$tmp/err.log")"
}
expect_error "corpus $tmp/nope doesn't exist" CORPUS="$tmp/nope"
: >"$tmp/empty.txt"
expect_error "corpus $tmp/empty.txt is empty" CORPUS="$tmp/empty.txt"
printf 'caf\xe9\n' >"$tmp/latin1.txt"
expect_error "is not UTF-8 text: byte 3 (0xe9)" CORPUS="$tmp/latin1.txt"
expect_error "is of another model" RESUME="$tmp/half.safetensors" N_LAYER=3
echo "ok"
