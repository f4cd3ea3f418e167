"""The SQLite crash trials' children (tests/store/test_crashes.py), forked by a small process of
their own.

Each trial forks a child that opens the file, arms its own SIGKILL at its Nth step, and runs one
operation. Forking the test process itself copied all that a test run had loaded (a pytest-xdist
worker holds the imports of the whole suite) and forked a process with threads, 200 times a run;
the `Forker` is a process spawned once, which has imported only the store and has one thread, and
forks every child from there. It hands back how the child ended and what it reported, nothing
more: the test judges both as it did when it forked the children itself.
"""
import json
import multiprocessing
import os
import signal
import sys
import traceback

import workbook.deletion
import workbook.records
import workbook.validation
import workbook.writes
from workbook.reference import outcome
from workbook.store import connect, forget, purge, put

STORE_FILES = {module.__file__ for module in (
    workbook.validation, workbook.records, workbook.writes, workbook.deletion)}
OPERATIONS = {"put": put, "forget": forget, "purge": purge}


def child(path, operation, mode, steps, report):
    """Runs in the forked child: open the file, arm the kill, run the operation, report."""
    db = connect(path)
    left = [steps]

    def tick():
        left[0] -= 1
        if left[0] == 0:
            os.kill(os.getpid(), signal.SIGKILL)

    def trace(frame, event, argument):
        if frame.f_code.co_filename not in STORE_FILES:
            return None
        if event == "line":
            tick()
        return trace

    if mode == "sqlite":
        db.set_progress_handler(tick, 1)    # called at every VM instruction
    else:
        sys.settrace(trace)
    result = outcome(OPERATIONS[operation[0]], db, *operation[1:])
    sys.settrace(None)
    os.write(report, json.dumps(result).encode())


def fork_trial(path, operation, mode, steps):
    """Fork a child for one operation; return (its wait status, the bytes it reported)."""
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reading)
        code = 0
        try:
            child(path, operation, mode, steps, writing)
        except BaseException:
            traceback.print_exc()
            code = 1
        os._exit(code)
    os.close(writing)
    with os.fdopen(reading, "rb") as pipe:
        reported = pipe.read()
    _, status = os.waitpid(pid, 0)
    return status, reported


def serve(requests):
    """The forker's loop: one trial per request, until None."""
    while (request := requests.recv()) is not None:
        requests.send(fork_trial(*request))


class Forker:
    """A spawned process that runs fork_trial for the test, trial by trial."""

    def __init__(self):
        context = multiprocessing.get_context("spawn")
        self.requests, theirs = context.Pipe()
        self.process = context.Process(target=serve, args=(theirs,), daemon=True)
        self.process.start()
        theirs.close()

    def trial(self, path, operation, mode, steps):
        self.requests.send((str(path), operation, mode, steps))
        return self.requests.recv()

    def close(self):
        self.requests.send(None)
        self.process.join(60)
        self.requests.close()
