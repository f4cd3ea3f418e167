"""Chapter 6 exercises: write a test that kills a broken store and passes on the real one."""
from types import SimpleNamespace

from workbook.exercises import Exercise, NotYet
from workbook.store import Conflict, connect, forget, get, identity, integer, purge, put


def purge_strictly_before(db, tenant, now):
    """Broken: keeps rows whose deadline is exactly now."""
    identity(tenant, "fact", "unused")
    integer(now, 0, 10**10, name="now")
    return db.execute("DELETE FROM records WHERE tenant=? AND expires<?", (tenant, now)).rowcount


def forget_any_revision(db, tenant, kind, key, expected):
    """Broken: deletes the identity whatever its revision."""
    identity(tenant, kind, key)
    integer(expected, 1, 2**63 - 1, name="expected")
    return db.execute("DELETE FROM records WHERE tenant=? AND kind=? AND key=?",
                      (tenant, kind, key)).rowcount == 1


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


def store_with(**broken):
    """The real store's functions, with some replaced by broken ones."""
    functions = dict(connect=connect, get=get, put=put, forget=forget, purge=purge, Conflict=Conflict)
    return SimpleNamespace(**(functions | broken))


def run(test, store):
    """Run the learner's test; return None if it passed, else the exception it raised."""
    try:
        test(store)
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure is an answer to describe
        return error
    return None


def killer(broken, what):
    def check(test):
        if not callable(test):
            raise NotYet("write a function that takes one argument, store, and asserts.")
        on_real = run(test, store_with())
        if isinstance(on_real, AssertionError):
            raise NotYet("your test fails on the real store, so it asserts something the store "
                          "does not promise.")
        if on_real is not None:
            raise NotYet(f"on the real store your test raised {type(on_real).__name__}: {on_real}.")
        on_broken = run(test, store_with(**broken))
        if on_broken is None:
            raise NotYet(f"your test also passes against the broken store ({what}); make it call "
                         "store.put, store.get and friends, and assert on the difference.")
        if not isinstance(on_broken, AssertionError):
            raise NotYet(f"against the broken store your test crashed with "
                         f"{type(on_broken).__name__} instead of failing an assert; a test "
                         "should say what went wrong.")
        return f"it passes on the real store and fails by assertion on the broken one ({what})."
    return check


q1 = Exercise(
    "6.1", "Write a test that fails on a purge using < instead of <=.",
    killer({"purge": purge_strictly_before}, "purge keeps rows whose deadline equals now"),
    hints=["The two purges differ only for a row whose expires is exactly now.",
           "Put a fact at 100 with ttl 10, then purge at 110 and assert one row was removed."])

q2 = Exercise(
    "6.2", "Write a test that fails on a forget that ignores the revision.",
    killer({"forget": forget_any_revision}, "forget deletes whatever revision is there"),
    hints=["Give the record a second revision, then forget with the first one.",
           "A correct forget returns False for a stale revision and leaves the record visible."])

q3 = Exercise(
    "6.3", "Write a test that fails when revisions restart after a forget.",
    killer({"put": put_counting_per_row}, "revisions count per row, from 1"),
    hints=["The broken put only differs after a row is deleted and created again.",
           "Create, forget with the revision you got, create again: compare the two revisions."])
