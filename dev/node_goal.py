#!/usr/bin/env python3
"""A node against its units alone (device_round.sh node-goal): each unit's `gpuprobe run` alone
and in `run --devices all`, per mode, with each stage's seconds, the node's wall time over the
slowest unit's lone run, and each unit's compare of its node run against its lone one.
Usage: node_goal.py ROUND_FOLDER [--goal 1.10]
Reads alone_MODE_gpuI.txt, node_MODE.txt, base_node_MODE.txt (where BASE ran) and
compare_MODE_gpuI.md in the folder; prints one table a mode and a verdict line each."""
import argparse
import pathlib
import re

STAGE = re.compile(r"^(?:\[gpu(\d+) [0-9a-f]+\] )?\[run\] ([a-z_-]+) +(\d+) s ")
RUN = re.compile(r"^(?:\[gpu(\d+) [0-9a-f]+\] )?gpuprobe run: (\d+) s$")
WALL = re.compile(r"^gpuprobe run --devices \S+: (\d+) s$")
UNIT = re.compile(r"^  gpu(\d+) .* (GPU-[0-9a-f-]+) .*: (ok in (\d+) s|FAILED.*|not run.*)$")


def parse(path):
    """{'stages': {gpu: {stage: s}}, 'total': {gpu: s}, 'wall': s, 'uuid': {gpu: uuid},
    'status': {gpu: text}}; an alone run's lines count as gpu None."""
    out = {"stages": {}, "total": {}, "wall": None, "uuid": {}, "status": {}}
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
            out["status"][gpu] = m.group(3)
    return out


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
