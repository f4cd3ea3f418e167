"""Crash trials on PostgreSQL: the server is killed (SIGKILL) while writers are committing.

Four writers, each on a connection of its own, write fresh records as fast as they can, each
write in one of the ways tests/test_postgres_holes.py lists for asking the server not to wait
for the disk (raw SQL, pipeline mode, a cursor WITH HOLD, a deferred trigger of their own...),
or through the store's own put. At a random moment the server and every process it started get
SIGKILL, as in a crash. A write counts as acknowledged once its COMMIT (or the store's put)
returned. Then the server starts again, recovers from its write-ahead log, and must hold every
acknowledged write with the revision it was given; no revision may be stored twice, and the
next put must get a revision above every one handed out before the crash.

A few trials under make test; WORKBOOK_SOAK=1 runs many more.
"""
import random
import threading
import time

import pytest

from soak import scaled
from test_postgres_holes import FACT, TRICKS, crash_server, crashed  # noqa: F401
from workbook import postgres

psycopg = postgres.psycopg
WRITERS = 4
TRIALS = scaled(3, 40)
# Generous bounds for a loaded machine: the writers' first commits, and their end once the
# server they write to is gone (each then meets a closed socket at once).
UNDER_WAY_WITHIN, ENDED_WITHIN = 30, 60


def through_the_store(raw, key):
    """The honest way: the store's own put, on a connection of the store's own."""
    return postgres.put(raw.store, "orchard", "fact", key, FACT, None, 100, 60)


WAYS = [*TRICKS, through_the_store]


def writer(url, number, rng, acknowledged, attempts, stop, failures):
    """Write fresh records until the server dies; note each acknowledged (key, revision), and
    any error that is not the server's death."""
    try:
        raw = psycopg.connect(url, autocommit=True)
        raw.store = postgres.connect(url)
    except (psycopg.Error, postgres.ServerUnavailable):
        return
    serial = 0
    try:
        while not stop.is_set():
            serial += 1
            key = f"w{number}-{serial}"
            way = rng.choice(WAYS)
            attempts.append(key)
            try:
                revision = way(raw, key)
            except (psycopg.Error, postgres.ServerUnavailable) as error:
                if not (raw.closed or raw.store.closed):    # the server is not gone
                    failures.append((way.__name__, type(error).__name__))
                return              # not acknowledged
            acknowledged.append((key, revision, way.__name__))
    finally:
        for connection in (raw.store, raw):
            try:
                connection.close()
            except psycopg.Error:
                pass


def test_every_write_acknowledged_before_a_crash_survives_it(crash_server, figures):
    server, url = crash_server
    rng = random.Random(20261202)
    tally = {"attempted": 0, "acknowledged": 0, "lost": 0}
    for trial in range(TRIALS):
        acknowledged, attempts, stop, failures = [], [], threading.Event(), []
        threads = [threading.Thread(target=writer, args=(url, n, random.Random(rng.random()),
                                                         acknowledged, attempts, stop, failures),
                                    daemon=True)
                   for n in range(WRITERS)]
        for thread in threads:
            thread.start()
        # Kill once the writers are under way (some writes acknowledged), at a random moment.
        deadline = time.monotonic() + UNDER_WAY_WITHIN
        while len(acknowledged) < WRITERS:
            assert time.monotonic() < deadline, \
                f"the writers acknowledged {len(acknowledged)} writes in {UNDER_WAY_WITHIN} s"
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.2))
        crashed(server)
        stop.set()
        for thread in threads:
            thread.join(ENDED_WITHIN)
            assert not thread.is_alive(), f"a writer still ran {ENDED_WITHIN} s after the crash"
        with psycopg.connect(server.conninfo(), autocommit=True) as admin:
            stored = dict(admin.execute(
                "SELECT key, revision FROM crash_data.records WHERE tenant = 'orchard'"
                " AND key LIKE 'w%'").fetchall())
            revisions = [row[0] for row in admin.execute("SELECT revision FROM crash_data.records")]
            counter = admin.execute("SELECT value FROM crash_data.sequence").fetchone()[0]
            admin.execute("DELETE FROM crash_data.records WHERE key LIKE 'w%'")
        assert failures == [], f"trial {trial}: writes failed before the crash: {failures}"
        lost = [(key, way) for key, revision, way in acknowledged if stored.get(key) != revision]
        tally["attempted"] += len(attempts)
        tally["acknowledged"] += len(acknowledged)
        tally["lost"] += len(lost)
        assert lost == [], f"trial {trial}: acknowledged writes lost in the crash: {lost[:5]}"
        assert len(revisions) == len(set(revisions)), f"trial {trial}: a revision stored twice"
        assert counter >= max(revision for _, revision, _ in acknowledged)
    for name, value in tally.items():
        figures[f"postgres: writes {name} in server crash trials"] += value
