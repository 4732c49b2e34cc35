#!/usr/bin/env bash
# Malloc-allocator and workload round on the GPU machine, over a build folder made elsewhere:
# the Malloc* GPU tests (correctness, signatures, utilization, sanitizers), a TLB tail sweep ->
# profile (the TLB scope of the scoped workloads), then gpuprobe-bench's BM_malloc,
# BM_utilization and BM_workload cases, each filter in its own process (the device malloc heap is
# fixed per process). Everything lands in one archive; a short table is printed last.
# Usage: OUT=/some/dir scripts/device_malloc.sh
#   BUILD=build  TAG=run1  SKIP_TESTS=1  GTEST_FILTER='Malloc*'  PROFILE=path (skip the sweep)
#   FILTERS="regex;regex" (default: one process per allocator family and workload group, so a
#   crash or the device heap of one cannot spoil the others)  BENCH_FLAGS="--gpuprobe_full"
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" malloc
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  s=$(date +%s)
  timeout "${TEST_TIMEOUT:-400}" "$B/tests/gpuprobe_gpu_tests" --gtest_filter="${GTEST_FILTER:-Malloc*}" >"$D/malloc_tests.log" 2>&1
  echo "malloc tests exit $? in $(( $(date +%s) - s )) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$D/malloc_tests.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED|^\[       OK|allocations,|threads x|active lanes|requested bytes|errors|ERRORS|Failure|Expected|actual' "$D/malloc_tests.log" | head -60
  pack
fi
P="${PROFILE:-}"
if [ -z "$P" ] && [[ "${FILTERS:-BM_workload}" == *workload* ]]; then
  "$B/gpuprobe" tlb --strides 2M 4M 8M 16M 32M 64M 128M --min-bytes 40G --max-bytes 72G --points-per-octave 64 --samples 8192 --no-control \
    --out "$D/tlb_tail.json" >"$D/tlb_tail.txt" 2>&1
  "$B/gpuprobe" analyze tlb --input "$D/tlb_tail.json" --out "$D/profile.json" >"$D/profile.txt" 2>&1
  P="$D/profile.json"
  cat "$D/profile.txt" | head -8
fi
IFS=";" read -ra FS <<<"${FILTERS:-BM_malloc/rw_malloc;BM_malloc/ouroboros;BM_malloc/xmalloc;BM_malloc/cuda_malloc;BM_utilization;BM_workload/tlb_scoped;BM_workload/(hash_join|growable)}"
for f in "${FS[@]}"; do
  name=$(echo "$f" | tr -c 'A-Za-z0-9_\n' '_' | cut -c1-40)
  s=$(date +%s)
  timeout "${BENCH_TIMEOUT:-500}" "$B/gpuprobe-bench" --benchmark_filter="$f" ${P:+--gpuprobe_profile=$P} ${BENCH_FLAGS:-} \
    --benchmark_out="$D/$name.json" --benchmark_out_format=json --benchmark_counters_tabular=true >"$D/$name.txt" 2>"$D/$name.log"
  echo "bench $f: exit $? in $(( $(date +%s) - s )) s"
  pack
done
for t in "$D"/BM_*.txt; do
  [ -f "$t" ] && grep -E "^BM_|ERROR" "$t" | sed 's|/iterations:[0-9]*/manual_time||' | awk '{printf "%-80s %10s %s", $1, $2, $3; for (i = 7; i <= NF; ++i) printf " %s", $i; print ""}'
done | head -250
