#!/usr/bin/env bash
# Every GPU of a node at once (issue 14) on the GPU machine, over a build folder made elsewhere:
# `characterize --devices all` twice into two parent folders (the second is a repeat on the same
# units), one GPU alone for the wall-time comparison, then `tune --devices all --quick`. Each
# unit's hierarchy lines and the wall times are printed last.
# Usage: OUT=/some/dir scripts/device_fleet.sh   (BUILD=build TAG=run1 ROUNDS=2 SINGLE=1 TUNE=1)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" fleet
for r in $(seq 1 "${ROUNDS:-2}"); do
  timed "node$r" 280 "$B/gpuprobe" characterize --devices all --out "$D/node$r"
done
[ "${SINGLE:-1}" = 1 ] && timed single0 200 "$B/gpuprobe" characterize --device 0 --out "$D/single0"
[ "${TUNE:-1}" = 1 ] && timed tune 200 "$B/gpuprobe" tune --devices all --quick --results "$D/node1"
echo "---- summary"
cat "$D/steps.txt"
for f in "$D"/node*.txt "$D"/single0.txt "$D"/tune.txt; do
  [ -f "$f" ] || continue
  echo "== $(basename "$f")"
  grep -E '\] +L[0-9] |\] +C[0-9] |^gpuprobe (characterize|tune)|^  gpu[0-9]|^  L[0-9] |error' "$f" | cut -c1-200
done
