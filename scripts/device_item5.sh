#!/usr/bin/env bash
# Issue 45 item 5 on the GPU machine: a quick characterize (its tlb_conflict stage marks a level
# whose methods disagree), then tlb-conflict in 8 windows with the diagnoses: walks at 32 offsets
# inside the chunk (raw and against each page's own hit), group walks and the L3 onset rotations.
# Usage: OUT=/some/dir BUILD=build-carry TAG=r19 scripts/device_item5.sh
set -uo pipefail
export OUT BUILD TAG
RUNS=0 GTEST="${GTEST:-TlbProbeGpu.AliasPool*:*Conflict*}" \
  CONFLICT_ARGS="--repeat-walks 2 --home-offsets 32 --group-walks" \
  bash "$(dirname "${BASH_SOURCE[0]}")/device_entry.sh" >/dev/null 2>&1
D="$OUT/entry-$TAG"
echo "---- item 5 summary"
cat "$D/steps.txt"
grep -E '^  L[0-9] ' "$D/quick.txt" | cut -c1-220
grep -E '^  L[0-9] \(|a miss is past' "$D/conflict8.txt" | cut -c1-200
awk '/ offset /{n++; if ($0 ~ /missed [0-9]+ \/ [1-9]/) raw++; if ($0 ~ /the penalty: [0-9]+ and [0-9]+ pages [1-9]/) own++; if ($0 ~ /the penalty: [0-9]+ and [0-9]+ pages [0-9]+ \/ [1-9]/) plus++}
  END {printf "L1 offsets %d: walks of E missed (raw) at %d, at the calibrated threshold at %d; E+1 missed (calibrated) at %d\n", n, raw, own, plus}' "$D/conflict8.txt"
grep -E 'groups:|onset walk' "$D/conflict8.txt" | cut -c15-200
