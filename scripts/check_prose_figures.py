#!/usr/bin/env python3
"""Find figures in a doc's prose that disagree with its own console blocks and tables.

    python3 scripts/check_prose_figures.py docs/porting.md [more docs]

The doc tests re-run every ```console block, but the prose around a block repeats its numbers by hand ("at batch
8 the same chip does 5.01 times the images per second"), and nothing re-ran those. A prose figure is a number
with a unit (us, ms, s, GB, GB/s, TFLOP/s, samples/s, tokens/s, W, J, %, x or "times"). It agrees when a number
with the same unit in the doc's ```console blocks or tables rounds to it at the prose's precision (63.9% may be
quoted as 64%). It is stale when it does not agree but such a number lies within 15% of it: the prose quotes an
older run of that block. Prose figures far from every quoted one are taken as the doc's own (a published figure,
a hand derivation) and left alone; a near one that is the doc's own (116.8 us by hand beside the simulation's
117.1 us) is listed in a comment of the doc, each with the reason, which this check then accepts:

    <!-- prose figures of its own: 116.8 us (the transfer time by hand); 25% (a parameter's default) -->

Exit 1, listing doc:line for each stale figure, if any. Standard library only.
"""

import re
import sys

UNITS = ["TFLOP/s", "GFLOP/s", "PFLOP/s", "samples/s", "tokens/s", "GB/s", "TB/s", "MB/s", "GiB", "MiB", "KiB",
         "GB", "MB", "KB", "TB", "us", "ms", "ns", "s", "W", "J", "mJ", "%", "x", "times"]
FIGURE = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?(" + "|".join(re.escape(u) for u in UNITS) + r")(?![\w/])")
NEAR = 0.15


def figures(line):
    """(text of the number without separators, its value, its unit) for each figure in a line."""
    for m in FIGURE.finditer(line):
        text = m.group(1).replace(",", "")
        yield text, float(text), "x" if m.group(2) == "times" else m.group(2)


def rounds_to(value, text):
    """Whether `value` printed at the precision of `text` is `text`."""
    places = len(text.split(".")[1]) if "." in text else 0
    return f"{value:.{places}f}" == text


OWN = re.compile(r"<!--\s*prose figures of its own:(.*?)-->", re.S)


COLUMN = re.compile(r"\S+(?: \S+)*")
BARE = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)(?![\w./])")


def column_figures(line, header, quoted):
    """A console table's unit-less cells: a line of column names, one naming a unit ("tokens/s per chip"), gives
    that unit to the bare numbers below it in its columns. Returns the header in force after `line`: its columns
    as (start, end, unit), or [] once a line is neither a header nor a row of it."""
    names = [(m.start(), m.end(), m.group()) for m in COLUMN.finditer(line)]  # 2+ spaces part columns
    if names and not any(BARE.search(n) for _, _, n in names):
        columns = []
        for a, b, n in names:
            unit = next((u for u in UNITS if re.search(r"(?<![\w/])" + re.escape(u) + r"(?![\w/])", n)), None)
            columns.append((a, b, unit))
        return columns if any(u for _, _, u in columns) else []
    if not header or not line.strip() or len(line) - len(line.lstrip()) != header[0][0]:
        return []  # a row is indented as its header; anything else ends the table
    for m in BARE.finditer(line):
        for a, b, unit in header:
            if unit and m.start() < b and m.end() > a:
                quoted.setdefault(unit, set()).add(float(m.group(1).replace(",", "")))
    return header


def split_doc(lines):
    """The figures quoted from runs (console blocks, table rows) by unit, the prose lines, and the figures the doc
    lists as its own."""
    quoted, prose = {}, []
    own = {(text, unit) for c in OWN.findall("\n".join(lines)) for text, _, unit in figures(c)}
    fence = None
    header = []
    for number, line in enumerate(lines, 1):
        if "<!--" in line:
            continue
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
            continue
        if (fence or "").startswith("console") or (fence is None and line.lstrip().startswith("|")):
            for _, value, unit in figures(line):
                quoted.setdefault(unit, set()).add(value)
            if (fence or "").startswith("console"):
                header = column_figures(line, header, quoted)
        elif fence is None:
            prose.append((number, line))
    return quoted, prose, own


def stale_figures(path):
    """(line, prose figure, the nearby quoted values) for each stale figure of the doc at `path`."""
    with open(path, encoding="utf-8") as f:
        quoted, prose, own = split_doc(f.read().split("\n"))
    found = []
    for number, line in prose:
        for text, value, unit in figures(line):
            candidates = quoted.get(unit, set())
            if value == 0 or (text, unit) in own or any(rounds_to(q, text) for q in candidates):
                continue
            near = sorted(q for q in candidates if abs(q - value) <= NEAR * max(abs(q), abs(value)))
            if near:
                found.append((number, f"{text} {unit}", near))
    return found


def main(paths):
    stale = 0
    for path in paths:
        for number, figure, near in stale_figures(path):
            stale += 1
            shown = ", ".join(f"{q:g}" for q in near[:4])
            print(f"{path}:{number}: the prose says {figure}, but the doc's runs show {shown}")
    return 1 if stale else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
