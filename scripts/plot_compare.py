#!/usr/bin/python3
"""The systems of `tessel compare` side by side: samples/s of each system's best plan, for the whole system and per
chip, each bar coloured by how that plan splits the model (data parallel only, tensor, pipeline, or both) and
labelled with the plan. A system that cannot train the workload is an empty row saying so.

Run with /usr/bin/python3 (it needs the distribution's python3-matplotlib).

    build/bin/tessel compare -w gpt2 ... --system platforms/systems/dgx_a100.yaml:nodes=8 ... -o out/compare/gpt7b-64
    scripts/plot_compare.py out/compare/gpt7b-64/compare.json --out docs/img/compare_gpt7b

Several compare.json files (the same workload at several scales or budgets) are drawn one panel row each.
Writes PREFIX.png and PREFIX.svg; prints each system's row as a table.
"""

import argparse
import json
import os
import re
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_compare.py needs matplotlib: run it with /usr/bin/python3 (apt install python3-matplotlib)")

COLOURS = {"data parallel only": "#4477aa", "tensor parallel": "#ee6677", "pipeline parallel": "#228833", "tp and pp": "#ccbb44"}


def split_kind(plan):
    """How a plan's label ("dp=32 tp=2 pp=1 zero=2") splits the model."""
    degree = {k: int(v) for k, v in re.findall(r"\b(tp|pp)=(\d+)", plan)}
    tp, pp = degree.get("tp", 1), degree.get("pp", 1)
    if tp > 1 and pp > 1:
        return "tp and pp"
    if tp > 1:
        return "tensor parallel"
    if pp > 1:
        return "pipeline parallel"
    return "data parallel only"


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_compare.py: {path}: {e}")
    if "systems" not in doc:
        sys.exit(f"plot_compare.py: {path}: not a compare.json (no 'systems')")
    return doc


def title_of(doc):
    t = doc["workload"]
    shape = [x.split(".", 1)[1] for x in doc.get("sets", []) if x.startswith("workload.") and not x.startswith("workload.training")]
    if shape:
        t += " (" + " ".join(shape) + ")"
    if doc.get("power_budget_w"):
        t += f", each system within {doc['power_budget_w'] / 1000:g} kW of TDP"
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("compare_json", nargs="+", help="compare.json written by tessel compare")
    ap.add_argument("--out", default=None, help="output prefix (default: next to the first compare.json, compare)")
    a = ap.parse_args()
    docs = [(p, load(p)) for p in a.compare_json]
    prefix = a.out or os.path.join(os.path.dirname(a.compare_json[0]) or ".", "compare")

    rows = max(1, len(docs))
    height = sum(0.6 * len(d["systems"]) + 1.2 for _, d in docs)
    fig, axes = plt.subplots(rows, 2, figsize=(11, max(3.0, height)), squeeze=False,
                             gridspec_kw={"height_ratios": [len(d["systems"]) + 1 for _, d in docs]})
    print(f"{'system':40s} {'chips':>6s} {'samples/s':>11s} {'per chip':>10s}  best plan")
    for (path, doc), (ax_sys, ax_chip) in zip(docs, axes):
        systems = doc["systems"]
        # A system's label without its search restrictions (parallel.*), which the plan labels show anyway.
        names = [" ".join(t for t in s["system"].split() if not t.startswith("parallel.")) for s in systems]
        y = list(range(len(systems)))[::-1]
        for yi, s in zip(y, systems):
            best = s.get("best")
            if not best:
                why = s.get("error", "no result")
                for ax in (ax_sys, ax_chip):
                    ax.text(0, yi, "  does not train", va="center", fontsize=8, color="#777777")
                print(f"{s['system']:40s} {s.get('chips', 0):>6} {'-':>11s} {'-':>10s}  does not train: {why}")
                continue
            colour = COLOURS[split_kind(best["plan"])]
            ax_sys.barh(yi, best["samples_per_s"], color=colour)
            ax_chip.barh(yi, best["samples_per_s_per_chip"], color=colour)
            ax_sys.text(best["samples_per_s"], yi, "  " + best["plan"], va="center", fontsize=7)
            print(f"{s['system']:40s} {s['chips']:>6} {best['samples_per_s']:>11.4g} {best['samples_per_s_per_chip']:>10.4g}  {best['plan']}")
        for ax in (ax_sys, ax_chip):
            ax.set_yticks(y)
            ax.set_yticklabels(names if ax is ax_sys else [""] * len(names), fontsize=8)
            ax.grid(axis="x", alpha=0.3)
        ax_sys.set_title(title_of(doc), fontsize=9, loc="left")
        ax_sys.set_xlabel("samples/s, whole system (best plan)")
        ax_chip.set_xlabel("samples/s per chip")
        ax_sys.set_xlim(0, ax_sys.get_xlim()[1] * 1.9)  # room for the plan labels
        for ax in (ax_sys, ax_chip):
            ax.set_ylim(-0.6, len(systems) - 0.4)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS.values()]
    fig.legend(handles, list(COLOURS), loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    os.makedirs(os.path.dirname(prefix) or ".", exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(f"{prefix}.{ext}", dpi=110)
    print(f"wrote {prefix}.png and {prefix}.svg")


if __name__ == "__main__":
    main()
