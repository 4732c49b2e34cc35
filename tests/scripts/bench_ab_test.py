#!/usr/bin/env python3
"""dev/bench_ab.py's bar on a seeded family of generated A/B sets: 1-4 runs a side, each run a
Google Benchmark JSON file of 3-12 cases whose times scatter about a case's own level (spreads
from 0 to 50 %, B's level 0.8-1.3x A's, some runs of a case failed, some cases in one set only).
Every case past the bar by the minimum, and past it beyond the runs' spread (B's fastest run
slower than the bar times A's slowest), must be listed as worked out here.
Usage: bench_ab_test.py REPO_ROOT [SETS]"""
import json
import pathlib
import random
import re
import subprocess
import sys
import tempfile


def write_runs(folder, side, runs, levels, rng):
    """`runs` files of the side's cases; returns {case: [times that count]}."""
    times, paths = {}, []
    for k in range(runs):
        rows = []
        for name, (level, spread) in levels.items():
            t = level * (1 + rng.uniform(-spread, spread))
            failed = rng.random() < 0.05
            row = {"name": f"{name}/iterations:5/manual_time", "run_type": "iteration",
                   "real_time": t}
            if failed:
                row["error_occurred"] = True
            else:
                times.setdefault(name, []).append(t)
            rows.append(row)
        rows.append({"name": "agg_mean", "run_type": "aggregate", "real_time": 1e9})
        p = folder / f"{side}-{k}.json"
        p.write_text(json.dumps({"context": {}, "benchmarks": rows}))
        paths.append(str(p))
    return times, paths


def expected(ta, tb, bar):
    both = [n for n in ta if n in tb]
    by_min = [n for n in both if min(tb[n]) / min(ta[n]) > bar]
    beyond = [n for n in by_min if min(tb[n]) > bar * max(ta[n])]
    return by_min, beyond


def main():
    root = pathlib.Path(sys.argv[1])
    sets = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    rng = random.Random(80)
    bad, seen_beyond, seen_within = 0, 0, 0
    for k in range(sets):
        bar = rng.choice([1.02, 1.05, 1.10])
        cases = [f"BM_x/case:{i}" for i in range(rng.randint(3, 12))]
        la = {n: (rng.uniform(0.01, 0.3), rng.choice([0, 0.01, 0.05, 0.2, 0.5])) for n in cases}
        lb = {n: (la[n][0] * rng.uniform(0.8, 1.3), rng.choice([0, 0.01, 0.05, 0.2, 0.5]))
              for n in cases if rng.random() > 0.05}
        with tempfile.TemporaryDirectory() as tmp:
            folder = pathlib.Path(tmp)
            ta, pa = write_runs(folder, "a", rng.randint(1, 4), la, rng)
            tb, pb = write_runs(folder, "b", rng.randint(1, 4), lb, rng)
            r = subprocess.run([sys.executable, str(root / "dev" / "bench_ab.py"), "--bar",
                                str(bar)] + pa + ["--"] + pb, capture_output=True, text=True)
        if r.returncode != 0:  # no case in both sets: the script says so; nothing to check
            if "no case in both sets" not in r.stderr:
                bad += 1
                print(f"set {k}: exit {r.returncode}: {r.stderr}")
            continue
        by_min, beyond = expected(ta, tb, bar)
        m = re.search(r"past ([0-9.]+) by the minimum: (\d+); past it beyond the runs' spread "
                      r"\(B's fastest over A's slowest\): (\d+)", r.stdout)
        listed = re.findall(r"^  beyond the spread: (\S+) ", r.stdout, re.M)
        ok = (m is not None and float(m.group(1)) == bar and int(m.group(2)) == len(by_min)
              and int(m.group(3)) == len(beyond) and listed == beyond)
        seen_beyond += len(beyond)
        seen_within += len(by_min) - len(beyond)
        if not ok:
            bad += 1
            if bad <= 3:
                print(f"set {k}: want {len(by_min)} by min, beyond {beyond}\n{r.stdout}")
    print(f"bench_ab.py: {sets - bad} of {sets} generated sets listed right ({seen_beyond} cases "
          f"past the bar beyond their spread, {seen_within} past it by the minimum only)")
    if seen_beyond == 0 or seen_within == 0:
        print("the family must hold both kinds of case")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
