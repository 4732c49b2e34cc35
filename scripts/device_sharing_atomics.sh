#!/usr/bin/env bash
# One round of sharing + atomics work on the GPU machine, over a build folder made elsewhere:
# GPU tests, `gpuprobe atomics`, a TLB tail sweep -> profile, `gpuprobe tlb-sharing` on each level
# the profile holds, `analyze sharing`, then a short table. Everything lands in one archive.
# Usage: OUT=/some/dir scripts/device_sharing_atomics.sh
#   BUILD=build  TAG=run1  PROFILE=path (skip the sweep)  SKIP_TESTS=1  SKIP_ATOMICS=1
#   EXTRA_RUNS="--page-bytes 2M --entries 1024; --page-bytes 32M ..." more tlb-sharing runs (';'-separated)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" sa
run_logged() {  # run_logged NAME cmd...: runs, records wall ms (stdout and stderr apart)
  local name=$1; shift
  local s=$(date +%s%N)
  "$@" >"$D/$name.txt" 2>"$D/$name.log"
  local rc=$?
  echo "== $name: exit $rc, wall $(( ($(date +%s%N) - s) / 1000000 )) ms"
  tail -2 "$D/$name.log"; cat "$D/$name.txt"
  pack
  return $rc
}
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  "$B/tests/gpuprobe_gpu_tests" ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} >"$D/gpu_tests.log" 2>&1
  echo "gpu tests exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$D/gpu_tests.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED' "$D/gpu_tests.log" | head
  pack
fi
if command -v cuobjdump >/dev/null; then  # the atomics kernels' SASS, for the record
  cuobjdump -sass "$B/gpuprobe" | awk '/Function : /{p = /atomics_kernel/} p' >"$D/atomics_sass.txt"
fi
[ "${SKIP_ATOMICS:-0}" != 1 ] && run_logged atomics "$B/gpuprobe" atomics --out "$D/atomics.json"
P="${PROFILE:-}"
if [ -z "$P" ]; then
  run_logged tlb_tail "$B/gpuprobe" tlb --strides 2M 4M 8M 16M 32M 64M 128M --min-bytes 40G --max-bytes 72G \
    --points-per-octave 64 --samples 8192 --no-control --out "$D/tlb_tail.json"
  "$B/gpuprobe" analyze tlb --input "$D/tlb_tail.json" --out "$D/profile.json" | tee "$D/profile.txt"
  P="$D/profile.json"
fi
count() { python3 -c "import json; print(len(json.load(open('$P'))['tlb']['$1']))" 2>/dev/null || echo 0; }
levels=$(count levels); cands=$(count candidates)
echo "profile $P: $levels level(s), $cands candidate(s)"
for ((k = 1; k <= levels; k++)); do
  run_logged "sharing_L$k" "$B/gpuprobe" tlb-sharing --profile "$P" --level "$k" --out "$D/sharing_L$k.json" &&
    "$B/gpuprobe" analyze sharing --input "$D/sharing_L$k.json" --out "$D/sharing_L${k}_analysis.json" | grep -v "group {"
done
# Candidates (levels below the confidence bar) are tested too when the profile has no level.
for ((k = 1; levels == 0 && k <= cands; k++)); do
  run_logged "sharing_C$k" "$B/gpuprobe" tlb-sharing --profile "$P" --candidate "$k" --out "$D/sharing_C$k.json" &&
    "$B/gpuprobe" analyze sharing --input "$D/sharing_C$k.json" --out "$D/sharing_C${k}_analysis.json" | grep -v "group {"
done
IFS=';' read -ra runs <<<"${EXTRA_RUNS:-}"
for i in "${!runs[@]}"; do
  [ -n "${runs[$i]// /}" ] || continue
  echo "-- extra run $i: ${runs[$i]}"
  # shellcheck disable=SC2086
  run_logged "sharing_X$i" "$B/gpuprobe" tlb-sharing ${runs[$i]} --out "$D/sharing_X$i.json"
done
pack
rm -rf "$D"
