#!/usr/bin/python3
"""docs/validation.md's whole-model table: scripts/check_gpu_models.py re-run through the real binary prints
every row the doc shows (the measured models are validation/gpu/h100_models.jsonl, never fitted)."""
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tessel = os.environ.get("TESSEL_BIN", os.path.join(root, "build", "bin", "tessel"))
p = subprocess.run([sys.executable, os.path.join(root, "scripts", "check_gpu_models.py"), "--markdown",
                    "--tessel", tessel], cwd=root, capture_output=True, text=True)
if p.returncode != 0:
    sys.exit("check_gpu_models.py failed: " + p.stderr)
printed = [l.strip() for l in p.stdout.splitlines() if l.startswith("| ")]
doc = open(os.path.join(root, "docs", "validation.md")).read().splitlines()
start = doc.index("$ python3 scripts/check_gpu_models.py --markdown")
shown = []
for l in doc[start + 1:]:
    if l.startswith("| "):
        shown.append(l.strip())
    elif shown and not l.strip():
        break
missing = [l for l in printed if l not in shown] + [l for l in shown if l not in printed]
if len(printed) < 10 or missing:
    sys.exit("docs/validation.md and check_gpu_models.py disagree:\n  " + "\n  ".join(missing))
print("%d model rows agree" % len(printed))
