#!/usr/bin/env bash
# Issue 33's output on the GPU machine: `gpuprobe run --quick` on a terminal (script(1) gives it
# a pty; the typescript keeps every redraw of the status line), the same folder again with stdout
# a pipe (what a log or CI sees), DIR/run.log, and the GPU test Run.* (one process per test).
# Usage: OUT=/dir BUILD=build-carry TAG=h100 scripts/device_run_display.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" display
G="$B/gpuprobe"
if command -v script >/dev/null; then
  timed tty_run 200 script -qfec "$G run --quick --out $D/tty --device 0" "$D/typescript.txt"
else
  echo "no script(1): the terminal run is left out" | tee -a "$D/steps.txt"
  timed tty_run 200 "$G" run --quick --out "$D/tty" --device 0
fi
timed piped_rerun 60 "$G" run --quick --out "$D/tty" --device 0
gpu_tests 'Run.*'
pack
echo "---- summary"
cat "$D/steps.txt"
echo "---- the terminal's last screen (carriage returns as new lines, 40 lines)"
tr '\r' '\n' <"$D/typescript.txt" 2>/dev/null | sed 's/\x1b\[K//g' | grep -v '^$' | tail -40 | cut -c1-160
echo "---- piped rerun ($(wc -l <"$D/piped_rerun.txt") lines)"
cut -c1-160 "$D/piped_rerun.txt"
echo "---- run.log: $(wc -l <"$D/tty/run.log") lines, $(grep -c '^==== gpuprobe run' "$D/tty/run.log") invocations"
