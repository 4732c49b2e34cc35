#!/usr/bin/env python3
"""The units of a node on one clock: stamped `gpuprobe run --verbose` outputs (stamp_lines.py, all
started at once), merged into one timeline of the lines that mark a phase (a stage's start and end,
an alias range mapped, a pool made or taken, tune's decision times, the exit), then each unit's
stages as intervals, so that what two units did at the same second can be read off.
Usage: node_timeline.py NAME=FILE [NAME=FILE ...]"""
import re
import sys

MARK = re.compile(r"^\[run\] |^gpuprobe [a-z-]+: |mapped in |made in |taken |^\[pools\] |"
                  r"decision times|^exit -?\d+$")
START = re.compile(r"^\[run\] ([a-z_-]+)\s*$")
END = re.compile(r"^\[run\] ([a-z_-]+) +\d+ s ")


def read(path):
    """(seconds, text) of each stamped line; a line without a stamp is refused."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            head, _, text = line.strip().partition(" ")
            try:
                rows.append((float(head), text))
            except ValueError:
                sys.exit(f"node_timeline.py: {path}:{n}: no stamp (stamp_lines.py writes one)")
    return rows


def stages(rows):
    """[(stage, start, end)] from the [run] lines; a stage with no end line ends at None."""
    out, open_at = [], {}
    for t, text in rows:
        if m := START.match(text):
            open_at[m.group(1)] = t
        elif m := END.match(text):
            name = m.group(1)
            out.append((name, open_at.pop(name, None), t))
    out += [(name, t, None) for name, t in open_at.items()]
    return out


def main(argv):
    if not argv or any("=" not in a for a in argv):
        sys.exit(__doc__)
    units = [a.split("=", 1) for a in argv]
    merged = []
    for order, (name, path) in enumerate(units):
        rows = read(path)
        merged += [(t, order, name, text) for t, text in rows if MARK.search(text)]
        units[order] = (name, rows)
    merged.sort(key=lambda r: (r[0], r[1]))
    width = max(len(name) for name, _ in units)
    for t, _, name, text in merged:
        print(f"{t:8.2f} {name:<{width}} {text[:160]}")
    print()
    fmt = lambda x: "?" if x is None else f"{x:.1f}"
    for name, rows in units:
        spans = ", ".join(f"{s} {fmt(a)}-{fmt(b)}" for s, a, b in stages(rows))
        print(f"{name}: {spans or 'no [run] stage lines (--verbose?)'}")


if __name__ == "__main__":
    main(sys.argv[1:])
