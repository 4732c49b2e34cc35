#!/usr/bin/env bash
# Issue 33 on the GPU machine: this build's full and quick `gpuprobe run` with each stage's time,
# against a baseline build's full run on the same unit (BASE=<build folder of the version before
# issue 33>, optional), then the GPU tests of the changes (threaded VMM mapping, the sharing sample,
# packed loads, the run). The summary compares levels, ways, sets, penalties, sharing, decisions
# and verdicts of the runs. Usage:
#   OUT=/dir BUILD=build-carry TAG=h100 [BASE=build-base] [FULL=2] [QUICK=2] [GPU_TESTS=filter, "" for
#   none] scripts/device_issue33.sh
# (one call holds about 10 minutes: FULL=1 QUICK=1 with a BASE run fits an H100 in ~9.)
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
T="${GPU_TESTS-TlbSharingGpu.ASample*:AllocGpuLoad.*:Workloads.GroupingCheck*:Tuned.TuneThenValidateEndToEnd}"
[ -n "$T" ] && gpu_tests "$T"
pack
echo "---- summary"
cat "$D/steps.txt"
for f in "$D"/base.txt "$D"/full*.txt "$D"/quick*.txt; do
  [ -f "$f" ] || continue
  echo "== $(basename "$f" .txt)"
  grep -E "^\[run\] |^gpuprobe run:|^  L[0-9]|^  validate:|^  tuning:" "$f" | cut -c1-150
done
if command -v python3 >/dev/null; then
  python3 - "$D" <<'PY'
import json, sys, pathlib
d = pathlib.Path(sys.argv[1])
def facts(run):
    p = json.loads((run / "profile.json").read_text())
    levels = [(L.get("entries"), L.get("ways"), L.get("sets"), round(L.get("miss_penalty_cycles", 0), 1),
               L.get("sharing", {}).get("scope")) for L in p["tlb"]["levels"]]
    t = json.loads((run / "tuning.json").read_text()) if (run / "tuning.json").exists() else {}
    v = json.loads((run / "validation.json").read_text()) if (run / "validation.json").exists() else {}
    verdicts = {(w["workload"], w["pool"]): w["verdict"] for w in v.get("workloads", [])}
    return levels, t.get("allocator", {}), verdicts
runs = [r for r in sorted(d.iterdir()) if (r / "profile.json").exists()]
ref = next((r for r in runs if r.name == "base"), runs[0] if runs else None)
if ref:
    L0, A0, V0 = facts(ref)
    for r in runs:
        L, A, V = facts(r)
        diff = [k for k in V0 if k in V and V[k] != V0[k]]
        print(f"{r.name}: levels {L}; tuning {'same' if A == A0 else A}; verdicts differing from {ref.name}: {diff or 'none'}")
PY
fi
