#!/usr/bin/env python3
"""Issue 49's goals over rw_malloc goal tables (the Markdown `gpuprobe report` writes, e.g. through
dev/rw_malloc_goals.sh): a cell meets them when rw_malloc's malloc and malloc + free are each at
most the best peer's at 2^17 and 2^20 threads, and at most 1.25x it at 2^14. Each argument is one
set of runs, its tables joined by commas; prints each table's cells met and the cells met in every
table of the set.
Usage: dev/rw_malloc_goals49.py BEFORE-1.md,BEFORE-2.md AFTER-1.md,AFTER-2.md"""
import sys


def cells(path):
    met = {}
    for line in open(path):
        c = [x.strip() for x in line.split("|")]
        if len(c) < 11 or not c[2].isdigit():
            continue
        threads = int(c[2])
        bar = 1.25 if threads <= 16384 else 1.0
        try:
            malloc, both = float(c[6]), float(c[9])
        except ValueError:  # a cell no peer served: not compared
            continue
        met[(c[1], threads, c[3])] = malloc <= bar and both <= bar
    return met


def main(argv):
    if not argv:
        sys.exit(__doc__)
    for group in argv:
        tables = [cells(p) for p in group.split(",")]
        every = sum(all(t.get(k, False) for t in tables) for k in tables[0])
        print(f"{group}: met in {', '.join(str(sum(t.values())) for t in tables)} of "
              f"{', '.join(str(len(t)) for t in tables)} cells; in every table: {every}")


if __name__ == "__main__":
    main(sys.argv[1:])
