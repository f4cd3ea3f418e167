"""Run a chapter's own cells around one student's answers: one forked process per chapter.

The grading process imports the heavy libraries the chapters use once (pandas, matplotlib,
IPython), then forks a child for each (student, chapter). The child starts an IPython shell
(the same cell semantics as a Jupyter kernel, without the kernel's start-up second), runs the
plan's cells in order and reports each cell's outcome on a pipe, one JSON line per event. Display
formatters other than text/plain are off and output goes to /dev/null, so no figure or table is
ever rendered; matplotlib draws with Agg and every figure is closed after its cell.

Time limits: a watchdog thread in the child interrupts (SIGINT, KeyboardInterrupt) any cell that
runs longer than the limit, and the cell fails; the next cell runs. A child that does not answer
within the limit plus a grace period (its code ignores the interrupt), or that dies, is killed
with its whole process group; the chapter then runs again in a new child without that exercise's
answer, so the answers after it are still graded. A child can only ever hurt its own chapter.
"""
import importlib
import json
import os
import selectors
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from classroom.chapters import own_cell

# Imported once in the grading process and shared by every child (copy-on-write after fork).
PRELOAD = ("numpy", "pandas", "matplotlib", "matplotlib.pyplot", "ipywidgets",
           "IPython.core.interactiveshell", "traitlets.config")
# Set before the libraries load: one BLAS thread (the grader forks, and there are few cores to
# share) and matplotlib's Agg backend (nothing is ever shown).
GRADING = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "agg"}
ENVIRONMENT = {"WORKBOOK_HIDE_SOLUTIONS": "1"}


def preload():
    """Make this process the grading process: its environment, then the shared libraries."""
    os.environ.update(GRADING)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


@dataclass
class Job:
    """One student's chapter: the items to run, in order. An item is a dict with `kind`
    ("cell": the chapter's own; "answer": the student's; "check": the instructor's check),
    `source` (cells) or `module`, `attribute`, `expression` (checks), `exercise` and `cell_id`."""
    key: tuple
    items: list
    skip: set = field(default_factory=set)       # exercises whose answers stopped an earlier run
    stopped: dict = field(default_factory=dict)  # exercise -> why its answer stopped a run
    results: dict = field(default_factory=dict)  # item index -> outcome reported by the child
    halted: str | None = None                    # why the chapter could not run to the end
    attempts: int = 0


# ------------------------------------------------------------------------ the child process

def describe(error):
    if error is None:
        return None
    try:
        value = str(error)
    except Exception:
        value = ""
    return {"ename": type(error).__name__, "evalue": value[:500]}


class Watchdog(threading.Thread):
    """Sends SIGINT to the main thread when the armed item runs past the limit."""

    def __init__(self, limit):
        super().__init__(daemon=True)
        self.limit = limit
        self.condition = threading.Condition()
        self.index = None
        self.deadline = None
        self.fired = set()
        self.main = threading.main_thread().ident

    def run(self):
        with self.condition:
            while True:
                if self.deadline is None:
                    self.condition.wait()
                    continue
                remaining = self.deadline - time.monotonic()
                if remaining > 0:
                    self.condition.wait(remaining)
                    continue
                self.fired.add(self.index)
                self.deadline = None
                signal.pthread_kill(self.main, signal.SIGINT)

    def arm(self, index):
        with self.condition:
            self.index, self.deadline = index, time.monotonic() + self.limit
            self.condition.notify()

    def disarm(self, index):
        with self.condition:
            self.deadline = None
            return index in self.fired


def fresh_verdict(shell, item):
    """The verdict of a freshly imported exercise module on the answer the check asks about."""
    stale = sys.modules.get("workbook.exercises")
    placeholder = getattr(stale, "____", None)
    for name in [n for n in sys.modules if n.startswith("workbook.exercises")]:
        del sys.modules[name]
    package = importlib.import_module("workbook.exercises")
    if placeholder is not None and hasattr(package, "____"):
        package.____ = placeholder  # a blank left in the answer is a blank to the fresh check too
    exercise = getattr(importlib.import_module(item["module"]), item["attribute"])
    try:
        answer = eval(item["expression"], shell.user_ns)
    except Exception as error:
        return {"error": describe(error)}
    verdict = exercise.verdict(answer)
    return {"verdict": {"exercise": str(verdict.exercise), "status": str(verdict.status),
                        "sentence": str(verdict.sentence)}}


def run_item(shell, item):
    if item["kind"] == "check":
        return fresh_verdict(shell, item)
    result = shell.run_cell(item["source"], store_history=False)
    return {"error": describe(result.error_before_exec or result.error_in_exec)}


def shielded(action):
    """Run the grader's own bookkeeping to the end even if a late interrupt arrives during it."""
    while True:
        try:
            return action()
        except KeyboardInterrupt:
            continue


def child(job, limit, channel, workdir):
    """Runs in the forked process; never returns."""
    def send(event):
        shielded(lambda: os.write(channel, (json.dumps(event) + "\n").encode()))

    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.chdir(workdir)
        # A check's own time limit (5 s in a notebook) follows the cell limit, just inside it: a
        # slow but right answer gets the time the instructor allowed, and a loop in an answer
        # function ends as the check's "not yet", as it would in the learner's notebook.
        os.environ.update(ENVIRONMENT, IPYTHONDIR=os.path.join(workdir, ".ipython"),
                          WORKBOOK_CHECK_SECONDS=str(max(limit * 0.8, limit - 1)))
        for name in [n for n in sys.modules if n == "workbook" or n.startswith("workbook.")]:
            del sys.modules[name]  # the chapter imports the package afresh

        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config
        config = Config()
        config.HistoryManager.enabled = False
        shell = InteractiveShell.instance(config=config)
        shell.display_formatter.active_types = ["text/plain"]
        # Nobody reads the output: formatting a traceback would only cost time.
        shell.showtraceback = lambda *args, **kwargs: None
        shell.showsyntaxerror = lambda *args, **kwargs: None

        def close_figures(result):
            pyplot = sys.modules.get("matplotlib.pyplot")
            if pyplot is not None:
                pyplot.close("all")
        shell.events.register("post_run_cell", close_figures)
        watchdog = Watchdog(limit)
        watchdog.start()
    except BaseException as error:
        send({"fatal": describe(error)})
        os._exit(0)

    try:
        for index, item in enumerate(job.items):
            skipped = item.get("exercise") in job.skip and item["kind"] != "cell"
            if skipped and item["kind"] == "check":
                continue
            if skipped:  # an answer that stopped an earlier run: its stub keeps the names defined
                item = dict(item, source=item["stub"])
            send({"start": index})
            try:
                watchdog.arm(index)
                outcome = run_item(shell, item)
            except BaseException as error:  # the interrupt, or SystemExit from a check
                outcome = {"error": describe(error)}
            timed_out = shielded(lambda: watchdog.disarm(index))
            if timed_out:
                def absorb():  # an interrupt still pending lands here, not in the next cell
                    for _ in range(10000):
                        pass
                shielded(absorb)
            send(dict(outcome, done=index, timed_out=timed_out))
        send({"end": True})
    finally:
        os._exit(0)


# ----------------------------------------------------------------------- the grading process

@dataclass
class Running:
    job: Job
    pid: int
    fd: int
    workdir: str
    buffer: bytes = b""
    current: int | None = None
    deadline: float | None = None
    ended: bool = False      # it reported the end of the chapter
    closed: bool = False     # its end of the pipe is closed (or no longer to be trusted)
    status: int | None = None  # its exit status, once it is gone
    killed: bool = False     # by the grader, for running past the limit and the grace period
    broken: str | None = None  # why the chapter cannot be finished, when it is not an answer's fault


def in_words(item):
    """The item as a student can find it in their notebook (no cell ids)."""
    if item["kind"] == "cell":
        return own_cell(item["source"])
    if item["kind"] == "answer":
        return f"your answer cell for {item['exercise']}"
    return f"the check of {item['exercise']}"


def item_exercise(job, index):
    item = job.items[index]
    return item.get("exercise") if item["kind"] != "cell" else None


class Runner:
    def __init__(self, limit, jobs, grace=None):
        self.limit = limit
        self.parallel = max(1, jobs)
        self.grace = grace if grace is not None else max(1.0, limit / 2)
        self.peak = 0  # the most children that ran at once

    def start(self, job, selector, running):
        job.attempts += 1
        job.results = {}
        workdir = tempfile.mkdtemp(prefix="grade-")
        read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            for other in running:
                os.close(other)
            child(job, self.limit, write, workdir)
        os.close(write)
        try:
            os.setpgid(pid, pid)  # the child does the same; whichever runs first wins the race
        except OSError:
            pass
        os.set_blocking(read, False)
        selector.register(read, selectors.EVENT_READ)
        # Until the first cell starts: setting up the shell has a minute.
        running[read] = Running(job, pid, read, workdir, deadline=time.monotonic() + 60)
        self.peak = max(self.peak, len(running))

    def handle(self, run, event):
        now = time.monotonic()
        if "start" in event:
            run.current = event["start"]
            run.deadline = now + self.limit + self.grace
        elif "done" in event:
            run.job.results[event["done"]] = event
            run.current, run.deadline = None, None
        elif event.get("end"):
            run.ended = True
        elif "fatal" in event:
            run.broken = f"the grader could not start the chapter ({event['fatal']['ename']})"

    def read(self, run):
        """Take in what the child has written so far; note when its end of the pipe closed."""
        while not run.closed:
            try:
                data = os.read(run.fd, 1 << 16)
            except BlockingIOError:
                return
            if not data:
                run.closed = True
                return
            run.buffer += data
            *lines, run.buffer = run.buffer.split(b"\n")
            for line in lines:
                try:
                    self.handle(run, json.loads(line))
                except (ValueError, TypeError, AttributeError, KeyError):
                    run.broken = "the chapter's cells wrote into the grader's channel"
                    run.closed = True
                    return

    def exited(self, run):
        """Whether the child process is gone (its pipe may outlive it in a process it forked)."""
        if run.status is None:
            pid, status = os.waitpid(run.pid, os.WNOHANG)
            if pid:
                run.status = status
        return run.status is not None

    def finish(self, run, selector, running, queue):
        selector.unregister(run.fd)
        os.close(run.fd)
        del running[run.fd]
        kill(run.pid)  # and whatever the chapter's cells left running in its process group
        if run.status is None:
            run.status = os.waitpid(run.pid, 0)[1]
        shutil.rmtree(run.workdir, ignore_errors=True)
        job, status = run.job, run.status
        if run.ended:
            return
        if run.broken:
            job.halted = run.broken
            return
        index = run.current
        exercise = item_exercise(job, index) if index is not None else None
        if run.killed:
            why = f"did not stop when interrupted at the {self.limit:g} s limit"
        elif os.WIFSIGNALED(status):
            why = f"ended the Python process (signal {os.WTERMSIG(status)})"
        else:
            why = f"ended the Python process (exit code {os.WEXITSTATUS(status)})"
        if exercise is not None and exercise not in job.skip:
            job.skip.add(exercise)
            job.stopped[exercise] = (job.items[index]["kind"], why)
            queue.appendleft(job)  # again, without that answer, so the later ones are graded
        else:
            where = in_words(job.items[index]) if index is not None else "the grading process"
            job.halted = f"{where} {why}"

    def run(self, jobs):
        queue = deque(jobs)
        running = {}
        selector = selectors.DefaultSelector()
        try:
            while queue or running:
                while queue and len(running) < self.parallel:
                    self.start(queue.popleft(), selector, running)
                deadlines = [r.deadline for r in running.values() if r.deadline is not None]
                wait = min(1.0, max(0.0, min(deadlines) - time.monotonic())) if deadlines else 1.0
                for key, _ in selector.select(timeout=wait):
                    self.read(running[key.fd])
                for run in list(running.values()):
                    if not (run.closed or run.ended) and self.exited(run):
                        self.read(run)  # whatever it wrote before it went
                        run.closed = True
                    if run.closed or run.ended or run.broken:
                        self.finish(run, selector, running, queue)
                    elif run.deadline is not None and time.monotonic() > run.deadline:
                        if run.current is None:
                            run.broken = "the chapter's process did not start within a minute"
                        run.killed = True
                        run.deadline = None
                        kill(run.pid)
        finally:
            for run in running.values():
                kill(run.pid)
        return jobs


def kill(pid):
    """Kill the child and its process group (the chapter's own subprocesses included)."""
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass
