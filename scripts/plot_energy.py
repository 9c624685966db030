#!/usr/bin/python3
"""Energy per sample by where it goes (compute, SRAM, DRAM, network, sync, static), one stacked bar per platform,
for the same workload.

Run with /usr/bin/python3 (it needs the distribution's python3-matplotlib).

    scripts/plot_energy.py --workload bert-large --set workload.layers=4 \
        --platform h100_sxm --platform wse2 --platform gc200 --out docs/img/energy_bert

Each bar is the run's dynamic energy per sample by part plus its static energy per sample. For a pipeline whose
summary leads with a steady state (the wafer), the static energy per sample is the leakage over 1 / the steady
throughput, not over fill and drain (summary.json steady_samples_per_j); every other platform's is its run's.
Prints the numbers as a table; writes PREFIX.png and PREFIX.svg.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESSEL = os.environ.get("TESSEL_BIN", os.path.join(ROOT, "build", "bin", "tessel"))
PARTS = ["compute", "sram", "dram", "network", "sync", "static"]


def energy_per_sample(platform, workload, sets):
    with tempfile.TemporaryDirectory() as out:
        cmd = [TESSEL, "run", "-p", platform, "-w", workload, "-o", out, "-q"]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None, (r.stdout + r.stderr).strip().splitlines()[-1]
        with open(os.path.join(out, "summary.json")) as f:
            j = json.load(f)
    n = j["samples"]
    parts = {p: j["energy_by_part_j"][p] / n for p in PARTS}
    steady = j.get("steady_throughput_per_s", 0)
    if steady:
        parts["static"] = j["energy_by_part_j"]["static"] / j["sim_time_s"] / steady
    return parts, ("steady state" if steady else "this run")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--platform", action="append", required=True)
    ap.add_argument("--set", action="append", default=[], help="PATH=VALUE for every run (repeatable)")
    ap.add_argument("--out", required=True, help="output prefix (PREFIX.png, PREFIX.svg)")
    a = ap.parse_args()
    rows = []
    print(f"{'platform':12s} " + " ".join(f"{p:>9s}" for p in PARTS) + f" {'total':>9s}  mJ per sample")
    for p in a.platform:
        parts, how = energy_per_sample(p, a.workload, a.set)
        if parts is None:
            print(f"{p:12s} failed: {how}")
            rows.append((p, None))
            continue
        total = sum(parts.values())
        print(f"{p:12s} " + " ".join(f"{1e3 * parts[q]:9.3f}" for q in PARTS) + f" {1e3 * total:9.3f}  ({how})")
        rows.append((p, parts))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    colours = {"compute": "#4477aa", "sram": "#66ccee", "dram": "#228833", "network": "#ccbb44", "sync": "#aa3377",
               "static": "#bbbbbb"}
    names = [p for p, _ in rows]
    bottom = [0.0] * len(rows)
    for q in PARTS:
        vals = [1e3 * parts[q] if parts else 0 for _, parts in rows]
        if not any(vals):
            continue
        ax.bar(names, vals, bottom=bottom, label=q, color=colours[q])
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_ylabel("energy per sample (mJ)")
    title = a.workload + (" (" + ", ".join(a.set) + ")" if a.set else "")
    ax.set_title(f"Where the energy goes: {title}")
    ax.legend(loc="upper left")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    fig.savefig(a.out + ".png", dpi=120)
    fig.savefig(a.out + ".svg")
    print(f"wrote {a.out}.png and {a.out}.svg")
    return 0 if all(parts for _, parts in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
