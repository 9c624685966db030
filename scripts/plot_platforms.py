#!/usr/bin/python3
"""Platform comparison: throughput and efficiency side by side, one bar per platform (or configuration),
for the same workload.

Run with /usr/bin/python3 (it needs the distribution's python3-matplotlib).

    # run the workload on each platform (or variant: LABEL=PLATFORM,PATH=VALUE,...) now:
    scripts/plot_platforms.py --workload mlp --platform mesh4x4 --platform ring8_ddr4 \
        --platform "mesh 64B links=mesh4x4,noc.link_bandwidth=64B/cycle" --out docs/img/platforms
    # or take the bars from a sweep whose axis is the platform (or any parameter):
    scripts/plot_platforms.py --results out/sweeps/platforms --by platform --where workload=mlp

Throughput is samples (the workload's batch) per simulated second; efficiency is achieved FLOP/s as a share
of the platform's peak FLOP/s (summary.json fraction_of_peak). Each bar is labelled with what bound the run
(compute, memory, network, sync). Prints the numbers as a table; writes PREFIX.png and PREFIX.svg. A platform that
cannot run the workload (it does not fit, an op it lacks) is reported with its error and drawn as an empty bar;
the others are still compared.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tessel_sweep as ts  # noqa: E402


def from_runs(a):
    bars = []
    for p in a.platform:
        # [LABEL=]PLATFORM[,PATH=VALUE...]: a platform, or a variant of one with its own --set values.
        first, *own = p.split(",")
        label, _, plat = first.partition("=") if "=" in first else (first, "", first)
        try:
            s = ts.run(plat, workload=a.workload, sets=list(ts.set_args(a.set)) + own)
        except ts.TesselError as e:
            # One platform that cannot run the workload (it does not fit, an op it lacks) is a result too: it is
            # drawn as an empty bar that says why, and the others are still compared.
            print("plot_platforms.py: %s on %s failed: %s" % (a.workload, plat, e.message), file=sys.stderr)
            s = {"failed": e.message}
        bars.append((label, s))
    if all("failed" in b[1] for b in bars):
        raise SystemExit("plot_platforms.py: %s failed on every platform" % a.workload)
    return bars, a.workload


def from_results(a):
    rows = ts.ok(ts.load_results(a.results))
    where = dict(w.split("=", 1) for w in a.where)
    rows = ts.select(rows, where) if where else rows
    if not rows:
        raise SystemExit("plot_platforms.py: no successful points match")
    bars = []
    for r in rows:
        label = ts.value(r, a.by) if a.by in r["params"] or a.by in r else None
        if label is None:
            raise SystemExit("plot_platforms.py: %r is not a parameter of this sweep (parameters: %s)"
                             % (a.by, ", ".join(r["params"])))
        others = [n for n in ts.varying(rows) if n != a.by]
        if others:
            raise SystemExit("plot_platforms.py: %s also vary; fix them with --where NAME=VALUE" % ", ".join(others))
        bars.append((str(label), ts.load_summary(a.results, r)))
    return bars, bars[0][1].get("workload", "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--results", help="a sweep's results folder")
    src.add_argument("--workload", help="run this workload on each --platform")
    ap.add_argument("--platform", action="append", default=[], metavar="[LABEL=]PLATFORM[,PATH=VALUE...]",
                    help="a platform to run, or a variant of one with its own --set values (repeatable)")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help="--set for every run (repeatable)")
    ap.add_argument("--by", default="platform", help="with --results: the parameter that names the bars (default platform)")
    ap.add_argument("--where", action="append", default=[], metavar="NAME=VALUE", help="with --results: keep only these points")
    ap.add_argument("--title")
    ap.add_argument("--out", default="platforms", help="output prefix (default ./platforms)")
    a = ap.parse_args(argv)
    if a.workload and not a.platform:
        ap.error("--workload needs at least one --platform")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars, workload = from_results(a) if a.results else from_runs(a)
    labels = [b[0] for b in bars]
    failed = ["failed" in b[1] for b in bars]
    thr = [0.0 if f else b[1]["throughput_per_s"] for b, f in zip(bars, failed)]
    eff = [0.0 if f else 100.0 * b[1]["fraction_of_peak"] for b, f in zip(bars, failed)]
    bound = ["failed" if f else b[1]["bound_by"] for b, f in zip(bars, failed)]

    print("%-24s %16s %12s %14s  %s" % ("configuration", "samples/s", "% of peak", "sim time", "bound by"))
    for b, t, e, by, f in zip(bars, thr, eff, bound, failed):
        if f:
            print("%-24s %16s %12s %14s  failed: %s" % (b[0], "-", "-", "-", b[1]["failed"]))
        else:
            print("%-24s %16.6g %12.2f %12.4g s  %s" % (b[0], t, e, b[1]["sim_time_s"], by))

    colors = {"compute": "#4C72B0", "memory": "#DD8452", "network": "#55A868", "sync": "#C44E52"}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(max(8, 1.9 * len(bars) + 4), 4))
    x = range(len(bars))
    for ax, vals, ylabel, fmt in ((ax1, thr, "throughput (samples / s)", "%.3g"),
                                  (ax2, eff, "efficiency (% of peak FLOP/s)", "%.1f%%")):
        rects = ax.bar(x, vals, color=[colors.get(b, "#8172B3") for b in bound], edgecolor="black", linewidth=0.5)
        for r, v, by, f in zip(rects, vals, bound, failed):
            ax.annotate("did not run" if f else (fmt % v) + "\n" + by, (r.get_x() + r.get_width() / 2, r.get_height()),
                        ha="center", va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points",
                        color="#C44E52" if f else "black")
        ax.set_xticks(list(x))
        tilt = len(labels) > 4 or max(len(l) for l in labels) > 12
        ax.set_xticklabels(labels, rotation=20 if tilt else 0, ha="right" if tilt else "center")
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, max(vals) * 1.25 if max(vals) > 0 else 1)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(a.title or "%s on each configuration" % workload, fontsize=12)
    fig.tight_layout()
    for p in ts.save_figure(fig, a.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
