#!/usr/bin/env bash
# The closed loop on the GPU machine, over a build folder made elsewhere: the Tuned* GPU tests,
# then `characterize` (full), gpuprobe-bench's BM_getpage grid (for the TAS/WAS figures) ->
# `tune` -> `validate` into one results folder, and
# `characterize --quick` into another (for its wall time). Logs and results land in one archive;
# a short summary is printed last.
# Usage: OUT=/some/dir scripts/device_loop.sh
#   BUILD=build  TAG=run1  STEPS="tests characterize getpage quick tune validate"  GTEST_FILTER='Tuned*'
#   VALIDATE_FLAGS="--reps 15"  RESULTS=dir (an existing results folder to continue)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" loop
R="${RESULTS:-$D/results}"
STEPS="${STEPS:-tests characterize getpage quick tune validate}"
mkdir -p "$R"
has() { [[ " $STEPS " == *" $1 "* ]]; }
if has tests; then
  timed tuned_tests 300 "$B/tests/gpuprobe_gpu_tests" --gtest_filter="${GTEST_FILTER:-Tuned*}"
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|Expected|actual|Which is' "$D/tuned_tests.txt" | head -40
fi
has characterize && timed characterize 560 "$B/gpuprobe" characterize --out "$R"
# TAS/WAS measured vs theory for the report (RW paper Figs. 11-12): gpuprobe-bench's default grid.
has getpage && timed getpage 300 "$B/gpuprobe-bench" --benchmark_filter=BM_getpage --benchmark_out="$R/raw/bench_getpage.json" \
  --benchmark_out_format=json --benchmark_counters_tabular=true
has quick && timed characterize_quick 200 "$B/gpuprobe" characterize --quick --out "$D/quick"
has tune && timed tune 400 "$B/gpuprobe" tune --profile "$R/profile.json" --out "$R/tuning.json"
has validate && timed validate 560 "$B/gpuprobe" validate --tuning "$R/tuning.json" --out "$R/validation.json" ${VALIDATE_FLAGS:-}
echo "---- summary"
cat "$D/steps.txt"
for f in characterize characterize_quick tune; do [ -f "$D/$f.txt" ] && tail -n 4 "$D/$f.txt"; done
[ -f "$D/tune.txt" ] && grep -E '^\[(regions|scope|word|crw)\]' "$D/tune.txt" | cut -c1-220
[ -f "$D/validate.txt" ] && tail -n 24 "$D/validate.txt"
