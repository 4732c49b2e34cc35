#!/usr/bin/env bash
# Issue 34 on the GPU machine: the probe folders change no answer. A baseline build's full
# `gpuprobe run` (BASE=<build folder of the version before issue 34>) and this build's, on one
# unit, compared by scripts/compare_runs.py (levels, ways, sets, penalties, sharing, decisions,
# verdicts); then the new clock probe into this run's raw/ and the report redrawn (its part drawn
# from the catalog), then the GPU tests of the code that moved. Usage:
#   OUT=/dir BUILD=build-carry TAG=h100 [BASE=build-base34 BASE_SRC=/work/base-e544]
#   [GPU_TESTS=filter, "" for none] scripts/device_issue34.sh
# The baseline here: git worktree add /work/base-e544 e544115; build its gpuprobe there; strip it
# into build-base34/ with build-dev/lib's libbenchmark; carry build-base34 too (BASE_SRC: the
# source tree it was built in, whose reports/plot.py its report stage runs). On an H100 the
# baseline's run took 102 s and this build's 114 s (stop 41).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" i34
G="$B/gpuprobe"
if [ -n "${BASE:-}" ]; then
  # The baseline draws its report with the plot script of the source tree it was built in
  # (BASE_SRC): this tree's reports/ stands in for it.
  S="${BASE_SRC:-/work/base-e544}"
  [ -e "$S/reports" ] || { mkdir -p "$S" && ln -s "$PWD/reports" "$S/reports"; }
  LD_LIBRARY_PATH="$BASE/lib:$LD_LIBRARY_PATH" timed base_full 560 "$BASE/gpuprobe" run --out "$D/base"
fi
timed full1 560 "$G" run --out "$D/full1"
timed clock 60 "$G" clock --seconds 5 --samples 101 --out "$D/full1/raw/clock.json"
timed report 120 "$G" report --input "$D/full1" --out "$D/full1/report"
T="${GPU_TESTS-TlbProbeGpu.*:TlbSharingGpu.*:AtomicsGpu.*:ClockGpu.*:Tuned.*:Workloads.*}"
[ -n "$T" ] && gpu_tests "$T"
pack
echo "---- summary"
cat "$D/steps.txt"
for f in "$D"/base.txt "$D"/full1.txt "$D"/clock.txt; do
  [ -f "$f" ] || continue
  echo "== $(basename "$f" .txt)"
  grep -E "^\[run\] |^gpuprobe run:|^  L[0-9]|^  validate:|^  tuning:|^gpuprobe clock|^  steady|^  throttled" "$f" | cut -c1-150
done
grep -c "SM clock under load" "$D/full1/report/index.html" 2>/dev/null | sed 's/^/report: clock table drawn /'
[ -f "$D/base/profile.json" ] && [ -f "$D/full1/profile.json" ] &&
  python3 "$(dirname "${BASH_SOURCE[0]}")/compare_runs.py" "$D/base" "$D/full1"
true
