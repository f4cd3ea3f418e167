"""The zygote: a clean process that forks one sandbox per student's chapter.

The grader starts it as a program of its own, with a clean environment, before it reads a single
submission or check. It imports the libraries the chapters use (so each sandbox starts in
milliseconds, sharing them copy-on-write), builds the jail once, then waits on its channel:

    {"op": "fork", "uid": n, "limits": {...}, "cgroups": [...]} + the sandbox's end of a socket
        -> {"forked": pid}   the pid to interrupt or kill (PID 1 of the sandbox's namespace),
                             in the job's control groups (their cgroup.procs files) from the start
    {"op": "finish"}
        -> {"finished": true, "left": 0}   every sandbox and everything it started is gone

A sandbox forked from it holds what the zygote holds: libraries, and nothing of any student's,
the checks' or the answers'. The grader's end of the channel is a SOCK_SEQPACKET socket: one
message per send, with the socket passed alongside.
"""
import importlib
import json
import os
import select
import signal
import socket
import sys
import time

PRELOAD = ("numpy", "pandas", "matplotlib", "matplotlib.pyplot", "ipywidgets",
           "IPython.core.interactiveshell", "traitlets.config",
           # The package as its class edition holds it: the chapters' exercise modules ask
           # questions and hold no check (those live in workbook.teaching.exercises.checks, never
           # imported here), and solution() reads answers.json only when called.
           "workbook.store", "workbook.teaching.timeline", "workbook.teaching.explorer", "workbook.demo",
           "workbook.reference", *(f"workbook.teaching.exercises.ch{n}" for n in range(1, 7)))


def preload():
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


class Zygote:
    def __init__(self, channel, settings):
        from course.grader.sandbox import jail
        self.channel, self.jail = channel, None
        self.mode = settings["isolation"]
        self.owner = settings.get("owner", 0)
        self.uids, self.children = set(), {}  # the uids handed out; reaper pid -> sandbox pid
        self.statuses = {}  # sandbox pid -> exit code, negative for a signal (as Popen says)
        # Orphans come back here, to be reaped and counted: a sandbox whose reaper died, or in the
        # modes without namespaces anything a sandbox left running.
        jail.prctl(jail.PR_SET_CHILD_SUBREAPER, 1)
        if self.mode == "isolated":
            self.jail = jail.Jail(settings["root"], settings["package_parent"], settings["readable"])
            from course.editions.package import write_package
            import compileall
            copy = write_package(self.jail.stash, project=False)
            compileall.compile_dir(copy, quiet=2, ddir=self.jail.package)
            self.jail.seal()

    def answer(self, message):
        self.channel.send(json.dumps(message).encode())

    def fork(self, request, sock):
        from course.grader.sandbox import jail, worker
        uid, limits = int(request["uid"]), jail.Limits(**request["limits"])
        self.uids.add(uid)
        told, tell = os.pipe()
        reaper = os.fork()
        if reaper == 0:
            try:
                os.close(told)
                self.channel.close()
                jail.prctl(jail.PR_SET_PDEATHSIG, signal.SIGKILL)
                os.setsid()
                for procs in request.get("cgroups", []):  # before the sandbox is forked
                    with open(procs, "w") as group:
                        group.write(str(os.getpid()))
                if self.mode == "isolated":
                    os.unshare(jail.NAMESPACES)
                    pid = os.fork()
                    if pid == 0:
                        os.close(tell)
                        jail.prctl(jail.PR_SET_PDEATHSIG, signal.SIGKILL)
                        self.jail.enter(uid, limits)
                        worker.main(sock)
                    sock.close()
                    os.write(tell, str(pid).encode())
                    os.close(tell)
                    _, status = os.waitpid(pid, 0)
                    code = os.waitstatus_to_exitcode(status)  # the sandbox's, told on: a signal
                    os._exit(code if code >= 0 else 128 - code)  # as a shell does, 128 + it
                os.write(tell, str(os.getpid()).encode())
                os.close(tell)
                jail.enter_without_namespaces(uid, limits, switch=self.mode == "partial", owner=self.owner)
                worker.main(sock)
            except BaseException:  # noqa: BLE001 - a sandbox that cannot start ends here
                os._exit(70)
        os.close(tell)
        sock.close()
        said = os.read(told, 32)
        os.close(told)
        pid = int(said) if said else reaper
        self.children[reaper] = pid
        return pid

    def reap(self):
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            sandbox = self.children.pop(pid, None)
            if sandbox is not None:
                code = os.waitstatus_to_exitcode(status)
                if self.mode == "isolated" and code > 128:
                    code = 128 - code
                self.statuses[sandbox] = code

    def status(self, pid, wait=2.0):
        """How the sandbox `pid` ended: its exit code, or minus the signal; None if it runs on
        `wait` seconds from now (the grader asks with 0, and asks again, so that one sandbox's
        end never holds up another's start)."""
        give_up = time.monotonic() + wait
        self.reap()
        while pid not in self.statuses and time.monotonic() < give_up:
            time.sleep(0.01)
            self.reap()
        return self.statuses.get(pid)

    def finish(self):
        """Kill every sandbox and whatever it started; wait until nothing of theirs is left."""
        from course.grader.sandbox import jail
        for reaper, pid in list(self.children.items()):
            for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    target()
                except (ProcessLookupError, PermissionError):
                    pass
        if os.geteuid() == 0:
            for uid in self.uids:
                jail.kill_user(uid)
        give_up = time.monotonic() + 5  # a reaper ends once its sandbox has ended
        while self.children and time.monotonic() < give_up:
            self.reap()
            time.sleep(0.01)
        for reaper in list(self.children):
            try:
                os.kill(reaper, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:  # sandboxes, their reapers, and any orphan of theirs
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
        left = len(jail.processes_of(self.uids)) if os.geteuid() == 0 else 0
        return left

    def serve(self):
        while True:
            ready, _, _ = select.select([self.channel], [], [], 0.5)
            self.reap()
            if not ready:
                continue
            data, fds, _, _ = socket.recv_fds(self.channel, 1 << 16, 1)
            if not data:
                self.finish()
                return
            request = json.loads(data)
            if request["op"] == "fork":
                sock = socket.socket(fileno=fds[0])
                self.answer({"forked": self.fork(request, sock)})
            elif request["op"] == "status":
                self.answer({"status": self.status(request["pid"], request.get("wait", 2.0))})
            elif request["op"] == "finish":
                self.answer({"finished": True, "left": self.finish()})
                return


def main():
    channel = socket.socket(fileno=int(sys.argv[1]))
    settings = json.loads(sys.argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the grader's ^C reaches it; the grader decides
    preload()
    from course.grader import wire  # noqa: F401 - imported here, before any fork
    from course.grader.sandbox import jail, worker  # noqa: F401
    try:
        zygote = Zygote(channel, settings)
    except OSError as error:
        channel.send(json.dumps({"ready": False, "why": str(error)}).encode())
        return
    channel.send(json.dumps({"ready": True}).encode())
    zygote.serve()


if __name__ == "__main__":
    main()
