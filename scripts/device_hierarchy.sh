#!/usr/bin/env bash
# The translation hierarchy on the GPU machine: `characterize` (the aliased sweep, the
# real-memory cross-check, sharing per level, atomics) RUNS times into separate folders, and once
# with --quick; each run's hierarchy lines and wall time are printed last (the same levels on every
# run is the acceptance of issue 12). Usage: OUT=/some/dir scripts/device_hierarchy.sh
#   BUILD=build TAG=run1 RUNS=3 QUICK=1 LIMIT=190 GTEST='TlbSharing*' (GPU tests first)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" hierarchy
RUNS="${RUNS:-3}"
[ -n "${GTEST:-}" ] && gpu_tests "$GTEST"
for r in $(seq 1 "$RUNS"); do
  s=$(date +%s)
  timeout "${LIMIT:-190}" "$B/gpuprobe" characterize --out "$D/run$r" >"$D/run$r.txt" 2>&1
  echo "run$r: exit $? in $(( $(date +%s) - s )) s" | tee -a "$D/steps.txt"
  pack
done
if [ "${QUICK:-1}" = 1 ]; then
  s=$(date +%s)
  timeout 120 "$B/gpuprobe" characterize --quick --out "$D/quick" >"$D/quick.txt" 2>&1
  echo "quick: exit $? in $(( $(date +%s) - s )) s" | tee -a "$D/steps.txt"
  pack
fi
echo "---- summary"
cat "$D/steps.txt"
for f in "$D"/run*.txt "$D"/quick.txt; do
  [ -f "$f" ] || continue
  echo "== $(basename "$f")"
  grep -E '^  [LC][0-9]|^        (miss|random)|^  real-memory|^gpuprobe characterize:|error' "$f" | cut -c1-260
done
