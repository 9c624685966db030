#!/usr/bin/python3
"""Issue 18's calibration: scripts/fit_power.py --check re-runs the quick platforms' fit and check workloads
through the real binary and each must land within 15% of its published power (the IPUs and the wafer, a minute
of simulation, are checked by docs/energy.md's slow doc test). Also checks the fit itself: fitting again from the
YAML's values must give back the value the YAML holds, so the YAML and the script cannot drift apart."""
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
script = os.path.join(root, "scripts", "fit_power.py")
quick = ["h100_sxm", "a100_sxm", "tpu_v4", "groqchip1"]
only = sum((["--only", p] for p in quick), [])
check = subprocess.run([sys.executable, script, "--check"] + only, cwd=root, capture_output=True, text=True)
print(check.stdout)
if check.returncode != 0 or check.stdout.count(" ok") < 7:
    sys.exit("fit_power.py --check: a platform is more than 15% off its published power\n" + check.stdout + check.stderr)
fit = subprocess.run([sys.executable, script] + only, cwd=root, capture_output=True, text=True)
if fit.returncode != 0:
    sys.exit("fit_power.py failed: " + fit.stderr)
for line in fit.stdout.splitlines():
    m = re.match(r"(\S+)\s+(\S+)\s+= ([0-9.e+-]+)W", line)
    if not m:
        continue
    name, param, value = m.group(1), m.group(2), float(m.group(3))
    yaml_text = open(os.path.join(root, "platforms", {"h100_sxm": "gpu", "a100_sxm": "gpu", "tpu_v4": "tpu",
                                                       "groqchip1": "tsp"}[name], name + ".yaml")).read()
    key = param.split(".")[-1]
    held = re.findall(r"\b" + key + r":\s*([0-9.]+)W", yaml_text)
    if not any(abs(float(h) - value) <= 1e-3 * max(1.0, value) for h in held):
        sys.exit(f"{name}: fitting gives {param} = {value} W but the YAML holds {held}")
print("%d platforms within 15%% and their fits reproduce" % len(quick))
