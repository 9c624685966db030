#!/usr/bin/python3
"""The Slurm backend against a real single-node Slurm (slurm_cluster.py): a sweep run as a job array gives the
same rows as the local backend (same points, metrics and configuration hashes); a cancelled array task is
recorded as a failed point naming its task and log, and --retry-failed runs it again; an interrupted runner
leaves its job running and the next run attaches to it instead of submitting again; a job sbatch refuses is a
clear error. Skipped with a message where slurm-wlm or munge is not installed or not running as root.

Run with /usr/bin/python3 (standard library only)."""

import glob
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurm_cluster  # noqa: E402
import sweeplib as sl  # noqa: E402

SMALL = """sweep: slurm_small
platform: mesh4x4
workload: mlp
axes:
  noc.link_bandwidth: [16B/cycle, 64B/cycle]
  workload.batch: [16, 32, 64]
metrics: [sim_time_s, throughput_per_s, fraction_of_peak, bound_by, resources.noc.utilisation_max,
          {name: pe, path: "resources.tile[*].pe.utilisation_max"}]
"""

# The middle point is a 4096^3 GEMM: seconds of simulation, long enough to cancel or interrupt it mid-run.
SLOW = """sweep: slurm_slow
platform: mesh4x4
workload: gemm
axes:
  workload.m: [128, 4096, 256]
derived:
  workload.n: workload.m
  workload.k: workload.m
"""

CLUSTER = None


def setUpModule():
    global CLUSTER
    t0 = time.time()
    CLUSTER = slurm_cluster.cluster().start()
    print("local Slurm up in %.1f s (%s)" % (time.time() - t0, CLUSTER.dir))


def tearDownModule():
    if CLUSTER:
        CLUSTER.stop()


class slurm(unittest.TestCase):
    def sweep(self, spec, out, *args):
        p = subprocess.run(sl.sweep_cmd(spec, out, "--backend", "slurm", "--poll", "0.3", *args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, cwd=sl.REPO, env=CLUSTER.env, timeout=300)
        return p.returncode, p.stdout, p.stderr

    def squeue(self, job):
        return subprocess.run(["squeue", "-h", "-j", job, "-o", "%i %T"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True, env=CLUSTER.env).stdout

    def wait_running(self, out, task, timeout=60):
        """The job id once array task `task` runs."""
        active = os.path.join(out, "slurm", "active")
        end = time.time() + timeout
        while time.time() < end:
            if os.path.exists(active):
                with open(active) as f:
                    job = f.read().split()[0]
                if "%s_%d RUNNING" % (job, task) in self.squeue(job):
                    return job
            time.sleep(0.1)
        self.fail("array task %d never ran" % task)

    def wait_point_started(self, out, setting, timeout=60):
        """Waits until a task has launched the run of the point with `setting` in its command. Slurm can show a task
        RUNNING before its batch step has started; a cancel in that window may never reach it."""
        end = time.time() + timeout
        while time.time() < end:
            for cmd in glob.glob(os.path.join(out, "points", "*", "command.txt")):
                with open(cmd) as f:
                    if setting in f.read():
                        return
            time.sleep(0.1)
        self.fail("no run of the point with %s started" % setting)

    def test_results_equal_the_local_backend(self):
        d = sl.scratch("slurm_eq")
        spec = sl.write(os.path.join(d, "small.yaml"), SMALL)
        t0 = time.time()
        code, stdout, stderr = self.sweep(spec, os.path.join(d, "slurm"))
        took = time.time() - t0
        self.assertEqual(code, 0, stderr)
        self.assertIn("6 points: 6 ok", stdout)
        self.assertRegex(stderr, r"submitted Slurm job \d+: 6 array tasks, 1 point each; logs in ")
        code, _, stderr = sl.run_sweep(spec, os.path.join(d, "local"), "--jobs", "2")
        self.assertEqual(code, 0, stderr)
        via_slurm = {r["key"]: r for r in sl.rows_of(os.path.join(d, "slurm"))}
        local = {r["key"]: r for r in sl.rows_of(os.path.join(d, "local"))}
        self.assertEqual(len(via_slurm), 6)
        self.assertEqual(set(via_slurm), set(local))
        for k, r in via_slurm.items():
            self.assertEqual(r["status"], "ok")
            self.assertEqual(r["backend"], "slurm")
            self.assertRegex(r["slurm_job"], r"^\d+_\d$")
            self.assertEqual(r["params"], local[k]["params"])
            self.assertEqual(r["metrics"], local[k]["metrics"])
            self.assertEqual(r["config_hash"], local[k]["config_hash"])
        print("slurm sweep of 6 points: %.1f s" % took)
        sl.cleanup(d)

    def test_a_cancelled_task_is_a_failed_point_with_its_log(self):
        d = sl.scratch("slurm_cancel")
        spec = sl.write(os.path.join(d, "slow.yaml"), SLOW)
        out = os.path.join(d, "out")
        p = subprocess.Popen(sl.sweep_cmd(spec, out, "--backend", "slurm", "--poll", "0.3"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True, cwd=sl.REPO, env=CLUSTER.env)
        job = self.wait_running(out, 1)
        self.wait_point_started(out, "workload.m=4096")
        subprocess.run(["scancel", "%s_1" % job], check=True, env=CLUSTER.env)
        stdout, stderr = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, stderr)
        self.assertIn("3 points: 2 ok, 1 failed", stdout)
        rows = {r["params"]["workload.m"]: r for r in sl.rows_of(out)}
        bad = rows["4096"]
        self.assertEqual(bad["status"], "failed")
        log = os.path.join(out, "slurm", "1", "logs", "1.out")
        self.assertEqual(bad["error"], "Slurm task %s_1 (CANCELLED) ended without a result for this point; log: %s" % (job, log))
        self.assertIn("log: " + log, stderr)
        self.assertTrue(os.path.exists(log))
        with open(log) as f:
            self.assertIn("CANCELLED", f.read())
        # Run it again, this time to the end.
        code, stdout, stderr = self.sweep(spec, out, "--retry-failed")
        self.assertEqual(code, 0, stderr)
        self.assertIn("2 done earlier, 1 to run through Slurm", stderr)
        self.assertIn("3 points: 3 ok", stdout)
        self.assertTrue(os.path.isdir(os.path.join(out, "slurm", "2")))
        sl.cleanup(d)

    def test_an_interrupted_runner_attaches_to_its_job(self):
        d = sl.scratch("slurm_attach")
        spec = sl.write(os.path.join(d, "slow.yaml"), SLOW)
        out = os.path.join(d, "out")
        p = subprocess.Popen(sl.sweep_cmd(spec, out, "--backend", "slurm", "--poll", "0.3"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True, cwd=sl.REPO, env=CLUSTER.env)
        job = self.wait_running(out, 1)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, stderr)
        self.assertIn("Slurm job %s keeps running" % job, stderr)
        code, stdout, stderr = self.sweep(spec, out)
        self.assertEqual(code, 0, stderr)
        self.assertIn("attaching to Slurm job %s" % job, stderr)
        self.assertNotIn("submitted Slurm job", stderr)
        self.assertIn("3 points: 3 ok", stdout)
        rows = sl.rows_of(out)
        self.assertEqual(len(rows), 3)
        self.assertEqual({r["slurm_job"].split("_")[0] for r in rows}, {job})
        self.assertFalse(os.path.exists(os.path.join(out, "slurm", "active")))
        sl.cleanup(d)

    def test_a_refused_job_is_an_error(self):
        d = sl.scratch("slurm_refused")
        spec = sl.write(os.path.join(d, "small.yaml"), SMALL)
        code, stdout, stderr = self.sweep(spec, os.path.join(d, "out"), "--partition", "nosuch")
        self.assertEqual(code, 2, stderr)
        self.assertIn("tessel: error: sbatch refused the job (exit 1): sbatch: error: invalid partition specified: nosuch", stderr)
        sl.cleanup(d)


if __name__ == "__main__":
    why = slurm_cluster.missing()
    if why:
        print("SKIP: " + why)
        sys.exit(sl.SKIP)
    # A test killed by its timeout (SIGTERM) still stops the daemons it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    unittest.main(verbosity=2)
