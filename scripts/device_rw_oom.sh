#!/usr/bin/env bash
# rw_malloc's exact out-of-memory on the GPU (issues 15, 49): the in-flight race test (with the
# in-hand count, and its control without, which prints its refusals), the same under
# compute-sanitizer memcheck (1 trial each way), the small-pool tests under synccheck RUNS times (with
# tests/gpuprobe_gpu_tests_unfixed too when present), then the rw_malloc GPU tests and the 10^9-op
# soak plainly; with $B/gpuprobe-bench-before present, BM_peers/rw_malloc before and after, twice
# each, alternating, on the same unit.
# Usage: OUT=/some/dir BUILD=build-carry [RUNS=12] scripts/device_rw_oom.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" rw_oom
race='MallocGpu.RwMallocExactOutOfMemoryWhileStashRunsAreInFlight'
timed race 300 "$B/tests/gpuprobe_gpu_tests" --gtest_filter="$race"
GPUPROBE_RACE_TRIALS=1 timed race_memcheck 300 compute-sanitizer --tool memcheck \
  --error-exitcode 9 "$B/tests/gpuprobe_gpu_tests" --gtest_filter="$race"
for bin in gpuprobe_gpu_tests_unfixed gpuprobe_gpu_tests; do
  [ -x "$B/tests/$bin" ] || continue
  fails=0
  for r in $(seq 1 "${RUNS:-12}"); do
    compute-sanitizer --tool synccheck "$B/tests/$bin" --gtest_filter='*MallocSmall*' \
      >"$D/$bin-sync-$r.txt" 2>&1 || fails=$((fails + 1))
  done
  echo "$bin: synccheck failures $fails of ${RUNS:-12}" | tee -a "$D/steps.txt"
  pack
done
GPUPROBE_SOAK_OPS=1e9 timed plain 400 "$B/tests/gpuprobe_gpu_tests" \
  --gtest_filter="MallocGpu.*Rw*:MallocGpu.MallocSmall*:Soak.*:Tuned.RwMalloc*:MallocUtilization.*:-$race"
if [ -x "$B/gpuprobe-bench-before" ]; then
  for k in 1 2; do
    for which in before after; do
      bin="$B/gpuprobe-bench"
      [ "$which" = before ] && bin="$B/gpuprobe-bench-before"
      timed "peers_${which}_$k" 200 "$bin" --benchmark_filter='BM_peers/rw_malloc/' \
        --benchmark_out="$D/peers-$which-$k.json" --benchmark_out_format=json
    done
  done
fi
echo "---- summary"
cat "$D/steps.txt"
grep -h "in-hand count" "$D/race.txt"
grep -hE 'ERROR SUMMARY' "$D/race_memcheck.txt"
grep -hE 'Which is|Failure' "$D"/*-sync-*.txt | sort | uniq -c | head
grep -E 'OK \]|FAILED \]|soak:|fill:' "$D/plain.txt" | tail -30
