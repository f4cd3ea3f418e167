"""Separate processes writing one database file at once: no update lost, doubled or stale.

The workers (tests/support/workers.py) run in spawned processes, each with its own connection,
and start together at a barrier. The counter's revisions are allocated inside the write
transaction, so sorting the successful writes by revision gives the order they committed.
"""
import multiprocessing
from pathlib import Path
from tempfile import TemporaryDirectory

import workers
from workers import PROCESSES
from soak import scaled
from workbook.store import connect, get, put

INCREMENTS = scaled(250, 2500)


def run(targets, jobs, path):
    """Run target(path, *job, start, results) for each pair in its own spawned process."""
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(len(jobs)), context.Queue()
    processes = [context.Process(target=target, args=(path, *job, start, results))
                 for target, job in zip(targets, jobs)]
    for process in processes:
        process.start()
    collected = [results.get(timeout=300) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    return sorted(collected, key=lambda result: result["writer"])


def test_concurrent_increments_lose_nothing(figures):
    with TemporaryDirectory() as folder:
        path = Path(folder) / "tally.db"
        db = connect(path)
        first = put(db, workers.TENANT, "fact", workers.KEY, workers.tally(0, 0),
                    None, workers.NOW, workers.TTL)
        results = run([workers.increment] * PROCESSES,
                      [(writer, INCREMENTS) for writer in range(1, PROCESSES + 1)], path)
        final = get(db, workers.TENANT, "fact", workers.KEY, workers.NOW)
        sequence = db.execute("SELECT value FROM sequence").fetchone()[0]
        db.close()

    total = PROCESSES * INCREMENTS
    writes = sorted(write for result in results for write in result["writes"])
    revisions = [revision for revision, count in writes]
    # The stored count is the number of successful increments: none lost, none doubled.
    assert final["value"]["text"] == str(total)
    assert len(writes) == total
    # In commit order, each write added exactly one to the one before it.
    assert [count for revision, count in writes] == list(range(1, total + 1))
    assert len(set(revisions)) == total and revisions[0] > first
    assert final["revision"] == revisions[-1] == sequence == first + total
    for result in results:
        own = [revision for revision, count in result["writes"]]
        assert own == sorted(own) and len(result["writes"]) == INCREMENTS

    conflicts = sum(result["conflicts"] for result in results)
    busy = sum(result["busy"] for result in results)
    print(f"\n{PROCESSES} processes x {INCREMENTS} increments: {total} writes, "
          f"0 lost, {conflicts} conflicts, {busy} busy")
    figures["concurrent increments (4 processes), none lost"] += total
    figures["concurrent increments: conflicts seen"] += conflicts
    figures["concurrent increments: busy errors seen"] += busy


def test_forget_and_recreate_never_lets_a_stale_token_write(figures):
    writers, attempts, cycles = 3, scaled(150, 1500), scaled(60, 600)
    with TemporaryDirectory() as folder:
        path = Path(folder) / "race.db"
        db = connect(path)
        first = put(db, workers.TENANT, "fact", workers.KEY, workers.tally(0, 0),
                    None, workers.NOW, workers.TTL)
        results = run([workers.replace] * writers + [workers.recycle],
                      [(writer, attempts) for writer in range(1, writers + 1)]
                      + [(writers + 1, cycles)], path)
        final = get(db, workers.TENANT, "fact", workers.KEY, workers.NOW)
        db.close()

    forgotten = {entry[1] for result in results for entry in result["log"]
                 if entry[0] == "forgot"}
    writes = sorted((entry[2], entry[0], entry[1]) for result in results
                    for entry in result["log"] if entry[0] in ("replaced", "created"))
    assert len({revision for revision, _, _ in writes}) == len(writes)
    # Walk the writes in commit order. A replace must name the revision written just
    # before it, which nobody had forgotten; a create must follow a forget.
    previous = first
    for revision, what, expected in writes:
        if what == "replaced":
            assert expected == previous and previous not in forgotten, (revision, expected)
        else:
            assert previous in forgotten, revision
        previous = revision
    assert final is None if previous in forgotten else final["revision"] == previous

    refused = [entry for result in results for entry in result["log"] if entry[0] == "refused"]
    stale = [entry for entry in refused if entry[1] in forgotten]
    replaced = sum(what == "replaced" for _, what, _ in writes)
    print(f"\nforget/recreate race: {replaced} replaces, {len(forgotten)} forgets, "
          f"{len(stale)} forgotten tokens refused, {len(refused)} refusals in all")
    assert replaced > 0 and len(forgotten) >= cycles and refused     # the race really happened
    figures["forget/recreate race: forgotten tokens refused"] += len(stale)
    figures["forget/recreate race: stale writes accepted"] += 0
