"""Contention: 1, 2 and 4 writer processes doing read-modify-write on one database file.

Each writer loops for the same wall-clock window: get a checkpoint, advance it, put it
back with the revision it read (each attempt's latency is kept). A put that loses the
race raises Conflict (counted, and the writer rereads); a lock that stays busy past the
store's 1-second timeout raises sqlite3.OperationalError "database is locked" (counted as
busy). The window opens for all writers at once, after every process has connected.
"""

import multiprocessing
import os
import random
import sqlite3
import tempfile
import time

from bench.workload import NOW, TTL

TENANT = "orchard"
KEYS = 4   # few shared keys, so writers really do race for the same records


def _value(step):
    return {"schema": 1, "step": step % 3, "items": ["collected"] * (step % 3)}


def writer(path, seconds, seed, barrier, results):
    try:
        results.put(_write(path, seconds, seed, barrier))
    except BaseException as error:  # report, rather than leave the parent waiting
        results.put({"error": repr(error)})
        raise


def _write(path, seconds, seed, barrier):
    from workbook.store import Conflict, connect, get, put
    db = connect(path)
    rng = random.Random(seed)
    counts = {"writes": 0, "conflicts": 0, "busy": 0, "reads": 0}
    latencies = []
    barrier.wait()
    end = time.perf_counter() + seconds
    while (start := time.perf_counter()) < end:
        key = f"run-{rng.randrange(KEYS)}"
        try:
            record = get(db, TENANT, "checkpoint", key, NOW)
            counts["reads"] += 1
            step = record["value"]["step"] + 1
            put(db, TENANT, "checkpoint", key, _value(step), record["revision"], NOW, TTL)
            counts["writes"] += 1
        except Conflict:
            counts["conflicts"] += 1
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise
            counts["busy"] += 1
        latencies.append(time.perf_counter() - start)
    db.close()
    counts["latencies"] = latencies
    return counts


def run(writers, seconds, folder):
    from workbook.store import connect, put
    path = os.path.join(folder, f"contention-{writers}.db")
    db = connect(path)
    for i in range(KEYS):
        put(db, TENANT, "checkpoint", f"run-{i}", _value(0), None, NOW, TTL)
    journal = db.execute("PRAGMA journal_mode").fetchone()[0]
    synchronous = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(
        db.execute("PRAGMA synchronous").fetchone()[0])
    db.close()
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(writers + 1), ctx.Queue()
    procs = [ctx.Process(target=writer, args=(path, seconds, seed, barrier, results))
             for seed in range(writers)]
    for p in procs:
        p.start()
    barrier.wait(timeout=120)
    counts = [results.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    failed = [c["error"] for c in counts if "error" in c]
    if failed:
        raise RuntimeError(f"a writer process failed: {failed[0]}")
    latencies = sorted(x for c in counts for x in c.pop("latencies"))
    total = {name: sum(c[name] for c in counts) for name in counts[0]}
    if latencies:
        total["p50_ms"] = 1000 * latencies[len(latencies) // 2]
        total["p99_ms"] = 1000 * latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)]
        total["max_ms"] = 1000 * latencies[-1]
    total.update(writers=writers, seconds=seconds, journal=journal, synchronous=synchronous,
                 writes_per_s=total["writes"] / seconds,
                 attempts=total["writes"] + total["conflicts"] + total["busy"])
    return total


def measure(writer_counts=(1, 2, 4), seconds=4.0):
    with tempfile.TemporaryDirectory(prefix="bench-contention-") as folder:
        rows = [run(n, seconds, folder) for n in writer_counts]
    base = rows[0]["writes_per_s"] or 1.0
    for row in rows:
        row["vs_one"] = row["writes_per_s"] / base
        row["conflict_rate"] = row["conflicts"] / max(row["attempts"], 1)
    return rows
