#!/usr/bin/env bash
# Issue 45 items 3-5 on the GPU machine: what one entry of each level covers (tlb-coverage, twice),
# the conflict sets in 8 windows with the pinned set index checked by prediction, and the
# coverage GPU tests, over a quick characterize's TLB profile of this unit.
# Usage: OUT=/some/dir BUILD=build-carry TAG=h100a scripts/device_entry.sh  (RUNS=2: coverage runs; CONFLICT_ARGS: more tlb-conflict flags, e.g. --repeat-walks 6;
# FULL=1: a full characterize, with its tlb_coverage stage, and its report in place of the quick one)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" entry
gpu_tests "${GTEST:-TlbCoverageGpu.*:TlbProbeGpu.Alias*}"
if [ "${FULL:-0}" = 1 ]; then # a full characterize (its tlb_coverage stage) and its report
  timed full 300 "$B/gpuprobe" characterize --out "$D/full" --device 0
  timed report 120 "$B/gpuprobe" report --input "$D/full" --out "$D/full/report" --format md
  P="$D/full/raw/tlb_profile.json"
else
  timed quick 240 "$B/gpuprobe" characterize --quick --out "$D/quick" --device 0
  P="$D/quick/raw/tlb_profile.json"
fi
for i in $(seq 1 "${RUNS:-2}"); do
  timed "coverage$i" 300 "$B/gpuprobe" tlb-coverage --profile "$P" --out "$D/coverage$i.json"
done
timed conflict8 400 "$B/gpuprobe" tlb-conflict --profile "$P" --windows 8 ${CONFLICT_ARGS:-} --out "$D/conflict8.json"
grep -h uuid -A1 "$D/nvidia-smi.csv" | tail -1 | cut -d, -f1,2 | tee -a "$D/steps.txt"
echo "---- summary"
cat "$D/steps.txt"
grep -hE '^  [LC][0-9]|^        entry:' "$D/quick.txt" "$D/full.txt" 2>/dev/null | cut -c1-250
grep -hE '^\| L[0-9] ' "$D/full/report/index.md" 2>/dev/null | cut -c1-300
for i in $(seq 1 "${RUNS:-2}"); do
  echo "== coverage$i"; grep -E '^  L[0-9]|mapped' "$D/coverage$i.txt" | cut -c1-600
  python3 - "$D/coverage$i.json" <<'PY' 2>/dev/null
import json, sys
for L in json.load(open(sys.argv[1]))["tlb_coverage"]["levels"]:
    if "skipped" in L: continue
    on = " ".join(f'{o["pattern"]}/{o["layout"][:12]}={o.get("onset_windows","-")}' for o in L["onsets"])
    f = L["fill"]
    print(L["level"], "thr", round(L["threshold_cycles"]), "onsets:", on)
    print("   fill: hit %.0f first %.0f second %.0f share %.2f" % (f["hit_cycles"], f["first_cycles"], f["second_cycles"], f["first_miss_share"]))
    for r in L["repeats"]: print("   ", r["how"], "range %.0f GiB" % (r["range_bytes"] / 2**30), "from", r["start_window"], r["windows"], r["misses_per_lap"])
PY
done
echo "== conflict8"; grep -E "^  L[0-9]|predicted|the search|offset|groups:" "$D/conflict8.txt" | cut -c1-300
