#!/usr/bin/python3
"""Plot a GPU calibration: every measured kernel time against the time tessel simulates for it.

Run with /usr/bin/python3 (it needs the distribution's python3-matplotlib).

    # from a report written by `tessel calibrate ... --report report.csv`:
    scripts/plot_calibration.py report.csv --out docs/img/calibration.png
    # or let the script simulate the measurements with a platform as it is (tessel calibrate --no-fit):
    scripts/plot_calibration.py --platform platforms/gpu/h100_sxm.yaml \\
        --measurements validation/gpu/h100_microbenchmarks.jsonl --out docs/img/calibration.png

Left: simulated against measured seconds per kernel (log-log), one colour per kind of kernel, the diagonal
and a +-10 % band; held-out measurements (tessel calibrate --holdout-gemm) are hollow. Right: the signed error
of every measurement, grouped by kind, with the +-10 % and +-15 % bounds the baselines are held to.
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile

KIND_COLORS = {"gemm": "#1f77b4", "copy": "#2ca02c", "elementwise": "#ff7f0e", "rowwise": "#9467bd",
               "sdpa": "#d62728", "conv": "#8c564b"}


def read_report(path):
    rows, summary = [], []
    with open(path, newline="") as f:
        lines = []
        for line in f:
            if line.startswith("#"):
                summary.append(line[1:].strip())
            elif line.strip():
                lines.append(line)
    for r in csv.DictReader(lines):
        try:
            rows.append({"kind": r["kind"], "label": r["label"], "measured": float(r["measured_s"]),
                         "simulated": float(r["simulated_s"]), "error": float(r["error_pct"]),
                         "held_out": r["set"] == "held out"})
        except (KeyError, ValueError) as e:
            sys.exit("plot_calibration.py: %s is not a tessel calibrate CSV report (%s)" % (path, e))
    if not rows:
        sys.exit("plot_calibration.py: no rows in " + path)
    return rows, summary


def run_calibrate(tessel, platform, measurements, extra):
    fd, path = tempfile.mkstemp(suffix=".csv")
    os.close(fd)
    cmd = [tessel, "calibrate", "--platform", platform, "--measurements", measurements, "--no-fit", "--quiet",
           "--report", path] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("plot_calibration.py: %s failed:\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", nargs="?", help="CSV report of tessel calibrate (--report FILE.csv)")
    ap.add_argument("--platform", help="simulate the measurements on this platform instead of reading a report")
    ap.add_argument("--measurements", help="measurements (JSON lines) for --platform")
    ap.add_argument("--tessel", default=os.environ.get("TESSEL_BIN", "build/bin/tessel"), help="tessel binary")
    ap.add_argument("--title", default=None, help="figure title")
    ap.add_argument("--out", default="docs/img/calibration.png", help="output image (.png or .svg)")
    args = ap.parse_args()
    if bool(args.report) == bool(args.platform):
        ap.error("give either a report or --platform with --measurements")
    if args.platform and not args.measurements:
        ap.error("--platform needs --measurements")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tmp = None
    if args.platform:
        tmp = run_calibrate(args.tessel, args.platform, args.measurements, [])
        rows, summary = read_report(tmp)
        os.unlink(tmp)
    else:
        rows, summary = read_report(args.report)

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5.6), gridspec_kw={"width_ratios": [1, 1.5]})
    lo = min(min(r["measured"], r["simulated"]) for r in rows) / 1.5
    hi = max(max(r["measured"], r["simulated"]) for r in rows) * 1.5
    ax.plot([lo, hi], [lo, hi], color="black", lw=0.8)
    ax.fill_between([lo, hi], [lo * 0.9, hi * 0.9], [lo * 1.1, hi * 1.1], color="0.85", zorder=0, label="+-10 %")
    kinds = [k for k in KIND_COLORS if any(r["kind"] == k for r in rows)]
    kinds += sorted({r["kind"] for r in rows} - set(kinds))
    for k in kinds:
        c = KIND_COLORS.get(k, "0.4")
        for held in (False, True):
            pts = [r for r in rows if r["kind"] == k and r["held_out"] == held]
            if not pts:
                continue
            ax.scatter([p["measured"] for p in pts], [p["simulated"] for p in pts], s=28,
                       facecolors="none" if held else c, edgecolors=c, linewidths=1.2,
                       label=k + (" (held out)" if held else ""))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured seconds per kernel")
    ax.set_ylabel("simulated seconds per kernel")
    ax.grid(True, which="major", lw=0.3)
    ax.legend(fontsize=8, loc="upper left")

    order = sorted(range(len(rows)), key=lambda i: (kinds.index(rows[i]["kind"]), i))
    xs = list(range(len(order)))
    bx.bar(xs, [rows[i]["error"] for i in order], color=[KIND_COLORS.get(rows[i]["kind"], "0.4") for i in order],
           edgecolor=["black" if rows[i]["held_out"] else "none" for i in order], linewidth=0.8)
    for b, style in ((10, "--"), (15, ":")):
        bx.axhline(b, color="0.3", ls=style, lw=0.8)
        bx.axhline(-b, color="0.3", ls=style, lw=0.8)
    bx.axhline(0, color="black", lw=0.6)
    if len(xs) <= 60:
        bx.set_xticks(xs)
        bx.set_xticklabels([rows[i]["label"] for i in order], rotation=90, fontsize=6)
    else:  # too many to name: the report's table names them; the colours give the kind
        bx.set_xticks([])
        bx.set_xlabel("measurements, grouped by kind (names in the report)")
    bx.set_ylabel("error of the simulated time (%)")
    bx.set_xlim(-0.7, len(xs) - 0.3)
    bx.grid(True, axis="y", lw=0.3)
    # The per-class line is long: it goes under the figure, wrapped, not over the bars.
    per_class = [l for l in summary if l.startswith("per class")]
    text = "\n".join(l for l in summary if not l.startswith("per class"))
    if text:
        bx.text(0.01, 0.02, text, transform=bx.transAxes, va="bottom", fontsize=7,
                bbox={"facecolor": "white", "edgecolor": "0.7", "alpha": 0.9})
    fig.suptitle(args.title or "GPU baseline against measured kernel times (dashed: +-10 %, dotted: +-15 %)")
    if per_class:
        import textwrap
        fig.text(0.01, 0.01, "\n".join(textwrap.wrap(per_class[0], 190)), fontsize=7, va="bottom")
        fig.tight_layout(rect=(0, 0.07, 1, 1))
    else:
        fig.tight_layout()
    d = os.path.dirname(args.out)
    if d:
        os.makedirs(d, exist_ok=True)
    fig.savefig(args.out, dpi=130)
    print("wrote " + args.out)


if __name__ == "__main__":
    main()
