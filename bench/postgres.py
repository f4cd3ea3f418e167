"""`make bench WHAT=postgres`: the same compare-and-swap workloads on the SQLite store and on PostgreSQL.

    python -m bench.postgres            # the full run (about half a minute on 2 cores)
    python -m bench.postgres --quick    # seconds; checks the code, figures meaningless

Each workload is a number of writer processes, each doing a fixed number of increments: read
a fact, add one to the number in its text, put it back with the revision it read, and read
again after a Conflict (SQLite's "database is locked" is retried the same way, since nothing
was written). The writers start together at a barrier, and the time runs from the barrier to
the last writer's end. Workloads:

- one reader alone, doing only gets: what a call costs without a commit to wait for;
- one writer alone: what one increment costs on each backend, with no one to wait for;
- four writers sharing one record: every writer races every other;
- four writers, each on a record of its own: only the backend's own locking makes them wait.

SQLite runs on a file in a temporary folder; PostgreSQL on a temporary server started for the
run (or WORKBOOK_POSTGRES_URL's), through workbook.postgres, with fsync on. Every workload's
final values are checked (no lost or doubled increment) before its time is kept. Writes
build/bench/postgres.json and postgres.md; `make bench-record WHAT=postgres` keeps them in
docs/bench/, which the appendix notebook quotes.
"""
import argparse
import datetime
import multiprocessing
import os
import platform
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# workload: (processes, operations each, each process on a record of its own, reads only)
FULL = {"one reader alone (get only)": (1, 3000, False, True),
        "one writer alone": (1, 1500, False, False),
        "writers sharing one record": (4, 300, False, False),
        "writers, a record each": (4, 375, True, False)}
QUICK = {"one reader alone (get only)": (1, 20, False, True),
         "one writer alone": (1, 20, False, False),
         "writers sharing one record": (2, 10, False, False),
         "writers, a record each": (2, 10, True, False)}
NOW, TTL = 100, 86400


def store_of(backend):
    if backend == "sqlite":
        from workbook import store
    else:
        from workbook import postgres as store
    return store


def tally(count, writer):
    return {"schema": 1, "text": str(count), "source": f"writer-{writer}", "reviewed": False}


def retrying(call, counts):
    """call(); SQLite's busy error means nothing was written, so count it and call again."""
    while True:
        try:
            return call()
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise
            counts["busy"] += 1


def writer(backend, target, number, increments, key, reads_only, start, results):
    """One writer process: `increments` compare-and-swap increments of the fact `key`
    (or, reads_only, as many gets of it)."""
    store = store_of(backend)
    counts = {"conflicts": 0, "busy": 0, "writes": 0}
    db = retrying(lambda: store.connect(target), counts)
    start.wait()
    if reads_only:
        for _ in range(increments):
            retrying(lambda: store.get(db, "orchard", "fact", key, NOW), counts)
        increments = 0
    while counts["writes"] < increments:
        record = retrying(lambda: store.get(db, "orchard", "fact", key, NOW), counts)
        count = int(record["value"]["text"]) + 1
        try:
            retrying(lambda: store.put(db, "orchard", "fact", key, tally(count, number),
                                       record["revision"], NOW, TTL), counts)
        except store.Conflict:
            counts["conflicts"] += 1
            continue
        counts["writes"] += 1
    db.close()
    results.put({"writer": number, "finished": time.perf_counter(), **counts})


def measure(backend, target, writers, increments, own_keys, reads_only):
    """Operations per second for one workload, after checking that no increment was lost."""
    store = store_of(backend)
    keys = [f"tally-{n}" if own_keys else "tally" for n in range(writers)]
    db = store.connect(target)
    for key in sorted(set(keys)):
        store.put(db, "orchard", "fact", key, tally(0, 0), None, NOW, TTL)
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(writers + 1), context.Queue()
    processes = [context.Process(target=writer, args=(backend, target, n, increments, keys[n],
                                                      reads_only, start, results))
                 for n in range(writers)]
    for process in processes:
        process.start()
    start.wait(timeout=120)
    began = time.perf_counter()
    reports = [results.get(timeout=600) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    seconds = max(report["finished"] for report in reports) - began
    expected = {key: 0 if reads_only else keys.count(key) * increments for key in set(keys)}
    stored = {key: int(store.get(db, "orchard", "fact", key, NOW)["value"]["text"])
              for key in expected}
    db.close()
    if stored != expected:
        raise AssertionError(f"{backend}: increments lost or doubled: {stored} != {expected}")
    return {"per second": writers * increments / seconds,
            "conflicts": sum(r["conflicts"] for r in reports),
            "busy": sum(r["busy"] for r in reports)}


def run(quick=False, log=print):
    from workbook import postgres, postgres_install
    from workbook.teaching.postgres_server import workbook_server
    plan = QUICK if quick else FULL
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as folder, workbook_server() as server:
        admin = postgres.psycopg.connect(server.conninfo(), autocommit=True)
        role = f"bench_{os.getpid()}"
        password = postgres_install.create_role(admin, role)
        for number, (name, (writers, increments, own_keys, reads)) in enumerate(plan.items()):
            log(f"{name} ...")
            schema = f"bench_{os.getpid()}_{number}"
            postgres_install.install(admin, schema, role)
            url = server.conninfo(role, password=password, options=f"-c search_path={schema}")
            lite = measure("sqlite", str(Path(folder) / f"{number}.db"), writers, increments,
                           own_keys, reads)
            served = measure("postgres", url, writers, increments, own_keys, reads)
            postgres_install.uninstall(admin, schema)
            rows.append({"workload": name, "processes": writers, "operations each": increments,
                         "SQLite per second": lite["per second"],
                         "PostgreSQL per second": served["per second"],
                         "PostgreSQL / SQLite": served["per second"] / lite["per second"],
                         "SQLite conflicts": lite["conflicts"], "SQLite busy": lite["busy"],
                         "PostgreSQL conflicts": served["conflicts"]})
        postgres_install.drop_role(admin, role)
        version = admin.execute("SHOW server_version").fetchone()[0]
        admin.close()
    return {"quick": quick, "workloads": rows, "environment": {
        "command": "python -m bench.postgres" + (" --quick" if quick else ""),
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
        "postgres": version, "cpus": os.cpu_count(), "platform": platform.platform(terse=True),
        "seconds": round(time.perf_counter() - started, 1)}}


def markdown(results):
    """The report: one row per workload, from the results alone."""
    environment = results["environment"]
    lines = ["# PostgreSQL beside SQLite: compare-and-swap increments", "",
             f"`{environment['command']}` on {environment['date']}: Python {environment['python']}, "
             f"SQLite {environment['sqlite']}, PostgreSQL {environment['postgres']}, "
             f"{environment['cpus']} CPUs, {environment['seconds']} s.", "",
             "| workload | processes × operations | SQLite /s | PostgreSQL /s | PostgreSQL / SQLite "
             "| SQLite conflicts, busy | PostgreSQL conflicts |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for row in results["workloads"]:
        lines.append(f"| {row['workload']} | {row['processes']} × {row['operations each']} "
                     f"| {row['SQLite per second']:,.0f} | {row['PostgreSQL per second']:,.0f} "
                     f"| {row['PostgreSQL / SQLite']:.2f}× "
                     f"| {row['SQLite conflicts']:,}, {row['SQLite busy']:,} "
                     f"| {row['PostgreSQL conflicts']:,} |")
    lines += ["", "Every workload's final tallies were checked: no increment lost or doubled. "
              "A ratio below 1 means the server did fewer operations per second than SQLite. An increment is "
              "a get and a put; a Conflict or busy error costs a retry.", ""]
    return "\n".join(lines)


def main(argv=None):
    import json
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "build" / "bench"))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    results = run(args.quick, log=lambda m: print(m, file=sys.stderr, flush=True))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "postgres.json").write_text(json.dumps(results, indent=1) + "\n")
    text = markdown(results)
    (out / "postgres.md").write_text(text)
    print(text)
    print(f"written: {out / 'postgres.json'}, postgres.md")
    return results


if __name__ == "__main__":
    main()
