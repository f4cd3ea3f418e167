"""Crashes: a child process is killed with SIGKILL in the middle of put, forget or purge.

Each trial forks a child that opens the file and runs one operation, arranged to kill
itself at its Nth step: either the Nth SQLite virtual-machine instruction (a progress
handler, so the kill lands inside a statement, including BEGIN and COMMIT) or the Nth
line of Python run in the store's modules (a trace function, so it lands between
statements). After each trial the parent reopens the file and checks: the integrity
check passes; the whole database equals its state just before the operation or the
state the reference model predicts just after it; the counter is at least every stored
revision; and no revision is ever returned to a caller twice.
"""
import json
import os
import random
import signal
import sqlite3
import sys
import traceback
from pathlib import Path
from tempfile import TemporaryDirectory

import workbook.deletion
import workbook.records
import workbook.validation
import workbook.writes
from soak import scaled
from workbook.reference import Reference, outcome
from workbook.store import connect, forget, purge, put

STORE_FILES = {module.__file__ for module in (
    workbook.validation, workbook.records, workbook.writes, workbook.deletion)}
# Most operations take fewer steps than these, so most trials end in a kill.
LONGEST = {"sqlite": {"put": 110, "forget": 30, "purge": 30},
           "python": {"put": 70, "forget": 16, "purge": 16}}
TENANTS, KINDS, KEYS = ("orchard", "harbour"), ("checkpoint", "fact"), ("a", "b", "c")
OPERATIONS = {"put": put, "forget": forget, "purge": purge}


def snapshot(path):
    """Reopen the file (SQLite rolls back any half-done transaction) and read everything."""
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows = sorted(db.execute("SELECT tenant, kind, key, revision, expires, body FROM records"))
        return rows, db.execute("SELECT value FROM sequence").fetchone()[0]
    finally:
        db.close()


def model_of(state):
    model = Reference()
    rows, model.counter = state
    model.rows = {(tenant, kind, key): (revision, expires, body)
                  for tenant, kind, key, revision, expires, body in rows}
    return model


def choose(rng, model, now):
    """An operation that will usually change something."""
    pick = rng.random()
    if pick < 0.5 or not model.rows:
        name = (rng.choice(TENANTS), rng.choice(KINDS), rng.choice(KEYS))
        row = model.rows.get(name)
        if name[1] == "checkpoint":
            value = {"schema": 1, "step": rng.randint(0, 2), "items": ["collected"] * rng.randint(0, 8)}
        else:
            value = {"schema": 1, "text": f"Fictional note {rng.randint(1, 999)}",
                     "source": "note-1", "reviewed": False}
        return ["put", *name, value, None if row is None else row[0], now, rng.randint(1, 20)]
    if pick < 0.75:
        name, row = rng.choice(sorted(model.rows.items()))
        return ["forget", *name, row[0]]
    return ["purge", rng.choice(TENANTS), now]


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


def trial(path, operation, mode, steps):
    """Fork a child for one operation; return (killed, what the child reported or None)."""
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
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        assert not reported
        return True, None
    assert os.WEXITSTATUS(status) == 0, "the child failed; see its traceback above"
    return False, json.loads(reported)


def test_killed_operations_leave_before_or_after(figures):
    rng = random.Random(20261130)
    trials = scaled(200, 3000)
    tally = dict.fromkeys(["killed", "completed", "killed, found before",
                           "killed, found after", "no change either way"], 0)
    returned = set()            # every revision a put has handed to its caller
    with TemporaryDirectory() as folder:
        path = Path(folder) / "crash.db"
        connect(path).close()
        now = 100
        for number in range(trials):
            before = snapshot(path)
            model = model_of(before)
            operation = choose(rng, model, now)
            predicted = outcome(getattr(model, operation[0]), *operation[1:])
            after = (model.physical_rows(), model.counter)
            mode = rng.choice(["sqlite", "sqlite", "python"])
            steps = rng.randint(1, LONGEST[mode][operation[0]])

            killed, reported = trial(path, operation, mode, steps)

            found = snapshot(path)
            where = f"trial {number}: {operation[:4]} killed at {mode} step {steps}"
            assert found in (before, after), where
            rows, counter = found
            assert all(row[3] <= counter for row in rows), where
            if killed:
                tally["killed"] += 1
                if before == after:
                    tally["no change either way"] += 1
                else:
                    tally["killed, found before" if found == before else "killed, found after"] += 1
            else:
                tally["completed"] += 1
                assert reported == json.loads(json.dumps(predicted)), where
                assert found == after, where
                if operation[0] == "put" and reported[0] == "returned":
                    assert reported[1] not in returned, where
                    returned.add(reported[1])
            now += rng.randint(0, 3)

    print(f"\ncrash trials: {trials}, {tally}")
    assert tally["killed"] >= trials // 2
    assert tally["killed, found before"] > 0 and tally["killed, found after"] > 0
    figures["crash trials survived"] += trials
    figures["crash trials: killed mid-operation"] += tally["killed"]
    figures["crash trials: killed after the commit, before returning"] += tally["killed, found after"]
