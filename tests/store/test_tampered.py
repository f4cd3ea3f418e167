"""A row changed behind the store's back is refused by get, never returned."""
import json
import sqlite3

import pytest

from workbook.store import connect, get, put

FACT = {"schema": 1, "text": "Fictional preference", "source": "note-1", "reviewed": False}


@pytest.fixture
def db():
    db = connect()
    put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    yield db
    db.close()


@pytest.mark.parametrize("column, value, message", [
    # INTEGER columns turn numeric text such as "7" into 7, so tamper with words.
    ("revision", "seven", "stored revision must be an int from 1 to 2**63-1, got str"),
    ("revision", 1.5, "stored revision must be an int from 1 to 2**63-1, got float"),
    ("revision", 0, "stored revision must be an int from 1 to 2**63-1, got 0"),
    ("expires", "later", "stored expires must be an int from 0 to 10**10+86400, got str"),
    ("expires", 200.5, "stored expires must be an int from 0 to 10**10+86400, got float"),
    ("body", b'{"schema": 1}', "stored body must be text, got blob"),
    ("body", 42, "payload must be a dict, got int"),  # TEXT affinity stores '42'
    ("body", "{", "stored body is not valid JSON (Expecting property name enclosed in double quotes: line 1, column 2)"),
    ("body", " " * 2049, "stored body is 2049 bytes; the limit is 2048"),
    ("body", "[" * 1000 + "]" * 1000, "payload must be a dict, got list"),
    ("body", '{"a":' * 250 + "1" + "}" * 250,
     "payload.schema must be the int 1, got no schema field"),
    ("body", json.dumps(FACT | {"schema": 2}), "payload.schema must be the int 1, got 2"),
    ("body", json.dumps(FACT | {"reviewed": "NaN"}), "fact.reviewed must be a bool, got str"),
    ("body", json.dumps(FACT).replace('"note-1"', "NaN"),
     "fact.source must be a str of 1 to 256 characters, got float"),
    ("body", json.dumps({"schema": 1, "step": 0, "items": []}),
     "fact payload must have exactly the fields reviewed, schema, source, text; "
     "missing: reviewed, source, text; extra: 'items', 'step'"),
])
def test_tampered_row_raises_value_error(db, column, value, message):
    db.execute(f"UPDATE records SET {column}=?", (value,))
    with pytest.raises(ValueError) as caught:
        get(db, "orchard", "fact", "a", 101)
    assert str(caught.value) == message


def test_body_within_2048_bytes_but_over_after_escaping_is_refused(db):
    # Raw UTF-8 snowmen fit in 2,048 bytes; escaped as \u2603 they do not.
    raw = json.dumps(FACT | {"text": "\u2603" * 256, "source": "\u2603" * 256},
                     ensure_ascii=False)
    assert len(raw.encode()) <= 2048
    db.execute("UPDATE records SET body=?", (raw,))
    with pytest.raises(ValueError, match="bytes as JSON; the limit is 2048"):
        get(db, "orchard", "fact", "a", 101)


def test_untampered_row_still_reads(db):
    assert get(db, "orchard", "fact", "a", 101)["value"] == FACT
