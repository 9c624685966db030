#!/usr/bin/python3
"""Sweep curves: a metric against one axis, one line per value of another, from a tessel sweep's results.

Run with /usr/bin/python3 (it needs the distribution's python3-matplotlib).

    scripts/plot_sweep.py out/sweeps/noc_sram_batch --x noc.link_bandwidth --y throughput_per_s \\
        --series tile.sram.capacity --where workload.batch=64 --logx --out docs/img/sweep_curves

Parameters that still vary after --x, --series and --where each get their own panel (small multiples), so
no line ever mixes points that differ in something not shown. Quantities on the x axis ("64B/cycle",
"512KiB") are placed by their value; other values are categories in sweep order. Writes PREFIX.png and
PREFIX.svg (default: RESULTS/plots/Y_vs_X).
"""

import argparse
import itertools
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tessel_sweep as ts  # noqa: E402

MAX_PANELS = 16


def parse_where(items):
    where = {}
    for w in items:
        if "=" not in w:
            raise SystemExit("plot_sweep.py: --where %r: expected NAME=VALUE" % w)
        k, v = w.split("=", 1)
        where[k] = v
    return where


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="a sweep's results folder (or its results.jsonl)")
    ap.add_argument("--x", required=True, help="the parameter on the x axis")
    ap.add_argument("--y", required=True, help="the metric on the y axis")
    ap.add_argument("--series", help="one line per value of this parameter")
    ap.add_argument("--where", action="append", default=[], metavar="NAME=VALUE", help="keep only these points (repeatable)")
    ap.add_argument("--logx", action="store_true")
    ap.add_argument("--logy", action="store_true")
    ap.add_argument("--title")
    ap.add_argument("--out", help="output prefix (default RESULTS/plots/Y_vs_X)")
    a = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = ts.load_results(a.results)
    failed = len(rows) - len(ts.ok(rows))
    rows = ts.select(ts.ok(rows), parse_where(a.where))
    if not rows:
        raise SystemExit("plot_sweep.py: no successful points match")
    for name in [a.x] + ([a.series] if a.series else []):
        if name not in rows[0]["params"]:
            raise SystemExit("plot_sweep.py: %r is not a parameter of this sweep (parameters: %s)"
                             % (name, ", ".join(rows[0]["params"])))
    if a.y not in rows[0]["metrics"]:
        raise SystemExit("plot_sweep.py: %r is not a metric of this sweep (metrics: %s)" % (a.y, ", ".join(rows[0]["metrics"])))

    facets = [n for n in ts.varying(rows) if n not in (a.x, a.series)]
    panels = ts.group_by(rows, facets[0]) if len(facets) == 1 else {}
    if len(facets) > 1:
        for r in rows:
            panels.setdefault(tuple(r["params"][n] for n in facets), []).append(r)
    if not facets:
        panels = {None: rows}
    else:
        # Panels in value order (quantities by value), not in the order the points finished.
        def facet_key(item):
            vals = item[0] if isinstance(item[0], tuple) else (item[0],)
            return [(0, ts.number(v), "") if ts.number(v) is not None else (1, 0, str(v)) for v in vals]
        panels = dict(sorted(panels.items(), key=facet_key))
    if len(panels) > MAX_PANELS:
        raise SystemExit("plot_sweep.py: %d panels (one per value of %s); fix some with --where NAME=VALUE"
                         % (len(panels), ", ".join(facets)))

    xs_all = [r["params"][a.x] for r in rows]
    numeric_x = all(ts.number(x) is not None for x in xs_all)
    order = list(dict.fromkeys(xs_all))  # categories in sweep order

    cols = min(len(panels), 3)
    nrows = int(math.ceil(len(panels) / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False, sharey=True)
    series_values = list(dict.fromkeys(r["params"][a.series] for r in rows)) if a.series else [None]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    markers = itertools.cycle("osD^vP*X")
    style = {s: (colors[i % len(colors)], next(markers)) for i, s in enumerate(series_values)}
    for ax, (label, prow) in zip(axes.flat, panels.items()):
        for s in series_values:
            pts = [r for r in prow if a.series is None or r["params"][a.series] == s]
            pts = [(r["params"][a.x], ts.number(r["metrics"][a.y])) for r in pts]
            pts = [(x, y) for x, y in pts if y is not None]
            if not pts:
                continue
            if numeric_x:
                pts.sort(key=lambda p: ts.number(p[0]))
                xv = [ts.number(x) for x, _ in pts]
            else:
                pts.sort(key=lambda p: order.index(p[0]))
                xv = [order.index(x) for x, _ in pts]
            c, m = style[s]
            ax.plot(xv, [y for _, y in pts], marker=m, color=c, label=None if s is None else "%s = %s" % (a.series, s))
        if numeric_x:
            ticks = sorted(set(ts.number(x) for x in xs_all))
            names = {ts.number(x): x for x in xs_all}
            ax.set_xticks(ticks)
            ax.set_xticklabels([names[t] for t in ticks], rotation=30 if len(ticks) > 5 else 0)
            if a.logx:
                ax.set_xscale("log")
                ax.set_xticks(ticks)
                ax.set_xticklabels([names[t] for t in ticks], rotation=30 if len(ticks) > 5 else 0)
                ax.minorticks_off()
        else:
            ax.set_xticks(range(len(order)))
            ax.set_xticklabels(order, rotation=30 if len(order) > 5 else 0)
        if a.logy:
            ax.set_yscale("log")
        ax.set_xlabel(a.x)
        ax.grid(True, alpha=0.3)
        if label is not None:
            names = facets if len(facets) > 1 else facets[:1]
            vals = label if isinstance(label, tuple) else (label,)
            ax.set_title(", ".join("%s = %s" % nv for nv in zip(names, vals)), fontsize=10)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel(a.y)
    if a.series:
        axes.flat[0].legend(fontsize=8)
    where = ", ".join(a.where)
    fig.suptitle(a.title or "%s vs %s%s" % (a.y, a.x, " (%s)" % where if where else ""), fontsize=12)
    fig.tight_layout()
    prefix = a.out or os.path.join(a.results if os.path.isdir(a.results) else os.path.dirname(a.results), "plots",
                                   "%s_vs_%s" % (a.y, a.x))
    for p in ts.save_figure(fig, prefix):
        print(p)
    if failed:
        print("plot_sweep.py: %d failed or timed-out point(s) left out" % failed, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
