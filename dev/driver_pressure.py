#!/usr/bin/env python3
"""How much a unit's run loads the driver, stage by stage: a probe (gpuprobe_test_driver_lock map
with a small range and a pause, on the other GPU) timed its cuMemSetAccess calls while the run went
on; each of the probe's access phases, as its per-call median over the lone probe's (BASELINE),
is a sample of the load at its midpoint. Prints per stage of the run (its `[run] NAME` lines):
the samples in it and their median and largest ratio; then the run in BIN-second bins (default 2):
the median ratio and the run's last line by then.
With --phase NAME the probe's phase NAME is timed instead of its access phases (ctx: a context
made, `gpuprobe_test_driver_lock ctx`).
Usage: driver_pressure.py [--phase NAME] RUN START BASELINE PROBE [BIN]
  RUN: the run's output stamped by stamp_lines.py; START: the epoch second it was started
  BASELINE, PROBE: driver_lock outputs, the probe alone and beside the run"""
import statistics
import sys

from driver_lock_table import read
from node_timeline import read as read_stamped, stages


def samples(rows, base, phase="access"):
    """[(epoch midpoint, ratio)] of the phases named `phase`."""
    return [((b + e) / 2, med / base) for name, _, b, e, _, med in rows if name == phase]


def main(argv):
    phase = "access"
    if argv[:1] == ["--phase"] and len(argv) > 1:
        phase, argv = argv[1], argv[2:]
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    run, start = read_stamped(argv[0]), float(argv[1])
    base_rows = [r for r in read(argv[2]) if r[0] == phase]
    if not base_rows:
        sys.exit(f"driver_pressure.py: {argv[2]}: no {phase} phase (the lone probe failed?)")
    base = statistics.median(r[5] for r in base_rows)
    points = [(t - start, x) for t, x in samples(read(argv[3]), base, phase)]
    if not points:
        sys.exit(f"driver_pressure.py: {argv[3]}: no {phase} phase (the probe failed?)")
    width = float(argv[4]) if len(argv) == 5 else 2.0
    print(f"probe alone: per-call median {base:.1f} us over {len(base_rows)} {phase} phases")
    print(f"{'stage':<14} {'from':>7} {'to':>7} {'samples':>7} {'median x':>9} {'max x':>7}")
    for name, a, b in stages(run):
        if a is None or b is None:
            continue
        xs = [x for t, x in points if a <= t < b]
        med = f"{statistics.median(xs):.2f}" if xs else "-"
        top = f"{max(xs):.2f}" if xs else "-"
        print(f"{name:<14} {a:>7.1f} {b:>7.1f} {len(xs):>7} {med:>9} {top:>7}")
    print()
    end = max(t for t, _ in run) if run else 0.0
    k = 0
    while k * width < end:
        lo, hi = k * width, (k + 1) * width
        xs = [x for t, x in points if lo <= t < hi]
        last = [text for t, text in run if t < hi]
        med = f"{statistics.median(xs):5.2f}" if xs else "    -"
        print(f"{lo:7.1f} {med}  {(last[-1] if last else '')[:110]}")
        k += 1


if __name__ == "__main__":
    main(sys.argv[1:])
