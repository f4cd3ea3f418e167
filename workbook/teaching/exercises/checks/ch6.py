"""Checks of chapter 6's exercises: a test that kills a broken store and passes on correct ones.

A learner's test is run against the real store, against correct stores written differently
(other SQL, the same promises) and against broken copies, some written differently too. A test
that recognises a store by its source text or its names, not by what it does, fails one of them.
"""
import hashlib
import os
import tempfile
from contextlib import contextmanager
from types import SimpleNamespace

from workbook.teaching.exercises import NotYet
from workbook.records import connect, get, stored
from workbook.store import Conflict, forget, identity, integer, payload, purge, put

# ------------------------------------------------------------- correct stores, written differently

@contextmanager
def transaction(db):
    """BEGIN IMMEDIATE, then COMMIT, or ROLLBACK if anything was raised."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def get_filtered_in_python(db, tenant, kind, key, now):
    identity(tenant, kind, key)
    integer(now, 0, 10**10, name="now")
    row = db.execute("""SELECT revision, expires, typeof(body), CAST(body AS BLOB)
        FROM records WHERE key=? AND kind=? AND tenant=?""", (key, kind, tenant)).fetchone()
    if row is None or not row[1] - now > 0:
        return None
    revision, expires, body_type, body = row
    return {"revision": revision, "expires": expires,
            "value": stored(kind, revision, expires, body_type, body)}


def put_replacing_the_row(db, tenant, kind, key, value, expected, now, ttl):
    """Validates as put does, then deletes and inserts the row instead of an upsert."""
    identity(tenant, kind, key)
    integer(now, 0, 10**10, name="now")
    integer(ttl, 1, 86400, name="ttl")
    if expected is not None:
        integer(expected, 1, 2**63-1, name="expected")
    body = payload(kind, value)
    with transaction(db):
        old = db.execute("SELECT revision, expires FROM records WHERE key=? AND tenant=? AND kind=?",
                         (key, tenant, kind)).fetchone()
        current = old[0] if old else None
        if old and now >= old[1]:
            raise Conflict(f"{kind} {key!r} expired at {old[1]}: purge it before creating it again",
                           expected=expected, current=current)
        if expected != current:
            raise Conflict(f"revision changed: expected {expected}, current {current}",
                           expected=expected, current=current)
        (revision,) = db.execute(
            "UPDATE sequence SET value=value+1 WHERE singleton=1 RETURNING value").fetchone()
        db.execute("DELETE FROM records WHERE tenant=? AND kind=? AND key=?", (tenant, kind, key))
        db.execute("INSERT INTO records (tenant, kind, key, revision, expires, body) "
                   "VALUES (?, ?, ?, ?, ?, ?)", (tenant, kind, key, revision, now + ttl, body))
    return revision


def forget_after_reading(db, tenant, kind, key, expected):
    """Reads the revision first, in one transaction with the delete."""
    identity(tenant, kind, key)
    integer(expected, 1, 2**63-1, name="expected")
    with transaction(db):
        row = db.execute("SELECT revision FROM records WHERE tenant=? AND kind=? AND key=?",
                         (tenant, kind, key)).fetchone()
        removed = row is not None and row[0] == expected
        if removed:
            db.execute("DELETE FROM records WHERE tenant=? AND kind=? AND key=?", (tenant, kind, key))
    return removed


def forget_counting_changes(db, tenant, kind, key, expected):
    identity(tenant, kind, key)
    integer(expected, 1, 2**63-1, name="expected")
    db.execute("DELETE FROM records WHERE revision=? AND key=? AND kind=? AND tenant=?",
               (expected, key, kind, tenant))
    return db.execute("SELECT changes()").fetchone()[0] > 0


def purge_row_by_row(db, tenant, now):
    identity(tenant, "fact", "unused")
    integer(now, 0, 10**10, name="now")
    with transaction(db):
        due = db.execute("SELECT kind, key FROM records WHERE tenant=? AND NOT expires > ?",
                         (tenant, now)).fetchall()
        for kind, key in due:
            db.execute("DELETE FROM records WHERE tenant=? AND kind=? AND key=?", (tenant, kind, key))
    return len(due)


def purge_counting_changes(db, tenant, now):
    identity(tenant, "fact", "unused")
    integer(now, 0, 10**10, name="now")
    before = db.total_changes
    db.execute("DELETE FROM records WHERE ? >= expires AND tenant=?", (now, tenant))
    return db.total_changes - before


# ------------------------------------------------------------------------------ broken stores

def purge_strictly_before(db, tenant, now):
    """Broken: keeps rows whose deadline is exactly now."""
    identity(tenant, "fact", "unused")
    integer(now, 0, 10**10, name="now")
    return db.execute("DELETE FROM records WHERE tenant=? AND expires<?", (tenant, now)).rowcount


def purge_strictly_before_too(db, tenant, now):
    """Broken, written differently: NOT (expires >= now) is expires < now."""
    identity(tenant, "fact", "unused")
    integer(now, 0, 10**10, name="now")
    before = db.total_changes
    db.execute("DELETE FROM records WHERE NOT (expires >= ?) AND tenant=?", (now, tenant))
    return db.total_changes - before


def forget_any_revision(db, tenant, kind, key, expected):
    """Broken: deletes the identity whatever its revision."""
    identity(tenant, kind, key)
    integer(expected, 1, 2**63 - 1, name="expected")
    return db.execute("DELETE FROM records WHERE tenant=? AND kind=? AND key=?",
                      (tenant, kind, key)).rowcount == 1


def forget_any_revision_too(db, tenant, kind, key, expected):
    """Broken, written differently: reads the row, then deletes it if there is one at all."""
    identity(tenant, kind, key)
    integer(expected, 1, 2**63 - 1, name="expected")
    row = db.execute("SELECT revision FROM records WHERE key=? AND kind=? AND tenant=?",
                     (key, kind, tenant)).fetchone()
    if row is None:
        return False
    db.execute("DELETE FROM records WHERE key=? AND kind=? AND tenant=?", (key, kind, tenant))
    return True


def put_counting_per_row(db, tenant, kind, key, value, expected, now, ttl):
    """Broken: numbers each record's revisions from 1, old revision plus one, not by the sequence."""
    where = (tenant, kind, key)
    old = db.execute("SELECT revision FROM records WHERE tenant=? AND kind=? AND key=?",
                     where).fetchone()
    put(db, tenant, kind, key, value, expected, now, ttl)
    revision = (old[0] if old else 0) + 1
    db.execute("UPDATE records SET revision=? WHERE tenant=? AND kind=? AND key=?",
               (revision, *where))
    return revision


def put_counting_per_row_too(db, tenant, kind, key, value, expected, now, ttl):
    """Broken, written differently: keeps the shared sequence, but a created row starts again
    from the revision its identity had when it was last forgotten (none: from 1)."""
    revision = put_replacing_the_row(db, tenant, kind, key, value, expected, now, ttl)
    if expected is not None:
        return revision
    reused = db.execute("SELECT COUNT(*) FROM records WHERE tenant=? AND kind=? AND key=?",
                        (tenant, kind, key)).fetchone()[0]
    db.execute("UPDATE records SET revision=? WHERE tenant=? AND kind=? AND key=?",
               (reused, tenant, kind, key))
    return reused


# --------------------------------------------------------------------------------- the stores

CORRECT = [
    ("the real store", {}),
    ("a correct store written differently", {"get": get_filtered_in_python,
                                             "put": put_replacing_the_row,
                                             "forget": forget_after_reading,
                                             "purge": purge_row_by_row}),
    ("a second correct store written differently", {"forget": forget_counting_changes,
                                                    "purge": purge_counting_changes}),
]


MOST_DATABASES = 4  # that one run of a test may open
RUNS = 3            # of the test on each store, where a grader chose the order


def connect_within(folder, opened):
    """The store's connect for a test: a database in memory, or a file of `folder` named after
    the path asked for (so asking again reopens it), never the path itself. Where a grader runs
    the check, the path a test names would be the grader's, not the test's."""
    def connect_here(path=":memory:"):
        if len(opened) >= MOST_DATABASES:
            raise ValueError(f"a test may open at most {MOST_DATABASES} databases")
        if path == ":memory:":
            db = connect(":memory:")
        else:
            name = hashlib.sha256(os.fsencode(os.fspath(path))).hexdigest()[:24]
            db = connect(os.path.join(folder, name + ".db"))
        opened.append(db)
        return db
    return connect_here


def store_with(calls=None, connect=connect, **functions):
    """The real store's functions, with some replaced. Every store a test meets is built the same
    way, each function behind a wrapper that notes its name in `calls`, so that no store differs
    from another in anything but what its functions do."""
    chosen = dict(connect=connect, get=get, put=put, forget=forget, purge=purge) | functions
    calls = set() if calls is None else calls

    def noted(name, function):
        def call(*args, **kwargs):
            calls.add(name)
            return function(*args, **kwargs)
        call.__name__ = call.__qualname__ = name
        return call
    return SimpleNamespace(**{name: noted(name, f) for name, f in chosen.items()}, Conflict=Conflict)


def run(test, store):
    """Run the learner's test; return None if it passed, else the exception it raised."""
    try:
        test(store)
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure is an answer to describe
        return error
    return None


def killer(broken, what, where):
    def check(test, rng=None):
        if not callable(test):
            raise NotYet("write a function that takes one argument, store, and asserts.")
        stores = [(name, functions, True) for name, functions in CORRECT] + \
                 [("a broken store", functions, False) for functions in broken]
        if rng:
            # In an order the test cannot count on, each store RUNS times: a test that passes or
            # fails by how often it has run, not by what the store did, guesses which runs are
            # the broken ones once in comb(15, 6) = 5,005 (once in 10 with each store run once).
            stores = stores * RUNS
            rng.shuffle(stores)
        for name, functions, correct in stores:
            calls, opened = set(), []
            with tempfile.TemporaryDirectory(prefix="workbook-test-") as folder:
                try:
                    outcome = run(test, store_with(calls, connect_within(folder, opened), **functions))
                finally:
                    for db in opened:
                        db.close()
            if correct:
                if isinstance(outcome, AssertionError):
                    raise NotYet(f"your test fails on {name}, so it asserts something the store "
                                 "does not promise; assert only what the specification says.")
                if outcome is not None:
                    raise NotYet(f"on {name} your test raised {type(outcome).__name__}: {outcome}.")
            elif outcome is None:
                if not calls - {"connect"}:
                    raise NotYet(f"your test passes against a broken store too ({what}) without "
                                 "calling it: make it call store.put, store.get and friends, "
                                 "and assert on what they return.")
                used = ", ".join(f"store.{name}" for name in sorted(calls - {"connect"}))
                raise NotYet(f"your test calls {used} but also passes against a broken store "
                             f"({what}): either it never reaches the case where the two differ "
                             f"({where}), or it asserts nothing about what the store does there.")
            elif not isinstance(outcome, AssertionError):
                raise NotYet(f"against a broken store your test crashed with "
                             f"{type(outcome).__name__} instead of failing an assert; a test "
                             "should say what went wrong.")
        return (f"it passes on the real store and on two written differently, and fails by "
                f"assertion on {len(broken)} broken ones ({what}).")
    check.broken = broken
    return check


check_purge_killer = killer(
    [{"purge": purge_strictly_before}, {"purge": purge_strictly_before_too}],
    "purge keeps rows whose deadline equals now",
    "a row whose deadline is exactly the now that purge is given")
check_forget_killer = killer(
    [{"forget": forget_any_revision}, {"forget": forget_any_revision_too}],
    "forget deletes whatever revision is there",
    "a forget with a revision that is no longer the record's")
check_put_killer = killer(
    [{"put": put_counting_per_row}, {"put": put_counting_per_row_too}],
    "revisions count per row, from 1",
    "a record created again after it was forgotten")
