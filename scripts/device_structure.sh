#!/usr/bin/env bash
# Issue 25 on the GPU machine: a full characterize (the aliased sweep with both ends of every
# ramp refined, the conflict sets, sharing, atomics), then each level's structure as the profile
# states it. Usage: OUT=/some/dir BUILD=build TAG=h100a scripts/device_structure.sh [quick]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" structure
mode=full; extra=()
if [ "${1:-}" = quick ]; then mode=quick; extra=(--quick); fi
timed "characterize_$mode" 560 "$B/gpuprobe" characterize "${extra[@]}" --out "$D/$mode" --device 0
echo "---- summary"
cat "$D/steps.txt"
grep -E '^\[[0-9]+/|^gpuprobe characterize|^  [LC][0-9]' "$D/characterize_$mode.txt" | cut -c1-160
python3 - "$D/$mode/profile.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(d['device']['name'], d['device']['uuid'])
for k, L in enumerate(d['tlb']['levels']):
    st = L.get('structure', {})
    c = st.get('conflict', {})
    print(f"L{k+1} {L['entries']:.0f} x {L['page_bytes']/2**20:.0f} MiB sets {L.get('sets')} ways {L.get('ways')} "
          f"full {L.get('full_miss_bytes',0)/2**30:.2f} GiB +{L['miss_penalty_cycles']:.1f} shape {st.get('shape')} "
          f"resid {st.get('residual_cycles')} ramp_pts {st.get('ramp_points')} mid {st.get('midpoint_entries')} "
          f"why {st.get('why','')}")
    print(f"   conflict: sizes {c.get('set_sizes')} onset {c.get('misses_begin_at_pages')} missing {c.get('pages_missing_there')} "
          f"ways {c.get('ways')} agrees {c.get('agrees')} why {c.get('why','')}")
    print(f"   bits: {c.get('set_index',{}).get('finding')} masks {c.get('set_index',{}).get('va_masks')}")
PY
