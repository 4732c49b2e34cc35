#!/usr/bin/env python3
"""Two sets of gpuprobe-bench runs of one filter, A and B: each case's B over A, the minimum
real_time over each set's runs, as a Markdown table, with the median and the spread of the ratios.
Usage: dev/bench_ab.py A.json [A.json ...] -- B.json [B.json ...]"""
import json
import statistics
import sys


def best_times(paths):
    best = {}
    for p in paths:
        for b in json.load(open(p))["benchmarks"]:
            if b.get("error_occurred") or b.get("run_type") == "aggregate":
                continue
            name = b["name"].split("/iterations")[0].split("/manual_time")[0]
            t = b["real_time"]
            best[name] = min(t, best.get(name, t))
    return best


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    a, b = best_times(argv[:cut]), best_times(argv[cut + 1:])
    rows = [(n, a[n], b[n], b[n] / a[n]) for n in a if n in b and a[n] > 0]
    if not rows:
        sys.exit("bench_ab.py: no case in both sets")
    print("| case | A | B | B / A |")
    print("|---|---|---|---|")
    for n, ta, tb, r in rows:
        print(f"| {n} | {ta:.4g} | {tb:.4g} | {r:.3f} |")
    q = sorted(r for *_, r in rows)
    k = len(q)
    print(f"\n{k} cases: B / A median {statistics.median(q):.3f}, p10 {q[k // 10]:.3f}, "
          f"p90 {q[(9 * k) // 10]:.3f}, min {q[0]:.3f}, max {q[-1]:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
