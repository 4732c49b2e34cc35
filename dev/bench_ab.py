#!/usr/bin/env python3
"""Two sets of gpuprobe-bench runs of one filter, A and B: each case's B over A, the minimum
real_time over each set's runs, as a Markdown table, with the median and the spread of the ratios;
then the cases past a bar (--bar, default 1.05): by the minimum, and past their spread too (B's
fastest run slower than the bar times A's slowest: no pairing of the runs puts B within it).
Usage: dev/bench_ab.py [--bar 1.05] A.json [A.json ...] -- B.json [B.json ...]"""
import json
import statistics
import sys


def run_times(paths):
    """{case: [real_time of each run]} over the files (a file may hold a case more than once)."""
    times = {}
    for p in paths:
        for b in json.load(open(p))["benchmarks"]:
            if b.get("error_occurred") or b.get("run_type") == "aggregate":
                continue
            name = b["name"].split("/iterations")[0].split("/manual_time")[0]
            times.setdefault(name, []).append(b["real_time"])
    return times


def past_bar(rows, ta, tb, bar):
    """The lines naming the cases past the bar by the minimum, and those past it beyond the
    spread of their runs (min B > bar x max A)."""
    by_min = [n for n, _, _, r in rows if r > bar]
    beyond = [n for n in by_min if min(tb[n]) > bar * max(ta[n])]
    out = [f"past {bar:.2f} by the minimum: {len(by_min)}; past it beyond the runs' spread "
           f"(B's fastest over A's slowest): {len(beyond)}"]
    out += [f"  beyond the spread: {n} ({min(tb[n]) / max(ta[n]):.3f})" for n in beyond]
    return out


def main(argv):
    bar = 1.05
    if argv[:1] == ["--bar"]:
        bar, argv = float(argv[1]), argv[2:]
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    ta, tb = run_times(argv[:cut]), run_times(argv[cut + 1:])
    a = {n: min(t) for n, t in ta.items()}
    b = {n: min(t) for n, t in tb.items()}
    rows = [(n, a[n], b[n], b[n] / a[n]) for n in a if n in b and a[n] > 0]
    if not rows:
        sys.exit("bench_ab.py: no case in both sets")
    print("| case | A | B | B / A |")
    print("|---|---|---|---|")
    for n, best_a, best_b, r in rows:
        print(f"| {n} | {best_a:.4g} | {best_b:.4g} | {r:.3f} |")
    q = sorted(r for *_, r in rows)
    k = len(q)
    print()
    print("\n".join(past_bar(rows, ta, tb, bar)))
    print(f"\n{k} cases: B / A median {statistics.median(q):.3f}, p10 {q[k // 10]:.3f}, "
          f"p90 {q[(9 * k) // 10]:.3f}, min {q[0]:.3f}, max {q[-1]:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
