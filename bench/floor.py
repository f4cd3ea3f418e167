"""The floor: the store's SQL statements run directly through sqlite3.

Same statements, same parameters, same transaction boundaries and the same
compare-and-swap decisions as workbook.store, so both leave identical rows
(tests/tooling/test_bench.py checks that). What the floor leaves out is everything the
store adds on top of SQLite: identity, integer and payload validation (of arguments and
of the stored row), JSON encoding on write (put takes the already-encoded body), and
UTF-8/JSON decoding plus re-validation on read (get returns the raw row).
"""

from workbook.store import Conflict, connect  # noqa: F401 - connect: set-up, never timed

__all__ = ["Conflict", "connect", "get", "put", "forget", "purge", "INSERT_ROW"]

# The statement texts are copied from workbook/records.py, writes.py and deletion.py
# so sqlite3 prepares exactly the same SQL.
SELECT_LIVE = """SELECT revision, expires, typeof(body), CAST(body AS BLOB)
        FROM records WHERE tenant=? AND kind=? AND key=? AND expires>?"""
SELECT_OLD = """SELECT revision, expires FROM records
            WHERE tenant=? AND kind=? AND key=?"""
SELECT_SEQUENCE = "SELECT value FROM sequence WHERE singleton=1"
UPDATE_SEQUENCE = "UPDATE sequence SET value=? WHERE singleton=1"
UPSERT = """INSERT INTO records VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(tenant, kind, key) DO UPDATE SET
            revision=excluded.revision, expires=excluded.expires,
            body=excluded.body"""
DELETE_ONE = """DELETE FROM records
        WHERE tenant=? AND kind=? AND key=? AND revision=?"""
DELETE_EXPIRED = "DELETE FROM records WHERE tenant=? AND expires<=?"

# Used only to lay out rows before a timed batch (same for every implementation).
INSERT_ROW = "INSERT INTO records VALUES (?, ?, ?, ?, ?, ?)"

STATEMENTS = {
    "get: select live row": (SELECT_LIVE, ("t0", "fact", "k1", 100)),
    "put: select old row": (SELECT_OLD, ("t0", "fact", "k1")),
    "put: read sequence": (SELECT_SEQUENCE, ()),
    "put: bump sequence": (UPDATE_SEQUENCE, (1,)),
    "put: upsert row": (UPSERT, ("t0", "fact", "k1", 1, 200, "{}")),
    "forget: delete by revision": (DELETE_ONE, ("t0", "fact", "k1", 1)),
    "purge: delete expired of tenant": (DELETE_EXPIRED, ("t0", 100)),
}


def get(db, tenant, kind, key, now):
    return db.execute(SELECT_LIVE, (tenant, kind, key, now)).fetchone()


def put(db, tenant, kind, key, body, expected, now, ttl):
    db.execute("BEGIN IMMEDIATE")
    try:
        old = db.execute(SELECT_OLD, (tenant, kind, key)).fetchone()
        if old is not None and old[1] <= now:
            raise Conflict("expired row")
        current = None if old is None else old[0]
        if current != expected:
            raise Conflict("revision changed")
        revision = db.execute(SELECT_SEQUENCE).fetchone()[0] + 1
        db.execute(UPDATE_SEQUENCE, (revision,))
        db.execute(UPSERT, (tenant, kind, key, revision, now + ttl, body))
        db.execute("COMMIT")
        return revision
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def forget(db, tenant, kind, key, expected):
    return db.execute(DELETE_ONE, (tenant, kind, key, expected)).rowcount == 1


def purge(db, tenant, now):
    return db.execute(DELETE_EXPIRED, (tenant, now)).rowcount
