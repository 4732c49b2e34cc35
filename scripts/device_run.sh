#!/usr/bin/env bash
# One command from a new GPU to its report (issue 16), on the GPU machine over a build folder made
# elsewhere: `gpuprobe run` (full: its characterize is one more of issue 12's runs per GPU) into a
# fresh folder and again (a finished folder: no GPU work), then the same with --quick; then the
# GPU tests. Usage: OUT=/some/dir scripts/device_run.sh   (BUILD=build TAG=run1 FULL=1 QUICK=1
# TESTS=0 GTEST='*')
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" run
if [ "${FULL:-1}" = 1 ]; then
  timed run_full 480 "$B/gpuprobe" run --out "$D/runf" --device 0
  timed run_full_again 60 "$B/gpuprobe" run --out "$D/runf" --device 0
fi
if [ "${QUICK:-1}" = 1 ]; then
  timed run_quick 240 "$B/gpuprobe" run --quick --out "$D/runq" --device 0
  timed run_quick_again 60 "$B/gpuprobe" run --quick --out "$D/runq" --device 0
fi
[ "${TESTS:-0}" = 1 ] && gpu_tests "${GTEST:-*}"
echo "---- summary"
cat "$D/steps.txt"
for f in "$D"/run_*.txt; do
  echo "== $(basename "$f")"
  grep -E '^  [LC][0-9] |^\[run\]|^gpuprobe (run|characterize|tune|validate|report):|^  (tuning|validate|report|TLB):|error' "$f" | cut -c1-200 | tail -25
done
