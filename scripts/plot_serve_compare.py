#!/usr/bin/python3
"""The inference war on one chart: `tessel compare --serve`'s points, tokens/s per user (how fast each user reads)
against tokens/s per chip (what each chip earns), one colour per system. Each system's own Pareto front is a line
through its points; a point that misses the latency objectives is hollow; the front over every system is drawn as a
grey band behind. A system that serves at no point is named in the legend with its reason.

Run with /usr/bin/python3 (it needs the distribution's python3-matplotlib).

    build/bin/tessel compare --serve -w llama3-70b --system platforms/systems/dgx_h100.yaml ... -o out/compare/llama3-70b-serve
    scripts/plot_serve_compare.py out/compare/llama3-70b-serve/compare_serve.json --out docs/img/serve_compare

Writes PREFIX.png and PREFIX.svg; prints each system's front as a table.
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
    sys.exit("plot_serve_compare.py needs matplotlib: run it with /usr/bin/python3 (apt install python3-matplotlib)")

PER_USER, PER_CHIP = "tokens_per_s_per_user", "output_tokens_per_s_per_chip"


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_serve_compare.py: {path}: {e}")
    if "systems" not in doc or "users" not in doc:
        sys.exit(f"plot_serve_compare.py: {path}: not a compare_serve.json (tessel compare --serve writes one)")
    return doc


def own_front(points):
    """The points no other point of the same system beats on both rates, by falling tokens/s per user."""
    front = [p for p in points
             if not any(q[PER_USER] > p[PER_USER] and q[PER_CHIP] > p[PER_CHIP] for q in points)]
    return sorted(front, key=lambda p: -p[PER_USER])


def title_of(doc):
    t = f"{doc['workload']}: closed loops of {', '.join(str(u) for u in doc['users'])} users per plan"
    if doc.get("power_budget_w"):
        t += f", each system within {doc['power_budget_w'] / 1000:g} kW of TDP"
    slo = []
    if doc.get("slo_ttft_s"):
        slo.append(f"TTFT {doc['slo_ttft_s'] * 1e3:g} ms")
    if doc.get("slo_tpot_s"):
        slo.append(f"TPOT {doc['slo_tpot_s'] * 1e3:g} ms")
    if slo:
        t += f"\nobjectives: {', '.join(slo)} for {doc.get('attainment', 0.9) * 100:g}% of requests (hollow: missed)"
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("compare_serve_json", help="compare_serve.json written by tessel compare --serve")
    ap.add_argument("--out", default=None, help="output prefix (default: next to the file, serve_compare)")
    a = ap.parse_args()
    doc = load(a.compare_serve_json)
    prefix = a.out or os.path.join(os.path.dirname(a.compare_serve_json) or ".", "serve_compare")

    fig, ax = plt.subplots(figsize=(8, 5.5))
    every = [p for s in doc["systems"] for p in s["points"]]
    overall = own_front(every)
    if overall:
        ax.plot([p[PER_USER] for p in overall], [p[PER_CHIP] for p in overall], color="#dddddd", linewidth=9,
                solid_capstyle="round", zorder=0, label="front over every system")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    print(f"{'system':40s} {'plan':18s} {'users':>6s} {'tokens/s per user':>18s} {'per chip':>10s}  objectives")
    for i, s in enumerate(doc["systems"]):
        colour = colours[i % len(colours)]
        if not s["points"]:
            why = s.get("error", "no result")
            ax.plot([], [], " ", label=f"{s['system']}: {why[:70]}{'...' if len(why) > 70 else ''}")
            print(f"{s['system']:40s} {'-':18s} {'-':>6s} {'-':>18s} {'-':>10s}  does not serve: {why}")
            continue
        front = own_front(s["points"])
        ax.plot([p[PER_USER] for p in front], [p[PER_CHIP] for p in front], color=colour, linewidth=1.2,
                label=f"{s['system']} ({s['chips']} chips)")
        for p in s["points"]:
            met = p.get("meets_slos", True)
            ax.scatter(p[PER_USER], p[PER_CHIP], s=28, color=colour if met else "white", edgecolors=colour,
                       linewidths=1.2, zorder=3)
        for p in front:
            if p not in overall:
                continue
            ax.annotate(f"{p['plan'].split(' dp=')[0]}, {p['concurrency']}", (p[PER_USER], p[PER_CHIP]), fontsize=6,
                        xytext=(4, 3), textcoords="offset points", color=colour)
            print(f"{s['system']:40s} {p['plan']:18s} {p['concurrency']:>6d} {p[PER_USER]:>18.4g} {p[PER_CHIP]:>10.4g}  "
                  f"{'met' if p.get('meets_slos', True) else 'missed'}")
    ax.set_xlabel("tokens/s per user (how fast each user reads)")
    ax.set_ylabel("tokens/s per chip (what each chip earns)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.set_title(title_of(doc), fontsize=9, loc="left")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    os.makedirs(os.path.dirname(prefix) or ".", exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(f"{prefix}.{ext}", dpi=110)
    print(f"wrote {prefix}.png and {prefix}.svg")


if __name__ == "__main__":
    main()
