"""A real single-node Slurm cluster in a temporary folder, for tests: munged with its own key and socket,
slurmctld and slurmd in the foreground as children of this process (no systemd), a minimal slurm.conf with
the node line from `slurmd -C`, state and logs in the folder, free ports. stop() ends exactly the processes
start() began. Needs root (slurmd runs jobs as their user) and Debian's slurm-wlm and munge.

Run with /usr/bin/python3 (standard library only)."""

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

TOOLS = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel"]


def missing():
    """Why a cluster cannot start here, or None."""
    absent = [t for t in TOOLS if not shutil.which(t, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")]
    if absent:
        return "slurm or munge is not installed (missing %s; scripts/setup.sh installs slurm-wlm and munge)" % ", ".join(absent)
    if os.geteuid() != 0:
        return "the local Slurm cluster needs root (slurmd starts jobs as their user)"
    return None


def _which(tool):
    return shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    # PR_SET_PDEATHSIG: a test process that dies without stop() (killed on its timeout) takes its daemons along.
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)


class cluster:
    def __init__(self):
        self.dir = None
        self.procs = []  # (name, Popen) in start order
        self.env = None

    def start(self, timeout=90):
        self.dir = tempfile.mkdtemp(prefix="tessel_slurm_")
        # munged refuses a key or socket folder others can write; slurmd and job steps need to read them.
        os.chmod(self.dir, 0o755)
        munge = os.path.join(self.dir, "munge")
        os.mkdir(munge, 0o755)
        os.chmod(munge, 0o755)
        key = os.path.join(munge, "munge.key")
        if _which("mungekey"):
            subprocess.run([_which("mungekey"), "--create", "--keyfile", key], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        else:  # munge before 0.5.14 has no mungekey
            with open(key, "wb") as f:
                f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        sock = os.path.join(munge, "munge.socket.2")
        self._spawn("munged", [_which("munged"), "--foreground", "--key-file=" + key, "--socket=" + sock,
                               "--pid-file=" + os.path.join(munge, "munged.pid"), "--log-file=" + os.path.join(munge, "munged.log"),
                               "--seed-file=" + os.path.join(munge, "munged.seed")])
        self._wait(lambda: os.path.exists(sock), timeout, "munged's socket")

        node = subprocess.run([_which("slurmd"), "-C"], stdout=subprocess.PIPE, universal_newlines=True,
                              check=True).stdout.splitlines()[0]
        host = node.split()[0].split("=", 1)[1]
        for sub in ("state", "spool"):
            os.mkdir(os.path.join(self.dir, sub), 0o755)
        conf = os.path.join(self.dir, "slurm.conf")
        d = self.dir
        with open(conf, "w") as f:
            f.write("\n".join([
                "ClusterName=tessel-test",
                "SlurmctldHost=%s(127.0.0.1)" % host,
                "SlurmctldPort=%d" % _free_port(),
                "SlurmdPort=%d" % _free_port(),
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                "AuthInfo=socket=" + sock,
                "StateSaveLocation=" + os.path.join(d, "state"),
                "SlurmdSpoolDir=" + os.path.join(d, "spool"),
                "SlurmctldPidFile=" + os.path.join(d, "slurmctld.pid"),
                "SlurmdPidFile=" + os.path.join(d, "slurmd.pid"),
                "SlurmctldLogFile=" + os.path.join(d, "slurmctld.log"),
                "SlurmdLogFile=" + os.path.join(d, "slurmd.log"),
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "SchedulerParameters=batch_sched_delay=0",
                "MailProg=/bin/true",
                "ReturnToService=2",
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                "MpiDefault=none",
                "SwitchType=switch/none",
                node + " NodeAddr=127.0.0.1 State=UNKNOWN",
                "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
                ""]))
        self.env = dict(os.environ, SLURM_CONF=conf)
        self._spawn("slurmctld", [_which("slurmctld"), "-D", "-f", conf])
        self._spawn("slurmd", [_which("slurmd"), "-D", "-f", conf])

        def idle():
            p = subprocess.run([_which("sinfo"), "-h", "-o", "%T"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               universal_newlines=True, env=self.env)
            return p.returncode == 0 and p.stdout.strip() == "idle"
        self._wait(idle, timeout, "the node to be idle")
        return self

    def _spawn(self, name, argv):
        log = open(os.path.join(self.dir, name + ".out"), "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env or os.environ,
                             preexec_fn=_die_with_parent)
        log.close()
        self.procs.append((name, p))

    def _wait(self, ready, timeout, what):
        end = time.time() + timeout
        while time.time() < end:
            if ready():
                return
            for name, p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError("%s exited (%s) while waiting for %s:\n%s" % (name, p.returncode, what, self.log(name)))
            time.sleep(0.2)
        raise RuntimeError("timed out waiting for %s; logs in %s" % (what, self.dir))

    def log(self, name):
        try:
            with open(os.path.join(self.dir, name + ".out")) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        """SIGTERM to the daemons this cluster started, newest first; SIGKILL what is still there after 15 s."""
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
