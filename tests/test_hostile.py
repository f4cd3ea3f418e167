"""Hostile input: any Python value in any argument, and rows tampered with behind the store's back.

Promises checked:
- every public function raises only ValueError or Conflict, whatever it is given, and a
  rejected call leaves the database file byte for byte as it was;
- get refuses a tampered row with ValueError, and no error message carries a fact's text;
- SQL-looking and quote-heavy text is stored and returned verbatim, and one tenant's
  operations never touch another tenant's rows.
"""
import collections
import decimal
import json
import math
import sqlite3
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from soak import scaled
from workbook.store import Conflict, connect, forget, get, identity, integer, payload, purge, put

FACT = {"schema": 1, "text": "Fictional preference", "source": "note-1", "reviewed": False}
FRAGMENTS = [
    "'; DROP TABLE records; --", "x' OR 1=1 --", "\" OR \"\"=\"", "orchard' --", "a; DELETE FROM sequence",
    "../other", "../../etc/passwd", "/dev/null", "C:\\Windows\\", ":memory:", "file:x.db?mode=rw",
    "orchard\x00", "orchard\n", " orchard", "ORCHARD", "a" * 33, "", "%s", "?", "NULL", "NaN",
    "\ud800", "\u2603" * 300, "fact\u200b", "checkpoint ", "Fact", "1e400", "-1", "True",
]
SPECIAL_NUMBERS = [0, 1, 2, 3, -1, 86400, 86401, 10**10, 10**10 + 1, 2**63 - 1, 2**63, -2**63,
                   10**100, 10**400, math.nan, math.inf, -math.inf, -0.0, 1.0, 100.0,
                   decimal.Decimal("100"), decimal.Decimal("NaN"), 100 + 0j]

leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from(SPECIAL_NUMBERS),
    st.floats(), st.complex_numbers(), st.decimals(), st.fractions(),
    st.text(), st.text(min_size=200, max_size=3000), st.binary(), st.sampled_from(FRAGMENTS),
    st.sampled_from(["orchard", "fact", "checkpoint", "a", "run-a"]),
    st.builds(object), st.just(Ellipsis), st.sampled_from([int, str, dict, print]),
    st.dates(),
)
containers = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.tuples(inner, inner), st.frozensets(st.integers() | st.text()),
    st.dictionaries(st.sampled_from(["schema", "text", "source", "reviewed", "step", "items"])
                    | st.text(max_size=8) | st.integers(), inner, max_size=6),
), max_leaves=12)
# Payload-shaped values: the right field names, anything (often right) inside them.
shaped = st.one_of(
    st.fixed_dictionaries({"schema": st.just(1) | leaves, "text": st.text() | containers,
                           "source": st.text() | leaves, "reviewed": st.booleans() | leaves}),
    st.fixed_dictionaries({"schema": st.just(1) | leaves, "step": st.integers(-1, 3) | leaves,
                           "items": st.lists(st.text() | leaves, max_size=10) | containers},
                          optional={"extra": containers}),
    st.builds(lambda fields: collections.OrderedDict(fields) | {"schema": 1},
              st.dictionaries(st.text(max_size=8), containers, max_size=4)),
    st.builds(lambda fields: collections.defaultdict(int, fields),
              st.dictionaries(st.sampled_from(["schema", "text", "source", "reviewed"]),
                              containers, max_size=4)),
)
hostile = st.one_of(containers, shaped)

# Every argument a caller supplies, by function. Not fuzzed: `db` (the connection the
# caller opened), connect's `path` (any string is a file name to SQLite) and integer's
# `low` and `high` (the caller's own constant bounds).
ARGUMENTS = {
    identity: ["tenant", "kind", "key"],
    integer: ["value", "name"],
    payload: ["kind", "value"],
    get: ["tenant", "kind", "key", "now"],
    put: ["tenant", "kind", "key", "value", "expected", "now", "ttl"],
    forget: ["tenant", "kind", "key", "expected"],
    purge: ["tenant", "now"],
}
USES_DB = {get, put, forget, purge}


class Store:
    """A file database with a few rows, shared by all examples of a test."""

    def __init__(self, folder):
        self.path = Path(folder) / "hostile.db"
        self.db = connect(self.path)
        self.revision = put(self.db, "orchard", "fact", "a", FACT, None, 100, 10)
        put(self.db, "harbour", "checkpoint", "a", {"schema": 1, "step": 0, "items": []},
            None, 100, 10)
        put(self.db, "orchard", "fact", "old", FACT, None, 90, 5)    # expired at 95

    def valid(self, function):
        """Arguments that the function accepts."""
        name = {"tenant": "orchard", "kind": "fact", "key": "a"}
        return {identity: name,
                integer: {"value": 5, "low": 0, "high": 10, "name": "value"},
                payload: {"kind": "fact", "value": FACT},
                get: name | {"now": 105},
                put: name | {"value": FACT, "expected": self.revision, "now": 105, "ttl": 10},
                forget: name | {"expected": self.revision},
                purge: {"tenant": "orchard", "now": 105}}[function]

    def call(self, function, arguments):
        """Call with `arguments`; return "accepted" or "rejected"; fail on anything else."""
        before = self.path.read_bytes()
        try:
            if function in USES_DB:
                result = function(self.db, **arguments)
            else:
                result = function(**arguments)
        except (ValueError, Conflict) as error:
            assert self.path.read_bytes() == before, f"rejected {error!r} but the file changed"
            assert not Path(f"{self.path}-journal").exists()
            assert not self.db.in_transaction
            return "rejected"
        if function is put:
            self.revision = result
        return "accepted"


@pytest.fixture(scope="module")
def store():
    with TemporaryDirectory() as folder:
        store = Store(folder)
        yield store
        store.db.close()


CASES = [(function, argument) for function, names in ARGUMENTS.items() for argument in names]


@pytest.mark.parametrize("function, argument", CASES,
                         ids=[f"{f.__name__}-{a}" for f, a in CASES])
@settings(max_examples=scaled(40, 500), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(value=hostile)
def test_any_value_in_one_argument(store, function, argument, value, figures):
    arguments = store.valid(function) | {argument: value}
    figures["hostile inputs: tried"] += 1
    figures[f"hostile inputs: {store.call(function, arguments)}"] += 1


@pytest.mark.parametrize("function", list(ARGUMENTS), ids=lambda f: f.__name__)
@settings(max_examples=scaled(40, 500), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_values_in_every_argument(store, function, data, figures):
    arguments = store.valid(function)
    for name in ARGUMENTS[function]:
        arguments[name] = data.draw(hostile, label=name)
    figures["hostile inputs: tried"] += 1
    figures[f"hostile inputs: {store.call(function, arguments)}"] += 1


def test_the_hostile_values_are_really_rejected(store):
    # Guard against a fuzz that only ever feeds values the store happens to accept.
    for function, argument, value in [(put, "ttl", math.nan), (get, "tenant", FRAGMENTS[0]),
                                      (forget, "expected", True), (purge, "now", 10**400),
                                      (put, "value", {"schema": 1, "step": 0, "items": [1]})]:
        assert store.call(function, store.valid(function) | {argument: value}) == "rejected"
    assert store.call(get, store.valid(get)) == "accepted"


# --- rows written behind the store's back --------------------------------------------

SECRET = "Fictional secret text 7f3a"
GOOD = json.dumps(FACT | {"text": SECRET}, sort_keys=True)
TAMPERED = {
    "malformed JSON": {"body": GOOD[:-1]},
    "trailing garbage": {"body": GOOD + " x"},
    "JSON array 1024 deep": {"body": "[" * 1024 + "]" * 1024},
    "JSON object 300 deep": {"body": '{"a":' * 300 + '"' + SECRET + '"' + "}" * 300},
    "NaN schema": {"body": GOOD.replace('"schema": 1', '"schema": NaN')},
    "Infinity reviewed": {"body": GOOD.replace('"reviewed": false', '"reviewed": Infinity')},
    "float schema": {"body": GOOD.replace('"schema": 1', '"schema": 1.0')},
    "huge number": {"body": GOOD.replace('"schema": 1', '"schema": 1e999')},
    "schema 2": {"body": GOOD.replace('"schema": 1', '"schema": 2')},
    "missing field": {"body": json.dumps({"schema": 1, "text": SECRET, "source": "x"})},
    "extra field": {"body": json.dumps(FACT | {"text": SECRET, "extra": SECRET})},
    "checkpoint body in a fact": {"body": json.dumps({"schema": 1, "step": 0, "items": [SECRET]})},
    "text too long": {"body": json.dumps(FACT | {"text": SECRET * 20})},
    "empty text": {"body": json.dumps(FACT | {"text": "", "source": SECRET})},
    "not an object": {"body": json.dumps([SECRET])},
    "JSON null": {"body": "null"},
    "empty body": {"body": ""},
    "BLOB body": {"body": GOOD.encode()},
    "number body": {"body": 42},
    "oversized body": {"body": json.dumps(FACT | {"text": SECRET}) + " " * 2048},
    "oversized once escaped": {"body": json.dumps(FACT | {"text": "\u2603" * 256,
                                                          "source": "\u2603" * 256},
                                                  ensure_ascii=False)},
    "text revision": {"revision": "seven"},
    "real revision": {"revision": 1.5},
    "zero revision": {"revision": 0},
    "negative revision": {"revision": -3},
    "revision past 2**63": {"revision": "9223372036854775808"},
    "BLOB revision": {"revision": b"\x01"},
    "text expiry": {"expires": "later"},
    "real expiry": {"expires": 200.5},
    "expiry past the largest deadline": {"expires": 10**10 + 86401},
    "BLOB expiry": {"expires": b"\xff"},
}


@pytest.mark.parametrize("change", TAMPERED.values(), ids=TAMPERED.keys())
def test_get_refuses_a_tampered_row_without_echoing_it(change):
    db = connect()
    put(db, "orchard", "fact", "a", FACT | {"text": SECRET}, None, 100, 10)
    for column, value in change.items():
        db.execute(f"UPDATE records SET {column}=?", (value,))
    with pytest.raises(ValueError) as caught:
        get(db, "orchard", "fact", "a", 101)
    assert SECRET not in str(caught.value)
    assert "Fictional" not in str(caught.value)


def test_get_refuses_a_body_that_is_not_utf8_without_echoing_it():
    db = connect()
    put(db, "orchard", "fact", "a", FACT | {"text": SECRET}, None, 100, 10)
    db.execute("UPDATE records SET body=CAST(? AS TEXT)", (GOOD.encode() + b"\xff",))
    try:
        get(db, "orchard", "fact", "a", 101)
    except ValueError as error:
        assert SECRET not in str(error)
    except Exception as error:
        raise AssertionError(f"get raised {type(error).__name__}: {error}") from None
    else:
        raise AssertionError("get returned a record whose body is not UTF-8")


column_values = st.one_of(st.integers(min_value=-2**63, max_value=2**63 - 1), st.floats(),
                          st.text(),
                          st.binary(), st.sampled_from([GOOD, "1", "100", "9e18", "1e400"]))
bodies = st.one_of(st.sampled_from([GOOD, GOOD.replace(SECRET, "\\ud800")]),
                   containers.map(lambda v: json.dumps(v, default=str)),
                   column_values)


@settings(max_examples=scaled(150, 3000), deadline=None)
@given(changes=st.dictionaries(st.sampled_from(["revision", "expires", "body"]),
                               column_values | bodies, min_size=1))
def test_get_of_any_tampered_row_returns_a_valid_record_or_raises_value_error(changes, figures):
    db = connect()
    put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    try:
        for column, value in changes.items():
            db.execute(f"UPDATE records SET {column}=?", (value,))
    except (OverflowError, UnicodeEncodeError, sqlite3.IntegrityError):
        assume(False)       # SQLite cannot store it (NaN becomes NULL, which NOT NULL refuses)
    figures["tampered rows read"] += 1
    try:
        record = get(db, "orchard", "fact", "a", 101)
    except ValueError:
        return
    if record is not None:  # whatever get returns must pass the write-side checks
        payload("fact", record["value"])
        integer(record["revision"], 1, 2**63 - 1)
        integer(record["expires"], 102, 10**10 + 86400)


@pytest.mark.parametrize("table, column, value", [("records", "expires", "later"),
                                                  ("sequence", "value", "seven")])
def test_put_over_a_tampered_row_raises_value_error(table, column, value):
    db = connect()
    revision = put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    db.execute(f"UPDATE {table} SET {column}=?", (value,))
    with pytest.raises(ValueError):
        put(db, "orchard", "fact", "a", FACT, revision, 101, 10)
    assert not db.in_transaction


# --- fact text never appears in an error ----------------------------------------------

@settings(max_examples=scaled(60, 1000), deadline=None)
@given(secret=st.text(min_size=1, max_size=60).map(lambda s: "SECRET" + s))
def test_no_error_message_contains_the_fact_text(secret):
    db = connect()
    value = FACT | {"text": secret}
    revision = put(db, "orchard", "fact", "a", value, None, 100, 10)
    attempts = [
        lambda: put(db, "orchard", "fact", "a", value, None, 101, 10),          # Conflict
        lambda: put(db, "orchard", "fact", "a", value, revision + 5, 101, 10),  # Conflict
        lambda: put(db, "orchard", "fact", "a", value, revision, 110, 10),      # expired
        lambda: put(db, "orchard", "fact", "b", value | {"extra": 1}, None, 100, 10),
        lambda: put(db, "orchard", "fact", "b", value | {"reviewed": secret}, None, 100, 10),
        lambda: put(db, "orchard", "fact", "b", value | {"text": secret * 50}, None, 100, 10),
        lambda: put(db, "orchard", "fact", "b", value | {"text": (secret + "\u2603" * 256)[:256],
                                                         "source": "\u2603" * 256}, None, 100, 10),
        lambda: put(db, "orchard", "checkpoint", "b", value, None, 100, 10),
        lambda: put(db, "orchard", "fact", "b", value, None, 100, 0),
        lambda: payload("fact", value | {"schema": secret}),
        lambda: payload("checkpoint", {"schema": 1, "step": 0, "items": [secret] * 9}),
        lambda: payload("checkpoint", {"schema": 1, "step": secret, "items": []}),
    ]
    for attempt in attempts:
        with pytest.raises((ValueError, Conflict)) as caught:
            attempt()
        assert secret not in str(caught.value)
    for body in (json.dumps(value)[:-1], json.dumps(value | {"schema": 2}),
                 json.dumps(value) + " " * 2048, json.dumps([value])):
        db.execute("UPDATE records SET body=?", (body,))
        with pytest.raises(ValueError) as caught:
            get(db, "orchard", "fact", "a", 101)
        assert secret not in str(caught.value)


# --- text is data; tenants stay apart -------------------------------------------------

sql_text = st.one_of(st.sampled_from(FRAGMENTS),
                     st.text(alphabet=st.sampled_from("'\";-/\\*%_?:()[]{}=<> \t\n\x00abcXYZ\u2603"),
                             min_size=1, max_size=256),
                     st.text(min_size=1, max_size=256))


@settings(max_examples=scaled(60, 1000), deadline=None)
@given(texts=st.lists(sql_text, min_size=1, max_size=6), data=st.data())
def test_sql_looking_text_is_stored_verbatim_and_tenants_stay_apart(texts, data):
    db = connect()
    theirs = put(db, "harbour", "fact", "a", FACT, None, 100, 5)
    put(db, "harbour", "checkpoint", "a", {"schema": 1, "step": 1, "items": ["x"]}, None, 100, 5)
    harbour = db.execute("SELECT * FROM records WHERE tenant='harbour'").fetchall()
    written = 0
    for number, text in enumerate(texts):
        value = data.draw(st.sampled_from([
            FACT | {"text": text}, FACT | {"source": text},
            {"schema": 1, "step": 2, "items": [text, text]}]))
        kind = "checkpoint" if "step" in value else "fact"
        try:
            payload(kind, value)
        except ValueError:
            continue        # empty, too long or too big: rejection is tested elsewhere
        revision = put(db, "orchard", kind, f"k{number}", value, None, 100, 5)
        written += 1
        record = get(db, "orchard", kind, f"k{number}", 104)
        assert record == {"revision": revision, "expires": 105, "value": value}
        assert get(db, "harbour", kind, f"k{number}", 104) is None
        assert not forget(db, "harbour", kind, f"k{number}", revision)
    assert not forget(db, "orchard", "fact", "a", theirs)
    assert purge(db, "orchard", 105) == written
    assert db.execute("SELECT * FROM records WHERE tenant='harbour'").fetchall() == harbour
    assert db.execute("SELECT count(*) FROM records").fetchone()[0] == 2
