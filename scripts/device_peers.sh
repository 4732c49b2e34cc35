#!/usr/bin/env bash
# The peer harness on the GPU machine (issue 15): BM_peers with every allocator, one process per
# allocator (a crash or a hang stays in its process, and each gets its own device malloc heap),
# a JSON each under raw/, then `gpuprobe report --format md` and its peer tables last.
# Usage: OUT=/some/dir BUILD=build TAG=run1 scripts/device_peers.sh
#   ALLOCS="rw_malloc gallatin"  (default: all seven)   CELLS='threads:16384/'  (a regex on the
#   rest of the name, default all)   LIMIT=300 (seconds per allocator)   EXTRA='--gpuprobe_uncapped'
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" peers
ALLOCS="${ALLOCS:-cuda_malloc rw_malloc corw64 bump gallatin ouroboros_page ouroboros_chunk}"
mkdir -p "$D/raw"
for a in $ALLOCS; do
  # shellcheck disable=SC2086
  timed "$a" "${LIMIT:-300}" "$B/gpuprobe-bench" --benchmark_filter="^BM_peers/$a/.*${CELLS:-}" \
    --benchmark_out="$D/raw/bench-peers-$a.json" --benchmark_out_format=json ${EXTRA:-}
done
timed report 120 "$B/gpuprobe" report --input "$D" --out "$D/report" --format md
echo "---- steps"
cat "$D/steps.txt"
awk '/^## Allocators against the peers/{p=1} /^## Not in this folder/{p=0} p' "$D/report/index.md" |
  grep -v '^$' | cut -c1-220
