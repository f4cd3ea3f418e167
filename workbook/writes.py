from workbook.validation import Conflict, identity, integer, payload


def put(db, tenant, kind, key, value, expected, now, ttl):
    identity(tenant, kind, key)
    integer(now, 0, 10**10, name="now")
    integer(ttl, 1, 86400, name="ttl")
    if expected is not None:
        integer(expected, 1, 2**63-1, name="expected")
    body = payload(kind, value)
    db.execute("BEGIN IMMEDIATE")
    try:
        old = db.execute("""SELECT revision, expires FROM records
            WHERE tenant=? AND kind=? AND key=?""",
            (tenant, kind, key)).fetchone()
        if old is not None and old[1] <= now:
            raise Conflict(f"{kind} {key!r} expired at {old[1]}: purge it "
                           "before creating it again", expected=expected,
                           current=old[0])
        current = None if old is None else old[0]
        if current != expected:
            raise Conflict(f"revision changed: expected {expected}, "
                           f"current {current}", expected=expected,
                           current=current)
        revision = db.execute(
            "SELECT value FROM sequence WHERE singleton=1"
        ).fetchone()[0] + 1
        integer(revision, 1, 2**63-1, name="next revision")
        db.execute("UPDATE sequence SET value=? WHERE singleton=1",
                   (revision,))
        db.execute("""INSERT INTO records VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(tenant, kind, key) DO UPDATE SET
            revision=excluded.revision, expires=excluded.expires,
            body=excluded.body""",
            (tenant, kind, key, revision, now+ttl, body))
        db.execute("COMMIT")
        return revision
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
