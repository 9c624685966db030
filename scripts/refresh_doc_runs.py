#!/usr/bin/env python3
"""Re-run the `tessel` commands a doc quotes and update the output lines it shows, after a model change.

    python3 scripts/refresh_doc_runs.py docs/systems.md            # quick blocks only
    python3 scripts/refresh_doc_runs.py docs/systems.md --slow     # the ```console slow blocks too

A doc's ```console blocks hold `$ tessel ...` lines followed by lines of its output (a selection: the doc tests,
tests/support/doc_runs.h, check that every shown line is still printed). For each shown line the run no longer
prints, this puts in the printed line that says the same thing (the same text once the numbers are taken out and
the spacing collapsed; among a table's rows, the one with the same settings: plan, system parameters). Rows of a
ranked plan table follow their plans and are put back in rank order. A shown line with no such counterpart is
reported and left for a person. Prose around the blocks is not touched:
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
SETTING = re.compile(r"\b[a-z_]+=[^\s,;()]+")      # dp=8, nodes=1, recompute=full: what a row is about
RANK_ROW = re.compile(r"^\s*(\d+) [a-z_]+=")      # a ranked plan table's row: "    12 dp=2 tp=4 ..."


def shape(line):
    """The line with every number replaced and its spacing collapsed, so that old and new outputs of one quantity
    compare equal (a table's columns widen and narrow with their numbers)."""
    return NUMBER.sub("#", " ".join(line.split()))


def identity(line):
    """The shape plus the line's settings kept whole: rows of one table share a shape, and only their plans and
    system parameters (dp=8 tp=1 ..., nodes=1) tell them apart."""
    return shape(line) + " | " + " ".join(SETTING.findall(line))


def counterpart(line, output):
    """The printed line that says what `line` said, or None when there is not exactly one."""
    candidates = [o for o in output if shape(o) == shape(line)]
    if len(candidates) > 1:
        candidates = [o for o in candidates if identity(o) == identity(line)]
    return candidates[0] if len(candidates) == 1 else None


def in_rank_order(block):
    """Rows of a ranked table back in rank order after each took its plan's new row (ranks move when plans
    trade places); other lines stay where they are."""
    rows = [k for k, l in enumerate(block) if RANK_ROW.match(l)]
    ranked = sorted((block[k] for k in rows), key=lambda l: int(RANK_ROW.match(l).group(1)))
    for k, l in zip(rows, ranked):
        block[k] = l
    return block


def refresh(lines, run, slow_too, log):
    """Updates the shown output lines of every console block in `lines` (run(command) gives a command's output
    lines); returns (lines updated, lines left for a person)."""
    in_block, slow, output, changed, unmatched = False, False, None, 0, 0
    fence, block_start = "", 0
    for i, raw in enumerate(lines):
        l = raw.strip()
        if l.startswith("```"):
            if in_block:
                lines[block_start:i] = in_rank_order(lines[block_start:i])
            in_block = not in_block and l in ("```console", "```console slow")
            slow = l == "```console slow"
            fence, block_start, output = raw[: len(raw) - len(raw.lstrip())], i + 1, None
            continue
        if not in_block or (slow and not slow_too):
            continue
        if l.startswith("$ tessel "):
            output = run(l[len("$ tessel "):])
            log("ran: " + l[:100])
            continue
        stripped = [o.strip() for o in output or []]
        if output is None or not l or l in stripped:
            continue
        found = counterpart(l, output)
        if found is not None:
            lines[i] = fence + found.rstrip()
            changed += 1
            log("%d: %s\n    -> %s" % (i + 1, l, found.strip()))
        else:
            unmatched += 1
            log("%d: no single counterpart for: %s" % (i + 1, l))
    return changed, unmatched


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("doc")
    ap.add_argument("--slow", action="store_true", help="also re-run the ```console slow blocks")
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"))
    args = ap.parse_args()

    def run(command):
        p = subprocess.run([args.tessel] + shlex.split(command), cwd=ROOT, capture_output=True, text=True)
        return (p.stdout + p.stderr).split("\n")

    lines = open(args.doc).read().split("\n")
    changed, unmatched = refresh(lines, run, args.slow, lambda m: print(args.doc + ":" + m if m[0].isdigit() else m))
    with open(args.doc, "w") as f:
        f.write("\n".join(lines))
    print("%d lines updated, %d left for a person" % (changed, unmatched))


if __name__ == "__main__":
    main()
