#!/usr/bin/env python3
"""The command line and the comparison table both GPU checks share (scripts/check_gpu_models.py, scripts/check_gpu_framework.py):
one row per measurement with tessel's time, the error and both kernel counts, then the mean absolute error.
Standard library only; imported by the two scripts from their own folder."""

import argparse
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def comparison_parser(description, measurements):
    """The options both checks take: the tessel binary, the platform, the measurements (a file under
    validation/gpu/ by default) and --markdown."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"))
    ap.add_argument("--platform", default="h100_sxm")
    ap.add_argument("--measurements", default=os.path.join(ROOT, "validation", "gpu", measurements))
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    return ap


def print_comparison(rows, first_column, kernels_column, unit, what, markdown, width):
    """rows: (name, measured s, simulated s or None, kernels measured, tessel kernels, note when not compared).
    unit: "ms" or "us"; what: the rows' plural noun for the mean line; width: the name column in plain text."""
    scale, digits = (1e3, 3) if unit == "ms" else (1e6, 1)

    def t(s):
        return "%.*f %s" % (digits, s * scale, unit)

    if markdown:
        print("| %s | measured%s | tessel | error | kernels measured | %s |" %
              (first_column, " (kernel sum)" if unit == "ms" else "", kernels_column))
        print("|---|---:|---:|---:|---:|---:|")
    for name, meas, sim, km, ks, note in rows:
        if sim is None:
            print(("| %s | %s | - | %s | %s | - |" if markdown else "%-*s measured %9s  tessel: %s  (%s kernels)")
                  % ((name, t(meas), note, km) if markdown else (width, name, t(meas), note, km)))
        elif markdown:
            print("| %s | %s | %s | %+.1f%% | %d | %d |" % (name, t(meas), t(sim), (sim / meas - 1) * 100, km, ks))
        else:
            print("%-*s measured %9s  tessel %9s  %+6.1f%%  kernels %4d vs %4d" %
                  (width, name, t(meas), t(sim), (sim / meas - 1) * 100, km, ks))
    errs = [abs(sim / meas - 1) * 100 for (_, meas, sim, _, _, _) in rows if sim]
    if errs:
        print("mean absolute error over %d %s: %.1f%%" % (len(errs), what, sum(errs) / len(errs)))
