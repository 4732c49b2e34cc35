#!/usr/bin/env python3
"""Compares gpuprobe run folders with a reference run of the same unit: per level the entries,
page, ways, sets, sharing scope and groups, and the penalty (within 2 %); the tuning's decisions;
and every validation verdict. Prints one block per run and each difference on its own line.

Usage: scripts/compare_runs.py REFERENCE RUN [RUN ...]   (folders holding profile.json, and
tuning.json and validation.json where the run made them). A --quick run against a full one: the
reference's sharing groups among the SMs the quick run measured, the TLB scope (one pass under
--quick) left out, and the verdicts of the workloads both measured. Exit 1 when a run differs."""
import json
import pathlib
import sys


def load(folder, name):
    f = pathlib.Path(folder) / name
    return json.loads(f.read_text()) if f.exists() else None


def measured_sms(folder, k):
    """The SMs a run's sharing stage of level k measured (None: unknown)."""
    raw = load(folder, f"raw/sharing_L{k}.json")
    return set(raw["sharing"]["sm_ids"]) if raw and "sharing" in raw else None


def levels(profile, sms=lambda k: None):
    out = []
    for k, L in enumerate(profile["tlb"]["levels"], 1):
        s = L.get("sharing") or {}
        keep = sms(k)  # a quick run's 16 SMs: the reference's groups among them
        groups = sorted(tuple(sorted(x for x in g if keep is None or x in keep))
                        for g in s.get("groups") or [])
        groups = [g for g in groups if len(g) > 1]
        out.append({"entries": L.get("entries"), "page_bytes": L.get("page_bytes"),
                    "ways": L.get("ways"), "sets": L.get("sets"), "scope": s.get("scope"),
                    # a global level's groups are the SMs it was measured on (all, or a sample)
                    "groups": None if s.get("scope") == "global" else groups,
                    "penalty": L.get("miss_penalty_cycles")})
    return out


def verdicts(validation):
    return {(w["workload"], w["pool"]): w["verdict"] for w in (validation or {}).get("workloads", [])}


def compare(ref, run):
    diffs = []
    pr, pn = load(ref, "profile.json"), load(run, "profile.json")
    lr, ln = levels(pr, lambda k: measured_sms(run, k)), levels(pn)
    if len(lr) != len(ln):
        diffs.append(f"levels: {len(lr)} -> {len(ln)}")
    for k, (a, b) in enumerate(zip(lr, ln), 1):
        for key in ("entries", "page_bytes", "ways", "sets", "scope", "groups"):
            if a[key] != b[key]:
                diffs.append(f"L{k} {key}: {a[key]} -> {b[key]}")
        if a["penalty"] and b["penalty"] and abs(b["penalty"] / a["penalty"] - 1) > 0.02:
            diffs.append(f"L{k} penalty: {a['penalty']:.1f} -> {b['penalty']:.1f} (over 2 %)")
    penalties = ", ".join(f"L{k} {a['penalty']:.1f} -> {b['penalty']:.1f}"
                          for k, (a, b) in enumerate(zip(lr, ln), 1) if a["penalty"] and b["penalty"])
    tr, tn = load(ref, "tuning.json"), load(run, "tuning.json")
    quick = pn.get("quick") and not pr.get("quick")
    if tr and tn:
        if quick:  # --quick keeps the scope at one pass: the rest must agree
            for key in ("tlb_scope_bytes", "tlb_scope_midpoint_bytes"):
                tn["allocator"][key] = tr["allocator"].get(key)
        for key, value in tr["allocator"].items():
            if tn["allocator"].get(key) != value:
                diffs.append(f"tuning {key}: {value} -> {tn['allocator'].get(key)}")
    vr, vn = verdicts(load(ref, "validation.json")), verdicts(load(run, "validation.json"))
    for key, verdict in vr.items():
        if key in vn and vn[key] != verdict:
            diffs.append(f"verdict {key[0]} on {key[1]}: {verdict} -> {vn[key]}")
    return diffs, penalties, len(vr), len(vn)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    ref, differs = sys.argv[1], False
    for run in sys.argv[2:]:
        diffs, penalties, nr, nn = compare(ref, run)
        print(f"{run} against {ref}: {len(diffs)} difference(s); penalties {penalties}; "
              f"verdicts {nn} against {nr}")
        for d in diffs:
            print("  " + d)
        differs = differs or bool(diffs)
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
