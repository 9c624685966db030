"""Helpers shared by the sweep script tests: the tessel binary, scratch folders, running `tessel sweep`,
reading its results exactly as written, and finding processes that still run inside a folder.

The tests run with /usr/bin/python3 (the distribution's interpreter, which has python3-yaml and
python3-matplotlib); this module itself needs only the standard library."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))

SKIP = 77  # CTest's SKIP_RETURN_CODE for these tests


def tessel():
    b = os.environ.get("TESSEL_BIN", os.path.join(REPO, "build", "bin", "tessel"))
    return os.path.abspath(b)


def scratch(name):
    """A fresh folder for one test (kept after a failure for a look, removed when the test passes)."""
    d = tempfile.mkdtemp(prefix="tessel_%s_" % name)
    return d


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def sweep_cmd(spec, out, *args):
    return [tessel(), "sweep", spec, "--out", out, "--no-progress"] + list(args)


def run_sweep(spec, out, *args, timeout=300):
    """Runs `tessel sweep` to the end; returns (exit status, stdout, stderr)."""
    p = subprocess.run(sweep_cmd(spec, out, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=timeout, cwd=REPO)
    return p.returncode, p.stdout, p.stderr


def start_sweep(spec, out, *args, env=None):
    return subprocess.Popen(sweep_cmd(spec, out, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, cwd=REPO, env=env)


def jsonl_bytes(out):
    try:
        with open(os.path.join(out, "results.jsonl"), "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def rows_of(out):
    """Every line of results.jsonl parsed; a line that does not parse fails the caller's check."""
    return [json.loads(l) for l in jsonl_bytes(out).decode().splitlines() if l.strip()]


def wait_rows(out, n, timeout=120, proc=None):
    """Waits until results.jsonl has at least n complete lines."""
    end = time.time() + timeout
    while time.time() < end:
        if jsonl_bytes(out).count(b"\n") >= n:
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError("the sweep ended (exit %s) before %d rows: %s" % (proc.returncode, n, proc.stderr.read()))
        time.sleep(0.02)
    raise AssertionError("no %d rows in %s after %ss" % (n, out, timeout))


def processes_mentioning(text):
    """Pids (other than ours) whose command line contains text."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmd:
            found.append((int(pid), cmd))
    return found


def no_processes_left(testcase, text, grace=3.0):
    end = time.time() + grace
    while time.time() < end:
        left = processes_mentioning(text)
        if not left:
            return
        time.sleep(0.05)
    testcase.fail("processes still running in %s: %s" % (text, left))


def direct_run(row, platform, workload):
    """The summary of a direct `tessel run` with a row's parameters."""
    cmd = [tessel(), "run", "-p", platform, "-w", workload, "--json"]
    for k, v in row["params"].items():
        cmd += ["--set", "%s=%s" % (k, v)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True, check=True, cwd=REPO)
    return json.loads(p.stdout)


def resource(summary, name, field):
    for r in summary["resources"]:
        if r["name"] == name:
            return r[field]
    return None


def cleanup(path):
    shutil.rmtree(path, ignore_errors=True)
