#!/usr/bin/env bash
# Where a BM_peers cell's malloc launch spends its instructions and stalls, per source line and per
# SASS instruction (Nsight Compute's source page: instructions executed and warp-state samples).
# Build gpuprobe-bench with -DCMAKE_CUDA_FLAGS=-lineinfo for the source lines (the code is the same).
# Usage: BUILD=dir OUT=dir CASES="rw_malloc/size:8192/threads:16384/state:empty ..."
#        [BENCH_ARGS=...] dev/ncu_source.sh
# Writes OUT/ncu_source.tar.gz (per case: the report, its source page as CSV at SASS and at CUDA
# level) and prints, per case, the source lines with the most stall samples.
set -uo pipefail
B="${BUILD:-build}"
work=$(mktemp -d)
for c in $CASES; do
  n=$(echo "$c" | tr '/:' '__')
  # launch 1 loads the kernels, 2 is the first launch on the heap, 3.. are timed
  ncu --clock-control none --cache-control none -k regex:malloc_and_tag --launch-skip 2 \
    --launch-count 1 --section SourceCounters --section WarpStateStats --section InstructionStats \
    --import-source yes -o "$work/$n" "$B/gpuprobe-bench" --benchmark_filter="^BM_peers/$c" \
    ${BENCH_ARGS:-} >"$work/$n.log" 2>&1
  ncu -i "$work/$n.ncu-rep" --page source --csv --print-source sass >"$work/$n.sass.csv" 2>&1
  ncu -i "$work/$n.ncu-rep" --page source --csv --print-source cuda >"$work/$n.cuda.csv" 2>&1
  python3 - "$work/$n.cuda.csv" "$c" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next((i for i, r in enumerate(rows) if any("Warp Stall Sampling" in x for x in r)), None)
if head is None:
    print("%s: no source page (%s)" % (sys.argv[2], " ".join(sum(rows[:2], []))[:200]))
    sys.exit(0)
h = rows[head]
col = lambda name: next(i for i, x in enumerate(h) if x.startswith(name))
num = lambda x: float(x.replace(",", "") or 0)
s, e, src = col("Warp Stall Sampling (All"), col("Instructions Executed"), col("Source")
body = [r for r in rows[head + 1:] if len(r) == len(h)]
tot_s, tot_e = sum(num(r[s]) for r in body), sum(num(r[e]) for r in body)
print("%s: %.0f stall samples, %.0f warp instructions" % (sys.argv[2], tot_s, tot_e))
for r in sorted(body, key=lambda r: -num(r[s]))[:14]:
    print("  %5.1f%% samples %5.1f%% inst  %s" % (100 * num(r[s]) / max(tot_s, 1),
          100 * num(r[e]) / max(tot_e, 1), r[src].strip()[:90]))
PY
done
tar -czf "$OUT/ncu_source.tar.gz" -C "$work" .
