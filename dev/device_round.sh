#!/usr/bin/env bash
# One round on the GPU machine: the named steps, in the order given, into one archive under $OUT
# ($OUT/round-$TAG.tar.gz, packed after each step so a time-out keeps what ran), a short table last.
# Usage: OUT=/dir BUILD=build-carry TAG=h100 bash dev/device_round.sh STEP [STEP ...]
# Steps (settings through the environment; dev/README.md has the examples past changes used):
#   tests      GPU tests, one process each (GTEST: a gtest filter, default all)
#   tests-whole  every GPU test in one process, then ClockGpu.* against a stub libcuda in
#              $BUILD/stub (a broken driver must fail, not skip)
#   quick | full  characterize --quick / characterize (full: and its Markdown report)
#   run        gpuprobe run, full then quick, and each again over its finished folder
#              (FULL=0 or QUICK=0 to leave one out)
#   baseline   a baseline build's full run ($BASE: its carried build folder) and this build's on
#              the same unit, compared by gpuprobe compare --reanalyze (no-behaviour-change
#              rounds: the analysis of this build over both, so only the measurements differ);
#              BASE_QUICK=1 adds the same pair of quick runs, BASE_FULL=0 leaves out the full pair
#   coverage   tlb-coverage RUNS times (default 1) over the last characterize's TLB profile
#   conflict   tlb-conflict --windows 8 over that profile (CONFLICT_ARGS: e.g. "--repeat-walks 2
#              --home-offsets 32 --group-walks"), and whether its sets agree with the ramp
#   conflict-ab  tlb-conflict by default, with AB_NEW (default --onset-start-share 64) and with
#              --quarter-split --test-halves (the split before stop 64), over the last
#              characterize's profile, alternating RUNS times (default 3): times, sets, walks,
#              each against the first default run
#   node       characterize --devices all ROUNDS times (default 2), one GPU alone, tune --devices all
#   node-run   gpuprobe run RUN_ARGS (e.g. --quick) on GPU SINGLE_DEVICE (default 0) alone, then run --devices all
#              NODE_ARGS (the node budget shares the mapped range; the second GPU maps late
#              unless NODE_ARGS=--no-map-late), then gpuprobe
#              compare of that unit alone against it in the node run (and its TAS/WAS grid,
#              bench_ab.py); BASE (a baseline build's
#              folder) adds its run --devices all BASE_ARGS on the same node (BASE=$BUILD
#              BASE_ARGS=--no-map-late: this build with every GPU in the usual order); SERIAL=1 adds run --devices
#              all under a budget one range fits (GPUPROBE_NODE_RANGE_GIB=400: one range at a time)
#   busy       a neighbour process ($BUILD/tests/gpuprobe_test_neighbour) inside a stage: refused
#              and resumed, kept under --allow-busy, and beside run --devices all --busy-wait 5
#   getpage    BM_getpage's grid (GETPAGE: a filter) with TAS/WAS against the RW paper's models
#   peers      BM_peers, one process per allocator (ALLOCS, CELLS, PER_CELL, LIMIT), its report part
#   malloc     Malloc* GPU tests, then gpuprobe-bench filters (FILTERS, ";"-separated)
#   rw-oom     rw_malloc's exact out-of-memory: the in-flight race test, memcheck, synccheck on the
#              small pools RUNS times, the soak; BM_peers/rw_malloc against $BUILD/gpuprobe-bench-before
#   soak       the 10^9-operation soak (OPS)
#   goals      rw_malloc's 54 BM_peers cells by $BUILD/gpuprobe-bench-before (the build before an
#              issue) and this build's, alternating GOALS_N times each (default 2): each case's after
#              over before (dev/bench_ab.py; AFTER_ARGS: flags for this build's runs; GOALS_FILTER:
#              fewer cells, e.g. '^BM_peers/rw_malloc/size:16/'); the goal
#              tables are joined on the host
#              (dev/rw_malloc_goals.sh, the committed peers' rows of the unit's model)
#   ab         one gpuprobe-bench filter (AB_FILTER, default BM_peers/rw_malloc/) with two flag sets,
#              AB_A and AB_B (e.g. --gpuprobe_rw_optimistic=0 and =1), alternating AB_N times each
#              (default 2); then each cell's B over A (the minimum over the runs of each)
#   ncu        Nsight Compute on BM_peers cells' malloc launch (CASES)
#   repeats    characterize --quick QUICK_N times (default 6) and full FULL_N times (default 2) on one
#              unit, then gpuprobe compare over every pair of one mode (compare's false positives)
#   node-repeats  gpuprobe run --devices all FULL_N times (default 3), then --quick QUICK_N times
#              (default 2), numbered from START (default 1) so a second call on the same warm
#              machine goes on counting: every unit's runs for compare's pairs (done on the host)
#   run-repeats  gpuprobe run (full, with validation) RUN_N times (default 3) on GPU 0, numbered from
#              START (default 1) so a second call on the same warm machine goes on counting:
#              compare's pairs of one unit for issue 47 (done on the host)
#   chunk      the tlb stage's sweep (full) on the default 2 MiB alias chunk and on CHUNK (default
#              32M), RUNS times each (default 2): its time and the levels each finds
#   speed      issue 48's stage times, before and after, on one unit in one call: gpuprobe run
#              --quick with the stages as child processes (GPUPROBE_STAGES=children: before; run's
#              tune and validate too),
#              then QUICK_N (default 3) quick runs inside one process (after), then one full run
#              each way (FULL=0 leaves them out); each run's stage times, and the structure of
#              every run against the first (gpuprobe compare), tune's decision times and the pool
#              validate took from tune ("kept"); QUICK_BEFORE=0 leaves out the quick
#              children run (each quick run is then compared with the first), FULL_CHILDREN=0 the
#              full one
#   bench-ab   the run's TAS/WAS grid (gpuprobe run's bench stage) by $BASE/gpuprobe-bench (A) and
#              this build's (B), alternating AB_N times each (default 2): each one's seconds, each
#              case's B over A (dev/bench_ab.py) and its TAS/WAS in both
#   stamps     a quick run's stages one by one, every output line stamped with its second
#              (dev/stamp_lines.py): where characterize, tune, validate and report spend time
#   node-ab    run --devices all RUN_ARGS as built (A) and with AB_ENV set (B), in ORDER (default
#              ABBA): each run's and unit's time, each arm's median
#   node-stamps  gpuprobe run --verbose RUN_ARGS on every GPU at once (every second --map-late
#              unless NODE_ARGS=--no-map-late), every line stamped, merged into node_timeline.txt
#              (dev/node_timeline.py): each unit's stages as intervals on one clock
#   node-stamps-ab  node-stamps by $BASE's build (A) and this one's (B), in ORDER (default ABBA),
#              then this build's unit on GPU SINGLE_DEVICE (default 1) alone, stamped
#   node-goal  each unit's run alone, then run --devices all, full then quick (MODES), each unit's
#              node run compared with its lone run (dev/node_goal.py: seconds and stages, the 10 %
#              goal); BASE adds its run --devices all after this build's (BASE_FIRST=1: before)
#   sass       the chase kernels' SASS (tlb_chase_kernel) in this build and in $BASE's
#   map2       two processes mapping alias ranges at once, no lock ($BUILD/tests/
#              gpuprobe_test_alias_map): each size alone, B while A holds 512 GiB (other GPU, same
#              GPU, 256/512/1024 GiB, cuMemSetAccess per 2 MiB slot or whole), both at once
#   driver-lock  whether the driver takes two processes' mapping calls one at a time
#              ($BUILD/tests/gpuprobe_test_driver_lock): a 128 GiB mapping loop alone, beside the
#              same loop on the other GPU or the same GPU, beside a spinning kernel, busy host cores,
#              a cudaMalloc/cudaFree loop; per phase seconds, per-call median, overlap
#   driver-pressure  cuMemSetAccess's piece size alone and beside a cudaMalloc loop; then where
#              `gpuprobe run --verbose RUN_ARGS` on GPU 0 loads the driver: a small mapping probe on
#              the other GPU, its access time over alone per stage and in 2 s bins
#   ctx-pressure  what a unit's stage start (a process's driver start and context, or a context
#              made again in one process) costs beside a neighbour: alone, beside a whole-GPU chase
#              of cudaMalloc'ed memory and of a held 384 GiB alias range, beside a 128 GiB mapping
#              loop, and per stage of `gpuprobe run --verbose RUN_ARGS` on GPU 0 (CTX_RUN=0: not
#              the run); on one GPU every process shares GPU 0
#   smi-pressure  what characterize's busy check costs beside a neighbour and what it does to the
#              neighbour: nvidia-smi's compute-apps query and an NVML query (one nvmlInit) alone and
#              beside a held 384 GiB alias range; a 128 GiB mapping loop alone and beside an
#              nvidia-smi query a second (as a stage's watcher) on the other GPU and on its own
#   order-stamps  one unit alone, `run --verbose` in the usual order (A) and with --map-late (B), in
#              ORDER (default ABBA), stamped: the late order's driver work with no neighbour
#   sharing-sample  tlb-sharing's spread sample of the 4096 x 64 MiB level (the GPU test's
#              hypothesis): --sample-sms 8, then 16, then (WHOLE=1) every SM, RUNS times each
#              (default 2), by $BASE's build (A, where BASE is set) and this one (B) in turn; a
#              sample that is not global names its pairs that do not share (x both ways) and
#              keeps its matrix in params.sample.matrix beside the whole one
#   sharing-fallback  tlb-sharing's L2 level (2048 x 32 MiB, grouped) with --sample-sms 8: the
#              sample is not global, so every SM is measured after it; RUNS times (default 2), by
#              $BASE's build (A) and this one (B) in turn, then once with no sample (the whole
#              matrix alone); the scope, structure and wall lines (compare the maps on the host)
#   overlap    an alias range (OVERLAP_GIB, default 384) mapped and unmapped beside a timed chase
#              ($BUILD/tests/gpuprobe_test_alias_overlap): unmapped alone, unmapped in a thread,
#              mapped in a thread; and a process that ends with the range mapped (its exit's time)
set -uo pipefail
HERE="$(dirname "${BASH_SOURCE[0]}")"
source "$HERE/device_common.sh" round
G="$B/gpuprobe"
P="" # the TLB profile the last characterize wrote

step_tests() { gpu_tests "${GTEST:-*}"; }

# The headline of a gpuprobe compare Markdown page ("**N differences** (M findings the same).");
# compare prints nothing when given --out.
compare_headline() { grep -m1 -E '^\*\*[0-9]+ difference' "$1"; }

step_tests_whole() {
  timed gpu_whole 560 "$B/tests/gpuprobe_gpu_tests"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|tests? ran" "$D/gpu_whole.txt" | head -20
  LD_LIBRARY_PATH="$B/stub:$LD_LIBRARY_PATH" timed broken_driver 60 "$B/tests/gpuprobe_gpu_tests" \
    --gtest_filter='ClockGpu.*'
  grep -E "broken driver|FAILED|SKIPPED|PASSED" "$D/broken_driver.txt" | head -5 | cut -c1-200
}

step_quick() {
  timed quick 240 "$G" characterize --quick --out "$D/quick" --device 0
  P="$D/quick/raw/tlb_profile.json"
  grep -E '^  [LC][0-9] |^        entry:' "$D/quick.txt" | cut -c1-250
}

step_full() {
  timed full 300 "$G" characterize --out "$D/full" --device 0
  timed full_report 120 "$G" report --input "$D/full" --out "$D/full/report" --format md
  P="$D/full/raw/tlb_profile.json"
  grep -E '^  [LC][0-9] |^        entry:' "$D/full.txt" | cut -c1-250
}

step_run() {
  local m
  for m in full quick; do
    [ "$m" = full ] && [ "${FULL:-1}" = 0 ] && continue
    [ "$m" = quick ] && [ "${QUICK:-1}" = 0 ] && continue
    local flag=""
    [ "$m" = quick ] && flag=--quick
    timed "run_$m" 560 "$G" run $flag --out "$D/run_$m" --device 0
    timed "run_${m}_again" 120 "$G" run $flag --out "$D/run_$m" --device 0
    grep -E '^  [LC][0-9] |^\[run\]|^gpuprobe run:|^  (tuning|validate|report):|error' \
      "$D/run_$m.txt" | cut -c1-200 | tail -20
  done
}

step_baseline() {
  [ -n "${BASE:-}" ] || { echo "baseline: set BASE to the baseline build's carried folder" >&2; return 1; }
  local m flag
  for m in full quick; do
    [ "$m" = quick ] && [ "${BASE_QUICK:-0}" = 0 ] && continue
    [ "$m" = full ] && [ "${BASE_FULL:-1}" = 0 ] && continue
    flag=""
    [ "$m" = quick ] && flag=--quick
    local b="base" t="this"
    [ "$m" = quick ] && b="base_quick" t="this_quick"
    LD_LIBRARY_PATH="$BASE/lib:$LD_LIBRARY_PATH" timed "${b}_run" 560 "$BASE/gpuprobe" run $flag --out "$D/$b"
    timed "${t}_run" 560 "$G" run $flag --out "$D/$t"
    grep -hE '^\[run\]|^gpuprobe run:' "$D/${b}_run.txt" "$D/${t}_run.txt" | cut -c1-120
    [ -f "$D/$b/profile.json" ] && [ -f "$D/$t/profile.json" ] &&
      "$G" compare --reanalyze "$D/$b" "$D/$t" --out "$D/compare_$m.json" --markdown "$D/compare_$m.md" &&
      echo "compare $m, baseline against this build: $(compare_headline "$D/compare_$m.md")"
  done
}

need_profile() {
  [ -n "$P" ] && return 0
  echo "$1: run quick or full first (it reads their TLB profile)" >&2
  return 1
}

step_coverage() {
  need_profile coverage || return 1
  local i
  for i in $(seq 1 "${RUNS:-1}"); do
    timed "coverage$i" 300 "$G" tlb-coverage --profile "$P" --out "$D/coverage$i.json"
    grep -E '^  L[0-9]' "$D/coverage$i.txt" | cut -c1-300
  done
}

step_conflict() {
  need_profile conflict || return 1
  # shellcheck disable=SC2086
  timed conflict 400 "$G" tlb-conflict --profile "$P" --windows 8 ${CONFLICT_ARGS:-} \
    --out "$D/conflict.json"
  grep -E "^  L[0-9]|predicted|a miss is past|groups:|onset walk" "$D/conflict.txt" | cut -c1-250
  python3 - "$P" "$D/conflict.json" <<'PY'
import json, sys
ways = {"L%d" % (i + 1): L.get("structure", {}).get("ways")
        for i, L in enumerate(json.load(open(sys.argv[1]))["tlb"]["levels"])}
for L in json.load(open(sys.argv[2]))["tlb_conflict"]["levels"]:
    sizes = [s["size"] for s in L.get("sets", []) if "failed" not in s]
    w = ways.get(L["level"])
    ok = w is not None and sizes and all(x == int(w) + 1 for x in sizes)
    print("conflict %s: sets %s, the ramp's W + 1 = %s: %s" % (L["level"], sizes,
          None if w is None else int(w) + 1, "AGREE" if ok else "DIFFER"))
PY
}

# tlb-conflict over the last characterize's profile with and without --infer-halves, alternating
# RUNS times each (default 3): each run's time, and each level's set sizes and group tests.
step_conflict_ab() {
  need_profile conflict-ab || return 1
  local i m
  # old: the default search; new: the default with AB_NEW (default --onset-start-share 64, the
  # start before stop 64); tested: --quarter-split --test-halves (the split before stop 64).
  for i in $(seq 1 "${RUNS:-3}"); do
    for m in old new tested; do
      local flag=""
      [ "$m" = new ] && flag="${AB_NEW:---onset-start-share 64}"
      [ "$m" = tested ] && flag="--quarter-split --test-halves"
      # shellcheck disable=SC2086
      timed "conflict_${m}$i" 300 "$G" tlb-conflict --profile "$P" $flag --out "$D/conflict_${m}$i.json"
    done
  done
  python3 - "$D" "${RUNS:-3}" <<'PY' | tee "$D/conflict_ab.txt"
import json, sys
d, runs = sys.argv[1], int(sys.argv[2])
def load(name):
    try:
        return json.load(open("%s/%s.json" % (d, name)))["tlb_conflict"]
    except Exception as e:
        return None
def key(r):  # what the search found: each level's sets (onset, members, method) and predictions
    return {L["level"]: ([(s.get("onset_pages"), tuple(s.get("members", [])), s.get("method"), s.get("failed"))
                          for s in L.get("sets", [])],
                         [p.get("held") for p in L.get("predictions", [])]) for L in r["levels"]}
ref = load("conflict_old1")
for i in range(1, runs + 1):
    for m in ("old", "new", "tested"):
        r = load("conflict_%s%d" % (m, i))
        if r is None:
            print("%s%d: no result" % (m, i)); continue
        lv = "; ".join("%s %.2f s onsets %s tests %s sizes %s held %s" % (
            L["level"], L.get("seconds", 0), [s.get("onset_pages") for s in L.get("sets", [])],
            [s.get("tests") for s in L.get("sets", [])], [s.get("size") for s in L.get("sets", [])],
            [p.get("held") for p in L.get("predictions", [])]) for L in r["levels"])
        same = "same as old1" if ref and key(r) == key(ref) else "DIFFERS from old1"
        if ref and key(r) != key(ref):
            diff = [l for l in key(r) if key(r)[l] != key(ref).get(l)]
            same += " in " + ",".join(diff)
        print("%s%d: %.2f s, %s; %s" % (m, i, r["wall_seconds"], same, lv))
PY
}

step_node() {
  local r
  for r in $(seq 1 "${ROUNDS:-2}"); do
    timed "node$r" 280 "$G" characterize --devices all --out "$D/node$r"
  done
  timed single0 200 "$G" characterize --device 0 --out "$D/single0"
  timed node_tune 200 "$G" tune --devices all --quick --results "$D/node1"
  grep -hE '^gpuprobe (characterize|tune)|^  gpu[0-9]|error' "$D"/node*.txt "$D/single0.txt" | cut -c1-200
}

step_node_run() {
  local one="${SINGLE_DEVICE:-0}" u
  # shellcheck disable=SC2086
  timed single_run 250 "$G" run ${RUN_ARGS:-} --device "$one" --out "$D/single_run"
  # shellcheck disable=SC2086
  timed node_run 330 "$G" run ${RUN_ARGS:-} --devices all ${NODE_ARGS:-} --out "$D/node_run"
  if [ -n "${BASE:-}" ]; then # the baseline build's node run, on the same node (BASE: its folder)
    # shellcheck disable=SC2086
    base_node_run base_node_run 330 ${BASE_ARGS:-}
  fi
  if [ "${SERIAL:-0}" = 1 ]; then
    GPUPROBE_NODE_RANGE_GIB=400 timed node_run_serial 560 "$G" run --devices all --out "$D/node_run_serial"
  fi
  local f
  for f in "$D"/single_run.txt "$D"/node_run*.txt "$D"/base_node_run.txt; do
    [ -f "$f" ] || continue
    echo "== $(basename "$f" .txt)"
    grep -hE '^gpuprobe run|^  gpu[0-9]|ok in|FAILED' "$f" | cut -c1-200
    echo "budget waits: $(grep -rhc 'waits for .* mapped-range budget' "${f%.txt}" "$f" 2>/dev/null |
      awk '{s += $1} END {print s + 0}')"
  done
  # The unit run alone against itself in the node run.
  for u in $(node_unit_of "$D/single_run" "$D/node_run"); do
    "$G" compare "$D/single_run" "$u" --out "$D/compare_node.json" --markdown "$D/compare_node.md"
    echo "compare, $(basename "$u") alone against the node: $(compare_headline "$D/compare_node.md")"
    # The TAS/WAS grid alone against the node (under --map-late the late unit's runs first,
    # beside its neighbour's mapping): each case's node time over the lone one.
    if [ -f "$D/single_run/raw/bench_getpage.json" ] && [ -f "$u/raw/bench_getpage.json" ]; then
      python3 "$HERE/bench_ab.py" "$D/single_run/raw/bench_getpage.json" -- \
        "$u/raw/bench_getpage.json" >"$D/bench_node.md"
      echo "bench grid, node over alone: $(tail -1 "$D/bench_node.md")"
    fi
  done
}

step_busy() {
  local N="$B/tests/gpuprobe_test_neighbour" A="$D/busyA" Bd="$D/busyB" g n
  # A: both measurements of tlb disturbed -> refused, raw/tlb.json removed; the resume measures.
  (
    sleep 4
    "$N" 0 3 >"$D/busyA_neighbour1.txt" 2>&1 &
    for _ in $(seq 1 120); do
      grep -q "measuring it again" "$D/busyA_first.txt" 2>/dev/null && break
      sleep 0.5
    done
    sleep 2
    "$N" 0 3 >"$D/busyA_neighbour2.txt" 2>&1
  ) &
  sleep 1
  timed busyA_first 300 "$G" characterize --quick --out "$A" --busy-wait 20
  wait
  echo "tlb.json after the refusal: $([ -f "$A/raw/tlb.json" ] && echo present || echo removed)"
  timed busyA_resume 300 "$G" characterize --quick --out "$A"
  # B: --allow-busy with a neighbour inside tlb: the mark is written and kept through a resume.
  ( sleep 5; "$N" 0 3 >"$D/busyB_neighbour.txt" 2>&1 ) &
  timed busyB_first 300 "$G" characterize --quick --allow-busy --out "$Bd"
  wait
  echo "files marked disturbed: $(grep -l '"disturbed"' "$Bd"/raw/*.json 2>/dev/null | xargs -n1 basename | tr '\n' ' ')"
  rm -f "$Bd/raw/atomics.json"
  timed busyB_resume 300 "$G" characterize --quick --out "$Bd"
  # C: a neighbour on every GPU; run --devices all --busy-wait 5 waits 5 s on each.
  n=$(nvidia-smi -L | wc -l)
  for g in $(seq 0 $((n - 1))); do "$N" "$g" 20 >"$D/busyC_neighbour$g.txt" 2>&1 & done
  sleep 3
  timed busyC_devices 120 "$G" run --devices all --quick --busy-wait 5 --out "$D/busyC"
  wait
  grep -rh "waiting up to" "$D/busyC" | cut -c1-200
}

step_getpage() {
  local f="${GETPAGE:-^BM_getpage/(rw|rw_bm32|rw_bm64|corw32|corw64|crw)/threads:(4096|65536|1048576)/free_permille:(500|5)/}"
  timed getpage 300 "$B/gpuprobe-bench" --benchmark_filter="$f" \
    --benchmark_out="$D/bench_getpage.json" --benchmark_out_format=json
  python3 - "$D/bench_getpage.json" <<'PY' | tee "$D/getpage.md"
import json, sys
print("| case | ms | TAS | TAS theory (Eq. 9) | TAS first call | WAS | WAS bound |")
print("|---|---|---|---|---|---|---|")
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    f = lambda k, p=1: "-" if b.get(k) is None else f"{b[k]:.{p}f}"
    n = b["name"].replace("BM_getpage/", "").split("/iterations")[0]
    print(f"| {n} | {f('real_time', 3)} | {f('TAS')} | {f('TAS_theory')} | {f('TAS_first')} | {f('WAS')} | {f('WAS_theory')} |")
PY
}

step_peers() {
  local a cell i j rc s unit
  mkdir -p "$D/peers/raw"
  unit=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | head -1)
  for a in ${ALLOCS:-cuda_malloc rw_malloc corw64 bump gallatin gallatin_8k ouroboros_page ouroboros_chunk scatteralloc}; do
    if [[ " ${PER_CELL:-scatteralloc} " == *" $a "* ]]; then # one process per cell
      s=$(date +%s) i=0
      for cell in $("$B/gpuprobe-bench" --benchmark_list_tests \
          --benchmark_filter="^BM_peers/$a/.*${CELLS:-}" 2>/dev/null); do
        i=$((i + 1))
        j="$D/peers/raw/bench-peers-$a-$i.json"
        timeout "${LIMIT:-300}" "$B/gpuprobe-bench" --benchmark_filter="^${cell%%/iterations:*}/" \
          --benchmark_out="$j" --benchmark_out_format=json >>"$D/peers_$a.txt" 2>&1
        rc=$?
        # A killed process leaves no whole JSON: the cell is recorded as failed, with why.
        [ $rc -eq 124 ] && printf '{"context": {"gpu_uuid": "%s"}, "benchmarks": [{"name": "%s", "run_name": "%s", "run_type": "iteration", "error_occurred": true, "error_message": "did not finish within %s s (killed by dev/device_round.sh)"}]}\n' \
          "$unit" "$cell" "$cell" "${LIMIT:-300}" >"$j"
      done
      echo "peers $a: $i cells, one process each, in $(( $(date +%s) - s )) s" | tee -a "$D/steps.txt"
      continue
    fi
    timed "peers_$a" "${LIMIT:-300}" "$B/gpuprobe-bench" --benchmark_filter="^BM_peers/$a/.*${CELLS:-}" \
      --benchmark_out="$D/peers/raw/bench-peers-$a.json" --benchmark_out_format=json
  done
  timed peers_report 120 "$G" report --input "$D/peers" --out "$D/peers/report" --format md
  awk '/^#+ rw(\\)?_malloc against the goals/{p=1} /^#+ (Where each|Not in this folder)/{p=0} p' \
    "$D/peers/report/index.md" | grep -v '^$' | cut -c1-220
}

step_malloc() {
  gpu_tests "${GTEST:-Malloc*}"
  local f name
  IFS=";" read -ra FS <<<"${FILTERS:-BM_malloc/rw_malloc;BM_malloc/ouroboros;BM_malloc/xmalloc;BM_malloc/cuda_malloc;BM_utilization}"
  for f in "${FS[@]}"; do
    name=$(echo "$f" | tr -c 'A-Za-z0-9_\n' '_' | cut -c1-40)
    timed "bench_$name" 500 "$B/gpuprobe-bench" --benchmark_filter="$f" \
      --benchmark_out="$D/$name.json" --benchmark_out_format=json --benchmark_counters_tabular=true
    grep -E "^BM_|ERROR" "$D/bench_$name.txt" | sed 's|/iterations:[0-9]*/manual_time||' | head -60
  done
}

step_rw_oom() {
  local race='MallocGpu.RwMallocExactOutOfMemoryWhileStashRunsAreInFlight' fails r
  timed race 300 "$B/tests/gpuprobe_gpu_tests" --gtest_filter="$race"
  GPUPROBE_RACE_TRIALS=1 timed race_memcheck 300 compute-sanitizer --tool memcheck \
    --error-exitcode 9 "$B/tests/gpuprobe_gpu_tests" --gtest_filter="$race"
  fails=0
  for r in $(seq 1 "${RUNS:-12}"); do
    compute-sanitizer --tool synccheck "$B/tests/gpuprobe_gpu_tests" --gtest_filter='*MallocSmall*' \
      >"$D/synccheck-$r.txt" 2>&1 || fails=$((fails + 1))
  done
  echo "synccheck failures $fails of ${RUNS:-12}" | tee -a "$D/steps.txt"
  GPUPROBE_SOAK_OPS=1e9 timed rw_plain 400 "$B/tests/gpuprobe_gpu_tests" \
    --gtest_filter="MallocGpu.*Rw*:MallocGpu.MallocSmall*:Soak.*:Tuned.RwMalloc*:MallocUtilization.*:-$race"
  [ -x "$B/gpuprobe-bench-before" ] && rw_before_after 2 rw_peers rw-peers
  grep -h "in-flight accounting" "$D/race.txt"
  grep -hE 'ERROR SUMMARY' "$D/race_memcheck.txt"
  grep -E 'OK \]|FAILED \]|soak:|fill:' "$D/rw_plain.txt" | tail -20
}

# rw_malloc's BM_peers cells by $B/gpuprobe-bench-before and $B/gpuprobe-bench, alternating N
# times: steps NAME_{before,after}_k, files $D/FILE-{before,after}-k.json.
rw_before_after() {
  local n=$1 name=$2 file=$3 k which bin extra
  for k in $(seq 1 "$n"); do
    for which in before after; do
      bin="$B/gpuprobe-bench" extra=${AFTER_ARGS:-}
      [ "$which" = before ] && bin="$B/gpuprobe-bench-before" extra=""
      # shellcheck disable=SC2086 # AFTER_ARGS: a list of flags for this build's runs
      timed "${name}_${which}_$k" 200 "$bin" --benchmark_filter="${GOALS_FILTER:-^BM_peers/rw_malloc/}" \
        --benchmark_out="$D/$file-$which-$k.json" --benchmark_out_format=json $extra
    done
  done
}

step_goals() {
  rw_before_after "${GOALS_N:-2}" goals rw
  python3 "$HERE/bench_ab.py" "$D"/rw-before-*.json -- "$D"/rw-after-*.json >"$D/goals-ab.md"
  tail -1 "$D/goals-ab.md"
}

step_ab() {
  local k which args
  for k in $(seq 1 "${AB_N:-2}"); do
    for which in a b; do
      args=${AB_A:-}
      [ "$which" = b ] && args=${AB_B:-}
      # shellcheck disable=SC2086 # the flag sets are lists of words
      timed "ab_${which}_$k" 300 "$B/gpuprobe-bench" --benchmark_filter="${AB_FILTER:-BM_peers/rw_malloc/}" \
        $args --benchmark_out="$D/ab-$which-$k.json" --benchmark_out_format=json
    done
  done
  python3 "$HERE/bench_ab.py" "$D"/ab-a-*.json -- "$D"/ab-b-*.json | tee "$D/ab.md"
}

step_soak() {
  GPUPROBE_SOAK_OPS="${OPS:-1e9}" timed soak 500 "$B/tests/gpuprobe_gpu_tests" \
    --gtest_filter='Soak.*'
  grep -hE 'soak:|fill:|OK \]|FAILED \]|Which is|Failure' "$D/soak.txt"
}

step_ncu() {
  local c n
  for c in ${CASES:-rw_malloc/size:16/threads:16384/state:empty}; do
    n=$(echo "$c" | tr '/:' '__')
    # launch 1 loads the kernels, 2 is the first launch on the heap, 3.. are timed
    timed "ncu_$n" 300 ncu --clock-control none --cache-control none -k regex:malloc_and_tag \
      --launch-skip 2 --launch-count 1 --section SpeedOfLight --section LaunchStats \
      --section WarpStateStats --section SourceCounters --section Occupancy \
      --export "$D/$n" "$B/gpuprobe-bench" --benchmark_filter="^BM_peers/$c"
    ncu --import "$D/$n.ncu-rep" --page details >"$D/${n}_details.txt" 2>&1
    grep -E "^\s+(Duration|Registers Per Thread|Warp Cycles Per Issued Instruction|Achieved Occupancy)" \
      "$D/${n}_details.txt" | sed 's/  */ /g'
  done
}

step_repeats() {
  local i j m n
  for m in quick full; do
    n=$([ "$m" = quick ] && echo "${QUICK_N:-6}" || echo "${FULL_N:-2}")
    local flag=""
    [ "$m" = quick ] && flag=--quick
    for i in $(seq 1 "$n"); do
      timed "rep_${m}$i" 300 "$G" characterize $flag --out "$D/rep_${m}$i" --device 0
    done
    for i in $(seq 1 "$n"); do
      for j in $(seq $((i + 1)) "$n"); do
        "$G" compare "$D/rep_${m}$i" "$D/rep_${m}$j" --out "$D/cmp_${m}_${i}_$j.json" \
          --markdown "$D/cmp_${m}_${i}_$j.md" >/dev/null 2>&1
        echo "$m $i-$j: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["differences"], "differences;", "; ".join(f["item"] + " " + f["a"] + " -> " + f["b"] for f in d["findings"] if f["verdict"] not in ("SAME", "NOTE")))' "$D/cmp_${m}_${i}_$j.json")" |
          tee -a "$D/repeats.txt"
      done
    done
  done
}

step_node_repeats() {
  local i m n s=${START:-1}
  for m in full quick; do
    n=$([ "$m" = quick ] && echo "${QUICK_N:-2}" || echo "${FULL_N:-3}")
    local flag=""
    [ "$m" = quick ] && flag=--quick
    for i in $(seq "$s" $((s + n - 1))); do
      timed "nrep_${m}$i" 330 "$G" run --devices all $flag --out "$D/nrep_${m}$i"
      grep -hE '^gpuprobe run' "$D/nrep_${m}$i.txt" | cut -c1-160
    done
  done
}

step_run_repeats() {
  local i s=${START:-1}
  for i in $(seq "$s" $((s + ${RUN_N:-3} - 1))); do
    timed "rrep_full$i" 280 "$G" run --out "$D/rrep_full$i" --device 0
    grep -hE '^gpuprobe run' "$D/rrep_full$i.txt" | cut -c1-160
  done
}

step_chunk() {
  local i c
  for i in $(seq 1 "${RUNS:-2}"); do
    for c in default "${CHUNK:-32M}"; do
      local extra=()
      [ "$c" != default ] && extra=(--alias-bytes "$c")
      timed "chunk_${c}_$i" 120 "$G" tlb --alloc alias --device 0 --no-control --seed 1 "${extra[@]}" \
        --out "$D/chunk_${c}_$i.json"
      grep -hiE 'mapped|levels?|error' "$D/chunk_${c}_$i.txt" | head -4 | cut -c1-200
    done
  done
}

# One run's times: run's stages, characterize's stages (profile.json), and the levels found.
run_times() { # NAME
  python3 - "$D/$1" "$D/$1.txt" "$1" <<'PY' | tee -a "$D/speed.txt"
import json, re, sys
folder, log, name = sys.argv[1:4]
text = open(log).read()
run = re.findall(r"^\[run\] (\w+) +(\d+) s", text, re.M)
total = re.search(r"^gpuprobe run: (\d+) s", text, re.M)
try:
    p = json.load(open(folder + "/profile.json"))
    st = ", ".join("%s %.1f" % (s["name"], s["seconds"]) for s in p.get("stages", []) if "seconds" in s)
    lv = "; ".join("%s %dx%s %+.0f" % ("L%d" % (i + 1), L["entries"], L.get("coverage_bytes", L.get("page_bytes")) // 2**20, L["miss_penalty_cycles"])
                   for i, L in enumerate(p["tlb"]["levels"]))
except Exception as e:  # a run that failed: say so
    st, lv = "no profile (%s)" % e, "-"
try:  # tune's decisions and validate's kept pool, from the run's log
    rl = open(folder + "/run.log").read()
    dec = re.findall(r"decision times: (.*)", rl)
    kept = re.findall(r"^\[pools\] (.*)", rl, re.M)
except OSError:
    dec, kept = [], []
print("%s: run %s s (%s)\n  characterize stages: %s\n  levels: %s\n  tune: %s; kept: %s" % (
    name, total.group(1) if total else "?", ", ".join("%s %s" % r for r in run), st, lv,
    dec[-1] if dec else "-", kept[-1] if kept else "none"))
PY
}

step_speed() {
  local i
  if [ "${QUICK_BEFORE:-1}" != 0 ]; then
    GPUPROBE_STAGES=children timed speed_quick_children 300 "$G" run --quick --out "$D/speed_quick_children" --device 0
    run_times speed_quick_children
  fi
  for i in $(seq 1 "${QUICK_N:-3}"); do
    timed "speed_quick$i" 300 "$G" run --quick --out "$D/speed_quick$i" --device 0
    run_times "speed_quick$i"
  done
  if [ "${FULL:-1}" != 0 ]; then
    timed speed_full 400 "$G" run --out "$D/speed_full" --device 0
    run_times speed_full
    if [ "${FULL_CHILDREN:-1}" != 0 ]; then
      GPUPROBE_STAGES=children timed speed_full_children 400 "$G" run --out "$D/speed_full_children" --device 0
      run_times speed_full_children
    fi
  fi
  for i in "$D"/speed_quick[0-9]* "$D"/speed_full; do
    [ -d "$i" ] || continue
    local ref="$D/speed_quick_children"
    [ -d "$ref" ] || ref="$D/speed_quick1" # no children run: each quick run against the first
    [ "$(basename "$i")" = speed_full ] && ref="$D/speed_full_children"
    [ "$i" = "$ref" ] && continue
    [ -d "$ref" ] || continue
    "$G" compare "$ref" "$i" --out "$D/cmp_$(basename "$i").json" >/dev/null 2>&1
    echo "compare $(basename "$ref") $(basename "$i"): $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["differences"], "differences;", "; ".join(f["item"] + " " + f["a"] + " -> " + f["b"] for f in d["findings"] if f["verdict"] not in ("SAME", "NOTE"))[:600])' "$D/cmp_$(basename "$i").json" 2>&1)" |
      tee -a "$D/speed.txt"
  done
}

step_bench_ab() {
  [ -n "${BASE:-}" ] || { echo "bench-ab: set BASE to the baseline build's carried folder" >&2; return 1; }
  local k which bin filter
  filter='^BM_getpage/(rw|rw_bm32|rw_bm64|corw32|corw64|crw)/threads:(4096|65536|1048576)/free_permille:(500|5)/' # pipeline/bench_stage.cpp
  for k in $(seq 1 "${AB_N:-2}"); do
    for which in a b; do
      bin="$B/gpuprobe-bench"
      [ "$which" = a ] && bin="$BASE/gpuprobe-bench"
      LD_LIBRARY_PATH="$([ "$which" = a ] && echo "$BASE/lib:")$LD_LIBRARY_PATH" \
        timed "bench_${which}_$k" 300 "$bin" --benchmark_filter="$filter" \
        --benchmark_out="$D/bench-$which-$k.json" --benchmark_out_format=json
    done
  done
  python3 "$HERE/bench_ab.py" "$D"/bench-a-*.json -- "$D"/bench-b-*.json | tee "$D/bench_ab.md" | tail -3
  python3 - "$D"/bench-a-1.json "$D"/bench-b-1.json <<'PY' | tee -a "$D/bench_ab.md"
import json, sys
def counters(p):
    return {b["name"].split("/iterations")[0]: (b.get("TAS"), b.get("WAS"))
            for b in json.load(open(p))["benchmarks"] if not b.get("error_occurred")}
a, b = counters(sys.argv[1]), counters(sys.argv[2])
same = sum(1 for n in a if n in b and a[n] == b[n])
print("TAS/WAS: %d of %d cases the same in both binaries' first runs" % (same, len(a)))
for n in a:
    if n in b and a[n] != b[n]:
        print("  %s: TAS %s -> %s, WAS %s -> %s" % (n, a[n][0], b[n][0], a[n][1], b[n][1]))
PY
}

# Where a quick run's stages spend their time: characterize, tune, validate and report run one
# after another as `run --quick` runs them, each line stamped with the seconds since its start.
step_stamps() {
  local f="$D/stamps" s
  python3 "$HERE/stamp_lines.py" "$D/stamps_characterize.txt" -- "$G" characterize --quick --out "$f" --device 0
  python3 "$HERE/stamp_lines.py" "$D/stamps_tune.txt" -- "$G" tune --quick --device 0 \
    --profile "$f/profile.json" --out "$f/tuning.json"
  python3 "$HERE/stamp_lines.py" "$D/stamps_validate.txt" -- "$G" validate --quick --device 0 \
    --tuning "$f/tuning.json" --out "$f/validation.json"
  python3 "$HERE/stamp_lines.py" "$D/stamps_report.txt" -- "$G" report --input "$f" --out "$f/report"
  for s in characterize tune validate report; do
    echo "$s: $(tail -1 "$D/stamps_$s.txt")"
  done
}

# Node runs of this build as it is (A) and with AB_ENV set (B, e.g. GPUPROBE_NODE_RANGE_GIB=400),
# in ORDER (default ABBA: drift on the node falls on both arms alike): each run's time and its
# units', then each arm's times and median.
step_node_ab() {
  [ -n "${AB_ENV:-}" ] || {
    echo "node-ab: set AB_ENV (e.g. AB_ENV=GPUPROBE_NODE_RANGE_GIB=400)" >&2
    return 1
  }
  local i=0 arm name
  for arm in $(echo "${ORDER:-ABBA}" | grep -o .); do
    i=$((i + 1))
    name="node_ab_${i}_$arm"
    # shellcheck disable=SC2086
    if [ "$arm" = B ]; then
      (export ${AB_ENV?}; timed "$name" 330 "$G" run ${RUN_ARGS:-} --devices all --out "$D/$name")
    else
      timed "$name" 330 "$G" run ${RUN_ARGS:-} --devices all --out "$D/$name"
    fi
  done
  for name in "$D"/node_ab_*.txt; do
    echo "$(basename "$name" .txt): $(grep -hoE '^gpuprobe run --devices all: [0-9]+ s' "$name" |
      grep -oE '[0-9]+ s'), units $(grep -hoE 'ok in [0-9]+ s' "$name" | grep -oE '[0-9]+' | paste -sd/)"
  done | tee "$D/node_ab.txt"
  local times
  for arm in A B; do
    times=$(grep -E "_$arm: " "$D/node_ab.txt" | grep -oE ': [0-9]+ s' | grep -oE '[0-9]+' | sort -n)
    echo "$arm ($([ $arm = B ] && echo "$AB_ENV" || echo as built)): $(echo "$times" | paste -sd' ') s;" \
      "median $(echo "$times" | awk '{v[NR] = $1}
        END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}') s"
  done
}

# `gpuprobe run --verbose [ARGS] RUN_ARGS` on GPU GPU alone (as device 0, as run_per_device
# starts a unit), every output line stamped into FILE (stamp_lines.py). Usage: GPU FILE OUT [ARGS]
stamped_run() {
  local gpu=$1 file=$2 out=$3
  shift 3
  # shellcheck disable=SC2086
  CUDA_VISIBLE_DEVICES=$gpu python3 "$HERE/stamp_lines.py" "$file" -- "$G" run --verbose \
    --device 0 "$@" ${RUN_ARGS:-} --out "$out" >/dev/null 2>&1
}

# A node's units on one clock: `gpuprobe run --verbose` on every GPU at once, as `run --devices all`
# starts them (every second one --map-late unless NODE_ARGS=--no-map-late), each line stamped
# (stamp_lines.py), merged by node_timeline.py: which phases of the units overlap.
step_node_stamps() {
  node_stamps_into node_stamps
  grep -E "^gpu[0-9]+: " "$D/node_timeline.txt"
}

# node-stamps' run into $D/NAME (units NAME/gpuI, NAME_gpuI.txt), merged into
# $D/NAME_timeline.txt (node_stamps: node_timeline.txt, as before), by $G.
node_stamps_into() {
  local name=$1 n i late pids=() args=() out
  n=$(nvidia-smi -L | wc -l)
  for i in $(seq 0 $((n - 1))); do
    late=""
    [ $((i % 2)) = 1 ] && [ "${NODE_ARGS:-}" != --no-map-late ] && late=--map-late
    # shellcheck disable=SC2086
    stamped_run "$i" "$D/${name}_gpu$i.txt" "$D/$name/gpu$i" $late &
    pids+=($!)
    args+=("gpu$i=$D/${name}_gpu$i.txt")
  done
  wait "${pids[@]}"
  out="$D/${name}_timeline.txt"
  [ "$name" = node_stamps ] && out="$D/node_timeline.txt"
  python3 "$HERE/node_timeline.py" "${args[@]}" >"$out"
}

# node-stamps by $BASE's build (A) and this one's (B) in ORDER (default ABBA), then this build's
# unit on GPU SINGLE_DEVICE (default 1) alone, stamped: each node run's and unit's seconds, and
# the lone run's (gpuprobe compare of the folders is done on the host).
step_node_stamps_ab() {
  [ -n "${BASE:-}" ] || {
    echo "node-stamps-ab: set BASE (a baseline build's folder)" >&2
    return 1
  }
  local i=0 arm name g0=$G
  for arm in $(echo "${ORDER:-ABBA}" | grep -o .); do
    i=$((i + 1))
    name="ab_${i}_$arm"
    G=$([ "$arm" = A ] && echo "$BASE/gpuprobe" || echo "$g0")
    node_stamps_into "$name"
    G=$g0
    echo "$name: $(grep -E "^gpu[0-9]+: " "$D/${name}_timeline.txt" | paste -sd' ')"
    grep -hE "^ *[0-9.]+ gpu[0-9]+ gpuprobe run: [0-9]+ s" "$D/${name}_timeline.txt"
  done
  stamped_run "${SINGLE_DEVICE:-1}" "$D/alone.txt" "$D/alone"
  echo "alone (GPU ${SINGLE_DEVICE:-1}): $(grep -E "gpuprobe run: [0-9]+ s" "$D/alone.txt")"
}

# Issue 81's goal on one node: each unit's `gpuprobe run` alone, then `run --devices all`, a mode
# at a time (MODES, default "full quick"); each unit's node run compared with its lone run. BASE
# (a baseline build's folder, with its lib/) adds its `run --devices all` of each mode, after this
# build's, or before it with BASE_FIRST=1 (so that nodes in turn give both orders). The table
# (dev/node_goal.py): each unit's seconds and stages alone and in the node, the compares, the goal.
step_node_goal() {
  local n i mode uuid u args
  n=$(nvidia-smi -L | wc -l)
  for mode in ${MODES:-full quick}; do
    args=()
    [ "$mode" = quick ] && args=(--quick)
    for i in $(seq 0 $((n - 1))); do
      timed "alone_${mode}_gpu$i" 300 "$G" run "${args[@]}" --device "$i" --out "$D/alone_$mode/gpu$i"
    done
    [ -n "${BASE:-}" ] && [ "${BASE_FIRST:-0}" = 1 ] && base_node_run "base_node_$mode" 400 "${args[@]}"
    timed "node_$mode" 400 "$G" run "${args[@]}" --devices all --out "$D/node_$mode"
    [ -n "${BASE:-}" ] && [ "${BASE_FIRST:-0}" != 1 ] && base_node_run "base_node_$mode" 400 "${args[@]}"
    for i in $(seq 0 $((n - 1))); do
      for u in $(node_unit_of "$D/alone_$mode/gpu$i" "$D/node_$mode"); do
        "$G" compare "$D/alone_$mode/gpu$i" "$u" --out "$D/compare_${mode}_gpu$i.json" \
          --markdown "$D/compare_${mode}_gpu$i.md" >/dev/null 2>&1
      done
    done
  done
  python3 "$HERE/node_goal.py" "$D" | tee "$D/node_goal.md"
}

# The baseline build's `run --devices all ARGS` into $D/NAME under LIMIT seconds: $BASE/gpuprobe,
# its lib/ first (node-run, node-goal).
base_node_run() {
  local name=$1 limit=$2
  shift 2
  LD_LIBRARY_PATH="$BASE/lib:$LD_LIBRARY_PATH" timed "$name" "$limit" "$BASE/gpuprobe" run \
    --devices all "$@" --out "$D/$name"
}

# The unit folder under NODE (a run --devices all) that measured the GPU of the lone run LONE (its
# profile's UUID); nothing where LONE has no profile or no unit matches.
node_unit_of() {
  local uuid u
  uuid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"]["uuid"])' \
    "$1/profile.json" 2>/dev/null) || return 0
  for u in "$2"/*/; do
    grep -qs "$uuid" "$u/profile.json" && echo "$u"
  done
  return 0
}

# The chase kernels' SASS in this build and in $BASE's (the timed loop should read the same).
step_sass() {
  local b
  for b in this base; do
    local bin="$G"
    [ "$b" = base ] && bin="${BASE:-}/gpuprobe"
    [ -x "$bin" ] || continue
    cuobjdump -sass "$bin" 2>&1 |
      awk '/Function : /{on = ($0 ~ /tlb_chase_kernel/)} on' >"$D/sass_chase_$b.txt"
    echo "sass $b: $(grep -c 'Function : ' "$D/sass_chase_$b.txt") functions, $(grep -cE '^ +/\*[0-9a-f]{4}\*/' "$D/sass_chase_$b.txt") instructions"
  done
}

step_map2() {
  local M="$B/tests/gpuprobe_test_alias_map" g
  free -m >"$D/map2_host_memory.txt"
  for g in 256 512 1024; do timed "map2_alone_$g" 120 "$M" 0 "$g" 0; done
  # A maps and holds; once it says "mapped", B maps; then A is ended.
  hold_then() { # A_DEV A_GIB B_DEV B_GIB NAME [B_PIECE_MIB]
    "$M" "$1" "$2" 90 >"$D/map2_$5_A.txt" 2>&1 &
    local a=$! k
    for k in $(seq 1 120); do
      grep -q '^mapped' "$D/map2_$5_A.txt" 2>/dev/null && break
      kill -0 "$a" 2>/dev/null || break
      sleep 0.5
    done
    free -m >>"$D/map2_host_memory.txt"
    timed "map2_$5_B" 120 "$M" "$3" "$4" 0 ${6:-}
    kill "$a" 2>/dev/null
    wait "$a" 2>/dev/null
  }
  hold_then 0 512 1 512 other512
  hold_then 0 512 1 256 other256
  hold_then 0 512 1 1024 other1024
  hold_then 0 512 0 512 same512
  hold_then 0 512 1 512 other512_piece2M 2
  hold_then 0 512 1 512 other512_piece_whole 1048576
  "$M" 0 512 0 >"$D/map2_both_A.txt" 2>&1 &
  "$M" 1 512 0 >"$D/map2_both_B.txt" 2>&1 &
  wait
  for g in "$D"/map2_*.txt; do
    echo "== $(basename "$g" .txt)"
    grep -E 'cuMem|reserve|mapped$' "$g" | cut -c1-260
  done
}

step_overlap() {
  local T="$B/tests/gpuprobe_test_alias_overlap" g=${OVERLAP_GIB:-384} m s e
  for m in sync unmap-bg map-bg sync; do timed "overlap_$m" 120 "$T" 0 "$g" "$m"; done
  for m in exit sync; do # the whole process, timed here: what its end costs with the range mapped
    s=$(date +%s.%N)
    timed "overlap_whole_$m" 120 "$T" 0 "$g" "$m"
    e=$(date +%s.%N)
    echo "whole process, $m: $(awk "BEGIN{print $e - $s}") s" >>"$D/overlap_whole_$m.txt"
  done
  for m in "$D"/overlap_*.txt; do
    echo "== $(basename "$m" .txt)"
    cat "$m"
  done
}

# Whether the driver takes two processes' mapping calls one at a time (issue 48's node), and
# what does not slow them: gpuprobe_test_driver_lock's mapping loop (LOCK_GIB, default 128, LOCK_REPS
# times, default 3) alone on each GPU, then beside: the same loop on the other GPU, on the same GPU,
# a kernel spinning on the other GPU, every other host core spinning, cudaMalloc/cudaFree of 8 GiB
# on the other GPU; and that malloc loop alone. Last, per case and process: each phase's mean
# seconds and per-call median (us), and the share of the time both processes' phases overlapped.
step_driver_lock() {
  local T="$B/tests/gpuprobe_test_driver_lock" N="$B/tests/gpuprobe_test_neighbour"
  local g=${LOCK_GIB:-128} n=${LOCK_REPS:-3} k
  local other cores
  other=$(other_gpu)
  cores=$(( $(nproc) - 2 ))
  "$T" map 0 "$g" "$n" >"$D/lock_alone_gpu0.txt" 2>&1
  "$T" map "$other" "$g" "$n" >"$D/lock_alone_gpu$other.txt" 2>&1
  "$T" map 0 "$g" "$n" >"$D/lock_both_a.txt" 2>&1 &
  "$T" map "$other" "$g" "$n" >"$D/lock_both_b.txt" 2>&1
  wait
  "$T" map 0 "$g" "$n" >"$D/lock_same_gpu_a.txt" 2>&1 &
  "$T" map 0 "$g" "$n" >"$D/lock_same_gpu_b.txt" 2>&1
  wait
  "$N" "$other" 40 >"$D/lock_spin_neighbour.txt" 2>&1 &
  k=$!
  sleep 2
  "$T" map 0 "$g" "$n" >"$D/lock_beside_spin.txt" 2>&1
  kill "$k" 2>/dev/null
  wait "$k" 2>/dev/null
  for k in $(seq 1 "$cores"); do timeout 40 sh -c 'while :; do :; done' & done
  sleep 1
  "$T" map 0 "$g" "$n" >"$D/lock_beside_cpu$cores.txt" 2>&1
  pkill -f 'while :; do :; done' 2>/dev/null
  wait
  "$T" malloc "$other" 8 30 >"$D/lock_malloc_alone.txt" 2>&1
  "$T" malloc "$other" 8 30 >"$D/lock_malloc_beside.txt" 2>&1 &
  sleep 1
  "$T" map 0 "$g" "$n" >"$D/lock_beside_malloc.txt" 2>&1
  wait
  python3 "$HERE/driver_lock_table.py" "$D"/lock_*.txt | tee "$D/lock_table.txt"
}

# The GPU a step's neighbour runs on: 1 on a machine of two or more GPUs, else 0 (the same GPU).
other_gpu() { if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then echo 1; else echo 0; fi; }

# COMMAND... started in the background, its output in FILE, waited for until FILE has a line
# matching MARK (at most 30 s), and a second more; its PID in $bg. Usage: FILE MARK COMMAND...
start_ready() {
  local file=$1 mark=$2 k
  shift 2
  "$@" >"$file" 2>&1 &
  bg=$!
  for k in $(seq 1 60); do
    grep -q "$mark" "$file" && break
    sleep 0.5
  done
  sleep 1
}

# A probe (COMMAND...) started beside a stamped `gpuprobe run` of GPU 0 and stopped after it: its
# output NAME_probe.txt, the run's NAME_run.txt and NAME_run/, and driver_pressure.py's table of
# the probe's PHASE over BASELINE's per stage of the run in NAME_pressure.txt (pressure:
# pressure_table.txt, as before). Usage: NAME PHASE BASELINE COMMAND...
probe_beside_run() {
  local name=$1 phase=$2 base=$3 p s out
  shift 3
  "$@" >"$D/${name}_probe.txt" 2>&1 &
  p=$!
  sleep 1
  s=$(date +%s.%N)
  stamped_run 0 "$D/${name}_run.txt" "$D/${name}_run"
  kill "$p" 2>/dev/null
  wait "$p" 2>/dev/null
  out="$D/${name}_pressure.txt"
  [ "$name" = pressure ] && out="$D/pressure_table.txt"
  python3 "$HERE/driver_pressure.py" --phase "$phase" "$D/${name}_run.txt" "$s" "$base" \
    "$D/${name}_probe.txt" >"$out"
}

# Where a unit's run loads the driver (issue 48's node): first cuMemSetAccess's piece size (2 MiB,
# 64 MiB, 2 GiB, one call) on a 32 GiB alias range, alone and beside a cudaMalloc/cudaFree loop on
# the other GPU; then a probe on the other GPU (8 GiB mapped in 2 GiB pieces, unmapped, a 250 ms
# pause, again) alone and beside `gpuprobe run --verbose RUN_ARGS` on GPU 0, stamped: the probe's
# per-call access time over alone, per stage of the run and in 2 s bins (driver_pressure.py).
step_driver_pressure() {
  local T="$B/tests/gpuprobe_test_driver_lock" other piece
  other=$(other_gpu)
  for piece in 2048 2 64 65536; do
    "$T" map 0 32 2 "$piece" >"$D/piece_${piece}_alone.txt" 2>&1
    "$T" malloc "$other" 8 10 >"$D/piece_${piece}_malloc.txt" 2>&1 &
    sleep 1
    "$T" map 0 32 2 "$piece" >"$D/piece_${piece}_beside_malloc.txt" 2>&1
    wait
  done
  python3 "$HERE/driver_lock_table.py" "$D"/piece_2048_alone.txt "$D"/piece_*.txt |
    tee "$D/piece_table.txt"
  "$T" map "$other" 8 40 2048 250 >"$D/pressure_baseline.txt" 2>&1
  probe_beside_run pressure access "$D/pressure_baseline.txt" "$T" map "$other" 8 100000 2048 250
  sed -n '1,/^$/p' "$D/pressure_table.txt"
}

# What a stage's start costs beside a neighbour (issue 48's node: a unit's characterize or tune
# start took 1.3-1.8 s in a node, 0.1-0.25 s alone). On the second GPU, seen as the only one
# (CUDA_VISIBLE_DEVICES, as `--devices` runs a unit): CTX_N processes that each start the driver
# and make the context (ctx_proc_*), and one process making its context CTX_N times (ctx_*),
# alone, then beside a whole-GPU chase on GPU 0 over 8 GiB of cudaMalloc'ed memory, over a held
# 384 GiB alias range, and beside a 128 GiB mapping loop; last, the in-process probe beside a
# stamped `gpuprobe run` on GPU 0 (driver_pressure.py --phase ctx).
step_ctx_pressure() {
  local T="$B/tests/gpuprobe_test_driver_lock" other n=${CTX_N:-10} c p k
  other=$(other_gpu)
  starts() { # FILE: n processes, each its driver start and context
    for k in $(seq 1 "$n"); do
      CUDA_VISIBLE_DEVICES=$other "$T" ctx 0 1 0
      sleep 0.2
    done >"$1" 2>&1
  }
  remakes() { CUDA_VISIBLE_DEVICES=$other "$T" ctx 0 "$n" 200 >"$1" 2>&1; }
  starts "$D/ctx_proc_alone.txt"
  remakes "$D/ctx_alone.txt"
  for c in chase chase-alias; do # each chase begins once its memory is made (chase-mem)
    CUDA_VISIBLE_DEVICES=0 start_ready "$D/neighbour_$c.txt" chase-mem \
      "$T" "$c" 0 "$([ $c = chase ] && echo 8 || echo 384)" 60
    p=$bg
    starts "$D/ctx_proc_beside_$c.txt"
    remakes "$D/ctx_beside_$c.txt"
    kill "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  CUDA_VISIBLE_DEVICES=0 "$T" map 0 128 6 >"$D/neighbour_map.txt" 2>&1 &
  p=$!
  sleep 0.5
  starts "$D/ctx_proc_beside_map.txt"
  remakes "$D/ctx_beside_map.txt"
  wait "$p"
  [ "${CTX_RUN:-1}" = 0 ] ||
    CUDA_VISIBLE_DEVICES=$other probe_beside_run ctx ctx "$D/ctx_alone.txt" "$T" ctx 0 100000 250
  {
    python3 "$HERE/driver_lock_table.py" "$D/ctx_proc_alone.txt" "$D"/ctx_proc_beside_*.txt
    python3 "$HERE/driver_lock_table.py" "$D/ctx_alone.txt" "$D"/ctx_beside_*.txt
  } | tee "$D/ctx_table.txt"
  grep -h "chase" "$D"/neighbour_chase*.txt
  [ "${CTX_RUN:-1}" = 0 ] || sed -n '1,/^$/p' "$D/ctx_pressure.txt"
}

# What characterize's busy check (nvidia-smi --query-compute-apps before, after and once a second
# during every measuring stage) costs beside a neighbour, and what it costs the neighbour. SMI_N
# (default 10) nvidia-smi queries of the second GPU and as many NVML queries after one nvmlInit
# (gpuprobe_test_driver_lock nvml), alone and beside a whole-GPU chase of a held 384 GiB alias
# range on GPU 0; then a 128 GiB mapping loop on GPU 0 alone, beside an nvidia-smi query a second
# of the other GPU, of its own GPU, and beside an NVML query a second of the other GPU.
step_smi_pressure() {
  local T="$B/tests/gpuprobe_test_driver_lock" other n=${SMI_N:-10} p q k uuid
  other=$(other_gpu)
  uuid=$(nvidia-smi -i "$other" --query-gpu=uuid --format=csv,noheader)
  smi_calls() { # FILE GPU: n nvidia-smi queries, each as a driver_lock phase line
    local b e
    for k in $(seq 0 $((n - 1))); do
      b=$(date +%s.%N)
      nvidia-smi -i "$2" --query-compute-apps=pid,process_name --format=csv,noheader >/dev/null
      e=$(date +%s.%N)
      awk -v b="$b" -v e="$e" -v k="$k" -v g="$2" 'BEGIN { d = e - b; printf "dev %d rep %d smi     calls       1  %.3f..%.3f  %6.2f s  busy %6.2f s  per call us: median %8.1f  p99 %8.1f  max %9.1f\n", g, k, b, e, d, d, d * 1e6, d * 1e6, d * 1e6 }'
      sleep 0.2
    done >"$1" 2>&1
  }
  smi_calls "$D/smi_alone.txt" "$other"
  "$T" nvml "$uuid" "$n" 200 >"$D/nvml_alone.txt" 2>&1
  CUDA_VISIBLE_DEVICES=0 start_ready "$D/neighbour_chase-alias.txt" chase-mem \
    "$T" chase-alias 0 384 60
  p=$bg
  smi_calls "$D/smi_beside_chase-alias.txt" "$other"
  "$T" nvml "$uuid" "$n" 200 >"$D/nvml_beside_chase-alias.txt" 2>&1
  kill "$p" 2>/dev/null
  wait "$p" 2>/dev/null
  "$T" map 0 128 3 >"$D/lock_alone_gpu0.txt" 2>&1
  for q in other own nvml; do
    case $q in
    other | own)
      k=$([ $q = other ] && echo "$other" || echo 0)
      (while :; do
        nvidia-smi -i "$k" --query-compute-apps=pid,process_name --format=csv,noheader
        sleep 1
      done >/dev/null 2>&1) &
      ;;
    nvml) "$T" nvml "$uuid" 100000 1000 >/dev/null 2>&1 & ;;
    esac
    p=$!
    sleep 1
    "$T" map 0 128 3 >"$D/lock_beside_smi_$q.txt" 2>&1
    kill "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  {
    python3 "$HERE/driver_lock_table.py" "$D/smi_alone.txt" "$D/smi_beside_chase-alias.txt"
    python3 "$HERE/driver_lock_table.py" "$D/nvml_alone.txt" "$D/nvml_beside_chase-alias.txt"
    python3 "$HERE/driver_lock_table.py" "$D/lock_alone_gpu0.txt" "$D"/lock_beside_smi_*.txt
  } | tee "$D/smi_table.txt"
}

# One unit alone, in the usual order and as a node's late unit (--map-late: the grid and atomics
# first), ORDER (default ABBA; A usual, B late), every line stamped: whether the late order's
# driver work (its alias range, coverage, tune's pool, validate) is slower with no neighbour.
step_order_stamps() {
  local o k=0 args=()
  for o in $(echo "${ORDER:-ABBA}" | fold -w1); do
    k=$((k + 1))
    local late=""
    [ "$o" = B ] && late=--map-late
    # shellcheck disable=SC2086
    stamped_run 0 "$D/order_$k$o.txt" "$D/order/$k$o" $late
    args+=("$k$o=$D/order_$k$o.txt")
  done
  python3 "$HERE/node_timeline.py" "${args[@]}" >"$D/order_timeline.txt"
  for o in "${args[@]}"; do
    echo "== ${o%%=*}: $(tail -1 "${o#*=}")"
    grep -E "mapped in|made in|\[run\] [a-z]+ +[0-9]+ s" "${o#*=}" | cut -c1-120
  done
}

# tlb-sharing ARGS... RUNS times, by $BASE's build (A, where BASE is set) and this one (B) in turn,
# into NAME_<A|B><run>.json/.txt; prints each run's lines matching PATTERN.
# Usage: NAME PATTERN ARGS...
sharing_ab() {
  local name=$1 pattern=$2 i b g
  shift 2
  for i in $(seq 1 "${RUNS:-2}"); do
    for b in ${BASE:+A} B; do
      g=$G && [ "$b" = A ] && g="$BASE/gpuprobe"
      timed "${name}_$b$i" 150 "$g" tlb-sharing "$@" --out "$D/${name}_$b$i.json"
      grep -E "$pattern" "$D/${name}_$b$i.txt" | cut -c1-300
    done
  done
}

step_sharing_sample() {
  local n sample
  for n in 8 16 ${WHOLE:+0}; do
    sample=(--sample-sms "$n") && [ "$n" = 0 ] && sample=()
    sharing_ab "sample$n" "^  (scope|sample):" --coverage-bytes 64M --entries 4096 "${sample[@]}"
  done
}

step_sharing_fallback() {
  local lines="^gpuprobe tlb-sharing|^  (scope|structure|sample):"
  sharing_ab fallback "$lines" --coverage-bytes 32M --entries 2048 --sample-sms 8
  timed fallback_whole 150 "$G" tlb-sharing --coverage-bytes 32M --entries 2048 \
    --out "$D/fallback_whole.json"
  grep -E "$lines" "$D/fallback_whole.txt" | cut -c1-300
}

[ $# -gt 0 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 2; }
for s in "$@"; do
  fn="step_${s//-/_}"
  if ! declare -F "$fn" >/dev/null; then
    echo "device_round.sh: no step '$s' (the steps are listed at the top of this file)" >&2
    exit 2
  fi
  echo "==== $s"
  "$fn"
  pack
done
echo "---- steps"
cat "$D/steps.txt" 2>/dev/null # none where no step was timed (node-stamps)
grep -h uuid -A1 "$D/nvidia-smi.csv" | tail -1 | cut -d, -f1,2
