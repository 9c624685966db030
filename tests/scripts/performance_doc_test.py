#!/usr/bin/env python3
"""docs/performance.md quotes what the mesh benchmark simulates (its event counts and simulated times, which are
deterministic; its wall-clock rates are not and are not checked). Each is re-run here, so a model change that
moves them fails until the page says the new figures."""
import os
import re
import subprocess
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = 77


def bench():
    tessel = os.environ.get("TESSEL_BIN", os.path.join(REPO, "build", "bin", "tessel"))
    return os.path.join(os.path.dirname(os.path.abspath(tessel)), "tessel_bench_mesh")


def run(*args):
    """The benchmark's counts: {'steps': '65536', 'events': ..., 'simulated': '2.188 us', ...}."""
    out = subprocess.run([bench()] + list(args), stdout=subprocess.PIPE, universal_newlines=True, check=True,
                         timeout=120).stdout
    counts = {}
    for line in out.splitlines()[1:]:
        key, _, value = line.partition(" ")
        counts[key] = value.strip()
    return counts


def grouped(n):
    return "{:,}".format(int(n))


class performance_doc(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(REPO, "docs", "performance.md")) as f:
            cls.doc = f.read()
        cls.prose = " ".join(cls.doc.split())  # line breaks fall anywhere in prose

    def quoted(self, text, what):
        self.assertTrue(text in self.prose, "docs/performance.md should say %s (%s), as the benchmark now prints" % (text, what))

    def test_eight_rounds(self):
        c = run()
        self.quoted("%s queued events for %s steps at 8 rounds" % (grouped(c["events"]), grouped(c["steps"])), "events")
        self.quoted("model gives %s" % c["simulated"], "simulated time")

    def test_sixteen_rounds(self):
        c = run("--rounds", "16")
        self.quoted("%s events over" % grouped(c["events"]), "events at 16 rounds")
        self.quoted("(%s simulated over" % c["simulated"], "simulated time at 16 rounds")
        self.quoted("instructions/%s steps" % grouped(c["steps"]), "steps at 16 rounds")

    def test_the_noxim_comparisons_load(self):
        tessel = os.environ.get("TESSEL_BIN", os.path.join(REPO, "build", "bin", "tessel"))
        out = subprocess.run([tessel, "run", "-g", "workloads/programs/noc_uniform.yaml", "--set", "program.rate=0.04",
                              "--set", "program.measure=200000"], stdout=subprocess.PIPE, universal_newlines=True,
                             check=True, timeout=120, cwd=REPO).stdout
        packets = re.search(r"\((\d+) steps, (\d+) packets\)", out).group(2)
        self.quoted("generating the %s packets" % grouped(packets), "packets of the Noxim comparison")

    def test_quanta(self):
        for q in ("20ns", "100ns"):
            c = run("--quantum", q)
            # Table rows: | now, `--quantum 20ns` | 65,536 | 2.06 M | | 2.183 us |
            rows = [l for l in self.doc.splitlines() if l.startswith("|") and "`--quantum %s`" % q in l]
            self.assertGreaterEqual(len(rows), 2, q)
            for row in rows:
                self.assertIn("| %s |" % grouped(c["steps"]), row)
                self.assertTrue(c["simulated"] in row, "docs/performance.md's row %r should say %s, as the benchmark "
                                "now prints" % (row, c["simulated"]))


if __name__ == "__main__":
    if not os.access(bench(), os.X_OK):
        print("no %s: build it first" % bench())
        sys.exit(SKIP)
    sys.exit(0 if unittest.main(verbosity=2, exit=False).result.wasSuccessful() else 1)
