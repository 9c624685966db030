#!/usr/bin/python3
"""docs/validation.md's whole-model and eager-expansion tables: scripts/check_gpu_models.py (one kernel per op and
--framework eager) and scripts/check_gpu_framework.py re-run through the real binary print every row the doc shows
(the measured models are validation/gpu/h100_models.jsonl, never fitted; the eager ops h100_framework.jsonl)."""
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tessel = os.environ.get("TESSEL_BIN", os.path.join(root, "build", "bin", "tessel"))
doc = open(os.path.join(root, "docs", "validation.md")).read().splitlines()


def shown_under(command):
    """The table rows (and the mean line) after the doc's console block for `command`."""
    start = doc.index("$ " + command)
    rows = []
    for l in doc[start + 2:]:
        if l.startswith("| ") or l.startswith("mean absolute"):
            rows.append(l.strip())
        elif rows and not l.strip():
            break
    return rows


failures = []
for command in ("python3 scripts/check_gpu_models.py --markdown",
                "python3 scripts/check_gpu_models.py --markdown --framework eager",
                "python3 scripts/check_gpu_framework.py --markdown"):
    args = command.split()[1:]
    p = subprocess.run([sys.executable, os.path.join(root, args[0])] + args[1:] + ["--tessel", tessel], cwd=root,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(command + " failed: " + p.stderr)
    printed = [l.strip() for l in p.stdout.splitlines() if l.startswith("| ") or l.startswith("mean absolute")]
    shown = shown_under(command)
    missing = [l for l in printed if l not in shown] + [l for l in shown if l not in printed]
    if len(printed) < 10 or missing:
        failures.append(command + ":\n  " + "\n  ".join(missing))
    else:
        print("%s: %d rows agree" % (command, len(printed)))
if failures:
    sys.exit("docs/validation.md and the scripts disagree:\n" + "\n".join(failures))
