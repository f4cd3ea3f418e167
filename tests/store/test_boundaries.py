"""Exact boundaries and messages that mutation testing (make mutate) found unchecked.

Each test here was written to kill a mutant that survived every other test: a limit
moved by one, a field name changed in a message, the lock wait changed.
"""
import json
import sqlite3
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest

from workbook.store import (Conflict, connect, forget, get, identity, integer, payload,
                            purge, put)

FACT = {"schema": 1, "text": "Fictional preference", "source": "note-1", "reviewed": False}
NAME_RULE = "must be a lowercase letter followed by up to 31 lowercase letters, digits or hyphens"


def message(call, *arguments):
    with pytest.raises(ValueError) as caught:
        call(*arguments)
    return str(caught.value)


def test_a_locked_database_is_waited_for_about_one_second():
    with TemporaryDirectory() as folder:
        path = Path(folder) / "locked.db"
        holder, waiter = connect(path), connect(path)
        holder.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        with pytest.raises(sqlite3.OperationalError, match="database is locked"):
            put(waiter, "orchard", "fact", "a", FACT, None, 100, 10)
        waited = time.monotonic() - started
        holder.execute("ROLLBACK")
        assert not waiter.in_transaction
        assert put(waiter, "orchard", "fact", "a", FACT, None, 100, 10) == 1
        holder.close()
        waiter.close()
    assert 0.9 <= waited < 1.9


def test_every_operation_names_now_in_its_message():
    db = connect()
    said = "now must be an int from 0 to 10**10, got -1"
    assert message(get, db, "orchard", "fact", "a", -1) == said
    assert message(put, db, "orchard", "fact", "a", FACT, None, -1, 10) == said
    assert message(purge, db, "orchard", -1) == said
    assert message(forget, db, "orchard", "fact", "a", -1) == (
        "expected must be an int from 1 to 2**63-1, got -1")


def test_integer_names_the_value_when_no_name_is_given():
    assert message(integer, -1, 0, 10) == "value must be an int from 0 to 10, got -1"


def test_the_last_revision_there_is():
    db = connect()
    db.execute("UPDATE sequence SET value=?", (2**63 - 1,))
    assert message(put, db, "orchard", "fact", "a", FACT, None, 100, 10) == (
        "stored counter must be an int from 0 to 2**63-2, got 9223372036854775807")
    assert db.execute("SELECT count(*) FROM records").fetchone()[0] == 0


def test_ints_from_10_to_the_20_are_described_not_printed():
    assert message(integer, 10**20 - 1, 0, 1).endswith("got 99999999999999999999")
    assert message(integer, 10**20, 0, 1).endswith("got a very large int")
    assert message(integer, -10**20, 0, 1).endswith("got a very large int")


def test_strings_up_to_40_characters_are_shown_longer_ones_counted():
    assert message(identity, "a" * 40, "fact", "a") == f"tenant {NAME_RULE}, got '{'a' * 40}'"
    assert message(identity, "a" * 41, "fact", "a") == (
        f"tenant {NAME_RULE}, got a str of 41 characters")
    assert message(identity, "orchard", "fact", 5) == f"key {NAME_RULE}, got int"
    assert message(identity, "orchard", None, "a") == "kind must be 'checkpoint' or 'fact', got NoneType"


def test_missing_fields_say_there_is_nothing_extra():
    incomplete = {"schema": 1, "text": "x", "source": "y"}
    assert message(payload, "fact", incomplete) == (
        "fact payload must have exactly the fields reviewed, schema, source, text; "
        "missing: reviewed; extra: none")


def test_items_that_are_not_a_list_are_named_by_type():
    for items, got in ((None, "NoneType"), ("abc", "str"), (("a",), "tuple")):
        assert message(payload, "checkpoint", {"schema": 1, "step": 0, "items": items}) == (
            f"checkpoint.items must be a list of at most 8 strings, got {got}")


def test_payload_of_an_unknown_kind():
    assert message(payload, "facts", {"schema": 1}) == (
        "kind must be 'checkpoint' or 'fact', got 'facts'")


def fact_of_size(size):
    """A valid-looking fact whose JSON (as the store writes it) is exactly `size` bytes."""
    value = FACT | {"text": "\u2603" * 256, "source": ""}
    while len(json.dumps(value, sort_keys=True)) + 6 <= size:
        value["source"] += "\u2603"                 # 6 bytes as \u2603
    while len(json.dumps(value, sort_keys=True)) < size:
        value["source"] += "x"
    assert len(json.dumps(value, sort_keys=True)) == size and len(value["source"]) <= 256
    return value


def test_a_payload_of_exactly_2048_bytes_is_accepted_and_2049_refused():
    db = connect()
    assert put(db, "orchard", "fact", "a", fact_of_size(2048), None, 100, 10) == 1
    assert message(put, db, "orchard", "fact", "b", fact_of_size(2049), None, 100, 10) == (
        "fact payload is 2049 bytes as JSON; the limit is 2048")


def test_a_stored_body_of_exactly_2048_bytes_is_read_and_2049_refused():
    db = connect()
    put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    body = json.dumps(FACT)
    db.execute("UPDATE records SET body=?", (body + " " * (2048 - len(body)),))
    assert get(db, "orchard", "fact", "a", 101)["value"] == FACT
    db.execute("UPDATE records SET body=?", (body + " " * (2049 - len(body)),))
    assert message(get, db, "orchard", "fact", "a", 101) == (
        "stored body is 2049 bytes; the limit is 2048")


# Found by the make mutate run after put began checking what it reads (stored revision,
# expiry and counter) and get began decoding the body's bytes itself.

@pytest.mark.parametrize("column, value, said", [
    ("revision", "seven", "stored revision must be an int from 1 to 2**63-1, got str"),
    ("revision", 0, "stored revision must be an int from 1 to 2**63-1, got 0"),
    ("expires", "later", "stored expires must be an int from 0 to 10**10+86400, got str"),
    ("expires", 10**10 + 86401,
     "stored expires must be an int from 0 to 10**10+86400, got 10000086401"),
])
def test_put_names_the_stored_column_it_refuses(column, value, said):
    db = connect()
    revision = put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    db.execute(f"UPDATE records SET {column}=?", (value,))
    assert message(put, db, "orchard", "fact", "a", FACT, revision, 101, 10) == said
    assert not db.in_transaction


def test_put_accepts_stored_expiries_from_0_to_the_last_deadline():
    db = connect()
    revision = put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    db.execute("UPDATE records SET expires=0")
    with pytest.raises(Conflict, match="expired at 0"):
        put(db, "orchard", "fact", "a", FACT, revision, 101, 10)
    db.execute("UPDATE records SET expires=?", (10**10 + 86400,))
    assert put(db, "orchard", "fact", "a", FACT, revision, 101, 10) == revision + 1


def test_a_record_at_the_last_revision_still_reports_a_conflict():
    db = connect()
    db.execute("UPDATE sequence SET value=?", (2**63 - 2,))
    assert put(db, "orchard", "fact", "a", FACT, None, 100, 10) == 2**63 - 1
    with pytest.raises(Conflict) as caught:
        put(db, "orchard", "fact", "a", FACT, None, 101, 10)
    assert caught.value.current == 2**63 - 1


def test_put_without_a_counter_row_says_so():
    db = connect()
    db.execute("DELETE FROM sequence")
    assert message(put, db, "orchard", "fact", "a", FACT, None, 100, 10) == (
        "the sequence table has no counter row")
    assert db.execute("SELECT count(*) FROM records").fetchone()[0] == 0


def test_a_body_that_is_not_utf8_is_refused_with_its_own_message():
    db = connect()
    put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    db.execute("UPDATE records SET body=CAST(? AS TEXT)", (json.dumps(FACT).encode() + b"\xff",))
    assert message(get, db, "orchard", "fact", "a", 101) == "stored body is not valid UTF-8"
