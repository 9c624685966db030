#!/usr/bin/python3
"""The local backend end to end: a point that fails and a point that times out are recorded with their reason
while the others run; a re-run skips them, --retry-failed runs them again; bad specs fail with one
file:line:column message before any point runs; a second runner cannot write into a busy results folder;
--dry-run lists points and their state; on a terminal the progress bar shows done, failed, rate and ETA; rows
another build of tessel made are kept on resume, named, and run again with --rerun-other-builds.

Run with /usr/bin/python3 (standard library only)."""

import os
import pty
import re
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweeplib as sl  # noqa: E402

# Four points: two that run, one the mapper refuses at run time (resident_fraction must be below 1; loading the
# platform accepts it, mapping does not), one 4096^3 GEMM that needs seconds against a 1 s limit.
MIXED = """sweep: mixed
platform: mesh4x4
workload: gemm
axes:
  workload.m: [128, 4096, 256]
  mapper.resident_fraction: [0.5, 1]
derived:
  workload.n: workload.m
  workload.k: workload.m
filter: "mapper.resident_fraction == 0.5 or workload.m == 128"
metrics: [sim_time_s, bound_by]
timeout: 1s
"""


class local(unittest.TestCase):
    def test_failures_and_timeouts_are_rows(self):
        d = sl.scratch("mixed")
        spec = sl.write(os.path.join(d, "mixed.yaml"), MIXED)
        out = os.path.join(d, "out")
        t0 = time.time()
        code, stdout, stderr = sl.run_sweep(spec, out, "--jobs", "2")
        self.assertEqual(code, 0, stderr)
        self.assertLess(time.time() - t0, 5.0, "the 1 s limit did not stop the long point")
        self.assertIn("4 points: 2 ok, 1 failed, 1 timed out", stdout)
        rows = {(r["params"]["workload.m"], r["params"]["mapper.resident_fraction"]): r for r in sl.rows_of(out)}
        self.assertEqual(len(rows), 4)
        bad = rows[("128", "1")]
        self.assertEqual(bad["status"], "failed")
        self.assertEqual(bad["exit_code"], 2)
        self.assertEqual(bad["error"], "tessel: error: mapper.resident_fraction must be at least 0 and below 1")
        self.assertIsNone(bad["metrics"]["sim_time_s"])
        slow = rows[("4096", "0.5")]
        self.assertEqual(slow["status"], "timeout")
        self.assertEqual(slow["error"], "no result within the time limit (1s); the run was killed")
        for key in (("128", "0.5"), ("256", "0.5")):
            r = rows[key]
            self.assertEqual(r["status"], "ok")
            s = sl.direct_run(r, "mesh4x4", "gemm")
            self.assertEqual(r["metrics"]["sim_time_s"], s["sim_time_s"])
            self.assertEqual(r["metrics"]["bound_by"], s["bound_by"])
            self.assertEqual(r["params"]["workload.n"], key[0])

        # A re-run has nothing to do; --retry-failed runs the failed and timed-out points again (and only them).
        code, stdout, stderr = sl.run_sweep(spec, out)
        self.assertEqual(code, 0, stderr)
        self.assertIn("4 done earlier, 0 to run", stderr)
        code, stdout, stderr = sl.run_sweep(spec, out, "--retry-failed")
        self.assertEqual(code, 0, stderr)
        self.assertIn("2 done earlier, 2 to run", stderr)
        self.assertIn("2 ok, 1 failed, 1 timed out", stdout)
        self.assertEqual(len(sl.rows_of(out)), 6)
        with open(os.path.join(out, "results.csv")) as f:
            self.assertEqual(len(f.read().splitlines()), 5)

        # --dry-run: the points and their state, nothing run.
        before = sl.jsonl_bytes(out)
        p = subprocess.run([sl.tessel(), "sweep", spec, "--out", out, "--dry-run"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("sweep mixed: 4 points (2 axes, 2 of 6 combinations filtered out); 4 done, 0 to run", p.stdout)
        lines = p.stdout.splitlines()
        self.assertEqual(re.split(r"\s+", lines[1].strip()), ["#", "key", "status", "workload.m", "mapper.resident_fraction",
                                                               "workload.n", "workload.k"])
        self.assertEqual([re.split(r"\s+", l.strip())[2] for l in lines[2:]], ["ok", "failed", "timeout", "ok"])
        self.assertEqual(sl.jsonl_bytes(out), before)
        sl.cleanup(d)

    def test_bad_specs_fail_before_any_point_runs(self):
        d = sl.scratch("bad")
        cases = {
            "unknown path": ("axes:\n  noc.link_bandwith: [16B/cycle, 32B/cycle]\n",
                             ":4:3: 'noc.link_bandwith' is not a parameter of platform 'mesh4x4' (did you mean 'noc.link_bandwidth'?)"),
            "empty axis": ("axes:\n  noc.link_bandwidth: []\n", ":4:3: axis 'noc.link_bandwidth' is empty"),
            "bad expression": ("axes:\n  workload.batch: [8, 16]\nfilter: \"workload.batch >> 8\"\n", ":5:26: filter: unexpected '>'"),
            "bad value": ("axes:\n  noc.link_bandwidth: [16B/cycle, 64]\n",
                          ":4:35: point 1 (noc.link_bandwidth=64) does not load: --set noc.link_bandwidth=64:"),
        }
        for name, (body, message) in cases.items():
            with self.subTest(name):
                spec = sl.write(os.path.join(d, "bad.yaml"), "platform: mesh4x4\nworkload: mlp\n" + body)
                out = os.path.join(d, "out_" + name.replace(" ", "_"))
                code, stdout, stderr = sl.run_sweep(spec, out)
                self.assertEqual(code, 2, stderr)
                self.assertEqual(stdout, "")
                self.assertEqual(len(stderr.splitlines()), 1, stderr)
                self.assertTrue(stderr.startswith("tessel: error: " + spec + message), stderr)
                self.assertFalse(os.path.exists(out), "a bad spec created its results folder")
        sl.cleanup(d)

    def test_one_runner_per_results_folder(self):
        d = sl.scratch("lock")
        spec = sl.write(os.path.join(d, "slow.yaml"), "platform: mesh4x4\nworkload: gemm\naxes:\n  workload.m: [4096]\n"
                                                      "derived: {workload.n: workload.m, workload.k: workload.m}\ntimeout: 3s\n")
        out = os.path.join(d, "out")
        first = sl.start_sweep(spec, out)
        deadline = time.time() + 30
        while not sl.processes_mentioning(os.path.join(out, "points")) and time.time() < deadline:
            time.sleep(0.02)
        code, stdout, stderr = sl.run_sweep(spec, out)
        self.assertEqual(code, 2)
        self.assertIn("tessel: error: another tessel sweep (pid %d) is writing to '%s'" % (first.pid, out), stderr)
        first.communicate(timeout=60)
        self.assertEqual(first.returncode, 0)
        sl.cleanup(d)

    def test_rows_of_another_build_are_kept_named_and_rerun_on_request(self):
        # Another build: the same binary with one byte more (tessel_build fingerprints the file's bytes).
        d = sl.scratch("builds")
        other = os.path.join(d, "tessel_other")
        shutil.copyfile(sl.tessel(), other)
        with open(other, "ab") as f:
            f.write(b"\0")
        os.chmod(other, 0o755)
        spec = sl.write(os.path.join(d, "two.yaml"), "platform: mesh4x4\nworkload: gemm\naxes:\n  workload.m: [64, 128]\n"
                                                     "metrics: [sim_time_s]\n")
        out = os.path.join(d, "out")
        p = subprocess.run([other, "sweep", spec, "--out", out, "--no-progress"], capture_output=True, text=True, cwd=sl.REPO)
        self.assertEqual(p.returncode, 0, p.stderr)
        theirs = {r["tessel_build"] for r in sl.rows_of(out)}
        self.assertEqual(len(theirs), 1)
        self.assertRegex(next(iter(theirs)), r"^[0-9a-f]{16}$")
        # Resumed by this build: the rows stay (nothing is lost) and the run says whose they are.
        code, stdout, stderr = sl.run_sweep(spec, out)
        self.assertEqual(code, 0, stderr)
        self.assertIn("this run: 0 points", stdout)
        self.assertIn("tessel sweep: 2 finished points in %s came from another build of tessel" % out, stderr)
        self.assertIn("--rerun-other-builds runs them again", stderr)
        # On request they run again with this binary, and a later resume has nothing to say.
        code, stdout, stderr = sl.run_sweep(spec, out, "--rerun-other-builds")
        self.assertEqual(code, 0, stderr)
        self.assertIn("this run: 2 points", stdout)
        latest = {r["key"]: r for r in sl.rows_of(out)}
        mine = {r["tessel_build"] for r in latest.values()}
        self.assertEqual(len(mine), 1)
        self.assertNotEqual(mine, theirs)
        code, stdout, stderr = sl.run_sweep(spec, out)
        self.assertEqual(code, 0, stderr)
        self.assertNotIn("another build", stderr)
        sl.cleanup(d)

    def test_progress_bar_on_a_terminal(self):
        d = sl.scratch("tty")
        spec = sl.write(os.path.join(d, "tty.yaml"), "platform: mesh4x4\nworkload: gemm\naxes:\n  workload.m: [128, 256, 384]\n")
        master, slave = pty.openpty()
        p = subprocess.Popen([sl.tessel(), "sweep", spec, "--out", os.path.join(d, "out"), "--jobs", "2"],
                             stdout=subprocess.PIPE, stderr=slave, cwd=sl.REPO)
        os.close(slave)
        stdout, _ = p.communicate(timeout=120)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        self.assertEqual(p.returncode, 0)
        text = seen.decode(errors="replace")
        self.assertIn("\r\x1b[K", text)  # redrawn in place
        self.assertRegex(text, r"3/3 \[#+\] 3 ok, 0 failed, [\d.]+ points/s, elapsed \d+s, ETA 0s")
        self.assertIn(b"3 points: 3 ok", stdout)
        sl.cleanup(d)


if __name__ == "__main__":
    unittest.main(verbosity=2)
