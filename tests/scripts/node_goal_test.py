#!/usr/bin/env python3
"""dev/node_goal.py on a seeded family of generated node rounds: 1-4 units, each with a lone
`gpuprobe run` and a life in `run --devices all` (its stages, its total, ok or FAILED), a node wall
time, a compare page or none. The table must give each unit's lone and node seconds and their
ratio as generated, the node's wall over the slowest lone run, and MET exactly when the wall and
every unit are within the goal, every unit finished, and every compare says 0 differences.
Usage: node_goal_test.py REPO_ROOT [CASES]"""
import pathlib
import random
import subprocess
import sys
import tempfile

STAGES = ["characterize", "tune", "validate", "bench", "report"]


def stage_lines(rng, total, prefix=""):
    cuts = sorted(rng.randint(0, total) for _ in range(len(STAGES) - 1))
    parts = [b - a for a, b in zip([0] + cuts, cuts + [total])]
    return [f"{prefix}[run] {name:<12} {s:4d} s  summary {rng.random():.3f}"
            for name, s in zip(STAGES, parts)]


def make_case(rng, folder, goal):
    """A node within the goal, then at most one defect: a unit past it, the wall past it, a
    compare with differences or none, a unit that failed (each alone decides the verdict)."""
    units = rng.randint(1, 4)
    defect = rng.choice([None, None, "unit", "wall", "compare", "no compare", "failed"])
    bad_unit = rng.randrange(units)
    lone, mine, diffs, failed = [], [], [], []
    uuids = [f"GPU-{rng.getrandbits(32):08x}-aaaa-bbbb" for _ in range(units)]
    for g in range(units):
        t = rng.randint(30, 120)
        lone.append(t)
        lines = stage_lines(rng, t) + [f"gpuprobe run: {t} s", "  a summary line"]
        (folder / f"alone_full_gpu{g}.txt").write_text("\n".join(lines) + "\n")
        hit = g == bad_unit
        mine.append(round(t * (rng.uniform(goal + 0.03, goal + 0.2) if hit and defect == "unit"
                               else rng.uniform(0.9, goal - 0.02))))
        failed.append(hit and defect == "failed")
        d = (rng.choice([1, 3]) if hit and defect == "compare" else
             None if hit and defect == "no compare" else 0)  # None: no compare page
        diffs.append(d)
        if d is not None:
            (folder / f"compare_full_gpu{g}.md").write_text(
                f"# compare\n\n**{d} difference{'' if d == 1 else 's'}** of 55 figures\n")
    wall = (round(max(lone) * rng.uniform(goal + 0.03, goal + 0.2)) if defect == "wall"
            else min(max(mine) + rng.randint(0, 1), int(max(lone) * goal)))
    out = [f"gpuprobe run --devices all: {units} GPU(s) at once -> node/"]
    for g in range(units):
        label = f"[gpu{g} {uuids[g][4:12]}] "
        out += stage_lines(rng, mine[g], label)
        if not failed[g]:
            out.append(f"{label}gpuprobe run: {mine[g]} s")
    rng.shuffle(out[1:])  # the units' lines interleave as they come
    out.append(f"gpuprobe run --devices all: {wall} s")
    for g in range(units):
        status = (f"FAILED (exit 1 after {mine[g]} s): boom (log: x)" if failed[g]
                  else f"ok in {mine[g]} s")
        out.append(f"  gpu{g} NVIDIA H200              {uuids[g]}  node/unit{g}: {status}")
    (folder / "node_full.txt").write_text("\n".join(out) + "\n")
    ratios = [m / t for m, t in zip(mine, lone)]
    met = (wall / max(lone) <= goal and not any(failed) and max(ratios) <= goal
           and all(d == 0 for d in diffs))
    return lone, mine, failed, wall, met


def main():
    root = pathlib.Path(sys.argv[1])
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    rng = random.Random(81)
    bad = 0
    verdicts = {True: 0, False: 0}
    for k in range(cases):
        goal = rng.choice([1.05, 1.10, 1.15])
        with tempfile.TemporaryDirectory() as tmp:
            folder = pathlib.Path(tmp)
            lone, mine, failed, wall, met = make_case(rng, folder, goal)
            text = subprocess.run([sys.executable, str(root / "dev" / "node_goal.py"), tmp,
                                   "--goal", str(goal)], capture_output=True, text=True,
                                  check=True).stdout
        verdicts[met] += 1
        rows = [r for r in text.splitlines() if r.startswith("| gpu")]
        want = [f"| {l} | {'-' if f else m} | {'-' if f else '%.3f' % (m / l)} |"
                for l, m, f in zip(lone, mine, failed)]
        got = ["| " + " | ".join(r.split(" | ")[1:4]) + " |" for r in rows]
        line = f"full: node wall {wall} s over the slowest unit alone {max(lone)} s = " \
               f"{wall / max(lone):.3f}"
        verdict = f"full: {'MET' if met else 'NOT MET'} "
        if got != want or line not in text or verdict not in text:
            bad += 1
            if bad <= 3:
                print(f"case {k}: want {want} / {line} / {verdict}\n{text}")
    print(f"node_goal.py: {cases - bad} of {cases} generated nodes judged right "
          f"({verdicts[True]} met, {verdicts[False]} not met)")
    if verdicts[True] == 0 or verdicts[False] == 0:
        print("the family must hold both verdicts")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
