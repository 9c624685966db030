#!/usr/bin/python3
"""scripts/tessel_sweep.py and every plotting script the docs use: the module runs tessel and loads results
exactly as written (JSON Lines and CSV), converts quantities like tessel does, and each plot script writes a PNG
(and an SVG); the roofline's roofs are the platform's (mesh4x4: 8.192 TFLOP/s and 204.8 GB/s, ridge at 40 FLOP/byte).
The plot checks are skipped where matplotlib is missing.

Run with /usr/bin/python3 (the distribution's python3-matplotlib and python3-yaml)."""

import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweeplib as sl  # noqa: E402
import tessel_sweep as ts  # noqa: E402

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False

SPEC = {
    "sweep": "python_test",
    "platform": "mesh4x4",
    "workload": "mlp",
    "axes": {"noc.link_bandwidth": ["16B/cycle", "32B/cycle", "64B/cycle"], "workload.batch": [16, 64]},
    "metrics": ["sim_time_s", "throughput_per_s", "fraction_of_peak", "bound_by"],
}


class module(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.environ["TESSEL_BIN"] = sl.tessel()
        cls.dir = sl.scratch("python")
        cls.out = os.path.join(cls.dir, "sweep")
        cls.rows = ts.sweep(SPEC, out=cls.out, jobs=2)

    @classmethod
    def tearDownClass(cls):
        sl.cleanup(cls.dir)

    def test_run_is_tessel_run(self):
        s = ts.run("mesh4x4", workload="mlp", sets={"noc.link_bandwidth": "64B/cycle", "workload.batch": 16})
        direct = sl.direct_run({"params": {"noc.link_bandwidth": "64B/cycle", "workload.batch": "16"}}, "mesh4x4", "mlp")
        self.assertEqual(s["sim_time_s"], direct["sim_time_s"])
        with self.assertRaises(ts.TesselError) as e:
            ts.run("mesh4x4", workload="mlp", sets=["noc.link_bandwith=64B/cycle"])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("did you mean 'noc.link_bandwidth'", e.exception.message)

    def test_sweep_rows(self):
        self.assertEqual(len(self.rows), 6)
        self.assertEqual({r["status"] for r in self.rows}, {"ok"})
        r = ts.select(self.rows, {"noc.link_bandwidth": "64B/cycle", "workload.batch": "64"})
        self.assertEqual(len(r), 1)
        s = ts.load_summary(self.out, r[0])
        self.assertEqual(r[0]["metrics"]["sim_time_s"], s["sim_time_s"])
        self.assertEqual(ts.value(r[0], "bound_by"), s["bound_by"])
        self.assertEqual(ts.varying(self.rows), ["noc.link_bandwidth", "workload.batch"])
        # Ascending by value whatever order the points finished in.
        self.assertEqual(list(ts.group_by(self.rows, "workload.batch")), ["16", "64"])
        self.assertEqual(list(ts.group_by(list(reversed(self.rows)), "workload.batch")), ["16", "64"])
        with self.assertRaises(ts.TesselError) as e:
            ts.sweep({"platform": "mesh4x4", "workload": "mlp", "axes": {"workload.batch": []}}, out=os.path.join(self.dir, "bad"))
        self.assertEqual(e.exception.code, 2)
        self.assertIn("axis 'workload.batch' is empty", e.exception.message)

    def test_csv_and_jsonl_agree(self):
        from_csv = {r["key"]: r for r in ts.load_results(os.path.join(self.out, "results.csv"))}
        for r in self.rows:
            c = from_csv[r["key"]]
            self.assertEqual(c["status"], r["status"])
            self.assertEqual(c["metrics"]["sim_time_s"], r["metrics"]["sim_time_s"])  # shortest exact form: equal floats
            self.assertEqual(c["metrics"]["bound_by"], r["metrics"]["bound_by"])
            try:
                import yaml  # noqa: F401  (splits parameters from metrics through spec.yaml)
                self.assertEqual(c["params"], {k: str(v) for k, v in r["params"].items()})
            except ImportError:
                pass

    def test_torn_last_line_is_ignored(self):
        path = os.path.join(self.dir, "torn.jsonl")
        with open(os.path.join(self.out, "results.jsonl")) as f:
            text = f.read()
        sl.write(path, text + '{"key": "x", "status": "o')
        self.assertEqual([r["key"] for r in ts.load_results(path)], [r["key"] for r in self.rows])

    def test_quantities(self):
        self.assertEqual(ts.quantity("64B/cycle"), 64)
        self.assertEqual(ts.quantity("512KiB"), 524288)
        self.assertEqual(ts.quantity("1.1GHz"), 1.1e9)
        self.assertAlmostEqual(ts.quantity("30ns"), 3e-8)
        self.assertEqual(ts.quantity("3.35TB/s"), 3.35e12)
        self.assertEqual(ts.quantity("8"), 8)
        self.assertIsNone(ts.number("fp16"))
        with self.assertRaises(ValueError):
            ts.quantity("64 furlongs")

    @unittest.skipUnless(HAVE_MPL, "matplotlib is not installed (apt-get install python3-matplotlib)")
    def test_plots(self):
        scripts = os.path.join(sl.REPO, "scripts")

        def plot(name, *args):
            p = subprocess.run([sys.executable, os.path.join(scripts, name)] + list(args), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, cwd=sl.REPO)
            self.assertEqual(p.returncode, 0, p.stderr)
            return p.stdout

        def check(prefix):
            with open(prefix + ".png", "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            with open(prefix + ".svg") as f:
                self.assertIn("<svg", f.read(2000))
            self.assertGreater(os.path.getsize(prefix + ".png"), 10000)

        curves = os.path.join(self.dir, "curves")
        out = plot("plot_sweep.py", self.out, "--x", "noc.link_bandwidth", "--y", "throughput_per_s", "--series",
                   "workload.batch", "--logx", "--out", curves)
        self.assertEqual(out.split(), [curves + ".png", curves + ".svg"])
        check(curves)
        facets = os.path.join(self.dir, "facets")
        plot("plot_sweep.py", self.out, "--x", "noc.link_bandwidth", "--y", "fraction_of_peak", "--out", facets)
        check(facets)

        bars = os.path.join(self.dir, "bars")
        out = plot("plot_platforms.py", "--results", self.out, "--by", "noc.link_bandwidth", "--where", "workload.batch=64",
                   "--out", bars)
        check(bars)
        line = [l for l in out.splitlines() if l.startswith("64B/cycle")][0].split()
        r = ts.select(self.rows, {"noc.link_bandwidth": "64B/cycle", "workload.batch": "64"})[0]
        self.assertAlmostEqual(float(line[1]), r["metrics"]["throughput_per_s"], delta=r["metrics"]["throughput_per_s"] * 1e-5)
        self.assertAlmostEqual(float(line[2]), 100 * r["metrics"]["fraction_of_peak"], places=2)
        runs = os.path.join(self.dir, "runs")
        out = plot("plot_platforms.py", "--workload", "gemm", "--platform", "mesh4x4", "--platform",
                   "wide=mesh4x4,noc.link_bandwidth=64B/cycle", "--set", "workload.m=256", "--out", runs)
        check(runs)
        wide = ts.run("mesh4x4", workload="gemm", sets={"noc.link_bandwidth": "64B/cycle", "workload.m": 256})
        line = [l for l in out.splitlines() if l.startswith("wide ")][0].split()
        self.assertAlmostEqual(float(line[1]), wide["throughput_per_s"], delta=wide["throughput_per_s"] * 1e-5)
        # A platform that fails is reported and drawn empty; the others are still compared.
        out = plot("plot_platforms.py", "--workload", "gemm", "--platform", "mesh4x4", "--platform",
                   "broken=mesh4x4,noc.bogus=1", "--out", runs)
        check(runs)
        broken = [l for l in out.splitlines() if l.startswith("broken ")][0]
        self.assertIn("failed: tessel: error: --set noc.bogus: no such parameter", broken)
        self.assertTrue([l for l in out.splitlines() if l.startswith("mesh4x4 ")][0].split()[1][0].isdigit())

        # tessel plan's report as ranked bars (one system size).
        plan_dir = os.path.join(self.dir, "plan")
        subprocess.run([sl.tessel(), "plan", "-p", "platforms/systems/dgx_a100.yaml", "-w", "gpt2", "--set",
                        "workload.training=adam", "--set", "workload.batch=8", "--set", "workload.layers=2", "--set",
                        "workload.hidden=256", "--set", "workload.heads=4", "--set", "workload.seq=64", "--tp", "1,2",
                        "--pp", "1", "-o", plan_dir, "--no-progress"], check=True, cwd=sl.REPO,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        plan_png = os.path.join(self.dir, "plan_bars")
        out = plot("plot_plan.py", os.path.join(plan_dir, "plan.json"), "--out", plan_png)
        check(plan_png)

        # tessel compare's systems side by side: the best plan's samples/s per system and per chip, and a system
        # that cannot train (GPUs of 1 MB) as an empty row saying so.
        cmp_dir = os.path.join(self.dir, "compare")
        subprocess.run([sl.tessel(), "compare", "-w", "gpt2", "--set", "workload.training=adam", "--set", "workload.batch=8",
                        "--set", "workload.layers=2", "--set", "workload.hidden=256", "--set", "workload.heads=4", "--set",
                        "workload.seq=64", "--system", "platforms/systems/dgx_a100.yaml:nodes=1", "--system",
                        "platforms/systems/dgx_a100.yaml:nodes=1,gpu.gpu.hbm.capacity=1MB", "-o", cmp_dir, "--no-progress"],
                       check=True, cwd=sl.REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cmp_png = os.path.join(self.dir, "compare_bars")
        out = plot("plot_compare.py", os.path.join(cmp_dir, "compare.json"), "--out", cmp_png)
        check(cmp_png)
        with open(os.path.join(cmp_dir, "compare.json")) as f:
            best = json.load(f)["systems"][0]["best"]
        row = [l for l in out.splitlines() if l.startswith("dgx_a100 nodes=1 ")][0].split()
        self.assertEqual(row[2], "8")
        self.assertAlmostEqual(float(row[3]), best["samples_per_s"], delta=best["samples_per_s"] * 1e-3)
        self.assertIn(best["plan"], " ".join(row))
        self.assertIn("does not train: tessel plan: no parallel plan", out)

        # tessel compare --serve's points and fronts: each system's front printed as compare_serve.json has it,
        # and a system that cannot hold the model named with its reason.
        serve_dir = os.path.join(self.dir, "compare_serve")
        subprocess.run([sl.tessel(), "compare", "--serve", "-w", "llama3-8b", "--set", "workload.layers=2", "--set",
                        "serve.prompt_tokens=64", "--set", "serve.output_tokens=8", "--users", "1,8", "--system",
                        "platforms/systems/dgx_h100.yaml:parallel.tp=8", "--system", "platforms/systems/groqrack.yaml:nodes=1",
                        "-o", serve_dir, "--no-progress"], check=True, cwd=sl.REPO, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        serve_png = os.path.join(self.dir, "serve_front")
        out = plot("plot_serve_compare.py", os.path.join(serve_dir, "compare_serve.json"), "--out", serve_png)
        check(serve_png)
        with open(os.path.join(serve_dir, "compare_serve.json")) as f:
            dgx = json.load(f)["systems"][0]
        rows = [l.split() for l in out.splitlines() if l.startswith("dgx_h100 parallel.tp=8 ")]
        self.assertEqual(len(rows), 2)  # 1 and 8 users: one plan's points, both on its front
        for row, point in zip(rows, dgx["points"]):
            self.assertEqual(int(row[5]), point["concurrency"])
            self.assertAlmostEqual(float(row[6]), point["tokens_per_s_per_user"], delta=point["tokens_per_s_per_user"] * 1e-3)
        self.assertIn("groqrack nodes=1", out)
        self.assertIn("does not serve: does not fit", out)

        roof = os.path.join(self.dir, "roofline")
        out = plot("plot_roofline.py", self.out, "--color", "workload.batch", "--out", roof)
        check(roof)
        self.assertIn("6 runs; roofs:", out)
        self.assertIn("mesh4x4: peak 8.192e+12 FLOP/s, memory 205 GB/s, ridge at 40 FLOP/byte", out)
        ops = os.path.join(self.dir, "ops")
        out = plot("plot_roofline.py", "--ops", "--platform", "mesh4x4", "--workload", "mlp", "--out", ops)
        check(ops)
        # mlp: four 64x1024x1024 fp16 matmuls: 2*64*1024*1024 FLOP over (64*1024 + 1024*1024 + 64*1024) * 2 bytes.
        fc1 = [l.split() for l in out.splitlines() if l.startswith("fc1 ")][0]
        self.assertEqual(fc1[1], "matmul")
        self.assertAlmostEqual(float(fc1[2]), 2 * 64 * 1024 * 1024 / ((64 * 1024 * 2 + 1024 * 1024) * 2), places=2)

        # Energy per sample by part (docs/energy.md): one stacked bar per platform, totals as summary.json says.
        energy = os.path.join(self.dir, "energy")
        out = plot("plot_energy.py", "--workload", "mlp", "--platform", "mesh4x4", "--platform", "ring8_ddr4", "--out", energy)
        check(energy)
        for name in ("mesh4x4", "ring8_ddr4"):
            s = ts.run(name, workload="mlp")
            total = float([l for l in out.splitlines() if l.startswith(name + " ")][0].split()[7])
            self.assertAlmostEqual(total, 1e3 * s["energy_j"] / s["samples"], places=3)

        # The calibration plot (docs/validation.md): predicted against measured kernel times.
        report = os.path.join(self.dir, "calibration.csv")
        subprocess.run([sl.tessel(), "calibrate", "-p", "h100_sxm", "-m", "validation/gpu/h100_microbenchmarks.jsonl", "--no-fit",
                        "--report", report], check=True, cwd=sl.REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        calibration = os.path.join(self.dir, "calibration.png")
        plot("plot_calibration.py", report, "--out", calibration)
        with open(calibration, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(calibration), 10000)


if __name__ == "__main__":
    unittest.main(verbosity=2)
