#!/usr/bin/env bash
# rw_malloc's exact out-of-memory under compute-sanitizer synccheck (issue 15): the small-pool
# tests RUNS times with the build under test and, when present, tests/gpuprobe_gpu_tests_unfixed;
# then the rw_malloc GPU tests and the soak plainly. Usage: OUT=/some/dir scripts/device_rw_oom.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" rw_oom
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
GPUPROBE_SOAK_OPS=1e9 timed plain 300 "$B/tests/gpuprobe_gpu_tests" \
  --gtest_filter='MallocGpu.*Rw*:MallocGpu.MallocSmall*:Soak.*:Tuned.RwMalloc*:MallocUtilization.*'
echo "---- summary"
cat "$D/steps.txt"
grep -hE 'Which is|Failure' "$D"/*-sync-*.txt | sort | uniq -c | head
grep -E 'OK \]|FAILED \]|soak:|fill:' "$D/plain.txt"
