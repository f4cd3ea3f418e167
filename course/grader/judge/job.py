"""Inside one judge process: one job, within the job's own budget, told back as plain data.

The judge zygote (judge.zygote) forks a judge per job and runs main() in it. A job is
one notebook to read (which chapter it is) or one student's chapter to grade (its answers run in
sandboxes, its checks here). Before anything of the student's is read, the judge puts itself in
the job's control groups and under its budget: address space (RLIMIT_AS) and CPU time
(RLIMIT_CPU, then SIGXCPU); the grader holds its wall-clock time and kills it when that runs out.
Whatever the student sends can then cost this process only, and the grader says in one
sentence which budget ran out (judge.judges).

The judge talks to the grader over its channel, one JSON message at a time:

    judge -> grader                        grader -> judge
    {"sandbox": true}                      {"pid": n, "uid": n, "mode": ...} + the socket
    {"status": pid}                        {"status": code}
    {"doing": {"exercise", "kind"}}        (nothing: where a failure of the judge is put)
    {"stuck": why}                         (nothing: the judge ends itself next)
    {"done": {...}}                        (nothing: the job's result)

A lent connection's statement that is still running MOST_SECONDS after its question came is
interrupted; one that still holds the judge a second later (a single step of SQLite's that
takes that long, which neither the interrupt nor the progress handler reaches) ends the judge,
which says so first ({"stuck": ...}): the exercise fails with that sentence and the grader runs
the chapter again without it.
"""
import json
import os
import resource
import signal
import socket
import sys
import threading
import time

from course.grader import reading
from course.grader.judge import lending
from course.grader.judge.sandboxes import Sandbox
from course.grader.judge.session import Job, Session
from course.grader.verdicts import marks_for, plan

MOST_MESSAGE = 1 << 20   # bytes of one message on a judge's channel
STUCK_EXIT = 75          # a judge that ended itself after saying {"stuck": ...}
GRACE = 1.0              # seconds a lent statement may run past MOST_SECONDS before the judge ends


class Channel:
    """The judge's end of its channel to the grader (a SOCK_SEQPACKET socket)."""

    def __init__(self, sock):
        self.sock, self.lock = sock, threading.Lock()

    def send(self, message):
        data = json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        if len(data) > MOST_MESSAGE:
            raise ValueError(f"a judge's message of {len(data)} bytes")
        with self.lock:
            self.sock.send(data)

    def ask(self, message):
        """Send, and wait for the one answer (and the socket it may carry)."""
        with self.lock:
            self.sock.send(json.dumps(message).encode("ascii"))
            data, fds, _, _ = socket.recv_fds(self.sock, MOST_MESSAGE, 1)
        if not data:
            raise EOFError("the grader closed the judge's channel")
        return json.loads(data), fds


class Broker:
    """The sandboxes of this job, as the grader hands them over (Session's `sandboxes`)."""

    def __init__(self, channel):
        self.channel = channel

    def start(self):
        said, fds = self.channel.ask({"sandbox": True})
        if "pid" not in said or not fds:
            for fd in fds:
                os.close(fd)
            raise RuntimeError(said.get("error", "no sandbox"))
        return Sandbox(socket.socket(fileno=fds[0]), said["pid"], said["uid"], said["mode"])

    def status(self, sandbox):
        said, fds = self.channel.ask({"status": sandbox.pid})
        for fd in fds:
            os.close(fd)
        return said.get("status")

    def doing(self, item):
        self.channel.send({"doing": {"exercise": item.get("exercise"), "kind": item["kind"]}})


class Watchdog:
    """Ends the judge when a lent question holds it past MOST_SECONDS + GRACE."""

    def __init__(self, channel):
        self.channel = channel
        threading.Thread(target=self.watch, daemon=True).start()

    def watch(self):
        interrupted = None
        while True:
            time.sleep(0.05)
            started, connections = lending.BUSY.started, lending.BUSY.connections
            if started is None:
                interrupted = None
                continue
            late = time.monotonic() - started
            if late > lending.MOST_SECONDS and interrupted != started:
                interrupted = started
                for connection in connections:
                    try:
                        connection.interrupt()
                    except Exception:  # noqa: BLE001 - closed meanwhile
                        pass
            if late > lending.MOST_SECONDS + GRACE and lending.BUSY.started == started:
                try:
                    self.channel.send({"stuck": f"sent a statement through the grader's connection "
                                                f"that ran past the {lending.MOST_SECONDS:g} s limit"})
                finally:
                    os._exit(STUCK_EXIT)


def apply(budget, groups):
    """Join the job's control groups, then take on its budget (never lifted again)."""
    for procs in groups:
        with open(procs, "w") as handle:
            handle.write(str(os.getpid()))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (budget["memory"], budget["memory"]))
    resource.setrlimit(resource.RLIMIT_CPU, (budget["cpu"], budget["cpu"] + 2))


def read_all(fd, limit):
    """The bytes of the file at `fd`, at most `limit` + 1 of them."""
    chunks, left = [], limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def identify(request, fds, chapters):
    """Which chapter the notebook is: {"chapter": stem or None, "why": why it cannot be read}."""
    try:
        notebook, why = reading.load(read_all(fds[0], reading.MOST_BYTES)), None
    except reading.Unreadable as error:
        notebook, why = None, str(error)
    except MemoryError:
        notebook, why = None, "reading it ran past the grader's memory budget"
    return {"chapter": reading.chapter_of(notebook, request["filename"], chapters), "why": why}


def grade(request, fds, chapters, channel):
    """One student's chapter: {"marks": [...], "notes": [...]} or {"unreadable": why}."""
    chapter = next(c for c in chapters if c.stem == request["chapter"])
    try:
        notebook = reading.load(read_all(fds[0], reading.MOST_BYTES))
    except reading.Unreadable as error:
        return {"unreadable": str(error)}
    found = reading.answers(notebook, chapter)
    del notebook
    job = Job((request["chapter"],), plan(chapter, found))
    for number, answer in found.items():
        why = reading.too_large(answer)
        if why:
            job.skip.add(number)
            job.stopped[number] = ("answer", why)
    for number, (kind, why) in request.get("stopped", {}).items():
        job.skip.add(number)
        job.stopped[number] = (kind, why)
    broker = Broker(channel)
    Watchdog(channel)
    Session(broker, job, request["limit"], request["grace"], request["seed"], broker.doing).run()
    marks, notes = marks_for(chapter, job, found, request["limit"])
    return {"marks": marks, "notes": notes, "attempts": job.attempts}


def main(sock, request, fds, chapters):
    """The judge's life: the budget, the job, its result. Never returns."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        apply(request["budget"], request.get("cgroups", []))
        channel = Channel(sock)
        if request["kind"] == "identify":
            result = identify(request, fds, chapters)
        else:
            result = grade(request, fds, chapters, channel)
        channel.send({"done": result})
    except MemoryError:
        code = 71
    except BaseException:  # noqa: BLE001 - the grader says the judge failed, from its status
        code = 70
    finally:
        sys.stdout.flush()
        os._exit(code)
