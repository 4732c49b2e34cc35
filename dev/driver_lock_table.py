#!/usr/bin/env python3
"""gpuprobe_test_driver_lock's outputs as one table: per file (a case and process), each phase's
mean seconds (a malloc loop's: the whole loop), its mean per-call median (us), its calls, and its
seconds over the same phase's in the reference file (the first whose name ends in
lock_alone_gpu0, else the first file). For two files of one case (NAME_a and NAME_b), "overlap" is
the share of NAME_a's phase time during which any phase of NAME_b ran: near 1 with every phase
about twice as long as alone is two processes whose calls the driver takes one at a time.
Usage: driver_lock_table.py FILE [FILE ...]"""
import os
import re
import sys

LINE = re.compile(r"^dev (\d+) rep (\d+) (\S+) +calls +(\d+) +([\d.]+)\.\.([\d.]+) +([\d.]+) s +"
                  r"busy +([\d.]+) s +per call us: median +([\d.]+) +p99 +([\d.]+) +max +"
                  r"([\d.]+)$")


def read(path):
    """[(phase, calls, begin, end, seconds, median_us)] of a file; other lines are left out."""
    rows = []
    with open(path) as f:
        for line in f:
            if m := LINE.match(line.strip()):
                rows.append((m.group(3), int(m.group(4)), float(m.group(5)), float(m.group(6)),
                             float(m.group(7)), float(m.group(9))))
    return rows


def overlap(a, b):
    """The share of a's phase time (the union of its intervals) covered by b's intervals."""
    def union(rows):
        spans = sorted((r[2], r[3]) for r in rows)
        out = []
        for s, e in spans:
            if out and s <= out[-1][1]:
                out[-1][1] = max(out[-1][1], e)
            else:
                out.append([s, e])
        return out
    ua, ub = union(a), union(b)
    total = sum(e - s for s, e in ua)
    if total <= 0:
        return 0.0
    both = sum(max(0.0, min(e1, e2) - max(s1, s2)) for s1, e1 in ua for s2, e2 in ub)
    return both / total


def phases(rows):
    """{phase: (mean seconds, mean per-call median, calls)} in the order phases first appear."""
    out = {}
    for name, calls, _, _, sec, med in rows:
        out.setdefault(name, []).append((sec, med, calls))
    return {k: (sum(v[0] for v in vs) / len(vs), sum(v[1] for v in vs) / len(vs),
                sum(v[2] for v in vs)) for k, vs in out.items()}


def main(argv):
    if not argv:
        sys.exit(__doc__)
    files = {os.path.splitext(os.path.basename(p))[0]: read(p) for p in argv}
    empty = [n for n, rows in files.items() if not rows]
    ref_name = next((n for n, rows in files.items() if rows and n.endswith("lock_alone_gpu0")),
                    next((n for n, rows in files.items() if rows), None))
    if ref_name is None:
        sys.exit("driver_lock_table.py: no phase lines in any file")
    ref = phases(files[ref_name])
    print(f"reference: {ref_name}")
    print(f"{'case':<26} {'phase':<7} {'calls':>7} {'mean s':>8} {'x ref':>6} {'median us':>10} "
          f"{'overlap':>8}")
    for name, rows in files.items():
        if not rows:
            continue
        partner = None
        if name.endswith("_a"):
            partner = files.get(name[:-2] + "_b")
        elif name.endswith("_b"):
            partner = files.get(name[:-2] + "_a")
        ov = f"{overlap(rows, partner):.2f}" if partner else "-"
        for ph, (sec, med, calls) in phases(rows).items():
            x = f"{sec / ref[ph][0]:.2f}" if ph in ref and ref[ph][0] > 0 else "-"
            print(f"{name:<26} {ph:<7} {calls:>7} {sec:>8.3f} {x:>6} {med:>10.1f} {ov:>8}")
    for n in empty:
        print(f"{n}: no phase lines (failed? see the file)")


if __name__ == "__main__":
    main(sys.argv[1:])
