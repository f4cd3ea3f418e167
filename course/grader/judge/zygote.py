"""The judges' zygote: a clean process that forks one judge per job, with its budget.

The grader starts it as a program of its own, with a clean environment, before it reads a single
submission: it imports the checks, the chapters and what they use (so a judge starts in
milliseconds, sharing them copy-on-write), then waits on its channel (SOCK_SEQPACKET: one
message per send, file descriptors alongside):

    {"op": "fork", "request": {...}} + the judge's channel (+ the notebook to read)
        -> {"forked": pid}          the judge runs judge.job.main(channel, request, fds)
    {"op": "status", "pid": n}
        -> {"status": code, "cpu": seconds, "memory": peak bytes}   code: its exit code, minus
                                    the signal that ended it, None while it runs
    {"op": "finish"}
        -> {"finished": true}       every judge is gone

A judge holds what the zygote holds (the instructor's checks and chapters) and what its own job
sends it: never another student's work, and never student code (that runs in the sandboxes).
"""
import importlib
import json
import os
import resource
import select
import signal
import socket
import sys
import time

PRELOAD = ("numpy", "pandas", "matplotlib", "matplotlib.pyplot",
           *(f"workbook.teaching.exercises.ch{n}" for n in range(1, 7)),
           *(f"workbook.teaching.exercises.checks.ch{n}" for n in range(1, 7)),
           "workbook.store", "workbook.teaching.timeline")


class Zygote:
    def __init__(self, channel):
        from course.grader.chapters import GRADED, graded_chapters
        self.channel = channel
        self.chapters = graded_chapters(stems=GRADED)
        self.children, self.statuses = set(), {}

    def answer(self, message):
        self.channel.send(json.dumps(message).encode())

    def fork(self, request, fds):
        from course.grader.judge import job
        pid = os.fork()
        if pid == 0:
            try:
                self.channel.close()
                sock = socket.socket(fileno=fds[0])
                job.main(sock, request, fds[1:], self.chapters)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        self.children.add(pid)
        return pid

    def reap(self):
        while self.children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.children.discard(pid)
            self.statuses[pid] = {"status": os.waitstatus_to_exitcode(status),
                                  "cpu": round(usage.ru_utime + usage.ru_stime, 3),
                                  "memory": usage.ru_maxrss * 1024}

    def status(self, pid, wait=0.0):
        """How judge `pid` ended, or {"status": None} while it runs `wait` seconds from now."""
        give_up = time.monotonic() + wait
        self.reap()
        while pid in self.children and time.monotonic() < give_up:
            time.sleep(0.005)
            self.reap()
        return self.statuses.pop(pid, {"status": None})

    def finish(self):
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while self.children:
            try:
                pid, _ = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            self.children.discard(pid)

    def serve(self):
        while True:
            ready, _, _ = select.select([self.channel], [], [], 0.5)
            self.reap()
            if not ready:
                continue
            data, fds, _, _ = socket.recv_fds(self.channel, 1 << 20, 4)
            if not data:
                self.finish()
                return
            request = json.loads(data)
            if request["op"] == "fork":
                self.answer({"forked": self.fork(request["request"], fds)})
            elif request["op"] == "status":
                self.answer(self.status(request["pid"], request.get("wait", 0.0)))
            elif request["op"] == "finish":
                self.finish()
                self.answer({"finished": True})
                return


def main():
    channel = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the grader's ^C reaches it; the grader decides
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name in PRELOAD:
        importlib.import_module(name)
    from course.grader.judge import job  # noqa: F401 - imported here, before any fork
    try:
        zygote = Zygote(channel)
    except Exception as error:  # noqa: BLE001 - told to the grader, which stops
        channel.send(json.dumps({"ready": False, "why": f"{type(error).__name__}: {error}"}).encode())
        return
    channel.send(json.dumps({"ready": True}).encode())
    zygote.serve()


if __name__ == "__main__":
    main()
