"""The sandboxes, as the judge sees them: start the zygote clean, ask it for sandboxes, end them.

The zygote (course.grader.sandbox.zygote) is a program of its own, started with `python -I` and an
environment of a few fixed variables, before the grader has read any submission or check: so no
sandbox it forks can find a student's work, a check, an answer or a secret of the grader's in
its memory or its environment.
"""
import fcntl
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from course.grader.sandbox import jail

MODES = ("isolated", "partial", "none")


@dataclass(frozen=True)
class Isolation:
    mode: str        # "isolated", "partial" or "none"
    reason: str      # why it is not "isolated"; "" when it is

    @property
    def complete(self):
        return self.mode == "isolated"

    def sentence(self):
        if self.complete:
            return ("Isolated: each student's chapter ran as a user of its own, in its own PID, "
                    "mount, network and IPC namespaces, seeing only the package without its "
                    "checks or answers; the verdicts were decided outside it.")
        return ("NOT ISOLATED, so these grades are not tamper-proof: " + self.reason + " Student "
                "code could read or change what the grading account can.")


def isolation_here(wanted="auto"):
    """The isolation this machine gives, as far as `wanted` ("auto", "required", "off") asks."""
    if wanted == "off":
        return Isolation("none", "isolation was turned off (ISOLATION=off).")
    if os.geteuid() != 0:
        return Isolation("none", "the grader did not run as root, which a user of its own and "
                                 "Linux namespaces need (run make grade with sudo).")
    if not jail.namespaces_work():
        refused = ("this machine refused the Linux namespaces a sandbox needs (as Docker's "
                   "default seccomp profile does)")
        if not all(jail.readable_by_anyone(path) for path in readable_paths()):
            return Isolation("none", f"{refused}, and its Python installation is not readable by "
                                     "other users, so the chapters ran as the grading user.")
        return Isolation("partial", f"{refused}, so each chapter ran only as a user of its own, "
                                    "seeing every file any user may read.")
    return Isolation("isolated", "")


def zygote(module, channel, arguments=(), **options):
    """Start `module` as a program of its own, `python -I -m module FD ...`, with its end of the
    channel and an environment of a few fixed variables (none of the grader's); close that end."""
    environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                   "HOME": os.environ.get("HOME", "/tmp"), "MPLBACKEND": "agg",
                   "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    try:
        return subprocess.Popen([sys.executable, "-I", "-m", module, str(channel.fileno()), *arguments],
                                pass_fds=[channel.fileno()], env=environment,
                                stdin=subprocess.DEVNULL, **options)
    finally:
        channel.close()


class SandboxError(Exception):
    """No sandbox could be had."""


class Sandbox:
    """One sandbox: its end of the channel, and the process to interrupt or kill."""

    def __init__(self, sock, pid, uid, mode):
        self.sock, self.pid, self.uid, self.mode = sock, pid, uid, mode

    def interrupt(self):
        try:
            os.kill(self.pid, signal.SIGINT)
        except ProcessLookupError:
            pass

    def kill(self):
        for target in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
            try:
                target()
            except (ProcessLookupError, PermissionError):
                pass

    def close(self):
        self.kill()
        self.sock.close()


UID_BLOCK = 100_000   # uids one grading run may hand out
UID_BLOCKS = 200      # blocks from jail.FIRST_UID up: below 2**31


def reserve_uids():
    """A block of uids no other grading run on this machine uses while this one runs: an flock
    held on the block's file for as long as the grader lives. Returns (first uid, the lock)."""
    folder = Path("/run/lock" if os.path.isdir("/run/lock") else tempfile.gettempdir()) / "workbook-grader"
    folder.mkdir(mode=0o700, exist_ok=True)
    for block in range(UID_BLOCKS):
        lock = open(folder / f"uids-{block}.lock", "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            continue
        return jail.FIRST_UID + block * UID_BLOCK, lock
    raise SandboxError(f"{UID_BLOCKS} grading runs hold every block of sandbox users")


class Sandboxes:
    def __init__(self, isolation, limits):
        self.isolation, self.limits = isolation, limits
        self.first_uid, self.uid_lock = reserve_uids()
        self.uids = itertools.count(self.first_uid)
        self.lock = threading.Lock()
        sweep()
        self.folder = Path(tempfile.mkdtemp(prefix=f"workbook-grader-{os.getpid()}-"))
        self.root = None
        if isolation.complete:
            self.root = str(self.folder / "jail")
            os.mkdir(self.root)
        self.log = open(self.folder / "zygote.log", "w+b")
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        settings = {"isolation": isolation.mode, "root": self.root, "package_parent": package_parent(),
                    "readable": readable_paths(), "owner": os.getpid()}
        self.process = zygote("course.grader.sandbox.zygote", theirs, [json.dumps(settings)],
                              stdout=self.log, stderr=self.log)

    def wait(self):
        """Wait until the zygote has built the jail (while the judges' zygote starts too)."""
        said = self.receive()
        if not said.get("ready"):
            self.end()
            raise SandboxError(f"the sandbox could not be built: {said.get('why', self.tail())}")
        return self

    def receive(self):
        data = self.channel.recv(1 << 16)
        if not data:
            raise SandboxError(f"the sandbox's zygote ended: {self.tail()}")
        return json.loads(data)

    def tail(self):
        self.log.seek(0)
        lines = self.log.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no message"

    def start(self, cgroups=()):
        """A new sandbox, as a user of its own, in the control groups whose cgroup.procs files
        `cgroups` names (course.grader.cgroups: its job's)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        with self.lock:
            uid = next(self.uids)
            request = {"op": "fork", "uid": uid, "limits": asdict(self.limits), "cgroups": list(cgroups)}
            try:
                socket.send_fds(self.channel, [json.dumps(request).encode()], [theirs.fileno()])
                said = self.receive()
            finally:
                theirs.close()
        return Sandbox(ours, said["forked"], uid, self.isolation.mode)

    def status(self, sandbox, wait=2.0):
        """How a sandbox ended: its exit code, minus the signal that ended it, or None when it
        still runs `wait` seconds from now. The zygote is asked without waiting, again and again,
        so that no job's wait holds up another's sandbox."""
        give_up = time.monotonic() + wait
        while True:
            with self.lock:
                self.channel.send(json.dumps({"op": "status", "pid": sandbox.pid, "wait": 0}).encode())
                status = self.receive().get("status")
            if status is not None or time.monotonic() >= give_up:
                return status
            time.sleep(0.01)

    def finish(self):
        """End every sandbox and everything they started; the number of their processes left."""
        with self.lock:
            self.channel.send(json.dumps({"op": "finish"}).encode())
            said = self.receive()
        self.end()
        self.last_uid = next(self.uids) - 1
        left = len(jail.processes_of(range(self.first_uid, self.last_uid + 1))) if os.geteuid() == 0 else 0
        self.uid_lock.close()
        return max(left, said.get("left", 0))

    def end(self):
        self.channel.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)
        for folder in Path(tempfile.gettempdir()).glob(f"workbook-sandbox-{os.getpid()}-*"):
            shutil.rmtree(folder, ignore_errors=True)  # each one's, without namespaces


def package_parent():
    """The folder the import system finds `workbook` in (an editable install: the clone it was
    installed from). The jail puts the package's class edition there, so that the same import
    finds it inside."""
    import importlib.util
    return str(Path(importlib.util.find_spec("workbook").origin).resolve().parents[1])


def sweep():
    """Remove what graders that were killed left in the temporary folder (a grader removes its
    own folder when it ends; one killed with SIGKILL cannot)."""
    for pattern in ("workbook-grader-*-*", "workbook-sandbox-*-*"):
        for folder in Path(tempfile.gettempdir()).glob(pattern):
            pid = folder.name.split("-")[2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                shutil.rmtree(folder, ignore_errors=True)


def readable_paths():
    """What a sandbox must read besides the system: the Python installation and the venv."""
    import site
    paths = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), sys.prefix}
    paths.update(os.path.realpath(p) for p in site.getsitepackages() if os.path.isdir(p))
    inside = sorted(paths)
    return [p for p in inside if not any(p != q and p.startswith(q + os.sep) for q in inside)]
