#!/usr/bin/env bash
# rw_malloc's small launches (issue 35): where a 2^14- or 2^17-thread malloc launch spends its time,
# and the goal table against the committed peer files.
# Usage: OUT=/dir BUILD=build-carry TAG=t scripts/device_rw_malloc_small.sh
#   STEPS="profile heap goals tests"  (default: all)
#   CASES=...            the Nsight Compute cases (as in device_malloc_profile.sh)
#   HEAPS="32G 1G"       profile step: the 2^14 and 2^17 cells of rw_malloc on each heap size
#                        (no ladder): a cell much faster on a small heap pays for the scatter
#   BASE=build-base      goals step: a second build (the version before) run on the same unit
#   NOSTASH=1            goals step: also this build with --gpuprobe_rw_stash=0 (batched claims alone)
#   TESTS='Malloc*:Soak.RwMalloc*'  tests step: the GPU tests, one process each
set -uo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "$here/device_common.sh" small
STEPS="${STEPS:-profile heap goals tests}"
bench() { # NAME BUILD ARGS...: BM_peers of that build into raw/NAME.json
  local name=$1 build=$2
  shift 2
  LD_LIBRARY_PATH="$build/lib:${LD_LIBRARY_PATH:-}" timed "$name" 300 "$build/gpuprobe-bench" \
    --benchmark_out="$D/raw/$name.json" --benchmark_out_format=json "$@"
}
mkdir -p "$D/raw"
if [[ " $STEPS " == *" profile "* ]]; then
  OUT="$D" TAG="$TAG" BUILD="$B" CASES="${CASES:-rw_malloc/size:16/threads:16384/state:empty}" \
    bash "$here/device_malloc_profile.sh" >"$D/profile.txt" 2>&1
  tail -40 "$D/profile.txt"
fi
if [[ " $STEPS " == *" heap "* ]]; then
  for h in ${HEAPS:-32G 1G}; do
    bench "heap-$h" "$B" --benchmark_filter='^BM_peers/rw_malloc/.*threads:(16384|131072)/' \
      --gpuprobe_peers_heap="$h" --gpuprobe_peers_no_ladder
  done
fi
if [[ " $STEPS " == *" goals "* ]]; then
  [ -n "${BASE:-}" ] && bench bench-peers-rw_malloc-before "$BASE" --benchmark_filter='^BM_peers/rw_malloc/'
  bench bench-peers-rw_malloc "$B" --benchmark_filter='^BM_peers/rw_malloc/'
  [ "${NOSTASH:-0}" = 1 ] && bench bench-peers-rw_malloc-nostash "$B" \
    --benchmark_filter='^BM_peers/rw_malloc/' --gpuprobe_rw_stash=0
fi
[[ " $STEPS " == *" tests "* ]] && gpu_tests "${TESTS:-Malloc*:Soak.RwMalloc*}"
pack
echo "---- steps"
cat "$D/steps.txt"
# The cells' malloc and free times, one line each (ms).
python3 - "$D/raw" <<'EOF'
import json, sys, glob, os
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        bs = json.load(open(f))["benchmarks"]
    except Exception as e:
        print(f, "unreadable:", e); continue
    print("==", os.path.basename(f))
    for b in bs:
        if b.get("run_type") != "iteration": continue
        n = b["name"].split("/iterations")[0].replace("BM_peers/", "")
        print(f'{n:55s} malloc {b.get("real_time", 0):.4f} free {b.get("free_ms", 0):.4f} '
              f'first {b.get("first_malloc_ms", 0):.4f} {b.get("error_message", "")}')
EOF
