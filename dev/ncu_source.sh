#!/usr/bin/env bash
# Where a BM_peers cell's malloc launch spends its instructions and stalls, per SASS instruction
# (Nsight Compute's source page: instructions executed and warp-state samples). Build
# gpuprobe-bench with -DCMAKE_CUDA_FLAGS=-lineinfo to open the report's source view by CUDA line
# (the code is the same).
# Usage: BUILD=dir OUT=dir CASES="rw_malloc/size:8192/threads:16384/state:empty ..."
#        [BENCH_ARGS=...] dev/ncu_source.sh
# Writes OUT/ncu_source.tar.gz (per case: the report and its SASS source page as CSV) and prints,
# per case, the kernel's size, the stall reasons and the instructions with the most samples.
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
  python3 - "$work/$n.sass.csv" "$c" <<'PY'
import collections, csv, re, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next((i for i, r in enumerate(rows) if r and r[0] == "Address"), None)
if head is None:
    print("%s: no source page (%s)" % (sys.argv[2], " ".join(sum(rows[:2], []))[:200]))
    sys.exit(0)
h = rows[head]
body = [r for r in rows[head + 1:] if r and r[0].startswith("0x")]
num = lambda x: float(x.replace(",", "")) if re.match(r"^[-0-9.,]+$", x or "") else 0.0
S, E = h.index("Warp Stall Sampling (All Samples)"), h.index("Instructions Executed")
stalls = [i for i, x in enumerate(h) if x.startswith("stall_") and "Not Issued" not in x]
ts, te = sum(num(r[S]) for r in body) or 1, sum(num(r[E]) for r in body) or 1
hot = [i for i, r in enumerate(body) if num(r[E]) > 0]
print("%s: %d instructions in the kernel, %d executed (up to #%d); %.0f warp instructions, "
      "%.0f stall samples" % (sys.argv[2], len(body), len(hot), max(hot, default=0), te, ts))
why = collections.Counter()
for r in body:
    for i in stalls:
        why[h[i][6:]] += num(r[i])
print("  stall samples: " + ", ".join("%s %.0f%%" % (k, 100 * v / ts) for k, v in why.most_common(7)))
for r in sorted(body, key=lambda r: -num(r[S]))[:10]:
    print("  #%-5d %5.1f%% of samples, executed %6.0f  %s" % (body.index(r), 100 * num(r[S]) / ts,
          num(r[E]), " ".join(r[1].split())[:60]))
PY
done
tar -czf "$OUT/ncu_source.tar.gz" -C "$work" .
