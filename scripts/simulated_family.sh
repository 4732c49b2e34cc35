#!/usr/bin/env bash
# The TLB analyzer on a family of simulated GPUs (tests/common/tlb_simulate.hpp): N random hierarchies
# and N/5 null GPUs a mode (full and quick, as characterize plans the tlb stage), the recovery
# table, the GPUs missed or falsely found; then the table of what can be recovered (found, false
# share, calibration) for the same GPUs analysed by the rise detectors alone and by the whole-sweep
# model (analyze tlb --model), and the held-out 2017 layout read both ways (N/10 GPUs).
# With --docs FILE the tables replace the block between FILE's "begin: scripts/simulated_family.sh"
# and "end: scripts/simulated_family.sh" markers (docs/analyze-tlb.md's): the docs' tables are
# this script's output, never copied by hand.
# Usage: scripts/simulated_family.sh [N=1000] [--docs FILE] [BUILD=build]
set -euo pipefail
n=1000
docs=""
while [ $# -gt 0 ]; do
  case "$1" in
  --docs) docs="$2"; shift 2 ;;
  *) n="$1"; shift ;;
  esac
done
b="${BUILD:-build}"
tables=$(GPUPROBE_SIM_GPUS="$n" "$b/tests/gpuprobe_host_tests" \
  --gtest_filter='SimulatedGpus.TheFamily*:SimulatedGpus.TheHeldOut*' |
  grep -E '^\||^\(|missed or false|FAILED|PASSED' || true)
printf '%s\n' "$tables"
[ -z "$docs" ] && exit 0
printf '%s\n' "$tables" | grep -E '^\||^\(' | python3 -c '
import sys
path, n = sys.argv[1], sys.argv[2]
rows = sys.stdin.read().rstrip("\n").split("\n")
begin, end = "<!-- begin: scripts/simulated_family.sh", "<!-- end: scripts/simulated_family.sh -->"
text = open(path).read()
a, b = text.find(begin), text.find(end)
if a < 0 or b < a:
    sys.exit(path + ": no begin/end markers of scripts/simulated_family.sh")
out, table = [], None
for r in rows:  # a blank line before each table header (a row whose next row is |---|)
    if r.startswith("|---") and out and out[-1].startswith("|") and table is not None:
        out.insert(len(out) - 1, "")
    table = r
    out.append(r)
block = (begin + " " + n + " (generated: do not edit) -->\n" + "\n".join(out) + "\n")
open(path, "w").write(text[:a] + block + text[b:])
print("wrote the tables of", n, "GPUs a mode into", path)
' "$docs" "$n"
