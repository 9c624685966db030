#!/usr/bin/python3
"""scripts/refresh_doc_runs.py against a stand-in tessel whose output changed the way a model change changes it:
two plans trade ranks, two systems' rows of one table move, a table's columns widen, one shown line disappears.
Each shown row must take its own plan's or system's new row, the ranked rows must end in rank order, an indented
block must keep its indentation, and the line without a counterpart must be left and counted."""
import os
import stat
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
script = os.path.join(root, "scripts", "refresh_doc_runs.py")

FAKE = r'''#!/usr/bin/python3
import sys
if sys.argv[1] == "plan":
    print("  rank plan                           iteration samples/s")
    print("     1 dp=2 tp=4 pp=1 microbatch=4    3.105 ms      5154")
    print("     2 dp=4 tp=2 pp=1 microbatch=4    3.402 ms      4661")
    print("     3 dp=8 tp=1 pp=1                 12.11 ms      1302")
    print("  best: dp=2 tp=4 pp=1 microbatch=4, 3.105 ms per iteration")
else:
    print("  dgx_a100 nodes=1    8  dp=8 tp=1   67.7 ms      945.3")
    print("  dgx_h100 nodes=1    8  dp=8 tp=1  43.96 ms       1456")
    print("fastest: dgx_h100 nodes=1, 1.54x dgx_a100 nodes=1")
'''

DOC = """# a doc

```console
$ tessel plan -w gpt2
  rank plan                           iteration samples/s
     1 dp=4 tp=2 pp=1 microbatch=4     2.41 ms      6639
     2 dp=2 tp=4 pp=1 microbatch=4    3.116 ms      5135
  best: dp=4 tp=2 pp=1 microbatch=4, 2.41 ms per iteration
  worst: dp=1 tp=8, 9.9 ms
```

- a list item:

  ```console
  $ tessel compare -w gpt2
    dgx_a100 nodes=1    8  dp=8 tp=1  68.01 ms        941
    dgx_h100 nodes=1    8  dp=8 tp=1  44.21 ms       1448
  ```
"""

WANT = """# a doc

```console
$ tessel plan -w gpt2
  rank plan                           iteration samples/s
     1 dp=2 tp=4 pp=1 microbatch=4    3.105 ms      5154
     2 dp=4 tp=2 pp=1 microbatch=4    3.402 ms      4661
  best: dp=2 tp=4 pp=1 microbatch=4, 3.105 ms per iteration
  worst: dp=1 tp=8, 9.9 ms
```

- a list item:

  ```console
  $ tessel compare -w gpt2
    dgx_a100 nodes=1    8  dp=8 tp=1   67.7 ms      945.3
    dgx_h100 nodes=1    8  dp=8 tp=1  43.96 ms       1456
  ```
"""

with tempfile.TemporaryDirectory() as tmp:
    fake = os.path.join(tmp, "tessel")
    with open(fake, "w") as f:
        f.write(FAKE)
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
    doc = os.path.join(tmp, "doc.md")
    with open(doc, "w") as f:
        f.write(DOC)
    p = subprocess.run([sys.executable, script, doc, "--tessel", fake], capture_output=True, text=True)
    print(p.stdout + p.stderr)
    if p.returncode != 0:
        sys.exit("refresh_doc_runs.py failed")
    got = open(doc).read()
    if got != WANT:
        sys.exit("refreshed doc differs from the expected one:\n" + got)
    if "5 lines updated, 1 left for a person" not in p.stdout:
        sys.exit("expected 5 lines updated and 1 left (the 'worst:' line the run no longer prints)")
print("rows follow their plans and systems, ranks in order, indentation kept, the orphan line left")
