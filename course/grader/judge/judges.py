"""The judges, as the grader sees them: each job in a judge process of its own, within its budget.

The grader starts the judges' zygote (judge.zygote) clean, before it reads any submission, and
asks it for one judge per job: a notebook to read (identify), or a student's chapter to grade
(Grading). From a judge it takes only plain, size-capped messages, checked field by field
(MOST_MESSAGE bytes each); it hands a judge the sandboxes it asks for, put in the job's control
groups; it kills the judge when the job's wall-clock budget runs out. A judge that ends without
its result (out of CPU time, memory or wall-clock time, or stuck in a lent statement) fails the
exercise it was checking, in one sentence, and the chapter runs again without that exercise;
where no exercise was in hand, the chapter fails whole. Nothing a judge does reaches another job.

    Budget.memory   address space of one judge (RLIMIT_AS)
    Budget.cpu      CPU seconds of one judge (RLIMIT_CPU)
    wall_for(...)   seconds of one attempt at a chapter, from its plan and the per-cell limit
    Budget.read     seconds to read one notebook
"""
import json
import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field

from course.grader.judge.job import MOST_MESSAGE, STUCK_EXIT
from course.grader.judge.sandboxes import zygote
from course.grader.text import clean
from course.grader.verdicts import STATUSES, mark


@dataclass(frozen=True)
class Budget:
    memory: int = 768 << 20    # bytes of address space of one judge: about 250 MiB are its libraries
    cpu: int = 30              # CPU seconds of one judge: a chapter's checks take about one
    read: float = 60.0         # wall-clock seconds to read one notebook (about a tenth of one)
    margin: float = 30.0       # wall-clock seconds of one attempt beyond what its cells may take

    def wall(self, items, limit, grace):
        """Seconds of one attempt at a chapter whose plan has `items` items: each may run to the
        per-cell limit and its grace, a check twice (the value, then the calls)."""
        return self.margin + 2 * items * (limit + grace)


FOUND_BY = (None, "cell id", "grade_id", "name")


class JudgeError(Exception):
    """The judges' zygote could not be started, or broke."""


class Judges:
    def __init__(self, budget):
        self.budget, self.lock = budget, threading.Lock()
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = zygote("course.grader.judge.zygote", theirs)

    def wait(self):
        """Wait until the zygote is ready (it starts while the sandboxes' zygote starts too)."""
        said = self.receive()
        if not said.get("ready"):
            self.finish()
            raise JudgeError(f"the judges could not be started: {said.get('why', 'no reason')}")
        return self

    def receive(self):
        data = self.channel.recv(1 << 16)
        if not data:
            raise JudgeError("the judges' zygote ended")
        return json.loads(data)

    def fork(self, request, fds):
        """A new judge for `request`, handed `fds` (its channel first); its pid."""
        with self.lock:
            socket.send_fds(self.channel, [json.dumps({"op": "fork", "request": request}).encode()], fds)
            return self.receive()["forked"]

    def status(self, pid, wait=2.0):
        """How a judge ended: {"status": exit code or minus the signal, "cpu", "memory"}, or
        {"status": None} while it still runs `wait` seconds from now. Asked without waiting,
        again and again, so that no job's wait holds up another's judge."""
        give_up = time.monotonic() + wait
        while True:
            with self.lock:
                self.channel.send(json.dumps({"op": "status", "pid": pid, "wait": 0}).encode())
                said = self.receive()
            if said.get("status") is not None or time.monotonic() >= give_up:
                return said
            time.sleep(0.005)

    def finish(self):
        try:
            with self.lock:
                self.channel.send(json.dumps({"op": "finish"}).encode())
                self.receive()
        except (OSError, JudgeError, ValueError):
            pass
        self.channel.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def start(self, request, fd):
        """A judge for `request`, handed the notebook at `fd` (closed here): (its pid, our end of
        its channel)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            return self.fork(request, [theirs.fileno(), fd]), ours
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
            os.close(fd)

    # ---------------------------------------------------------------- one notebook read

    def identify(self, fd, filename):
        """{"chapter": stem or None, "why": why it cannot be read or None} of the notebook at
        `fd` (closed here), or {"failed": why} when its judge ended without an answer."""
        pid, ours = self.start({"kind": "identify", "filename": filename,
                                "budget": {"memory": self.budget.memory, "cpu": self.budget.cpu}}, fd)
        with ours:
            result, killed = converse(ours, pid, time.monotonic() + self.budget.read)
        ended = self.status(pid)
        if result is None:
            return {"failed": why_ended(ended, self.budget, self.budget.read if killed else None)}
        chapter, why = result.get("chapter"), result.get("why")
        return {"chapter": chapter if isinstance(chapter, str) else None,
                "why": clean(why, 200) if isinstance(why, str) else None}


def converse(sock, pid, deadline, answer=lambda message: None):
    """A judge's messages until its result: (the result, or None when it ended without one;
    whether its wall-clock budget ran out, and it was killed). `answer(message)` takes the rest."""
    while True:
        message = receive(sock, deadline)
        if message is TIMEOUT:
            kill(pid)
            return None, True
        if message is None:
            return None, False
        if "done" in message:
            return (message["done"] if isinstance(message["done"], dict) else {}), False
        answer(message)


TIMEOUT = object()


def receive(sock, deadline):
    """The next message on a judge's channel: a dict, None when it closed, TIMEOUT."""
    left = deadline - time.monotonic()
    if left <= 0:
        return TIMEOUT
    sock.settimeout(left)
    try:
        data = sock.recv(MOST_MESSAGE)
    except TimeoutError:
        return TIMEOUT
    except OSError:
        return None
    if not data:
        return None
    try:
        message = json.loads(data)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def why_ended(ended, budget, wall=None, stuck=None):
    """Why a judge ended without its result, as the end of a sentence about the student's answer."""
    status = ended.get("status")
    if stuck:
        return stuck
    if wall is not None:
        return f"kept the grader's work on it running past its budget of {wall:g} s"
    if status == -signal.SIGXCPU or (status == -signal.SIGKILL and (ended.get("cpu") or 0) >= budget.cpu):
        return f"made the grader's work on it use more than its {budget.cpu} s of CPU time"
    if status in (71, -signal.SIGKILL) or (ended.get("memory") or 0) >= budget.memory:
        return f"made the grader's work on it use more than its {budget.memory >> 20} MiB of memory"
    if status is not None and status < 0:
        return f"made the grader's work on it end with signal {-status}"
    return f"made the grader's work on it end unexpectedly (exit code {status})"


@dataclass
class Chapter:
    """What grading one student's chapter gave: verdicts, notes, and what it used."""
    marks: list
    notes: list = field(default_factory=list)
    used: dict = field(default_factory=dict)


class Grading:
    """One student's chapter: attempts, each in a judge of its own, until one gives its verdicts."""

    def __init__(self, judges, sandboxes, groups, chapter, notebook, limit, grace, seed, items):
        self.judges, self.sandboxes, self.groups = judges, sandboxes, groups
        self.chapter, self.notebook, self.limit, self.grace, self.seed = chapter, notebook, limit, grace, seed
        self.budget = judges.budget
        self.wall = self.budget.wall(items, limit, grace)
        self.stopped = {}  # exercise -> (kind, why): what ended an earlier judge

    def run(self, slot, opener):
        """The chapter's verdicts. `slot`: the job's place among those running at once (its core);
        `opener()`: a new file descriptor of the notebook to grade."""
        started, used = time.monotonic(), {"attempts": 0, "judge_cpu": 0.0, "judge_memory": 0,
                                            "sandbox_memory": 0, "sandbox_tasks": 0, "oom_kills": 0}
        numbers = [e.number for e in self.chapter.exercises]
        while True:
            used["attempts"] += 1
            result, doing, why = self.attempt(slot, opener, used)
            if result is not None:
                marks, notes = self.verdicts(result)
                break
            exercise = doing.get("exercise") if doing else None
            if (exercise in numbers and exercise not in self.stopped
                    and doing.get("kind") in ("answer", "check")):
                self.stopped[exercise] = (doing["kind"], why)
                continue
            sentence = f"grading this chapter stopped: your notebook {why}."
            marks = [mark(e, "ungradable", sentence) for e in self.chapter.exercises]
            notes = []
            break
        used["seconds"] = round(time.monotonic() - started, 2)
        return Chapter(marks, notes, used)

    def attempt(self, slot, opener, used):
        """One judge at the chapter: (its result or None, what it was doing, why it ended)."""
        job = self.groups.job(slot)
        handed, seen = [], {}   # the sandboxes given to this judge (killed when it ends); what it said
        request = {"kind": "grade", "chapter": self.chapter.stem, "limit": self.limit,
                   "grace": self.grace, "seed": self.seed, "cgroups": [str(p) for p in job.judge],
                   "stopped": {n: list(v) for n, v in self.stopped.items()},
                   "budget": {"memory": self.budget.memory, "cpu": self.budget.cpu}}

        def answer(message):
            if message.get("sandbox") is True:
                self.hand(ours, job, handed)
            elif "status" in message:
                sandbox = next((s for s in handed if s.pid == message["status"]), None)
                ours.send(json.dumps({"status": self.sandboxes.status(sandbox) if sandbox else None}).encode())
            elif isinstance(message.get("doing"), dict):
                seen["doing"] = message["doing"]
            elif isinstance(message.get("stuck"), str):
                seen["stuck"] = clean(message["stuck"], 200)
        pid, ours = self.judges.start(request, opener())
        result, timed_out = None, False
        try:
            result, timed_out = converse(ours, pid, time.monotonic() + self.wall, answer)
        except OSError:
            kill(pid)
        finally:
            ours.close()
            for sandbox in handed:
                sandbox.kill()
            ended = self.judges.status(pid)
            if ended.get("status") is None:   # still running: it is killed, and waited for
                kill(pid)
                ended = self.judges.status(pid)
            usage = job.usage()
            job.remove()
        used["judge_cpu"] = round(used["judge_cpu"] + (ended.get("cpu") or 0), 3)
        used["judge_memory"] = max(used["judge_memory"], ended.get("memory") or 0)
        used["sandbox_memory"] = max(used["sandbox_memory"], usage.get("memory") or 0)
        used["sandbox_tasks"] = max(used["sandbox_tasks"], usage.get("tasks") or 0)
        used["oom_kills"] += usage.get("oom_kills") or 0
        doing = seen.get("doing")
        if result is not None:
            return result, doing, None
        return None, doing, why_ended(ended, self.budget, self.wall if timed_out else None,
                                      seen.get("stuck") if ended.get("status") == STUCK_EXIT else None)

    def hand(self, ours, job, handed):
        try:
            sandbox = self.sandboxes.start([str(p) for p in job.sandbox])
        except Exception as error:  # noqa: BLE001 - told to the judge, which says so
            ours.send(json.dumps({"error": f"the grader could not start a sandbox "
                                           f"({type(error).__name__})"}).encode())
            return
        handed.append(sandbox)
        try:
            socket.send_fds(ours, [json.dumps({"pid": sandbox.pid, "uid": sandbox.uid,
                                               "mode": sandbox.mode}).encode()], [sandbox.sock.fileno()])
        finally:
            sandbox.sock.close()

    def verdicts(self, result):
        """The judge's result, checked field by field: one verdict per exercise, and notes."""
        if "unreadable" in result:
            why = clean(result["unreadable"], 200) if isinstance(result["unreadable"], str) else "?"
            return [mark(e, "ungradable", f"{self.notebook} could not be read ({why}).")
                    for e in self.chapter.exercises], []
        given = result.get("marks") if isinstance(result.get("marks"), list) else []
        by_number = {m.get("exercise"): m for m in given if isinstance(m, dict)}
        marks = []
        for exercise in self.chapter.exercises:
            found = by_number.get(exercise.number)
            if (found is None or found.get("status") not in STATUSES
                    or not isinstance(found.get("sentence"), str) or found.get("found_by") not in FOUND_BY):
                marks.append(mark(exercise, "ungradable", "the grader's judge gave no verdict for it."))
                continue
            marks.append({"exercise": exercise.number, "status": found["status"],
                          "sentence": clean(found["sentence"], 800), "found_by": found["found_by"]})
        notes = result.get("notes") if isinstance(result.get("notes"), list) else []
        return marks, [clean(note, 400) for note in notes[:50] if isinstance(note, str)]


def describe(budget, limits, bounds):
    """The run's budgets, for grades.json."""
    return {"judge": {"memory_mib": budget.memory >> 20, "cpu_seconds": budget.cpu,
                      "read_seconds": budget.read,
                      "wall_seconds": f"{budget.margin:g} + 2 x items x (timeout + grace)"},
            "sandbox_process": {"memory_mib": limits.memory >> 20, "cpu_seconds": limits.cpu,
                                "file_mib": limits.file_size >> 20, "open_files": limits.open_files,
                                "tmp_mib": limits.tmp >> 20},
            "sandboxes_together": {"memory_mib": bounds.memory >> 20, "tasks": bounds.tasks,
                                   "kind": bounds.kind, "own_core": bounds.cores},
            "lent_statement_seconds": 2.0}


def as_dict(budget):
    return asdict(budget)
