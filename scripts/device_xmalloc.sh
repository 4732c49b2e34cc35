#!/usr/bin/env bash
# XMalloc's FIFO buffers with 4 KiB blocks (issue 15) on the GPU machine: the test 5 times with
# the build under test and (when present) tests/gpuprobe_gpu_tests_unfixed, then under
# compute-sanitizer memcheck. Usage: OUT=/some/dir scripts/device_xmalloc.sh (BUILD=build TAG=run1)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" xmalloc
F='MallocGpu.XmallocFourKiB*'
for bin in gpuprobe_gpu_tests_unfixed gpuprobe_gpu_tests; do
  [ -x "$B/tests/$bin" ] || continue
  for r in 1 2 3 4 5; do
    timed "$bin-$r" 60 "$B/tests/$bin" --gtest_filter="$F"
  done
done
timed others 120 "$B/tests/gpuprobe_gpu_tests" --gtest_filter='MallocGpu.*Xmalloc*:MallocSignature.Xmalloc*'
timed memcheck 240 compute-sanitizer --tool memcheck --print-limit 20 \
  "$B/tests/gpuprobe_gpu_tests" --gtest_filter="$F"
echo "---- summary"
cat "$D/steps.txt"
for f in "$D"/*.txt; do
  case "$f" in *steps.txt|*nvidia-smi*|*other-proc*) continue;; esac
  echo "== $(basename "$f")"
  grep -E 'OK \]|FAILED \]|launch failure|threads, |ERROR SUMMARY|Expected|Which is' "$f" | tail -4
done
