"""Worker processes for test_concurrency.py: each opens its own connection to one file.

Every worker follows the spec's rule for a lost race: on Conflict, reread and recompute;
on "database is locked" (SQLite busy), nothing was written, so retry the same call.
"""
import random
import sqlite3
import time

from workbook.store import Conflict, connect, forget, get, put

NOW, TTL = 100, 86400       # one fixed instant: nothing expires during a race
PROCESSES = 4               # writers at once (chapter 6 quotes it)
TENANT, KEY = "orchard", "tally"


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


def replace(path, writer, attempts, start, results):
    """Try `attempts` replacements of the record, each with the revision just read."""
    stats = {"conflicts": 0, "busy": 0, "absent": 0}
    db = retrying(lambda: connect(path), stats)
    start.wait()
    log = []                    # ("replaced", expected, new) or ("refused", expected, current)
    for _ in range(attempts):
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
            continue
        log.append(("replaced", token, revision))
    db.close()
    results.put({"writer": writer, "log": log, **stats})


def recycle(path, writer, cycles, start, results):
    """Forget the record by the revision just read, then create it again, `cycles` times."""
    stats = {"conflicts": 0, "busy": 0, "absent": 0}
    db = retrying(lambda: connect(path), stats)
    start.wait()
    log = []                    # ("forgot", revision) and ("created", None, new)
    while len([entry for entry in log if entry[0] == "created"]) < cycles:
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
    db.close()
    results.put({"writer": writer, "log": log, **stats})
