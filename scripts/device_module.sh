#!/usr/bin/env bash
# After the probe-module refactor (issue 17) and the first-user edges (issue 18), on the GPU
# machine over a build folder made elsewhere: every GPU test in its own process (as ctest -L gpu
# runs them), `characterize --quick` into a fresh folder, then `characterize` (full) into the
# same folder (the stages whose record differs must rerun and say why), a rerun of the finished
# folder (nothing may run), gpuprobe-bench on a few cases (the allocator type list) and `report`.
# Usage: OUT=/some/dir scripts/device_module.sh   (BUILD=build TAG=run1 STEPS="tests resume bench")
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" module
STEPS="${STEPS:-tests resume bench}"
has() { [[ " $STEPS " == *" $1 "* ]]; }
if has tests; then
  gpu_tests
fi
if has resume; then
  R="$D/results"
  timed characterize_quick 200 "$B/gpuprobe" characterize --quick --out "$R"
  timed characterize_full 400 "$B/gpuprobe" characterize --out "$R"
  timed characterize_again 100 "$B/gpuprobe" characterize --out "$R"
  timed report 200 "$B/gpuprobe" report --input "$R" --out "$D/report" --plot-script reports/plot.py
fi
if has bench; then
  timed bench 300 "$B/gpuprobe-bench" --benchmark_filter='BM_getpage/(rw|rw_bm32|corw64|crw|queue_warp|bump)/threads:65536/free_permille:500' \
    --benchmark_counters_tabular=true
fi
echo "---- summary"
cat "$D/steps.txt"
for f in characterize_quick characterize_full characterize_again; do
  [ -f "$D/$f.txt" ] && { echo "== $f"; grep -E '^\[|^gpuprobe characterize|note:' "$D/$f.txt" | cut -c1-200; }
done
[ -f "$D/report.txt" ] && tail -n 3 "$D/report.txt"
[ -f "$D/bench.txt" ] && grep -E '^BM_' "$D/bench.txt" | cut -c1-150
