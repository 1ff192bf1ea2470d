#!/usr/bin/env bash
# Builds and runs every test; stops at the first failure with a non-zero exit.
#   bash tools/test.sh                # all steps, in this order: release asan format
#   bash tools/test.sh format asan    # some steps: format, release, asan
# Steps:
#   release  g++ Release build in build/, then ctest
#   asan     clang++ -O1 -g1 build in build-asan/ with AddressSanitizer + UndefinedBehaviorSanitizer, -Werror and
#            libstdc++'s assertions (Debug), and the libFuzzer targets (clang has libFuzzer), then ctest. One build
#            for the second compiler and the sanitizers: a g++ sanitizer build and a clang build of their own took
#            35 of CI's minutes between them
#   format   clang-format --dry-run -Werror on src/ tests/ bench/ examples/
#   tsan     g++ -O1 -g build with ThreadSanitizer in build-tsan/, then the tests labelled tsan (the thread pool,
#            parallel compilation, interning); not among the default steps (its build takes ~10 min): run by hand
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

JOBS=2
steps=("$@")
if ((${#steps[@]} == 0)); then steps=(release asan format); fi

t_start=$SECONDS
fail() {
  echo "test.sh: FAILED: $*" >&2
  exit 1
}
banner() { echo "=== test.sh: $* ($((SECONDS - t_start))s elapsed)"; }

# configure <dir> <compiler> <cmake args...>: a dir made by another generator or compiler is wiped first
configure() {
  local dir=$1 cxx=$2
  shift 2
  if [[ -f $dir/CMakeCache.txt ]]; then
    local was
    was=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt")
    if ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$dir/CMakeCache.txt" ||
      [[ $was != "$cxx" && $was != "$(command -v "$cxx")" ]]; then
      rm -rf "$dir"
    fi
  fi
  mkdir -p "$dir"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "$@" >"$dir/configure.log" 2>&1 || {
    cat "$dir/configure.log"
    fail "configure of $dir"
  }
}

build() { ninja -C "$1" -j"$JOBS" || fail "build in $1"; }

# run_ctest <dir> [ctest args]: the full log goes to <dir>/ctest.log; the summary (or the failures) is printed
# A test without a TIMEOUT of its own gets 900 s (ctest's --timeout), so a hang fails the step instead of eating CI's
# whole budget; every 10 minutes the tests still running after 5 are named, so a slow step shows where its time goes.
run_ctest() {
  local dir=$1 rc=0
  shift
  ctest --test-dir "$dir" --output-on-failure --timeout 900 -j"$JOBS" "$@" >"$dir/ctest.log" 2>&1 &
  local pid=$! waited=0
  while kill -0 "$pid" 2>/dev/null; do  # polled in the foreground: nothing is left running behind the step
    sleep 5
    waited=$((waited + 5))
    if ((waited % 600 == 0)); then
      echo "test.sh: ctest in $dir at $((SECONDS - t_start))s: $(grep -c -E ' Test +#' "$dir/ctest.log" || true) done; running 5+ min:"
      ps -o etimes=,args= --ppid "$pid" 2>/dev/null | awk '$1 >= 300 {print "  " substr($0, 1, 200)}' || true
    fi
  done
  wait "$pid" || rc=$?
  if ((rc != 0)); then
    grep -v -E '^ *(Start +[0-9]+:|[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed)' "$dir/ctest.log"
    fail "ctest in $dir (full log: $dir/ctest.log)"
  fi
  sed -n '/tests passed/,$p' "$dir/ctest.log"
}

step_format() {
  banner "format: clang-format --dry-run -Werror"
  local files
  mapfile -t files < <(find src tests bench examples -type f \( -name '*.cpp' -o -name '*.h' \) | sort)
  clang-format --dry-run -Werror "${files[@]}" || fail "clang-format: run clang-format -i on the files above"
  echo "${#files[@]} files formatted"
}

step_release() {
  banner "release: g++ Release in build/"
  configure build g++ -DCMAKE_BUILD_TYPE=Release
  build build
  # llama.cpp's libggml, the GGUF tests' second judge (tests/python/test_gguf.py skips those checks without it)
  bash tools/fetch_llama_cpp.sh || echo "test.sh: llama.cpp could not be installed: the libggml cross-checks skip"
  run_ctest build
}

step_asan() {
  banner "asan: clang++ -O1 -g1 -Werror, AddressSanitizer + UndefinedBehaviorSanitizer, libstdc++ assertions, in build-asan/"
  # -g1: line tables, all a sanitizer's stack trace needs, at a fraction of -g's compile time
  configure build-asan clang++ -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DTG_WERROR=ON \
    -DTG_SANITIZE=ON -DTG_BUILD_BENCH=OFF -DTG_BUILD_PYTHON=OFF  # python3 would need libasan preloaded
  build build-asan
  # What runs here is the suites once, natively: the sanitizers check our memory and arithmetic, and the release
  # step runs the rest. Not here: e2e (MNIST training: an hour under the sanitizers); the reruns on other devices
  # (PYTHON's interpreter, LLVM, GPU on PoCL, the CUDA cross-compile: their code of ours is reached natively too,
  # `Differential.RandomKernelsAgreeOnEveryDevice` runs every device, and their time is the drivers'); the OpenCL
  # runtime tests (PoCL leaks a few hundred bytes of its own now and then, and LeakSanitizer's exit check once
  # crashed on its threads); the browser tests of the VIZ explorer (their time is chromium's); the cross-checks
  # against llama.cpp (`*LlamaCpp`: its libggml's time; the same code of ours runs in the other Llama and tokenizer
  # tests). The randomized tests run fewer cases under ASan (tests/common/sanitized.h). PoCL's device here is its
  # `basic` one, which runs a kernel on the calling thread: its `pthread` device's workers live until the process
  # ends, and LeakSanitizer's exit check, which stops every thread, now and then crashed on them ("Tracer caught
  # signal 11") in a test that had listed the available devices; and what PoCL leaks of its own (16 bytes now and
  # then) is suppressed (tools/lsan.supp)
  POCL_DEVICES=${POCL_DEVICES:-basic} LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tools/lsan.supp} \
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} run_ctest build-asan -LE "e2e|device|cuda" \
    -E "^OpenCL\.|^viz_browser|LlamaCpp$"
}

step_tsan() {
  banner "tsan: g++ -O1 -g, ThreadSanitizer in build-tsan/"
  configure build-tsan g++ -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DTG_SANITIZE_THREAD=ON -DTG_BUILD_BENCH=OFF -DTG_BUILD_PYTHON=OFF -DTG_BUILD_EXAMPLES=OFF
  ninja -C build-tsan -j"$JOBS" test_runtime test_unit test_tensor || fail "build in build-tsan"
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} run_ctest build-tsan -L tsan
}

for s in "${steps[@]}"; do
  case $s in
    format | release | asan | tsan) "step_$s" ;;
    *) fail "unknown step '$s' (steps: format release asan tsan)" ;;
  esac
done
banner "all passed: ${steps[*]}"
