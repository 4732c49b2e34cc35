#!/usr/bin/env bash
# Issue 44 on the GPU machine. ROUND=busy (a 2-GPU machine): item 5's cases with a real neighbour
# process (tests/tools/neighbour.cu) on the GPU:
#   A. a stage disturbed twice is refused and its output removed; the resume measures it again;
#   B. a neighbour that starts and stops inside a stage under --allow-busy: seen by the watch,
#      written into the stage's file, and kept through a resume that reruns another stage;
#   C. `run --devices all --busy-wait 5` beside a neighbour on each GPU: every unit waits 5 s.
# ROUND=tests: gpuprobe_gpu_tests run whole (one process), then against a stub libcuda (a broken
# driver must fail, not skip). Usage: OUT=/dir BUILD=build-carry TAG=h100 ROUND=busy|tests
#   bash scripts/device_issue44.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" "i44-$(echo ${ROUND:-busy} | tr ' ' -)"
G="$B/gpuprobe" N="$B/tests/gpuprobe_test_neighbour"

busy_round() {
  # A: the second measurement of tlb is disturbed too -> refused, raw/tlb.json removed.
  local A="$D/A"
  (
    sleep 4
    "$N" 0 3 >"$D/A_neighbour1.txt" 2>&1 &                   # inside the first measurement
    for i in $(seq 1 120); do                                # then inside the second one
      grep -q "measuring it again" "$D/A_first.txt" 2>/dev/null && break
      sleep 0.5
    done
    sleep 2
    "$N" 0 3 >"$D/A_neighbour2.txt" 2>&1
  ) &
  local helper=$!
  sleep 1 # the run starts on an idle GPU; the neighbour comes during the tlb stage
  timed A_first 300 "$G" characterize --quick --out "$A" --busy-wait 20
  wait "$helper"
  { ls "$A/raw" 2>&1; echo "tlb.json present: $([ -f "$A/raw/tlb.json" ] && echo yes || echo no)"; } >"$D/A_after_refusal.txt"
  timed A_resume 300 "$G" characterize --quick --out "$A"
  # B: --allow-busy, a neighbour of 3 s inside tlb; then a resume that reruns atomics.
  local Bd="$D/B"
  ( sleep 5; "$N" 0 3 >"$D/B_neighbour.txt" 2>&1 ) &
  timed B_first 300 "$G" characterize --quick --allow-busy --out "$Bd"
  wait
  grep -l '"disturbed"' "$Bd"/raw/*.json >"$D/B_marked_files.txt" 2>&1
  rm -f "$Bd/raw/atomics.json"
  timed B_resume 300 "$G" characterize --quick --out "$Bd"
  python3 - "$Bd/profile.json" >"$D/B_profile_marks.txt" 2>&1 <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print("conditions.busy:", p.get("conditions", {}).get("busy"))
for i, L in enumerate(p["tlb"]["levels"]):
    print(f"L{i+1} disturbed:", L.get("disturbed", "-"))
print("stages:", [(s["name"], s["status"]) for s in p.get("stages", [])])
PY
  # C: a neighbour on every GPU for 20 s; run --devices all --busy-wait 5 waits 5 s on each.
  local n
  n=$(nvidia-smi -L | wc -l)
  for g in $(seq 0 $((n - 1))); do "$N" "$g" 20 >"$D/C_neighbour$g.txt" 2>&1 & done
  sleep 3
  timed C_devices 120 "$G" run --devices all --quick --busy-wait 5 --out "$D/C"
  wait
  grep -r "waiting up to" "$D/C" >"$D/C_waits.txt" 2>&1
  pack
  echo "---- summary"
  cat "$D/steps.txt"
  echo "== A (refused stage, then resume)"
  grep -E "appeared during|measuring it again|GPU is busy|waiting up to" "$D/A_first.txt" | cut -c1-220
  cat "$D/A_after_refusal.txt" | tail -1
  grep -E "^\[[0-9]+/[0-9]+\+?\] tlb |gpuprobe characterize:" "$D/A_resume.txt" | cut -c1-160
  echo "== B (a neighbour inside a stage, --allow-busy, then a resume that reruns atomics)"
  echo "files marked: $(tr '\n' ' ' <"$D/B_marked_files.txt")"
  grep -E "^\[[0-9]+/[0-9]+\+?\] (tlb|atomics) " "$D/B_resume.txt" | cut -c1-160
  cut -c1-250 "$D/B_profile_marks.txt"
  echo "== C (run --devices all --busy-wait 5)"
  cut -c1-200 "$D/C_waits.txt"
  tail -4 "$D/C_devices.txt" | cut -c1-200
}

tests_round() {
  timed gpu_whole 560 "$B/tests/gpuprobe_gpu_tests"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|tests? ran|in its own process" "$D/gpu_whole.txt" | head -40
  # A broken driver: a libcuda.so.1 with no entry points, on a host with /dev/nvidia0.
  LD_LIBRARY_PATH="$B/stub:$LD_LIBRARY_PATH" timed broken 60 "$B/tests/gpuprobe_gpu_tests" \
    --gtest_filter='ClockGpu.*'
  echo "== broken driver"
  grep -E "broken driver|FAILED|SKIPPED|PASSED" "$D/broken.txt" | head -5 | cut -c1-200
  pack
  cat "$D/steps.txt"
}

for r in ${ROUND:-busy}; do
  case "$r" in
    busy) busy_round ;;
    tests) tests_round ;;
    *) echo "ROUND is busy, tests or both ('busy tests')" >&2; exit 2 ;;
  esac
done
true
