#!/usr/bin/env bash
# Issue 33 on the GPU machine: this build's full and quick `gpuprobe run` with each stage's time,
# against a baseline build's full run on the same unit (BASE=<build folder of the version before
# issue 33>, optional), then the GPU tests of the changes (the sharing sample, the grouping check,
# packed loads, the run). The summary compares levels, ways, sets, penalties, sharing, decisions
# and verdicts of the runs. Usage:
#   OUT=/dir BUILD=build-carry TAG=h100 [BASE=build-base] [FULL=2] [QUICK=2] [GPU_TESTS=filter, "" for
#   none] scripts/device_issue33.sh
# One call holds 10 minutes: on an H100 (GPU-c7c2dadc, 0d8d91f) the baseline's full run took 312 s,
# this build's 127 s, a quick one 55 s, the GPU tests 55 s. Issue 33's acceptance per GPU, two calls
# on one held machine (its unit stays): BASE=build-base FULL=1 QUICK=1 GPU_TESTS="" (~500 s), then
# FULL=1 QUICK=1 TAG=<gpu>b (~240 s, the GPU tests included); then, here, scripts/compare_runs.py
# BASE_FOLDER RUN... over both calls' folders. The baseline build, here: git worktree add
# /work/base-src a992f70; cmake -S /work/base-src -B /work/base-src/build -DCMAKE_BUILD_TYPE=RelWithDebInfo
# -DCMAKE_CUDA_ARCHITECTURES=90; cmake --build /work/base-src/build --target gpuprobe; mkdir -p
# build-base; strip -o build-base/gpuprobe /work/base-src/build/gpuprobe; carry build-base too.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" i33
G="$B/gpuprobe"
FULL="${FULL:-1}" QUICK="${QUICK:-1}"
if [ -n "${BASE:-}" ]; then
  # The baseline draws its report with the plot script of the source tree it was built in
  # (/work/base-src here): this tree's reports/ stands in for it.
  [ -e /work/base-src/reports ] || { mkdir -p /work/base-src && ln -s "$PWD/reports" /work/base-src/reports; }
  LD_LIBRARY_PATH="$BASE/lib:$LD_LIBRARY_PATH" timed base_full 560 "$BASE/gpuprobe" run --out "$D/base"
fi
for i in $(seq 1 "$FULL"); do timed "full$i" 560 "$G" run --out "$D/full$i"; done
for i in $(seq 1 "$QUICK"); do timed "quick$i" 200 "$G" run --quick --out "$D/quick$i"; done
T="${GPU_TESTS-TlbSharingGpu.ASample*:TlbProbeGpu.AliasRange*:AllocGpuLoad.*:Workloads.GroupingCheck*:Tuned.TuneThenValidateEndToEnd}"
[ -n "$T" ] && gpu_tests "$T"
pack
echo "---- summary"
cat "$D/steps.txt"
for f in "$D"/base.txt "$D"/full*.txt "$D"/quick*.txt; do
  [ -f "$f" ] || continue
  echo "== $(basename "$f" .txt)"
  grep -E "^\[run\] |^gpuprobe run:|^  L[0-9]|^  validate:|^  tuning:" "$f" | cut -c1-150
done
# Every run against the baseline (else the first full run) of this call: scripts/compare_runs.py.
ref="$D/base"; [ -f "$ref/profile.json" ] || ref="$D/full1"
runs=$(for r in "$D"/full* "$D"/quick*; do [ -f "$r/profile.json" ] && [ "$r" != "$ref" ] && echo "$r"; done)
[ -f "$ref/profile.json" ] && [ -n "$runs" ] && python3 "$(dirname "${BASH_SOURCE[0]}")/compare_runs.py" "$ref" $runs
true
