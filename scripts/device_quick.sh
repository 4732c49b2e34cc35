#!/usr/bin/env bash
# Issue 37 on the GPU machine: the quick aliased sweep as characterize --quick runs it, repeated
# (does every run state the same levels?), with more samples, and beside a busy process (a loop
# of `gpuprobe atomics`). Usage: OUT=/dir BUILD=build-carry TAG=h100 scripts/device_quick.sh
# (REPS=3 quick sweeps; SAMPLES=4096: one more with that many samples; BUSY=1; ARGS='...': the
# sweep's arguments, default characterize --quick's)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" quick
args=(${ARGS:---alloc alias --no-control --min-stride 2M --max-stride 256M --points-per-octave 4 --samples 1024})
for i in $(seq 1 "${REPS:-3}"); do
  timed "q$i" 200 "$B/gpuprobe" tlb "${args[@]}" --out "$D/tlb_q$i.json"
done
if [ -n "${SAMPLES:-}" ]; then
  timed "q_s$SAMPLES" 300 "$B/gpuprobe" tlb "${args[@]}" --samples "$SAMPLES" --out "$D/tlb_q_s$SAMPLES.json"
fi
if [ "${BUSY:-1}" = 1 ]; then
  ( while :; do "$B/gpuprobe" atomics --samples 256 --out /tmp/busy_atomics.json >/dev/null 2>&1; done ) &
  busy=$!
  sleep 3
  nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv >"$D/busy-processes.csv" 2>&1
  timed "q_busy" 300 "$B/gpuprobe" tlb "${args[@]}" --out "$D/tlb_q_busy.json"
  kill "$busy" 2>/dev/null; pkill -f 'gpuprobe atomics' 2>/dev/null; wait "$busy" 2>/dev/null
fi
if [ -n "${CHARACTERIZE:-}" ]; then
  timed "characterize_quick" 300 "$B/gpuprobe" characterize --quick --out "$D/cq" --device 0
fi
pack
echo "---- summary"
cat "$D/steps.txt"
for f in "$D"/tlb_q*.json; do
  echo "== $(basename "$f")"
  "$B/gpuprobe" analyze tlb --input "$f" --out "$D/$(basename "$f" .json)_profile.json" 2>&1 | grep -E '^ *[LC][0-9]|level|candidate' | cut -c1-250 | head -8
done
pack
if [ "${LOCKS:-0}" = 1 ]; then
  # Two writers into one folder: the second is refused with the holder's PID; then a writer
  # killed with SIGKILL, and the same command again.
  "$B/gpuprobe" characterize --quick --out "$D/same" --device 0 >"$D/writer1.txt" 2>&1 &
  w1=$!
  sleep 2
  timed writer2 60 "$B/gpuprobe" characterize --quick --out "$D/same" --device 0
  wait $w1; echo "writer1: exit $?" >>"$D/steps.txt"
  "$B/gpuprobe" characterize --quick --out "$D/killed" --device 0 >"$D/killed1.txt" 2>&1 &
  k=$!
  sleep 12
  kill -9 $k; sleep 1
  echo "after SIGKILL: $(pgrep -fa 'gpuprobe' | grep -v pgrep | wc -l) gpuprobe processes left" >>"$D/steps.txt"
  timed killed_rerun 200 "$B/gpuprobe" characterize --quick --out "$D/killed" --device 0
  # characterize beside the busy loop: waits 10 s, then refuses in one line
  ( while :; do "$B/gpuprobe" atomics --samples 256 --out /tmp/busy_atomics2.json >/dev/null 2>&1; done ) &
  busy=$!
  sleep 3
  timed busy_refused 60 "$B/gpuprobe" characterize --quick --busy-wait 10 --out "$D/busy" --device 0
  kill "$busy" 2>/dev/null; pkill -f 'gpuprobe atomics' 2>/dev/null; wait "$busy" 2>/dev/null
  tail -n 3 "$D/writer2.txt" "$D/killed_rerun.txt" "$D/busy_refused.txt" | cut -c1-300
fi
pack
