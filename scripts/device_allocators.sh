#!/usr/bin/env bash
# Allocator round on the GPU machine, over a build folder made elsewhere: the allocator GPU
# tests (correctness, models, sanitizers), then gpuprobe-bench (a filter, or the whole grid).
# Usage: OUT=/some/dir scripts/device_allocators.sh
#   BUILD=build  TAG=run1  FILTER=regex (default: the 2^20-thread target cells)  SKIP_TESTS=1
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" alloc
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  s=$(date +%s)
  "$B/tests/gpuprobe_gpu_tests" --gtest_filter="${GTEST_FILTER:-Alloc*}" >"$D/alloc_tests.log" 2>&1
  echo "alloc tests exit $? in $(( $(date +%s) - s )) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$D/alloc_tests.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED|operations,|TAS|ratios|errors|ERRORS' "$D/alloc_tests.log" | sort | uniq -c | sort -rn | head -60
  pack
fi
F="${FILTER:-BM_getpage/(corw32|corw64|bump|rw_bm32|rw_bm64|rw|crw|queue|queue_warp)/threads:1048576/free_permille:(500|100|10)/}"
s=$(date +%s)
timeout "${BENCH_TIMEOUT:-480}" "$B/gpuprobe-bench" --benchmark_filter="$F" --benchmark_out="$D/bench.json" --benchmark_out_format=json \
  --benchmark_counters_tabular=true >"$D/bench.txt" 2>"$D/bench.log"
echo "bench exit $? in $(( $(date +%s) - s )) s"
pack
grep -E "BM_getpage|ERROR" "$D/bench.txt" | sed 's|/iterations:[0-9]*/manual_time||' | awk '{print $1, $2, $3}' | head -300
rm -rf "$D"
