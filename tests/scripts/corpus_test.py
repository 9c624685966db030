#!/usr/bin/python3
"""The bad-input corpus (tests/corpus/, docs/reliability.md): every input is run through the real binary, the
way a new user would, and must end well: the expected exit code (2 for bad input; 0 where the input is
meaningful, with the reason written next to it), one clear message on stderr (no "internal error", no
"terminate called", no signal, no sanitizer report, no 300-digit number), within 20 s and under 1 GiB of
resident memory.

Inputs:
  tests/corpus/<area>/FILE   a platform, workload, program or sweep YAML, or an ONNX model; the area gives the
                             command (DEFAULT_ARGS). A YAML file may say otherwise in its first comment lines:
                               # args: run -p mesh4x4 -g {}      ({} is the file, {tmp} a scratch folder)
                               # expect: 0: why the input is meaningful   (default: 2)
                               # error: text the message must contain
  tests/corpus/cases.txt     command lines: EXPECT | ARGS | TEXT THE MESSAGE MUST CONTAIN [| why, for 0]

Usage: corpus_test.py [FILTER]   (runs the inputs whose name contains FILTER). TESSEL_BIN names the binary.
Standard library only; run with /usr/bin/python3."""

import concurrent.futures
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "corpus")
TIMEOUT_S = 20
MAX_RSS_BYTES = 1 << 30
# A guard so a runaway input cannot take the machine while it is measured (the check is MAX_RSS_BYTES).
ADDRESS_SPACE_GUARD = 4 << 30

DEFAULT_ARGS = {
    "platform": "run -q -p {} -w gemm",
    "workload": "run -q -p mesh4x4 -w {}",
    "program": "run -q -p mesh4x4 -g {}",
    "sweep": "sweep --no-progress --jobs 1 {} --out {tmp}/sweep",
    "onnx": "run -q -p mesh4x4 -w {}",
}

BAD_OUTPUT = re.compile(r"internal error|terminate called|Sanitizer|runtime error:|Segmentation fault|core dumped|"
                        r"std::bad_alloc|out of memory|what\(\):|Assertion .* failed")


class case:
    def __init__(self, name, args, expect=2, text="", why="", file=None):
        self.name, self.args, self.expect, self.text, self.why, self.file = name, args, expect, text, why, file


def tessel_bin():
    return os.environ.get("TESSEL_BIN", os.path.join(ROOT, "build", "bin", "tessel"))


def sanitized(binary):
    """An ASan build reserves terabytes of address space: no address-space guard there, ASan's own RSS limit."""
    try:
        with open(binary, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


def file_cases():
    out = []
    for area in sorted(DEFAULT_ARGS):
        d = os.path.join(CORPUS, area)
        if not os.path.isdir(d):
            continue
        for fn in sorted(os.listdir(d)):
            path = os.path.join(d, fn)
            rel = os.path.relpath(path, ROOT)
            c = case(rel, DEFAULT_ARGS[area], file=rel)
            if not fn.endswith(".onnx"):
                with open(path, "rb") as f:
                    head = f.read(4096).decode("utf-8", "replace").splitlines()[:8]
                for line in head:
                    m = re.match(r"#\s*(args|expect|error):\s*(.*)$", line)
                    if not m:
                        continue
                    key, val = m.group(1), m.group(2).strip()
                    if key == "args":
                        c.args = val
                    elif key == "error":
                        c.text = val
                    else:
                        code, _, why = val.partition(":")
                        c.expect, c.why = int(code), why.strip()
            out.append(c)
    return out


def line_cases():
    out = []
    with open(os.path.join(CORPUS, "cases.txt")) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) < 2:
                raise SystemExit("tests/corpus/cases.txt:%d: expected 'EXPECT | ARGS | TEXT [| WHY]'" % n)
            parts += [""] * (4 - len(parts))
            out.append(case("cases.txt:%d" % n, parts[1], int(parts[0]), parts[2], parts[3]))
    return out


def run_one(c, binary, asan):
    tmp = tempfile.mkdtemp(prefix="tessel-corpus-")
    try:
        args = [a.replace("{tmp}", tmp) for a in shlex.split(c.args)]
        args = [c.file if a == "{}" else a for a in args]
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1", TMPDIR=tmp)
        if asan:
            env["ASAN_OPTIONS"] = "hard_rss_limit_mb=%d:detect_leaks=0:abort_on_error=0" % (MAX_RSS_BYTES >> 20)

        def limits():
            os.setsid()
            if not asan:
                resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_GUARD, ADDRESS_SPACE_GUARD))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        p = subprocess.Popen([binary] + args, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limits)
        try:
            stdout, stderr = p.communicate(timeout=TIMEOUT_S * (3 if asan else 1))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return "timed out after %ds" % TIMEOUT_S
        # run_one runs in its own forked helper (run_one_measured), so this is the peak of this case alone.
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        err = stderr.decode("utf-8", "replace")
        problems = []
        if p.returncode < 0:
            problems.append("killed by signal %d" % -p.returncode)
        elif p.returncode != c.expect:
            problems.append("exit %d, expected %d" % (p.returncode, c.expect))
        if BAD_OUTPUT.search(err):
            problems.append("stderr reports a crash or internal error")
        if p.returncode == 2:
            lines = [ln for ln in err.splitlines() if ln.strip()]
            if not lines:
                problems.append("exit 2 with nothing on stderr")
            elif len(lines) > 3:
                problems.append("%d lines on stderr (one message expected)" % len(lines))
            if re.search(r"\d{40,}", err):
                problems.append("a number of 40+ digits on stderr")
        if c.text and c.text not in err:
            problems.append("message lacks %r" % c.text)
        if not asan and rss > MAX_RSS_BYTES and not problems:
            problems.append("peak RSS %.0f MiB" % (rss / 2**20))
        if problems:
            return "; ".join(problems) + "\n      stderr: " + err.strip().replace("\n", "\n              ")[:600]
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    binary = tessel_bin()
    if not os.path.exists(binary):
        print("corpus: no binary at %s (build it, or set TESSEL_BIN)" % binary)
        return 1
    asan = sanitized(binary)
    cases = file_cases() + line_cases()
    for c in cases:
        if c.expect == 0 and not c.why:
            print("corpus: %s expects exit 0 but says not why" % c.name)
            return 1
    filt = sys.argv[1] if len(sys.argv) > 1 else ""
    chosen = [c for c in cases if filt in c.name or filt in c.args]
    # RUSAGE_CHILDREN is a running maximum over all children: each case runs from its own forked helper.
    jobs = int(os.environ.get("CORPUS_JOBS", os.cpu_count() or 2))
    failures = []
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for c, res in zip(chosen, pool.map(lambda c: run_one_measured(c, binary, asan), chosen)):
            if res:
                failures.append((c, res))
    for c, res in failures:
        print("FAIL %s\n      tessel %s\n      %s" % (c.name, c.args.replace("{}", c.file or "{}"), res))
    areas = {}
    for c in chosen:
        key = c.file.split("/")[2] if c.file else "command lines"
        areas[key] = areas.get(key, 0) + 1
    print("corpus: %d inputs (%s), %d accepted as meaningful, %d failed, %.0fs" % (
        len(chosen), ", ".join("%s %d" % kv for kv in sorted(areas.items())),
        sum(1 for c in chosen if c.expect == 0), len(failures), time.time() - t0))
    return 1 if failures else 0


def run_one_measured(c, binary, asan):
    """Runs the case in a forked helper so RUSAGE_CHILDREN measures this case alone."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = run_one(c, binary, asan)
        except Exception as e:  # noqa: BLE001 - reported as the case's failure
            res = "runner error: %s" % e
        with os.fdopen(w, "w") as f:
            f.write(res or "")
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        res = f.read()
    os.waitpid(pid, 0)
    return res or None


if __name__ == "__main__":
    sys.exit(main())
