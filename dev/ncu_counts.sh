#!/usr/bin/env bash
# Per-warp memory round trips of BM_peers cells' malloc launch under Nsight Compute: global loads,
# atomics and reductions issued (requests), instructions, and the kernel's cycles, for each CASE
# (allocator/size:S/threads:T/state:X); then, in a second pass, where its warps wait: the stall
# reasons that cost most, in cycles per issued instruction (Nsight Compute's warp state sampling).
# The first pass also counts the L2 sectors that missed for atomics, reductions and loads.
# Usage: BUILD=dir OUT=dir CASES="..." [BENCH_ARGS="--gpuprobe_rw_optimistic=1"]
#   [BENCH=another/gpuprobe-bench (default $BUILD/gpuprobe-bench)] dev/ncu_counts.sh
set -uo pipefail
B="${BUILD:-build}"
BENCH="${BENCH:-$B/gpuprobe-bench}"
m=sm__cycles_elapsed.max,smsp__inst_executed.sum,smsp__warps_launched.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
# L2 sectors that missed, for atomics, reductions and loads (a miss waits on memory)
m=$m,lts__t_sectors_srcunit_tex_op_atom_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_red_lookup_miss.sum
m=$m,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
for c in $CASES; do
  n=$(echo "$c" | tr '/:' '__')
  # launch 1 loads the kernels, 2 is the first launch on the heap, 3.. are timed
  ncu --clock-control none --cache-control none -k regex:malloc_and_tag --launch-skip 2 \
    --launch-count 1 --metrics "$m" --csv "$BENCH" --benchmark_filter="^BM_peers/$c" ${BENCH_ARGS:-} \
    >"$OUT/$n.csv" 2>/dev/null
  python3 - "$OUT/$n.csv" "$c" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, vals = rows[0], rows[1:]
v = {r[head.index("Metric Name")]: float(r[head.index("Metric Value")].replace(",", "")) for r in vals}
w = v["smsp__warps_launched.sum"]
g = lambda k: v.get(k, float("nan")) / w
print("%-50s cycles %6.0f  per warp: inst %6.0f  ld %5.1f  atom %5.1f  red %5.1f  st %5.1f" % (
    sys.argv[2], v["sm__cycles_elapsed.max"], g("smsp__inst_executed.sum"),
    g("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    g("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"),
    g("l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"),
    g("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")))
print("    L2 sectors missed per warp: atom %.1f  red %.1f  read %.1f" % (
    g("lts__t_sectors_srcunit_tex_op_atom_lookup_miss.sum"),
    g("lts__t_sectors_srcunit_tex_op_red_lookup_miss.sum"),
    g("lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum")))
PY
  ncu --clock-control none --cache-control none -k regex:malloc_and_tag --launch-skip 2 \
    --launch-count 1 --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    --csv "$BENCH" --benchmark_filter="^BM_peers/$c" ${BENCH_ARGS:-} >"$OUT/$n.stalls.csv" 2>/dev/null
  python3 - "$OUT/$n.stalls.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, vals = rows[0], rows[1:]
v = {r[head.index("Metric Name")]: float(r[head.index("Metric Value")].replace(",", "")) for r in vals}
name = lambda k: k.replace("smsp__average_warps_issue_stalled_", "").replace("_per_issue_active.ratio", "")
top = sorted(v.items(), key=lambda kv: -kv[1])[:6]
print("    stalls (cycles per issued instruction): total %.1f; " % sum(v.values()) +
      ", ".join("%s %.1f" % (name(k), x) for k, x in top))
PY
done
