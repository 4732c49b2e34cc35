#!/usr/bin/env bash
# The peer harness on the GPU machine (issues 15, 27): BM_peers with every allocator, one process
# per allocator (a crash or a hang stays in its process, and each gets its own device malloc heap),
# a JSON each under raw/, then `gpuprobe report --format md` and its peer tables last.
# Usage: OUT=/some/dir BUILD=build TAG=run1 scripts/device_peers.sh
#   ALLOCS="rw_malloc gallatin"  (default: all)   CELLS='threads:16384/'  (a regex on the rest of
#   the name, default all)   LIMIT=300 (seconds per allocator)   EXTRA='--gpuprobe_uncapped'
#   PER_CELL="scatteralloc"  (allocators run one process per cell: a peer whose fault ends its
#   process loses one cell, not the rest; default scatteralloc)   REPORT=0 (no report)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" peers
ALLOCS="${ALLOCS:-cuda_malloc rw_malloc corw64 bump gallatin gallatin_8k ouroboros_page ouroboros_chunk scatteralloc}"
PER_CELL="${PER_CELL:-scatteralloc}"
mkdir -p "$D/raw"
UNIT=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | head -1)
for a in $ALLOCS; do
  if [[ " $PER_CELL " == *" $a "* ]]; then
    s=$(date +%s) i=0
    # shellcheck disable=SC2086
    for cell in $("$B/gpuprobe-bench" --benchmark_list_tests \
        --benchmark_filter="^BM_peers/$a/.*${CELLS:-}" ${EXTRA:-} 2>/dev/null); do
      i=$((i + 1))
      f="^${cell%%/iterations:*}/"
      j="$D/raw/bench-peers-$a-$i.json"
      # shellcheck disable=SC2086
      timeout "${LIMIT:-300}" "$B/gpuprobe-bench" --benchmark_filter="$f" \
        --benchmark_out="$j" --benchmark_out_format=json ${EXTRA:-} >>"$D/$a.txt" 2>&1
      rc=$?
      [ $rc -ne 0 ] && echo "$cell: exit $rc" >>"$D/$a.txt"
      # A killed process leaves no whole JSON: the cell is recorded as failed, with why.
      [ $rc -eq 124 ] && printf '{"context": {"gpu_uuid": "%s"}, "benchmarks": [{"name": "%s", "run_name": "%s", "run_type": "iteration", "error_occurred": true, "error_message": "did not finish within %s s (killed by scripts/device_peers.sh)"}]}\n' \
        "$UNIT" "$cell" "$cell" "${LIMIT:-300}" >"$j"
    done
    echo "$a: $i cells, one process each, in $(( $(date +%s) - s )) s" | tee -a "$D/steps.txt"
    pack
    continue
  fi
  # shellcheck disable=SC2086
  timed "$a" "${LIMIT:-300}" "$B/gpuprobe-bench" --benchmark_filter="^BM_peers/$a/.*${CELLS:-}" \
    --benchmark_out="$D/raw/bench-peers-$a.json" --benchmark_out_format=json ${EXTRA:-}
done
[ "${REPORT:-1}" = 0 ] && exit 0
timed report 120 "$B/gpuprobe" report --input "$D" --out "$D/report" --format md
echo "---- steps"
cat "$D/steps.txt"
awk '/^## rw_malloc against the goals/{p=1} /^## Not in this folder/{p=0} p' "$D/report/index.md" |
  grep -v '^$' | cut -c1-220
