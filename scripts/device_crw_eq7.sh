#!/usr/bin/env bash
# Issue 49 item 4 on the GPU machine: BM_getpage's grid (the bench stage's: RW, RW-BM, CoRW, CRW
# at 2^12, 2^16, 2^20 threads, 50 % and 0.5 % free), TAS and WAS against the RW paper's models.
# CRW's rows are measured after a warm call (each thread's last page kept: Eq. 7's state), its
# first call apart (TAS_first). Usage: OUT=/dir BUILD=build-carry TAG=h100 bash scripts/device_crw_eq7.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" crw-eq7
filter='^BM_getpage/(rw|rw_bm32|rw_bm64|corw32|corw64|crw)/threads:(4096|65536|1048576)/free_permille:(500|5)/'
timed grid 300 "$B/gpuprobe-bench" --benchmark_filter="$filter" --benchmark_out="$D/bench_getpage.json" \
  --benchmark_out_format=json
python3 - "$D/bench_getpage.json" <<'PY' | tee "$D/table.md"
import json, sys
d = json.load(open(sys.argv[1]))
print("| case | ms | TAS | TAS theory (Eq. 9) | TAS / theory | Eq. 9, p = M/A | TAS first call | WAS | WAS bound |")
print("|---|---|---|---|---|---|---|---|---|")
for b in d["benchmarks"]:
    n = b["name"].replace("BM_getpage/", "").split("/iterations")[0]
    g = lambda k: b.get(k)
    f = lambda v, p=1: "-" if v is None else f"{v:.{p}f}"
    ratio = g("TAS") / g("TAS_theory") if g("TAS") and g("TAS_theory") else None
    print(f"| {n} | {f(g('real_time'), 3)} | {f(g('TAS'))} | {f(g('TAS_theory'))} | {f(ratio, 2)} | "
          f"{f(g('TAS_theory_occupancy'))} | {f(g('TAS_first'))} | {f(g('WAS'))} | {f(g('WAS_theory'))} |")
PY
pack
