"""Worker processes for test_concurrency.py: each opens its own connection to one file.

Every worker follows the spec's rule for a lost race: on Conflict, reread and recompute;
on "database is locked" (SQLite busy), nothing was written, so retry the same call.

The forget-and-recreate race runs until it has happened, not for a fixed time: the writers
keep trying until the recycler is done, and the recycler keeps going until a writer has both
replaced the record and been refused (`Race`). On a loaded machine the scheduler may run one
process's whole share before another starts; fixed counts then left nothing to race with.
"""
import random
import sqlite3
import time
from dataclasses import dataclass

from workbook.store import Conflict, connect, forget, get, put

NOW, TTL = 100, 86400       # one fixed instant: nothing expires during a race
PROCESSES = 4               # writers at once (chapter 6 quotes it)
TENANT, KEY = "orchard", "tally"
RACE_SECONDS = 240          # the recycler gives up waiting for the race after this (then the test fails)


@dataclass
class Race:
    """What the processes of the forget-and-recreate race share (multiprocessing objects)."""
    replaced: object        # a Value: successful replacements so far
    refused: object         # a Value: replacements refused with Conflict so far
    over: object            # an Event: the recycler has finished

    @classmethod
    def of(cls, context):
        return cls(context.Value("i", 0), context.Value("i", 0), context.Event())

    def happened(self):
        return self.replaced.value > 0 and self.refused.value > 0

    def count(self, field):
        with getattr(self, field).get_lock():
            getattr(self, field).value += 1


def tally(count, writer):
    """The shared fact: its text is the number of increments so far."""
    return {"schema": 1, "text": str(count), "source": f"writer-{writer}", "reviewed": False}


def think():
    """Stand for the work between reading and writing: give up the CPU for a moment."""
    time.sleep(random.random() / 1000)


def busy(error):
    return isinstance(error, sqlite3.OperationalError) and "locked" in str(error)


def retrying(call, stats):
    """Run call(); while SQLite says the database is busy, count it and run it again."""
    while True:
        try:
            return call()
        except sqlite3.OperationalError as error:
            if not busy(error):
                raise
            stats["busy"] += 1


def increment(path, writer, increments, start, results):
    """Add one to the tally `increments` times by read, compute, compare-and-swap."""
    stats = {"conflicts": 0, "busy": 0}
    db = retrying(lambda: connect(path), stats)
    start.wait()
    writes = []                 # (revision, count written), in the order they happened
    while len(writes) < increments:
        record = retrying(lambda: get(db, TENANT, "fact", KEY, NOW), stats)
        count = int(record["value"]["text"]) + 1
        think()
        try:
            revision = retrying(lambda: put(db, TENANT, "fact", KEY, tally(count, writer),
                                            record["revision"], NOW, TTL), stats)
        except Conflict:
            stats["conflicts"] += 1         # someone else wrote first: reread
            continue
        writes.append((revision, count))
    db.close()
    results.put({"writer": writer, "writes": writes, **stats})


def replace(path, writer, attempts, race, start, results):
    """Try replacements of the record, each with the revision just read: at least
    `attempts`, and on until the recycler is done."""
    stats = {"conflicts": 0, "busy": 0, "absent": 0}
    db = retrying(lambda: connect(path), stats)
    start.wait()
    log = []                    # ("replaced", expected, new) or ("refused", expected, current)
    tried, deadline = 0, time.monotonic() + 2 * RACE_SECONDS    # should the recycler die
    while tried < attempts or not race.over.is_set() and time.monotonic() < deadline:
        tried += 1
        record = retrying(lambda: get(db, TENANT, "fact", KEY, NOW), stats)
        if record is None:
            stats["absent"] += 1            # between a forget and its re-creation
            continue
        token = record["revision"]
        think()
        try:
            revision = retrying(lambda: put(db, TENANT, "fact", KEY, tally(token, writer),
                                            token, NOW, TTL), stats)
        except Conflict as error:
            stats["conflicts"] += 1
            log.append(("refused", token, error.current))
            race.count("refused")
            continue
        log.append(("replaced", token, revision))
        race.count("replaced")
    db.close()
    results.put({"writer": writer, "log": log, **stats})


def recycle(path, writer, cycles, race, start, results):
    """Forget the record by the revision just read, then create it again: at least `cycles`
    times, and on until the writers have both replaced it and been refused (or RACE_SECONDS
    have passed, when the test's check that the race happened fails)."""
    stats = {"conflicts": 0, "busy": 0, "absent": 0}
    db = retrying(lambda: connect(path), stats)
    start.wait()
    try:
        log = recreate(db, writer, cycles, race, stats)
    finally:
        race.over.set()
    db.close()
    results.put({"writer": writer, "log": log, **stats})


def recreate(db, writer, cycles, race, stats):
    log = []                    # ("forgot", revision) and ("created", None, new)
    deadline = time.monotonic() + RACE_SECONDS
    created = 0
    while created < cycles or not race.happened() and time.monotonic() < deadline:
        think()
        record = retrying(lambda: get(db, TENANT, "fact", KEY, NOW), stats)
        if record is not None:
            if not retrying(lambda: forget(db, TENANT, "fact", KEY, record["revision"]), stats):
                stats["conflicts"] += 1     # replaced meanwhile: read again
                continue
            log.append(("forgot", record["revision"]))
        try:
            revision = retrying(lambda: put(db, TENANT, "fact", KEY, tally(0, writer),
                                            None, NOW, TTL), stats)
        except Conflict:
            stats["conflicts"] += 1
            continue
        log.append(("created", None, revision))
        created += 1
    return log
