#!/usr/bin/python3
"""scripts/check_prose_figures.py: a prose figure that disagrees with its doc's own runs is found (porting.md once
said "4.88 times" beside a console block printing 5.01x) or a console table's cell under a column naming the unit,
a rounded quote, a figure the doc lists as its own and a
figure far from every run are accepted; and every doc passes."""
import glob
import os
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
script = os.path.join(root, "scripts", "check_prose_figures.py")

DOC = """# a doc

```console
$ tessel port resnet50 -p h100_sxm
suggest    at batch 8: 11153 samples/s, 5.01x; fused: 3028 samples/s, 1.36x
runs       yes: 449.7 us per run, 63.9% of peak
```

| chip | time |
|---|---|
| a | 117.1 us |

At batch 8 the chip does 4.88 times the images per second, and fused 1.36 times.
It reaches 64% of peak, in 450 us; the transfer by hand is 116.8 us.
<!-- prose figures of its own: 116.8 us (by hand) -->
A far figure, 3 ms, is the doc's own.
"""

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    doc = os.path.join(tmp, "doc.md")
    with open(doc, "w") as f:
        f.write(DOC)
    r = subprocess.run([sys.executable, script, doc], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    check(r.returncode == 1, f"a stale figure exits 1, not {r.returncode}")
    check(lines == [f"{doc}:13: the prose says 4.88 x, but the doc's runs show 5.01"],
          f"exactly the stale figure is listed, with its line: {lines}")
    with open(doc, "w") as f:
        f.write(DOC.replace("4.88 times", "5.01 times"))
    r = subprocess.run([sys.executable, script, doc], capture_output=True, text=True)
    check(r.returncode == 0 and not r.stdout, f"corrected, the doc passes: {r.returncode} {r.stdout}")

# A console table's unit-less cells take the unit their column's name gives ("tokens/s per chip"), so a prose figure
# quoting a cell is checked too; a line that is not a row of the table (not indented as its header) ends it.
TABLE = """# a table

```console
$ tessel compare --serve -w llama3-70b
  system      users  tokens/s per chip
  a              16              152.8
  b              16              96.67
fastest: a, 12 users
```

A earns 152.8 tokens/s per chip and B 90 tokens/s; 13 tokens/s is far from every cell (12 is no cell).
"""
with tempfile.TemporaryDirectory() as tmp:
    doc = os.path.join(tmp, "table.md")
    with open(doc, "w") as f:
        f.write(TABLE)
    r = subprocess.run([sys.executable, script, doc], capture_output=True, text=True)
    check(r.stdout.splitlines() == [f"{doc}:11: the prose says 90 tokens/s, but the doc's runs show 96.67"],
          f"a column's cells are quoted figures of its unit, and only its rows': {r.stdout}")

docs = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
docs = docs + ["README.md"]
check(len(docs) >= 25, f"the docs are found ({len(docs)})")
r = subprocess.run([sys.executable, script] + docs, capture_output=True, text=True, cwd=root)
check(r.returncode == 0, "every doc gone through agrees with its runs:\n" + r.stdout + r.stderr)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
