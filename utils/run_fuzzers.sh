#!/usr/bin/env bash
# Runs GradScale's libFuzzer targets (test/Fuzz, built by `make fuzz-build`
# into BUILD_FUZZ) for SECONDS each on the seed corpus plus the regression
# inputs, then every regression input once. Prints, per target, the
# executions, executions per second and the corpus size; exits non-zero on
# a crash, a leak, a timeout or an out-of-memory (libFuzzer writes the input
# as crash-*, leak-*, timeout-* or oom-* into the artifact directory).
#
# Usage: utils/run_fuzzers.sh BUILD_FUZZ SECONDS [TARGET...]
# FUZZ_SEED=N fixes libFuzzer's random seed; FUZZ_RUNS=N stops each target
# after N executions (SECONDS still bounds it) and starts from the seeds
# alone, not the corpus earlier runs grew. make check sets both, so that
# its runs go as far on every machine: a crash they find is not found on
# the faster machines only.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
seconds=$2
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz-onnx fuzz-onnxtext fuzz-data fuzz-checkpoint fuzz-flags)
fi
work="$build/fuzz-work"
mkdir -p "$work"
failed=0
for target in "${targets[@]}"; do
  exe="$build/fuzz/$target"
  if [ ! -x "$exe" ]; then
    echo "run_fuzzers: $exe is missing (make fuzz-build)" >&2
    exit 1
  fi
  corpus="$work/$target-corpus"
  if [ -n "${FUZZ_RUNS:-}" ]; then
    corpus="$work/$target-corpus-runs"
    rm -rf "$corpus"
  fi
  artifacts="$work/$target-artifacts/"
  mkdir -p "$corpus" "$artifacts"
  seeds=(test/Fuzz/corpus/$target)
  regressions=test/Fuzz/regressions/$target
  [ -d "$regressions" ] && seeds+=("$regressions")
  log="$work/$target.log"
  # The regression inputs first, each once: every one must pass.
  if [ -d "$regressions" ] && ls "$regressions"/* >/dev/null 2>&1; then
    if ! "$exe" -runs=1 "$regressions"/* >"$log.regressions" 2>&1; then
      echo "$target: FAILED on a regression input (see $log.regressions)"
      tail -20 "$log.regressions"
      failed=1
      continue
    fi
  fi
  # Then the fuzzing run, merging into a corpus kept across runs.
  status=0
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts" \
    ${FUZZ_SEED:+-seed=$FUZZ_SEED} ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} \
    "$corpus" "${seeds[@]}" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  units=$(ls "$corpus" | wc -l)
  if [ "$status" -ne 0 ]; then
    echo "$target: FAILED after ${runs:-?} executions (see $log)"
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -5
    failed=1
  else
    echo "$target: ${runs:-?} executions (${speed:-?}/s), corpus $units inputs, 0 crashes"
  fi
done
exit $failed
