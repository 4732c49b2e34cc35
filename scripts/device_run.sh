#!/usr/bin/env bash
# One command from a new GPU to its report (issue 16) and one more full characterize (issue 12's
# runs per GPU), on the GPU machine over a build folder made elsewhere: `characterize` (full),
# `gpuprobe run --quick` into a fresh folder, then the same again (a finished folder: no GPU work).
# Usage: OUT=/some/dir scripts/device_run.sh   (BUILD=build TAG=run1 FULL=1)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" run
[ "${FULL:-1}" = 1 ] && timed characterize_full 200 "$B/gpuprobe" characterize --out "$D/full"
timed run_quick 240 "$B/gpuprobe" run --quick --out "$D/runq" --device 0
timed run_again 90 "$B/gpuprobe" run --quick --out "$D/runq" --device 0
echo "---- summary"
cat "$D/steps.txt"
for f in "$D"/characterize_full.txt "$D"/run_quick.txt "$D"/run_again.txt; do
  [ -f "$f" ] || continue
  echo "== $(basename "$f")"
  grep -E '^  [LC][0-9] |^\[run\]|^gpuprobe (run|characterize):|^  (tuning|validate|report|TLB):|error' "$f" | cut -c1-200
done
