#!/usr/bin/env python3
"""Re-run the `tessel` commands a doc quotes and update the output lines it shows, after a model change.

    python3 scripts/refresh_doc_runs.py docs/systems.md            # quick blocks only
    python3 scripts/refresh_doc_runs.py docs/systems.md --slow     # the ```console slow blocks too

A doc's ```console blocks hold `$ tessel ...` lines followed by lines of its output (a selection: the doc tests,
tests/support/doc_runs.h, check that every shown line is still printed). For each shown line the run no longer
prints, this puts in the printed line that says the same thing (the same text once the numbers are taken out);
a shown line with no such counterpart is reported and left for a person. Prose around the blocks is not touched:
read the diff and fix numbers it repeats. Needs only the Python standard library.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUMBER = re.compile(r"[-+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?")


def shape(line):
    """The line with every number replaced, so that old and new outputs of one quantity compare equal."""
    return NUMBER.sub("#", line.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("doc")
    ap.add_argument("--slow", action="store_true", help="also re-run the ```console slow blocks")
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"))
    args = ap.parse_args()
    lines = open(args.doc).read().split("\n")
    in_block, slow, output, changed, unmatched = False, False, None, 0, 0
    for i, raw in enumerate(lines):
        l = raw.strip()
        if l.startswith("```"):
            in_block = not in_block and l in ("```console", "```console slow")
            slow = l == "```console slow"
            output = None
            continue
        if not in_block or (slow and not args.slow):
            continue
        if l.startswith("$ tessel "):
            cmd = [args.tessel] + shlex.split(l[len("$ tessel "):])
            p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            output = [o.strip() for o in (p.stdout + p.stderr).split("\n")]
            print("ran: " + l[:100], file=sys.stderr)
            continue
        if output is None or not l or l in output:
            continue
        candidates = [o for o in output if shape(o) == shape(l)]
        if len(candidates) == 1:
            indent = raw[: len(raw) - len(raw.lstrip())]
            lines[i] = indent + candidates[0]
            changed += 1
            print("%s:%d: %s\n    -> %s" % (args.doc, i + 1, l, candidates[0]))
        else:
            unmatched += 1
            print("%s:%d: no single counterpart for: %s" % (args.doc, i + 1, l))
    with open(args.doc, "w") as f:
        f.write("\n".join(lines))
    print("%d lines updated, %d left for a person" % (changed, unmatched))


if __name__ == "__main__":
    main()
