"""Bad input: a ValueError that names the field and the accepted form, and nothing written."""
import pytest

from workbook.store import Conflict, connect, forget, get, purge, put

SECRET = "Fictional secret text that must never appear in an error"


def fact(text="Fictional preference", **changes):
    return {"schema": 1, "text": text, "source": "note-1", "reviewed": False} | changes


def state(db):
    rows = db.execute("SELECT * FROM records ORDER BY tenant, kind, key").fetchall()
    return rows, db.execute("SELECT value FROM sequence").fetchone()[0]


@pytest.fixture
def db():
    db = connect()
    put(db, "orchard", "fact", "a", fact(), None, 100, 10)
    yield db
    db.close()


class FakeInt64(int):
    """Stands in for numpy.int64: an int subclass from another module."""
FakeInt64.__module__ = "numpy"
FakeInt64.__qualname__ = "int64"


@pytest.mark.parametrize("call, message", [
    (lambda db: get(db, "orchard", "fact", "a", FakeInt64(5)),
     "now must be an int from 0 to 10**10, got numpy.int64"),
    (lambda db: get(db, "orchard", "fact", "a", True),
     "now must be an int from 0 to 10**10, got bool"),
    (lambda db: get(db, "orchard", "fact", "a", -1),
     "now must be an int from 0 to 10**10, got -1"),
    (lambda db: put(db, "orchard", "fact", "b", fact(), None, 100, 86401),
     "ttl must be an int from 1 to 86400, got 86401"),
    (lambda db: put(db, "orchard", "fact", "b", fact(), 0, 100, 10),
     "expected must be an int from 1 to 2**63-1, got 0"),
    (lambda db: put(db, "orchard", "fact", "b", fact(), 2.0, 100, 10),
     "expected must be an int from 1 to 2**63-1, got float"),
    (lambda db: forget(db, "orchard", "fact", "a", "1"),
     "expected must be an int from 1 to 2**63-1, got str"),
    (lambda db: purge(db, "Orchard", 100),
     "tenant must be a lowercase letter followed by up to 31 lowercase letters, "
     "digits or hyphens, got 'Orchard'"),
    (lambda db: get(db, "orchard", "fact", "../etc", 100),
     "key must be a lowercase letter followed by up to 31 lowercase letters, "
     "digits or hyphens, got '../etc'"),
    (lambda db: get(db, "orchard", "facts", "a", 100),
     "kind must be 'checkpoint' or 'fact', got 'facts'"),
    (lambda db: put(db, "orchard", "fact", "b", fact(schema=True), None, 100, 10),
     "payload.schema must be the int 1, got bool"),
    (lambda db: put(db, "orchard", "fact", "b", fact(schema=2), None, 100, 10),
     "payload.schema must be the int 1, got 2"),
    (lambda db: put(db, "orchard", "fact", "b", fact(extra=1), None, 100, 10),
     "fact payload must have exactly the fields reviewed, schema, source, text; "
     "missing: none; extra: 'extra'"),
    (lambda db: put(db, "orchard", "fact", "b", fact(reviewed="yes"), None, 100, 10),
     "fact.reviewed must be a bool, got str"),
    (lambda db: put(db, "orchard", "fact", "b", fact(""), None, 100, 10),
     "fact.text must be a str of 1 to 256 characters, got 0 characters"),
    (lambda db: put(db, "orchard", "fact", "b", fact(source="x" * 257), None, 100, 10),
     "fact.source must be a str of 1 to 256 characters, got 257 characters"),
    (lambda db: put(db, "orchard", "fact", "b",
                    fact("\u2603" * 256, source="\u2603" * 256), None, 100, 10),
     "fact payload is 3130 bytes as JSON; the limit is 2048"),
    (lambda db: put(db, "orchard", "checkpoint", "b",
                    {"schema": 1, "step": 3, "items": []}, None, 100, 10),
     "checkpoint.step must be an int from 0 to 2, got 3"),
    (lambda db: put(db, "orchard", "checkpoint", "b",
                    {"schema": 1, "step": 0, "items": ["x"] * 9}, None, 100, 10),
     "checkpoint.items must be a list of at most 8 strings, got 9 items"),
    (lambda db: put(db, "orchard", "checkpoint", "b",
                    {"schema": 1, "step": 0, "items": ["ok", 7]}, None, 100, 10),
     "checkpoint.items[1] must be a str of 1 to 256 characters, got int"),
    (lambda db: put(db, "orchard", "checkpoint", "b", [], None, 100, 10),
     "payload must be a dict, got list"),
])
def test_message_names_the_field_and_nothing_is_written(db, call, message):
    before = state(db)
    with pytest.raises(ValueError) as caught:
        call(db)
    assert str(caught.value) == message
    assert state(db) == before
    assert not db.in_transaction


def test_huge_int_is_described_not_printed(db):
    with pytest.raises(ValueError, match="got a very large int$"):
        get(db, "orchard", "fact", "a", 10**5000)


def test_fact_text_never_appears_in_an_error(db):
    too_long = fact(SECRET * 10)
    too_big = fact(SECRET[:40] + "\u2603" * 200, source="\u2603" * 256)
    attempts = [
        lambda: put(db, "orchard", "fact", "a", too_long, None, 100, 10),
        lambda: put(db, "orchard", "fact", "a", too_big, None, 100, 10),
        lambda: put(db, "orchard", "fact", "a", fact(SECRET), None, 100, 10),
        lambda: put(db, "orchard", "fact", "a", fact(SECRET), 99, 100, 10),
        lambda: put(db, "orchard", "fact", "a", fact(SECRET), 1, 110, 10),
        lambda: put(db, "orchard", "fact", "a", fact(SECRET, reviewed=1), None, 100, 10),
        lambda: put(db, "orchard", "fact", SECRET, fact(SECRET), None, 100, 10),
    ]
    for attempt in attempts:
        with pytest.raises((ValueError, Conflict)) as caught:
            attempt()
        assert SECRET[:20] not in str(caught.value)


def test_conflict_says_which_revisions_disagreed(db):
    with pytest.raises(Conflict) as caught:
        put(db, "orchard", "fact", "a", fact(), 7, 101, 10)
    assert str(caught.value) == "revision changed: expected 7, current 1"
    assert (caught.value.expected, caught.value.current) == (7, 1)
    with pytest.raises(Conflict) as caught:
        put(db, "orchard", "fact", "a", fact(), 1, 110, 10)
    assert str(caught.value) == "fact 'a' expired at 110: purge it before creating it again"
