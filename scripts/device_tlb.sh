#!/usr/bin/env bash
# One round of TLB work on the GPU machine, over a build folder made elsewhere:
# GPU tests, then `gpuprobe tlb` for each --alloc kind, analysis, and a short table last.
# Usage: OUT=/some/dir scripts/device_tlb.sh [extra gpuprobe tlb flags]
#   ALLOCS="cudamalloc vmm" (default)   BUILD=build (default)   TAG=run1 (file suffix)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" tlb
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  "$B/tests/gpuprobe_gpu_tests" >"$D/gpu_tests.log" 2>&1
  echo "gpu tests exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$D/gpu_tests.log" | tr '\n' ' ')"
  grep -E 'chase load|128 B stride' "$D/gpu_tests.log" | sort -u | head -5
  pack
fi
for alloc in ${ALLOCS:-cudamalloc vmm}; do
  start=$(date +%s%N)
  "$B/gpuprobe" tlb --alloc "$alloc" --out "$D/tlb_$alloc.json" "$@" >"$D/tlb_$alloc.txt" 2>"$D/tlb_$alloc.log"
  rc=$?
  end=$(date +%s%N)
  echo "== tlb --alloc $alloc $* : exit $rc, wall $(( (end - start) / 1000000 )) ms"
  tail -3 "$D/tlb_$alloc.log"
  cat "$D/tlb_$alloc.txt"
  [ $rc -eq 0 ] && "$B/gpuprobe" analyze tlb --input "$D/tlb_$alloc.json" --out "$D/profile_$alloc.json"
  pack
done
rm -rf "$D"
