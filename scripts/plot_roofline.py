#!/usr/bin/python3
"""Roofline: runs (or the ops of one run) placed by arithmetic intensity and achieved FLOP/s against the
platform's compute roof and memory roof.

Run with /usr/bin/python3 (it needs the distribution's python3-matplotlib).

    # every point of a sweep (or run folders written by tessel run --out, or summary.json files):
    scripts/plot_roofline.py out/sweeps/mesh4x4_100 --color workload.m --out docs/img/roofline
    # the GEMM-like ops of one run (tessel runs it with a trace first):
    scripts/plot_roofline.py --ops --platform mesh4x4 --workload mlp --out docs/img/roofline_ops

Per run, everything is measured: intensity = the workload's FLOPs / the bytes the off-chip memory moved
(summary.json: flops, and the `work` of the memory resource, by default the busiest memory that is not an
on-chip SRAM; --memory NAME picks another, e.g. tile[*].sram), performance = achieved FLOP/s. The roofs are
the platform's peak FLOP/s and that memory's peak bandwidth, which tessel reports indirectly
(peak = work / (fraction_of_peak x simulated time)); one pair of roofs is drawn per distinct platform
configuration among the runs.

Per op (--ops) it is an estimate, because the run summary has no per-op FLOPs or bytes: an op's FLOPs come
from the mapper's note "NAME: matmul MxNxK ..." (2MNK; matmul and convolution, as implicit GEMM), its bytes
are the compulsory traffic (M*K + K*N + M*N elements at the workload's precision, each operand moved once;
for a convolution the im2col M*K overstates its input, so its intensity is a lower bound), and its time is
the span of its slices in the run's trace (first start to last end, so ops that overlap in a pipeline look
slower than they are). Elementwise ops have no GEMM note and are left out.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tessel_sweep as ts  # noqa: E402

ELEMENT_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


def memory_resource(summary, name=None):
    """The resource whose bytes define intensity, and its peak bandwidth in B/s (None if it moved nothing)."""
    res = summary.get("resources", [])
    if name:
        found = [r for r in res if r["name"] == name]
        if not found:
            raise SystemExit("plot_roofline.py: no resource %r (resources: %s)" % (name, ", ".join(r["name"] for r in res)))
        r = found[0]
    else:
        mems = [r for r in res if r.get("class") == "memory" and r.get("kind") != "sram_bank"]
        if not mems:
            raise SystemExit("plot_roofline.py: the platform has no off-chip memory; pick one with --memory NAME")
        r = max(mems, key=lambda m: m.get("work", 0))
    frac, t = r.get("fraction_of_peak", 0), summary.get("sim_time_s", 0)
    peak = r["work"] / (frac * t) if frac > 0 and t > 0 else None
    return r, peak


def load_runs(paths):
    """(label params, summary) for every run under the given paths."""
    runs = []
    for p in paths:
        if os.path.isdir(p) and os.path.exists(os.path.join(p, "results.jsonl")):
            for r in ts.ok(ts.load_results(p)):
                runs.append((r["params"], ts.load_summary(p, r)))
        else:
            f = os.path.join(p, "summary.json") if os.path.isdir(p) else p
            with open(f) as fh:
                runs.append(({}, json.load(fh)))
    if not runs:
        raise SystemExit("plot_roofline.py: no successful runs found")
    return runs


def op_points(platform, workload, sets, out):
    """Runs the workload with a trace and estimates each GEMM-like op's FLOPs, bytes and time."""
    trace = os.path.join(out, "trace.json")
    cmd = [ts.find_tessel(), "run", "-p", platform, "-w", workload, "--out", out, "--trace", trace, "-q"]
    for s in ts.set_args(sets):
        cmd += ["--set", s]
    p = subprocess.run(cmd, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise SystemExit("plot_roofline.py: " + (p.stderr.strip() or "tessel run failed"))
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(trace) as f:
        t = json.load(f)
    events = t["traceEvents"] if isinstance(t, dict) else t
    span = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        s0, s1 = e["ts"], e["ts"] + e.get("dur", 0)
        a, b = span.get(e["name"], (s0, s1))
        span[e["name"]] = (min(a, s0), max(b, s1))
    precision = "fp16"
    with open(os.path.join(out, "resolved.yaml")) as f:
        for line in f:
            m = re.match(r'workload\.precision:\s*"?([A-Za-z0-9]+)"?', line)
            if m:
                precision = m.group(1)
    eb = ELEMENT_BYTES.get(precision, 2)
    pts = []
    for note in summary.get("notes", []):
        m = re.match(r"^(\S+): (\w+) (\d+)x(\d+)x(\d+) ", note)
        if not m or m.group(1) not in span:
            continue
        name, kind = m.group(1), m.group(2)
        M, N, K = (int(m.group(i)) for i in (3, 4, 5))
        flops = 2.0 * M * N * K
        nbytes = (M * K + K * N + M * N) * eb
        secs = (span[name][1] - span[name][0]) * 1e-6  # trace times are microseconds
        if secs > 0:
            pts.append((name, kind, flops / nbytes, flops / secs))
    return summary, pts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="sweep results folders, run folders (tessel run --out) or summary.json files")
    ap.add_argument("--memory", help="the resource whose bytes define intensity (default: the off-chip memory)")
    ap.add_argument("--color", help="colour runs by this sweep parameter")
    ap.add_argument("--ops", action="store_true", help="per-op roofline of one run of --workload on --platform")
    ap.add_argument("--platform", help="with --ops")
    ap.add_argument("--workload", help="with --ops")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help="with --ops: --set for the run")
    ap.add_argument("--title")
    ap.add_argument("--out", default="roofline", help="output prefix (default ./roofline)")
    a = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5))
    roofs = []   # (label, peak FLOP/s, peak B/s)
    placed = []  # (x, y)
    if a.ops:
        if not (a.platform and a.workload):
            ap.error("--ops needs --platform and --workload")
        with tempfile.TemporaryDirectory() as tmp:
            summary, pts = op_points(a.platform, a.workload, a.set, tmp)
        if not pts:
            raise SystemExit("plot_roofline.py: no GEMM-like ops with mapper notes in this run")
        mem, bw = memory_resource(summary, a.memory)
        roofs.append((summary["platform"], summary["peak_flops_per_s"], bw))
        kinds = sorted({p[1] for p in pts})
        for kind, marker in zip(kinds, "osD^v"):
            sel = [p for p in pts if p[1] == kind]
            ax.scatter([p[2] for p in sel], [p[3] for p in sel], marker=marker, s=36, zorder=3, label=kind,
                       edgecolors="black", linewidths=0.4)
            placed += [(p[2], p[3]) for p in sel]
        for p in pts if len(pts) <= 12 else []:
            ax.annotate(p[0], (p[2], p[3]), fontsize=7, xytext=(4, 3), textcoords="offset points")
        print("%-24s %-8s %14s %16s" % ("op", "kind", "FLOP/byte", "FLOP/s"))
        for p in pts:
            print("%-24s %-8s %14.4g %16.4g" % p)
        title = "%s on %s: ops (estimated)" % (a.workload, summary["platform"])
    else:
        if not a.paths:
            ap.error("give results folders, run folders or summary.json files (or --ops)")
        runs = load_runs(a.paths)
        values = []
        for params, s in runs:
            mem, bw = memory_resource(s, a.memory)
            if mem["work"] <= 0:
                continue
            x, y = s["flops"] / mem["work"], s["achieved_flops_per_s"]
            # Roofs derived from different runs agree to rounding: compare them at 4 significant digits.
            key = (s["platform"], "%.4g" % s["peak_flops_per_s"], "%.4g" % (bw or 0))
            if key not in [(r[0], "%.4g" % r[1], "%.4g" % (r[2] or 0)) for r in roofs]:
                roofs.append((s["platform"], s["peak_flops_per_s"], bw))
            values.append((params.get(a.color) if a.color else None, x, y))
            placed.append((x, y))
        if a.color:
            cats = list(dict.fromkeys(v[0] for v in values))
            numeric = all(ts.number(c) is not None for c in cats)
            if numeric:
                cats.sort(key=ts.number)
            cmap = plt.get_cmap("viridis", max(len(cats), 2))
            for i, c in enumerate(cats):
                sel = [v for v in values if v[0] == c]
                ax.scatter([v[1] for v in sel], [v[2] for v in sel], s=30, color=cmap(i), zorder=3,
                           edgecolors="black", linewidths=0.4, label="%s = %s" % (a.color, c))
        else:
            ax.scatter([v[1] for v in values], [v[2] for v in values], s=30, zorder=3, edgecolors="black", linewidths=0.4)
        mem_name = a.memory or memory_resource(runs[0][1])[0]["name"]
        title = "%d runs, intensity against %s bytes" % (len(values), mem_name)
        print("%d runs; roofs:" % len(values))

    if not placed:
        raise SystemExit("plot_roofline.py: nothing to place (no run moved bytes through that memory)")
    xs = [p[0] for p in placed]
    lo = min(xs + [r[1] / r[2] for r in roofs if r[2]]) / 4
    hi = max(xs + [r[1] / r[2] for r in roofs if r[2]]) * 4
    grid = [lo * (hi / lo) ** (i / 200.0) for i in range(201)]
    styles = ["-", "--", "-.", ":"]
    for i, (label, peak, bw) in enumerate(roofs[:8]):
        ys = [min(peak, bw * x) if bw else peak for x in grid]
        bw_text = "%.3g GB/s" % (bw / 1e9) if bw else "?"
        ax.plot(grid, ys, color="black" if len(roofs) == 1 else None, linestyle=styles[i % len(styles)], linewidth=1.2,
                label="roof: %s, %.3g TFLOP/s, %s" % (label, peak / 1e12, bw_text))
        print("  %s: peak %.4g FLOP/s, memory %s, ridge at %.3g FLOP/byte" % (label, peak, bw_text, peak / bw if bw else float("nan")))
    if len(roofs) > 8:
        print("plot_roofline.py: %d distinct roofs, drew the first 8" % len(roofs), file=sys.stderr)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    top = max([r[1] for r in roofs] + [p[1] for p in placed])
    bottom = min(p[1] for p in placed)
    ax.set_ylim(bottom / 4, top * 2)
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(a.title or title, fontsize=11)
    fig.tight_layout()
    for p in ts.save_figure(fig, a.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
