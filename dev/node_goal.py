#!/usr/bin/env python3
"""A node against its units alone (device_round.sh node-goal): each unit's `gpuprobe run` alone
and in `run --devices all`, per mode, with each stage's seconds, the node's wall time over the
slowest unit's lone run, and each unit's compare of its node run against its lone one.
Usage: node_goal.py ROUND_FOLDER [--goal 1.10]
Reads alone_MODE_gpuI.txt, node_MODE.txt, base_node_MODE.txt (where BASE ran) and
compare_MODE_gpuI.md in the folder; prints one table a mode and a verdict line each. Then, from
each unit's run.log alone (alone_MODE/gpuI/) and in the node (node_MODE/<unit folder>/), where the
node's extra seconds went: the timed lines of validate's rows, of the pools tune makes and of the
alias range's mapping, each group's sum alone -> in the node and the rows that grew most."""
import argparse
import pathlib
import re

STAGE = re.compile(r"^(?:\[gpu(\d+) [0-9a-f]+\] )?\[run\] ([a-z_-]+) +(\d+) s ")
RUN = re.compile(r"^(?:\[gpu(\d+) [0-9a-f]+\] )?gpuprobe run: (\d+) s$")
WALL = re.compile(r"^gpuprobe run --devices \S+: (\d+) s$")
UNIT = re.compile(r"^  gpu(\d+) .* (GPU-[0-9a-f-]+)  +(\S+): (ok in (\d+) s|FAILED.*|not run.*)$")
# run.log's timed lines: (group, the name of a line of it from its pattern's parts, pattern).
TIMED = [
    ("validate rows", "{row} on {pool}",
     re.compile(r"^\[\d+/\d+\] (?P<row>\S+) +(?P<pool>\S+) +\S+ -> \S+ ms .*, (?P<s>[0-9.]+) s$")),
    ("pools made", "the {gib} GiB {pool} pool",
     re.compile(r"^\[scope\] +(?P<pool>\S+) +pool of (?P<gib>\d+) GiB made in (?P<s>[0-9.]+) s$")),
    ("alias mapping", "the {gib} GiB alias range",
     re.compile(r"^\[tlb\] (?P<gib>\d+) GiB of virtual range, .*: mapped in (?P<s>[0-9.]+) s$")),
]


def parse(path):
    """{'stages': {gpu: {stage: s}}, 'total': {gpu: s}, 'wall': s, 'uuid': {gpu: uuid},
    'status': {gpu: text}, 'folder': {gpu: its unit folder's name}}; an alone run's lines count as
    gpu None."""
    out = {"stages": {}, "total": {}, "wall": None, "uuid": {}, "status": {}, "folder": {}}
    if not path.exists():
        return None
    for line in path.read_text(errors="replace").splitlines():
        if m := STAGE.match(line):
            gpu = int(m.group(1)) if m.group(1) else None
            out["stages"].setdefault(gpu, {})[m.group(2)] = int(m.group(3))
        elif m := RUN.match(line):
            out["total"][int(m.group(1)) if m.group(1) else None] = int(m.group(2))
        elif m := WALL.match(line):
            out["wall"] = int(m.group(1))
        elif m := UNIT.match(line):
            gpu = int(m.group(1))
            out["uuid"][gpu] = m.group(2)
            out["folder"][gpu] = m.group(3).rstrip("/").rsplit("/", 1)[-1]
            out["status"][gpu] = m.group(4)
    return out


def timed_lines(path):
    """{(group, key): seconds} of run.log's timed lines (a key met twice: the sum); None when
    there is no run.log."""
    if not path.exists():
        return None
    out = {}
    for line in path.read_text(errors="replace").splitlines():
        for group, name, pattern in TIMED:
            if m := pattern.match(line):
                key = (group, name.format(**m.groupdict()))
                out[key] = out.get(key, 0.0) + float(m.group("s"))
                break
    return out


def growth_line(gpu, lone, mine, most=3):
    """One unit's timed lines alone -> in the node: each group's sum, then the `most` keys of
    both logs that grew most."""
    if lone is None or mine is None:
        return f"  gpu{gpu}: no run.log {'alone' if lone is None else 'in the node'}"
    groups = []
    for group, _, _ in TIMED:
        a = [v for (g, _), v in lone.items() if g == group]
        b = [v for (g, _), v in mine.items() if g == group]
        if a and b:
            groups.append(f"{group} {sum(a):.1f} -> {sum(b):.1f} ({sum(b) - sum(a):+.1f})")
        elif a:  # a log that lacks them (cut short, or its start written over)
            groups.append(f"{group} {sum(a):.1f} alone, not logged in the node")
        elif b:
            groups.append(f"{group} not logged alone, {sum(b):.1f} in the node")
    grew = sorted(set(lone) & set(mine), key=lambda k: (lone[k] - mine[k], k))[:most]
    top = ", ".join(f"{k[1]} {lone[k]:.1f} -> {mine[k]:.1f}" for k in grew if mine[k] > lone[k])
    return f"  gpu{gpu}: {'; '.join(groups) or 'no timed lines'}" + (f"; grew most: {top}"
                                                                       if top else "")


def growth_rows(folder, mode, node, gpus):
    """Where each unit's node run spent more than its lone one (run.log's timed lines, s)."""
    rows = [f"{mode}: timed lines alone -> in the node, s (run.log):"]
    for gpu in gpus:
        unit = node["folder"].get(gpu)
        mine = timed_lines(folder / f"node_{mode}" / unit / "run.log") if unit else None
        rows.append(growth_line(gpu, timed_lines(folder / f"alone_{mode}" / f"gpu{gpu}" /
                                                 "run.log"), mine))
    return rows


def headline(path):
    if not path.exists():
        return "no compare"
    for line in path.read_text().splitlines():
        if re.match(r"^\*\*\d+ difference", line):
            return line.replace("**", "").strip()[:90]
    return "no headline"


def stage_text(stages):
    return ", ".join(f"{k} {v}" for k, v in stages.items())


def mode_table(folder, mode, goal):
    node = parse(folder / f"node_{mode}.txt")
    alone = {}
    for p in sorted(folder.glob(f"alone_{mode}_gpu*.txt")):
        gpu = int(p.stem.rsplit("gpu", 1)[1])
        alone[gpu] = parse(p)
    if node is None or not alone:
        return [f"{mode}: not run"], None
    same = True  # every unit's compare says 0 differences
    rows = [f"## {mode}", "| unit | alone s | node s | node/alone | compare | stages alone | "
            "stages in the node |", "|---|---|---|---|---|---|---|"]
    worst = 0.0
    for gpu, a in sorted(alone.items()):
        lone = a["total"].get(None)
        mine = node["total"].get(gpu)
        ratio = mine / lone if lone and mine else None
        worst = max(worst, ratio or float("inf"))
        uuid = node["uuid"].get(gpu, "?")
        compared = headline(folder / f"compare_{mode}_gpu{gpu}.md")
        same = same and compared.startswith("0 differences")
        rows.append(f"| gpu{gpu} {uuid[:12]} | {lone or '-'} | {mine or '-'} | "
                    f"{'%.3f' % ratio if ratio else '-'} | "
                    f"{compared} | "
                    f"{stage_text(a['stages'].get(None, {}))} | "
                    f"{stage_text(node['stages'].get(gpu, {}))} |")
    slowest = max((a["total"].get(None) or 0) for a in alone.values())
    wall = node["wall"]
    wall_ratio = wall / slowest if wall and slowest else None
    rows.append("")
    rows.append(f"{mode}: node wall {wall} s over the slowest unit alone {slowest} s = "
                f"{'%.3f' % wall_ratio if wall_ratio else '-'}; worst unit node/alone "
                f"{'%.3f' % worst}")
    base = parse(folder / f"base_node_{mode}.txt")
    if base and base["wall"]:
        units = " ".join(f"gpu{g} {s}" for g, s in sorted(base["total"].items()) if g is not None)
        rows.append(f"{mode}: the baseline build's node run: wall {base['wall']} s ({units}); "
                    f"this build's over it {wall / base['wall']:.3f}")
    met = wall_ratio is not None and wall_ratio <= goal and worst <= goal and same
    rows.append(f"{mode}: {'MET' if met else 'NOT MET'} (goal: node wall and every unit within "
                f"{goal:.2f} x of alone, every unit's compare 0 differences)")
    rows += growth_rows(folder, mode, node, sorted(alone))
    return rows, met


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=pathlib.Path)
    ap.add_argument("--goal", type=float, default=1.10)
    a = ap.parse_args()
    for mode in ("full", "quick"):
        rows, _ = mode_table(a.folder, mode, a.goal)
        print("\n".join(rows))
        print()


if __name__ == "__main__":
    main()
