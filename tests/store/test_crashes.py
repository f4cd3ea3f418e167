"""Crashes: a child process is killed with SIGKILL in the middle of put, forget or purge.

Each trial forks a child (from a small process of its own, tests/support/crashing.py) that opens
the file and runs one operation, arranged to kill itself at its Nth step: either the Nth SQLite virtual-machine instruction (a progress
handler, so the kill lands inside a statement, including BEGIN and COMMIT) or the Nth
line of Python run in the store's modules (a trace function, so it lands between
statements). After each trial the parent reopens the file and checks: the integrity
check passes; the whole database equals its state just before the operation or the
state the reference model predicts just after it; the counter is at least every stored
revision; and no revision is ever returned to a caller twice.

On PostgreSQL (the `backend` fixture's second run) the client survives and the server dies:
the trials run on a server of their own. Each call of the store is one statement, one
transaction, so the server is killed (SIGKILL, it and every process it started) at one of
three points: at the operation's Nth traced line of the store's Python, before or after the
call ("line" mode); inside the call's transaction, while its write to a record waits for an
advisory lock the trial holds, after put has moved the counter ("inside" mode); or at the
first line after the server answered, when the call has committed ("commit" mode: reported
as committed, so it must survive). Then the server is started again, recovers from its WAL,
and is checked the same way, with amcheck's index and heap checks for the integrity check.
Fewer trials there, since each kill costs a restart (scaled up under WORKBOOK_SOAK=1).
"""
import json
import os
import random
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest

import workbook.validation
from backends import TEST_SERVER_SETTINGS
from crashing import Forker
from soak import scaled
from workbook.reference import Reference, outcome
from workbook.store import connect

# Most operations take fewer steps than these, so most trials end in a kill.
LONGEST = {"sqlite": {"put": 110, "forget": 30, "purge": 30},
           "python": {"put": 70, "forget": 16, "purge": 16}}
TENANTS, KINDS, KEYS = ("orchard", "harbour"), ("checkpoint", "fact"), ("a", "b", "c")


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


def trial(forker, path, operation, mode, steps):
    """A child forked (by `forker`) for one operation: (killed, what it reported or None)."""
    status, reported = forker.trial(path, operation, mode, steps)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        assert not reported
        return True, None
    assert os.WEXITSTATUS(status) == 0, "the child failed; see its traceback above"
    return False, json.loads(reported)


class FileCrashes:
    """SQLite: a forked child runs the operation on the file and is killed inside it."""

    modes = ["sqlite", "sqlite", "python"]
    longest = LONGEST
    trials = scaled(200, 3000)

    def __init__(self, folder):
        self.path = Path(folder) / "crash.db"
        connect(self.path).close()
        self.forker = Forker()

    def snapshot(self):
        return snapshot(self.path)

    def trial(self, operation, mode, steps):
        return trial(self.forker, self.path, operation, mode, steps)

    def close(self):
        self.forker.close()


class ServerCrashes:
    """PostgreSQL: the operation runs here, and the server is killed under it."""

    modes = ["line", "inside", "commit"]
    longest = {"line": {"put": 60, "forget": 16, "purge": 16}}
    trials = scaled(9, 150)
    PAUSE = 20261130        # the advisory lock a paused write waits for

    def __init__(self, folder):
        from workbook import postgres, postgres_install
        from workbook.teaching import postgres_server as teaching_server
        self.postgres = postgres
        self.server = teaching_server.TemporaryServer(TEST_SERVER_SETTINGS)
        try:
            self.server.create()
        except postgres.ServerUnavailable as error:
            pytest.fail("the crash trials SIGKILL a server, so they start one of their own "
                        f"(never WORKBOOK_POSTGRES_URL's), and could not: {error}")
        admin = self.admin()
        admin.execute("CREATE EXTENSION amcheck")
        self.password = postgres_install.create_role(admin)
        self.role = postgres_install.STORE_ROLE
        postgres_install.install(admin, "crash")
        # "inside" mode: every write to a record first waits for an advisory lock, which the
        # trial holds, so the server dies inside the store's transaction, after put has moved
        # the counter. Free, the lock costs nothing.
        admin.execute(f"""CREATE FUNCTION crash_data.pause() RETURNS trigger LANGUAGE plpgsql AS
            $$BEGIN PERFORM pg_catalog.pg_advisory_xact_lock({self.PAUSE});
                RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END; END$$""")
        admin.execute("""CREATE TRIGGER pause BEFORE INSERT OR UPDATE OR DELETE ON crash_data.records
            FOR EACH ROW EXECUTE FUNCTION crash_data.pause()""")
        admin.close()
        self.files = {postgres.__file__, workbook.validation.__file__}

    def admin(self):
        return self.postgres.psycopg.connect(self.server.conninfo(), autocommit=True)

    def snapshot(self):
        with self.admin() as admin:
            admin.execute("SELECT bt_index_check('crash_data.records_pkey', true)")
            assert admin.execute("SELECT count(*) FROM verify_heapam('crash_data.records')"
                                 ).fetchone() == (0,)
            rows = sorted(admin.execute(
                "SELECT tenant, kind, key, revision, expires, body FROM crash_data.records"))
            return rows, admin.execute("SELECT value FROM crash_data.sequence").fetchone()[0]

    def trial(self, operation, mode, steps):
        """Run one operation; return (killed, what it returned or raised, None if it failed)."""
        postgres = self.postgres
        db = postgres.connect(self.server.conninfo(self.role, password=self.password,
                                                   options="-c search_path=crash"))
        left, seen = [steps], {"killed": False}

        def trace(frame, event, argument):
            if frame.f_code.co_filename not in self.files:
                return None
            if event == "line" and not seen["killed"]:
                left[0] -= 1
                # call() has its row: the server has committed the call's transaction.
                committed = frame.f_code.co_name == "call" and "row" in frame.f_locals
                if (left[0] == 0) if mode == "line" else (mode == "commit" and committed):
                    self.server.kill()
                    seen["killed"] = True
            return trace

        holder = self.admin() if mode == "inside" else None
        if holder is not None:
            holder.execute("SELECT pg_advisory_lock(%s)", (self.PAUSE,))
            answer = {}
            worker = threading.Thread(target=lambda: answer.update(reported=self.attempt(
                db, operation)))
            worker.start()
            waiting = """SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
                AND NOT granted AND pid = %s"""
            while worker.is_alive() and not holder.execute(
                    waiting, (db.info.backend_pid,)).fetchone()[0]:
                time.sleep(0.002)   # until the write waits, or the call ends without one
            if worker.is_alive():
                self.server.kill()
                seen["killed"] = True
            worker.join(30)
            reported = answer["reported"]
            holder.close()
        else:
            sys.settrace(trace)
            try:
                reported = self.attempt(db, operation)
            finally:
                sys.settrace(None)
        db.close()
        if seen["killed"]:
            self.server.start()     # crash recovery replays the WAL
        return seen["killed"], None if reported is None else json.loads(json.dumps(reported))

    def attempt(self, db, operation):
        """What the operation returned or raised; None if the server died under it."""
        try:
            return outcome(getattr(self.postgres, operation[0]), db, *operation[1:])
        except self.postgres.ServerUnavailable:
            return None

    def close(self):
        self.server.remove()


def test_killed_operations_leave_before_or_after(backend, figures):
    with TemporaryDirectory() as folder:
        crashes = (FileCrashes if backend.name == "sqlite" else ServerCrashes)(folder)
        try:
            run_trials(crashes, backend, figures)
        finally:
            crashes.close()


def run_trials(crashes, backend, figures):
    rng = random.Random(20261130)
    trials = crashes.trials
    tally = dict.fromkeys(["killed", "completed", "killed, found before",
                           "killed, found after", "no change either way",
                           "killed after the commit, returned",
                           "killed inside the server's transaction"], 0)
    returned = set()            # every revision a put has handed to its caller
    now = 100
    for number in range(trials):
        before = crashes.snapshot()
        model = model_of(before)
        operation = choose(rng, model, now)
        predicted = outcome(getattr(model, operation[0]), *operation[1:])
        after = (model.physical_rows(), model.counter)
        mode = rng.choice(crashes.modes)
        steps = rng.randint(1, crashes.longest[mode][operation[0]]) if mode in crashes.longest else 0

        killed, reported = crashes.trial(operation, mode, steps)

        found = crashes.snapshot()
        where = f"trial {number}: {operation[:4]} killed at {mode} step {steps}"
        assert found in (before, after), where
        rows, counter = found
        assert all(row[3] <= counter for row in rows), where
        if reported is not None:        # the caller was told: committed means kept
            assert reported == json.loads(json.dumps(predicted)), where
            assert found == after, where
            if operation[0] == "put" and reported[0] == "returned":
                assert reported[1] not in returned, where
                returned.add(reported[1])
        if killed:
            tally["killed"] += 1
            tally["killed inside the server's transaction"] += mode == "inside"
            if reported is not None:
                tally["killed after the commit, returned"] += 1
            if before == after:
                tally["no change either way"] += 1
            else:
                tally["killed, found before" if found == before else "killed, found after"] += 1
        else:
            tally["completed"] += 1
        now += rng.randint(0, 3)

    print(f"\ncrash trials ({backend.name}): {trials}, {tally}")
    assert tally["killed"] >= trials // 2
    assert tally["killed, found before"] > 0 and tally["killed, found after"] > 0
    assert "inside" not in crashes.modes or tally["killed inside the server's transaction"] > 0
    figures[backend.figure("crash trials survived")] += trials
    figures[backend.figure("crash trials: killed mid-operation")] += tally["killed"]
    figures[backend.figure("crash trials: killed after the commit, before returning")] += \
        tally["killed, found after"]
