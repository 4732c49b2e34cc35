#!/usr/bin/env bash
# rw_malloc's goal table from a new rw_malloc run against committed peer rows (issue 35): the peer
# folder's raw/*.json with its rw_malloc file replaced, through `gpuprobe report`; prints the
# report's "rw_malloc against the goals" section.
# Usage: dev/rw_malloc_goals.sh GPUPROBE PEER_FOLDER RW_MALLOC_JSON [OUT_FOLDER]
#   dev/rw_malloc_goals.sh build/gpuprobe tests/fixtures/peers/nvidia-h200-40528cae \
#     tests/fixtures/rw-malloc-issue35/h200-352b0b34/runs/bench-peers-rw_malloc.json
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,7p "$0"; exit 2; }
gpuprobe=$1 peers=$2 rw=$3
out=${4:-$(mktemp -d)}
[ -d "$peers/raw" ] || { echo "no raw/ folder in $peers" >&2; exit 2; }
[ -f "$rw" ] || { echo "no such file: $rw" >&2; exit 2; }
mkdir -p "$out/raw"
cp "$peers"/raw/*.json "$out/raw/"
cp "$rw" "$out/raw/bench-peers-rw_malloc.json"
cp "$peers"/nvidia-smi*.csv "$peers"/steps.txt "$out/" 2>/dev/null || true
# PLOT_SCRIPT: another plotter (the tests' stand-in: the table is text, its figures are not read).
"$gpuprobe" report --input "$out" --out "$out/report" --format md ${PLOT_SCRIPT:+--plot-script "$PLOT_SCRIPT"} \
  >"$out/report.log" 2>&1 ||
  { tail -5 "$out/report.log" >&2; exit 1; }
awk '/^#+ rw(\\)?_malloc against the goals/{p=1} /^#+ Where each/{p=0} p' "$out/report/index.md"
