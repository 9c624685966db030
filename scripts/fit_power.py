#!/usr/bin/env python3
"""Power calibration of the vendor platforms: one power parameter per platform is fitted so that its average power
on one representative workload equals its published (or derived) figure; a second workload checks the fit. Where a
measured idle power is published (GPUs, TPU v4) it is the leakage and the fitted parameter is `active` (watts per
busy unit beyond the energy of its actions); where none is (IPU, wafer, TSP: chips whose units stay clocked while a
program runs) the fitted parameter is the leakage itself. Average power is linear in either (energy = actions +
leakage x time + active x busy time, and timing does not depend on energy), so two runs per platform (0 W and 1 W)
give the exact value.

    scripts/fit_power.py               # fit every platform in FITS, print the values to put in their YAML
    scripts/fit_power.py --check       # run the fit and check workloads with the YAML as it is: within 15%?
    scripts/fit_power.py --only h100_sxm

Standard library only (any python3). The fitted values live in the platform YAMLs with a "(fit)" comment naming
this script; docs/energy.md lists the targets, their sources, and the gaps.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESSEL = os.environ.get("TESSEL_BIN", os.path.join(ROOT, "build", "bin", "tessel"))

BERT_TRAIN = ["-w", "bert-large", "--set", "workload.training=adam", "--set", "workload.batch=32"]
RESNET_TRAIN = ["-w", "resnet50", "--set", "workload.training=sgd", "--set", "workload.batch=256"]
BERT_1 = ["-w", "bert-large"]
BERT_4_LAYERS = ["-w", "bert-large", "--set", "workload.layers=4"]
RESNET_1 = ["-w", "resnet50"]

# platform, the fitted parameter, target watts, where the target comes from, fit workload, check workload
FITS = [
    ("h100_sxm", "gpu.energy.active", 532, "76% of the 700 W TDP: H100 nodes in training (arXiv 2506.14551)",
     BERT_TRAIN, RESNET_TRAIN),
    ("a100_sxm", "gpu.energy.active", 304, "76% of the 400 W TDP, as measured on H100 nodes (arXiv 2506.14551)",
     BERT_TRAIN, RESNET_TRAIN),
    ("tpu_v4", "tpu.energy.active", 170, "mean measured power, ASIC and HBM (Jouppi et al., ISCA 2023, Table 4)",
     BERT_TRAIN, RESNET_TRAIN),
    ("gc200", "tiles.energy.leakage", 259, "Bow-2000 1.25 kW / 4, less Bow's 40% speed at 16% better perf/W (d)",
     BERT_4_LAYERS, RESNET_1),
    ("bow", "tiles.energy.leakage", 312, "Bow-2000: 1.25 kW average for 4 IPUs (Graphcore, via eeNews Europe)",
     BERT_4_LAYERS, RESNET_1),
    ("wse2", "pe.energy.leakage", 15000, "~15 kW for the WSE-2 (issue 18); the CS-2 system draws over 20 kW",
     BERT_1, RESNET_1),
    ("groqchip1", "chip.energy.leakage", 300, "300 W per chip (TechSpot, 2020)", RESNET_1, None),
]


def run(platform, args, extra):
    with tempfile.TemporaryDirectory() as out:
        cmd = [TESSEL, "run", "-p", platform] + args + extra + ["-o", out, "-q"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(" ".join(cmd) + "\n" + (r.stdout + r.stderr).strip())
        with open(os.path.join(out, "summary.json")) as f:
            return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="check the YAML's values instead of fitting")
    ap.add_argument("--only", action="append", default=[], help="platform name (repeatable)")
    ap.add_argument("--tolerance", type=float, default=0.15)
    a = ap.parse_args()
    failed = False
    for name, param, target, source, fit_w, check_w in FITS:
        if a.only and name not in a.only:
            continue
        if a.check:
            for label, w in (("fit", fit_w), ("check", check_w)):
                if w is None:
                    continue
                j = run(name, w, [])
                p = j["average_power_w"]
                ok = abs(p - target) <= a.tolerance * target
                failed |= not ok
                print(f"{name:10s} {label:5s} {' '.join(w[1:2] + [x for x in w[2:] if '=' in x]):48s} "
                      f"{p:9.1f} W  target {target} W  {100 * (p / target - 1):+6.1f}%  {'ok' if ok else 'OFF'}")
            continue
        p0 = run(name, fit_w, ["--set", param + "=0W"])["average_power_w"]
        p1 = run(name, fit_w, ["--set", param + "=1W"])["average_power_w"]
        slope = p1 - p0
        value = (target - p0) / slope if slope > 0 else float("nan")
        note = "" if value >= 0 else "  (negative: the actions alone exceed the target; leave 0 W and explain)"
        print(f"{name:10s} {param:22s} = {value:.4g}W   (at 0 W: {p0:.1f} W; {slope:.4g} W per W; target {target} W: "
              f"{source}){note}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
