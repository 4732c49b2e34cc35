#!/usr/bin/env bash
# Issue 25 on the GPU machine: full characterize runs (the aliased sweep with both ends of every
# ramp refined, the conflict sets, sharing, atomics) and a quick one, then each level's structure
# as the profiles state it. Usage: OUT=/some/dir BUILD=build TAG=h100a scripts/device_structure.sh
# (FULL=2: two full runs; QUICK=1; GTEST='Tlb*': those GPU tests after the runs)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" structure
runs=()
for i in $(seq 1 "${FULL:-1}"); do
  timed "full$i" 300 "$B/gpuprobe" characterize --out "$D/full$i" --device 0; runs+=(full$i)
done
if [ "${QUICK:-1}" = 1 ]; then
  timed quick 200 "$B/gpuprobe" characterize --quick --out "$D/quick" --device 0; runs+=(quick)
fi
[ -n "${GTEST:-}" ] && gpu_tests "$GTEST"
echo "---- summary"
cat "$D/steps.txt"
for r in "${runs[@]}"; do
  echo "== $r"
  grep -E '^gpuprobe characterize|^  [LC][0-9]|^        structure|^  stage times' "$D/$r.txt" | cut -c1-330
done
