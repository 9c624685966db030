#!/usr/bin/python3
"""The plans of `tessel plan`: throughput of every simulated plan against the chips it uses, with the Pareto front
(the best plan of each system size that is faster than every smaller size's best).

Run with /usr/bin/python3 (it needs the distribution's python3-matplotlib).

    build/bin/tessel plan -p platforms/systems/dgx_a100.yaml -w gpt2 ... --scale nodes=1,2,4 -o out/plans/gpt
    scripts/plot_plan.py out/plans/gpt/plan.json --out docs/img/plan_gpt

Each point is one plan (samples/s per iteration against chips), coloured by its split: plain data parallelism,
tensor parallelism, pipeline parallelism, or both. With a single system size the plans are drawn as ranked bars
instead. Writes PREFIX.png and PREFIX.svg; prints the front as a table.
"""

import argparse
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_plan.py needs matplotlib: run it with /usr/bin/python3 (apt install python3-matplotlib)")


def kind(p):
    if p["tp"] > 1 and p["pp"] > 1:
        return "tp and pp"
    if p["tp"] > 1:
        return "tensor parallel"
    if p["pp"] > 1:
        return "pipeline parallel"
    return "data parallel only"


COLOURS = {"data parallel only": "#4477aa", "tensor parallel": "#ee6677", "pipeline parallel": "#228833", "tp and pp": "#ccbb44"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("plan_json", help="plan.json written by tessel plan")
    ap.add_argument("--out", default=None, help="output prefix (default: next to plan.json, plan)")
    ap.add_argument("--top", type=int, default=20, help="bars drawn for a single system size (default 20)")
    a = ap.parse_args()
    try:
        with open(a.plan_json) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_plan.py: {a.plan_json}: {e}")
    sizes = doc.get("sizes", [])
    ok = [(s, p) for s in sizes for p in s["plans"] if p["status"] == "ok"]
    if not ok:
        sys.exit(f"plot_plan.py: {a.plan_json}: no plan finished; nothing to plot")
    prefix = a.out or os.path.join(os.path.dirname(a.plan_json) or ".", "plan")

    fig, ax = plt.subplots(figsize=(8, 5))
    title = f"{doc['workload']} on {os.path.basename(doc['platform'])}"
    if len(sizes) == 1:
        plans = [p for s, p in ok][: a.top]
        labels = [p["plan"] for p in plans][::-1]
        values = [p["samples_per_s"] for p in plans][::-1]
        ax.barh(labels, values, color=[COLOURS[kind(p)] for p in plans][::-1])
        ax.set_xlabel("samples/s (one training iteration)")
        ax.set_title(f"{title}: {sizes[0]['chips']} chips, plans ranked")
        ax.tick_params(axis="y", labelsize=7)
    else:
        seen = set()
        for s, p in ok:
            k = kind(p)
            ax.scatter(s["chips"], p["samples_per_s"], color=COLOURS[k], s=18, alpha=0.7, label=None if k in seen else k)
            seen.add(k)
        front = doc.get("pareto", [])
        ax.plot([f["chips"] for f in front], [f["samples_per_s"] for f in front], "k-", lw=1, label="Pareto front (best plan)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("chips")
        ax.set_ylabel("samples/s (one training iteration)")
        ax.set_title(title)
        ax.legend(fontsize=8)
        print("chips  samples/s  per chip  plan")
        for f in front:
            print(f"{f['chips']:5d}  {f['samples_per_s']:9.4g}  {f['samples_per_s_per_chip']:8.4g}  {f['plan']}")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{prefix}.{ext}", dpi=120)
    print(f"wrote {prefix}.png and {prefix}.svg")


if __name__ == "__main__":
    main()
