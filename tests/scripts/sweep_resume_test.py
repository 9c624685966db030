#!/usr/bin/python3
"""The 100-point local sweep (sweeps/mesh4x4_100.yaml) interrupted half-way by SIGINT, then by SIGKILL, then
left with a row torn as by a crash mid-write, and resumed each time: no finished point is lost, rewritten or
run twice, no row is corrupt, no point process outlives its runner, and the points' metrics equal direct
`tessel run`s of the same parameters. Ends with one uninterrupted run to measure the sweep's speed.

Run with /usr/bin/python3 (standard library only)."""

import json
import os
import re
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweeplib as sl  # noqa: E402

SPEC = os.path.join(sl.REPO, "sweeps", "mesh4x4_100.yaml")


class resume(unittest.TestCase):
    def check_rows(self, out, expect_unique=True):
        rows = sl.rows_of(out)  # json.loads raises on a corrupt line
        keys = [r["key"] for r in rows]
        if expect_unique:
            self.assertEqual(len(keys), len(set(keys)), "a point has two rows")
        for r in rows:
            self.assertEqual(r["status"], "ok", r)
            self.assertEqual(len(r["config_hash"]), 16)
        return rows

    def test_interrupt_kill_and_resume(self):
        out = sl.scratch("resume")
        # 1. SIGINT a quarter of the way: running points are stopped, finished ones kept.
        p = sl.start_sweep(SPEC, out, "--jobs", "2")
        sl.wait_rows(out, 25, proc=p)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, stderr)
        self.assertIn("interrupted: run the same command again to resume", stdout)
        sl.no_processes_left(self, out)
        first = sl.jsonl_bytes(out)
        rows1 = self.check_rows(out)
        self.assertGreaterEqual(len(rows1), 25)
        self.assertLess(len(rows1), 100)

        # 2. Resume, then SIGKILL the runner half-way: its point processes die with it (no orphans).
        p = sl.start_sweep(SPEC, out, "--jobs", "2")
        sl.wait_rows(out, 50, proc=p)
        p.kill()
        p.communicate(timeout=60)
        self.assertEqual(p.returncode, -signal.SIGKILL)
        sl.no_processes_left(self, out)
        second = sl.jsonl_bytes(out)
        self.assertTrue(second.startswith(first), "rows written before the interrupt changed")
        rows2 = self.check_rows(out)
        self.assertGreaterEqual(len(rows2), 50)
        self.assertLess(len(rows2), 100)

        # 3. A row torn by a crash in the middle of a write: dropped, its point run again.
        with open(os.path.join(out, "results.jsonl"), "ab") as f:
            f.write(b'{"point": 99, "key": "00000000000000ff", "status": "o')
        code, stdout, stderr = sl.run_sweep(SPEC, out, "--jobs", "2")
        self.assertEqual(code, 0, stderr)
        self.assertIn("dropped a row cut short by a crash", stderr)
        self.assertIn("%d done earlier, %d to run" % (len(rows2), 100 - len(rows2)), stderr)
        self.assertIn("this run: %d points" % (100 - len(rows2)), stdout)
        self.assertIn("100 points: 100 ok, 0 failed, 0 timed out", stdout)
        final = sl.jsonl_bytes(out)
        self.assertTrue(final.startswith(second), "rows written before the kill changed")
        rows = self.check_rows(out)
        self.assertEqual(len(rows), 100)
        self.assertEqual(sorted(r["point"] for r in rows), list(range(100)))

        # The table: a header and one row per point, the same points.
        with open(os.path.join(out, "results.csv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 101)
        self.assertTrue(lines[0].startswith("point,key,status,exit_code,noc.link_bandwidth,tile.sram.capacity,workload.m,"
                                            "workload.n,workload.k,sim_time_s,"))
        self.assertEqual({l.split(",")[1] for l in lines[1:]}, {r["key"] for r in rows})

        # 4. Nothing left to do: a re-run runs no point.
        code, stdout, stderr = sl.run_sweep(SPEC, out)
        self.assertEqual(code, 0, stderr)
        self.assertIn("this run: 0 points", stdout)
        self.assertEqual(sl.jsonl_bytes(out), final)

        # 5. Points equal direct runs of the same parameters (first, middle and last point).
        by_point = {r["point"]: r for r in rows}
        for i in (0, 57, 99):
            r = by_point[i]
            s = sl.direct_run(r, "mesh4x4", "gemm")
            m = r["metrics"]
            self.assertEqual(m["sim_time_s"], s["sim_time_s"])
            self.assertEqual(m["achieved_flops_per_s"], s["achieved_flops_per_s"])
            self.assertEqual(m["fraction_of_peak"], s["fraction_of_peak"])
            self.assertEqual(m["bound_by"], s["bound_by"])
            self.assertEqual(m["resources.noc.utilisation_max"], sl.resource(s, "noc", "utilisation_max"))
            self.assertEqual(m["pe_utilisation"], sl.resource(s, "tile[*].pe", "utilisation_max"))
            with open(os.path.join(out, r["dir"], "summary.json")) as f:
                self.assertEqual(json.load(f)["config_hash"], r["config_hash"])
        sl.cleanup(out)

    def test_speed_of_an_uninterrupted_run(self):
        out = sl.scratch("speed")
        t0 = time.time()
        code, stdout, stderr = sl.run_sweep(SPEC, out, "--jobs", "2")
        wall = time.time() - t0
        self.assertEqual(code, 0, stderr)
        self.assertIn("100 points: 100 ok", stdout)
        m = re.search(r"this run: 100 points in ([\d.]+)s \(([\d.]+) points/s\)", stdout)
        self.assertIsNotNone(m, stdout)
        print("100-point sweep with --jobs 2: %.1f s wall, %s points/s" % (wall, m.group(2)))
        self.assertLess(wall, 120)
        sl.cleanup(out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
