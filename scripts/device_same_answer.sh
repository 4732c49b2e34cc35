#!/usr/bin/env bash
# Issue 37 on the GPU machine: the same hierarchy on every run, in every mode, on a busy GPU too.
# Usage: OUT=/dir BUILD=build-carry TAG=h100 ROUND=quick|full scripts/device_same_answer.sh
#   quick: three `gpuprobe run --quick`, then `characterize --quick` beside a loop of
#          `gpuprobe atomics`, once by default (it waits, then refuses) and once --allow-busy
#   full:  one full `gpuprobe run` and one full `characterize`
# Prints each run's levels (entries, ways, sets, penalty), its stage times and the busy outcomes.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" same-${ROUND:-quick}
runs=()
busy_loop() { while :; do "$B/gpuprobe" atomics --samples 256 --out /tmp/busy.json >/dev/null 2>&1; done; }
if [ "${ROUND:-quick}" = quick ]; then
  for i in 1 2 3; do timed "run_quick$i" 240 "$B/gpuprobe" run --quick --out "$D/q$i" --device 0; runs+=(q$i); done
  busy_loop & busy=$!
  sleep 3
  timed busy_default 60 "$B/gpuprobe" characterize --quick --busy-wait 5 --out "$D/busy_default" --device 0
  timed busy_allowed 200 "$B/gpuprobe" characterize --quick --allow-busy --out "$D/busy_allowed" --device 0
  kill "$busy" 2>/dev/null; pkill -f 'gpuprobe atomics' 2>/dev/null; wait "$busy" 2>/dev/null
  runs+=(busy_allowed)
else
  timed run_full 420 "$B/gpuprobe" run --out "$D/f1" --device 0; runs+=(f1)
  timed characterize_full 200 "$B/gpuprobe" characterize --out "$D/f2" --device 0; runs+=(f2)
fi
pack
echo "---- summary"
cat "$D/steps.txt"
for r in "${runs[@]}"; do
  python3 - "$D/$r/profile.json" "$r" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
t = p["tlb"]
rows = []
for kind in ("levels", "candidates"):
    for L in t.get(kind, []):
        rows.append("%s%s %g=%sx%s +%.1f%s" % ("L" if kind == "levels" else "C", "", L.get("entries", 0),
                    L.get("ways"), L.get("sets"), L.get("miss_penalty_cycles", 0), " DISTURBED" if "disturbed" in L else ""))
st = ", ".join("%s %.0f" % (s["name"], s.get("seconds", 0)) for s in p.get("stages", []) if s.get("seconds"))
print("%-12s %s | %s" % (sys.argv[2], "; ".join(rows), st))
PY
done
grep -h "^gpuprobe run:" "$D"/run_*.txt
grep -h "error\|disturbed:" "$D"/busy_*.txt 2>/dev/null | cut -c1-300
