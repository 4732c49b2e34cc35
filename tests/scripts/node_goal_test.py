#!/usr/bin/env python3
"""dev/node_goal.py on a seeded family of generated node rounds: 1-4 units, each with a lone
`gpuprobe run` and a life in `run --devices all` (its stages, its total, ok or FAILED), a node wall
time, a compare page or none. The table must give each unit's lone and node seconds and their
ratio as generated, the node's wall over the slowest lone run, and MET exactly when the wall and
every unit are within the goal, every unit finished, and every compare says 0 differences. Each
unit's run.log alone and in the node holds generated timed lines (validate's rows, tune's pools,
the alias mapping; a group at times missing on one side, a run.log at times missing): each group's
sums alone -> in the node, or which side did not log it, must be as generated.
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


POOLS = ["vmm", "cudamalloc"]
GROUPS = {
    "validate rows": lambda rng, k, s: (f"[{k + 1}/24] row{k}/free:50%   {rng.choice(POOLS)}   "
                                        f"0.3604 -> 0.3542 ms (x0.983), differs after 10 of 15 "
                                        f"pairs, {s} s"),
    "pools made": lambda rng, k, s: (f"[scope]   {POOLS[k % 2]}        pool of {100 + k} GiB "
                                     f"made in {s} s"),
    "alias mapping": lambda rng, k, s: (f"[tlb] {384 + k} GiB of virtual range, every slot one "
                                        f"2 MiB physical chunk, 10 of 10 slots (those the sweep "
                                        f"touches): mapped in {s} s"),
}


def write_logs(rng, folder, g):
    """Unit g's run.log alone and in the node (node_full/unit<g>/), each with timed lines of every
    group (a group missing on one side at times; a whole log missing at times); returns the line
    node_goal.py must print for it."""
    alone, node, parts = [], [], []
    for group, line in GROUPS.items():
        n = rng.randint(1, 4)
        a = [round(rng.uniform(0.1, 9.0), 1) for _ in range(n)]
        b = [max(0.1, round(x + rng.uniform(-0.5, 3.0), 1)) for x in a]
        side = rng.choice(["both"] * 6 + ["alone", "node"])
        if side != "node":
            alone += [line(rng, k, s) for k, s in enumerate(a)]
        if side != "alone":
            node += [line(rng, k, s) for k, s in enumerate(b)]
        parts.append(
            f"{group} {sum(a):.1f} -> {sum(b):.1f} ({sum(b) - sum(a):+.1f})" if side == "both"
            else f"{group} {sum(a):.1f} alone, not logged in the node" if side == "alone"
            else f"{group} not logged alone, {sum(b):.1f} in the node")
    missing = rng.choice([None] * 8 + ["alone", "node"])
    for where, lines in (("alone", alone), ("node", node)):
        d = folder / ("alone_full" if where == "alone" else "node_full") / (
            f"gpu{g}" if where == "alone" else f"unit{g}")
        d.mkdir(parents=True, exist_ok=True)
        if missing != where:
            rng.shuffle(lines)
            (d / "run.log").write_text("==== gpuprobe run at x\n" + "\n".join(lines) + "\n")
    if missing:
        return f"  gpu{g}: no run.log {'alone' if missing == 'alone' else 'in the node'}"
    return f"  gpu{g}: {'; '.join(parts)}"


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
    growth = [write_logs(rng, folder, g) for g in range(units)]
    ratios = [m / t for m, t in zip(mine, lone)]
    met = (wall / max(lone) <= goal and not any(failed) and max(ratios) <= goal
           and all(d == 0 for d in diffs))
    return lone, mine, failed, wall, met, growth


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
            lone, mine, failed, wall, met, growth = make_case(rng, folder, goal)
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
        # A unit's growth line: the groups as generated, then the rows that grew most.
        grown = [r for r in text.splitlines() if r.startswith("  gpu")]
        growth_ok = len(grown) == len(growth) and all(
            r == g or r.startswith(g + "; grew most: ") for r, g in zip(grown, growth))
        if got != want or line not in text or verdict not in text or not growth_ok:
            bad += 1
            if bad <= 3:
                print(f"case {k}: want {want} / {line} / {verdict} / {growth}\n{text}")
    print(f"node_goal.py: {cases - bad} of {cases} generated nodes judged right "
          f"({verdicts[True]} met, {verdicts[False]} not met)")
    if verdicts[True] == 0 or verdicts[False] == 0:
        print("the family must hold both verdicts")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
