#!/usr/bin/python3
"""tessel_sweep: run tessel from Python and load sweep results, for your own sweep scripts and plots.

Standard library only, so it works with any Python 3.7+; the plotting scripts next to it need the
distribution's matplotlib, so run those with /usr/bin/python3 (Debian's python3-matplotlib and python3-yaml
are installed there, not in other interpreters that may come first on PATH).

    import tessel_sweep as ts
    s = ts.run("mesh4x4", workload="mlp", sets={"noc.link_bandwidth": "64B/cycle"})
    print(s["sim_time_s"], s["bound_by"])

    rows = ts.sweep("sweeps/noc_sram_batch.yaml", jobs=2)          # runs (or resumes) the sweep
    rows = ts.load_results("out/sweeps/noc_sram_batch")            # or just reads its results
    for r in ts.ok(rows):
        print(r["params"]["noc.link_bandwidth"], r["metrics"]["sim_time_s"])

    # A sweep spec as a dict (JSON is YAML, so no PyYAML is needed to write one):
    rows = ts.sweep({"platform": "mesh4x4", "workload": "gemm",
                     "axes": {"workload.m": [128, 256]}}, out="out/sweeps/mine")

A row is a dict: point, key, status ("ok", "failed", "timeout"), exit_code, error, params {name: text as
passed to --set}, metrics {name: number or text}, config_hash, tessel_version, wall_s, host, finished,
backend, dir (the point's folder with summary.json, stats.json, stats.csv and resolved.yaml).
"""

import csv
import json
import math
import os
import re
import shutil
import subprocess
import tempfile

__all__ = ["TesselError", "find_tessel", "run", "sweep", "load_results", "load_summary", "ok", "value",
           "number", "quantity", "group_by", "varying", "select", "save_figure", "set_args"]

_HERE = os.path.dirname(os.path.abspath(__file__))


class TesselError(RuntimeError):
    """tessel exited with an error; `code` is its exit status (2: bad input), `message` its error line."""

    def __init__(self, message, code):
        super().__init__(message)
        self.message = message
        self.code = code


def find_tessel():
    """The tessel binary: $TESSEL_BIN, else build/bin/tessel of this checkout, else `tessel` on PATH."""
    env = os.environ.get("TESSEL_BIN")
    if env:
        return env
    built = os.path.join(os.path.dirname(_HERE), "build", "bin", "tessel")
    if os.access(built, os.X_OK):
        return built
    found = shutil.which("tessel")
    if found:
        return found
    raise TesselError("cannot find tessel: set TESSEL_BIN or build it (cmake --build build)", 127)


def _error_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    for l in reversed(lines):
        if "error:" in l:
            return l
    return lines[-1] if lines else ""


def run(platform, workload=None, program=None, sets=None, out=None, tessel=None):
    """Runs one simulation and returns its summary (the dict summary.json holds).

    sets: {path: value} or a list of "path=value" (--set). out: also write the run's files into that folder.
    Raises TesselError on bad input or a failed run."""
    if (workload is None) == (program is None):
        raise ValueError("give either workload or program")
    cmd = [tessel or find_tessel(), "run", "-p", str(platform)]
    cmd += ["-w", str(workload)] if workload is not None else ["-g", str(program)]
    for s in set_args(sets):
        cmd += ["--set", s]
    if out:
        cmd += ["--out", str(out)]
    cmd.append("--json")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        why = "killed by signal %d" % -p.returncode if p.returncode < 0 else "exit %d" % p.returncode
        raise TesselError(_error_line(p.stderr) or "tessel run failed (%s)" % why, p.returncode)
    summary = json.loads(p.stdout)
    if out:
        # summary.json also carries the provenance (config_hash, tessel_version).
        with open(os.path.join(str(out), "summary.json")) as f:
            summary = json.load(f)
    return summary


def set_args(sets):
    if not sets:
        return []
    if isinstance(sets, dict):
        return ["%s=%s" % (k, v) for k, v in sets.items()]
    return [str(s) for s in sets]


def sweep(spec, out=None, jobs=None, backend="local", args=(), tessel=None, quiet=True):
    """Runs (or resumes) a sweep and returns its rows.

    spec: a sweep YAML file, or a dict with the same keys (written as JSON, which YAML reads).
    out: the results folder (default: tessel's, out/sweeps/NAME). args: more `tessel sweep` options.
    Points that fail are rows with status "failed"; a bad spec raises TesselError (exit 2)."""
    tmp = None
    if isinstance(spec, dict):
        tmp = tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="sweep_", delete=False)
        json.dump(spec, tmp, indent=1)
        tmp.close()
        path = tmp.name
        if out is None:
            out = os.path.join("out", "sweeps", str(spec.get("sweep", "python")))
    else:
        path = str(spec)
    cmd = [tessel or find_tessel(), "sweep", path, "--backend", backend, "--no-progress"]
    if out is not None:
        cmd += ["--out", str(out)]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    cmd += list(args)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE if quiet else None,
                           universal_newlines=True)
    finally:
        if tmp is not None:
            os.unlink(tmp.name)
    if p.returncode != 0:
        raise TesselError(_error_line(p.stderr or "") or _error_line(p.stdout) or
                          "tessel sweep failed (exit %d)" % p.returncode, p.returncode)
    m = re.search(r"^results: (.*)/results\.csv,", p.stdout, re.M)
    return load_results(m.group(1) if m else out)


def load_results(path):
    """Rows of a sweep: `path` is its results folder, its results.jsonl or its results.csv.

    From JSON Lines (what a folder gives): the latest row of each point, in the order they were written; a
    last line cut short by a crash is ignored, as tessel does. From CSV: see _load_csv."""
    path = str(path)
    if os.path.isdir(path):
        jsonl = os.path.join(path, "results.jsonl")
        path = jsonl if os.path.exists(jsonl) else os.path.join(path, "results.csv")
    if path.endswith(".csv"):
        return _load_csv(path)
    latest = {}
    with open(path, "rb") as f:
        data = f.read().decode("utf-8", "replace")
    complete = data[:data.rfind("\n") + 1]
    for line in complete.splitlines():
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if not isinstance(r, dict) or "key" not in r:
            continue
        latest.pop(r["key"], None)
        latest[r["key"]] = r
    return list(latest.values())


_FIXED = ["point", "key", "status", "exit_code", "config_hash", "tessel_version", "wall_s", "host", "finished",
          "backend", "slurm_job", "error", "dir"]


def _load_csv(path):
    """CSV rows: tessel's header is the fixed columns, then parameters, then metrics. The CSV alone cannot
    tell a parameter from a metric: the spec copy next to it (spec.yaml, read with PyYAML) names the
    parameters; without it every column lands in `metrics`, numbers converted."""
    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        names = [n for n in reader.fieldnames if n not in _FIXED]
        params = _spec_params(os.path.dirname(path), names)
        for line in reader:
            r = {k: line.get(k, "") for k in _FIXED}
            for k in ("point", "exit_code"):
                r[k] = int(r[k]) if r[k] not in ("", None) else None
            r["wall_s"] = number(r["wall_s"]) if r["wall_s"] else None
            r["params"] = {n: line[n] for n in names if n in params}
            r["metrics"] = {n: _cell(line[n]) for n in names if n not in params}
            rows.append(r)
    return rows


def _spec_params(folder, names):
    spec = os.path.join(folder, "spec.yaml")
    try:
        with open(spec) as f:
            text = f.read()
    except OSError:
        text = None
    if text is not None:
        try:
            import yaml  # the distribution's python3-yaml, where available
            data = yaml.safe_load(text) or {}
            found = set((data.get("axes") or {}).keys()) | set((data.get("derived") or {}).keys())
            return {n for n in names if n in found}
        except ImportError:
            pass
    return set()


def _cell(text):
    if text == "":
        return None
    try:
        return float(text) if any(c in text for c in ".eE") or "inf" in text or "nan" in text else int(text)
    except ValueError:
        return text


def load_summary(results_dir, row):
    """The full summary.json of a row's point (every resource, the mapping, notes)."""
    with open(os.path.join(str(results_dir), row["dir"], "summary.json")) as f:
        return json.load(f)


def ok(rows):
    """The rows whose point ran successfully."""
    return [r for r in rows if r.get("status") == "ok"]


def value(row, name):
    """A row's parameter (text) or metric (number or text) by name; also its top-level fields."""
    if name in row.get("params", {}):
        return row["params"][name]
    if name in row.get("metrics", {}):
        return row["metrics"][name]
    if name in row:
        return row[name]
    raise KeyError("row has no parameter or metric %r (parameters: %s; metrics: %s)"
                   % (name, ", ".join(row.get("params", {})), ", ".join(row.get("metrics", {}))))


_UNITS = {
    "": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
    "B": 1, "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
    "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40,
    "b": 0.125, "Kb": 125, "Mb": 1.25e5, "Gb": 1.25e8, "Tb": 1.25e11,
    "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "fs": 1e-15,
    "Hz": 1, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9, "THz": 1e12,
    "cycle": 1, "cycles": 1,
}
_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)(?:/(s|cycle))?\s*$")


def quantity(text):
    """A --set value as a number in tessel's canonical units: "64B/cycle" -> 64, "512KiB" -> 524288,
    "1.1GHz" -> 1.1e9, "30ns" -> 3e-8, "8" -> 8. Raises ValueError for text that is not a quantity."""
    if isinstance(text, (int, float)):
        return float(text)
    m = _QUANTITY.match(str(text))
    if not m or m.group(2) not in _UNITS:
        raise ValueError("not a quantity: %r" % (text,))
    return float(m.group(1)) * _UNITS[m.group(2)]


def number(v):
    """A parameter or metric as a float where it is one (quantities converted), else None."""
    if v is None:
        return None
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return quantity(v)
    except ValueError:
        return None


def group_by(rows, name):
    """{value: [rows]} in ascending order of value (quantities as numbers, so 16 comes before 64 and 64KiB
    before 1MiB), whatever order the points finished in."""
    out = {}
    for r in rows:
        out.setdefault(value(r, name), []).append(r)

    def order(v):
        x = number(v)
        return (0, x, "") if x is not None else (1, 0.0, str(v))
    return {v: out[v] for v in sorted(out, key=order)}


def varying(rows):
    """Parameter names whose value differs between rows, in column order."""
    names = []
    for r in rows:
        for n in r.get("params", {}):
            if n not in names:
                names.append(n)
    return [n for n in names if len({r["params"].get(n) for r in rows}) > 1]


def select(rows, where):
    """Rows whose parameters equal every {name: value} in `where` (values compared as text, or as
    quantities when both sides are: 64B/cycle equals 64 B/cycle)."""
    def same(a, b):
        if str(a) == str(b):
            return True
        x, y = number(a), number(b)
        return x is not None and y is not None and math.isclose(x, y, rel_tol=1e-12)
    return [r for r in rows if all(same(r.get("params", {}).get(k), v) for k, v in where.items())]


def save_figure(fig, prefix):
    """Writes a matplotlib figure as PREFIX.png (150 dpi) and PREFIX.svg; returns both paths."""
    folder = os.path.dirname(str(prefix))
    if folder:
        os.makedirs(folder, exist_ok=True)
    paths = [str(prefix) + ".png", str(prefix) + ".svg"]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    # A fixed hash salt keeps SVG ids stable, so regenerated pictures only differ when the data does.
    import matplotlib
    matplotlib.rcParams["svg.hashsalt"] = "tessel"
    fig.savefig(paths[1], bbox_inches="tight", metadata={"Date": None})
    return paths
