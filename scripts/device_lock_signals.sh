#!/usr/bin/env bash
# Issues 37, 36 and 33 on the GPU machine: two writers into one folder (the first a `run --quick`,
# timed per stage, its validate with the sequential stopping rule) and report into a folder being
# written; the same tuning validated with --fixed-reps (time and verdicts against the rule's); a
# writer killed with SIGKILL, then the same command again; `run --quick` stopped with SIGTERM
# (exit status, children, temporary files).
# Usage: OUT=/dir BUILD=build-carry TAG=h100 scripts/device_lock_signals.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" locks
G="$B/gpuprobe"
left() { pgrep -f "$B/gpuprobe" | wc -l; }
"$G" run --quick --out "$D/same" --device 0 >"$D/writer1.txt" 2>&1 &
w1=$!
sleep 4
timed writer2 60 "$G" characterize --quick --out "$D/same" --device 0
timed report_while_written 60 "$G" report --input "$D/same" --out "$D/same-report"
wait $w1; echo "writer1: exit $?" | tee -a "$D/steps.txt"
timed validate_fixed 120 "$G" validate --quick --fixed-reps --tuning "$D/same/tuning.json" --out "$D/validation-fixed.json" --device 0
"$G" characterize --quick --out "$D/killed" --device 0 >"$D/killed1.txt" 2>&1 &
k=$!
sleep 12
kill -9 $k; sleep 2
echo "after SIGKILL of characterize: $(left) gpuprobe process(es) left; lock held by: '$(cat "$D/killed/.gpuprobe.lock" 2>/dev/null)'" | tee -a "$D/steps.txt"
timed killed_rerun 200 "$G" characterize --quick --out "$D/killed" --device 0
"$G" run --quick --out "$D/termed" --device 0 >"$D/termed.txt" 2>&1 &
t=$!
sleep 12
kill -TERM $t; wait $t; rc=$?
sleep 1
echo "run --quick after SIGTERM: exit $rc, $(left) gpuprobe process(es) left, temporary files: $(find "$D/termed" -name '*.tmp*' | wc -l)" | tee -a "$D/steps.txt"
pack
echo "---- summary"
cat "$D/steps.txt"
grep -h "error\|interrupted" "$D"/writer2.txt "$D"/report_while_written.txt "$D"/termed.txt | cut -c1-260
grep -h "stage times\|^gpuprobe characterize:\|^\[run\]\|^gpuprobe validate:\|^gpuprobe run:" "$D"/writer1.txt "$D"/killed_rerun.txt "$D"/validate_fixed.txt | cut -c1-260
grep -h "pairs," "$D"/writer1.txt | cut -c1-160
