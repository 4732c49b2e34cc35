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
# Do the conflict sets agree with the ramp? The quick profile's levels (2 windows each), and the
# 8 windows of tlb-conflict against the profile's ways (group-tested and onset-union sets).
python3 - "$D/quick/profile.json" "$D/conflict8.json" <<'PY'
import json, sys
levels = json.load(open(sys.argv[1]))["tlb"]["levels"]
ways = {}
for i, L in enumerate(levels):
    st = L.get("structure", {})
    ways["L%d" % (i + 1)] = st.get("ways")
    print("profile L%d: ramp %s ways, conflict agrees %s%s, confidence %s" % (i + 1, st.get("ways"),
          st.get("conflict", {}).get("agrees"), "; " + L["methods_disagree"] if "methods_disagree" in L else "",
          L.get("confidence")))
for L in json.load(open(sys.argv[2]))["tlb_conflict"]["levels"]:
    sizes = [s["size"] for s in L["sets"] if "failed" not in s]
    w = ways.get(L["level"])
    thr = L.get("miss_threshold", {}).get("fraction_of_penalty")
    print("conflict8 %s: sets %s (%d of 8 found), ramp W + 1 = %s: %s%s" % (L["level"], sizes, len(sizes),
          None if w is None else int(w) + 1, "AGREE" if w is not None and sizes and all(x == int(w) + 1 for x in sizes) else "DIFFER",
          "" if thr is None else ", threshold %.2f x the penalty" % thr))
PY
