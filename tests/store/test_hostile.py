"""Hostile input: any Python value in any argument, and rows tampered with behind the store's back.

Promises checked:
- every public function raises only ValueError or Conflict, whatever it is given, and a
  rejected call leaves the database file byte for byte as it was;
- get refuses a tampered row with ValueError, and no error message carries a fact's text;
- SQL-looking and quote-heavy text is stored and returned verbatim, and one tenant's
  operations never touch another tenant's rows.

Every test takes the `backend` fixture. On PostgreSQL "byte for byte" becomes every row and
the counter as the owner sees them, and a tampered value reaches a column only if the
column's type accepts its text form (backends.PostgresBackend.tamper): a bigint column
refuses "seven" outright, which SQLite would store.
"""
import collections
import decimal
import json
import math
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from soak import scaled
from workbook.store import Conflict, identity, integer, payload

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
    "identity": ["tenant", "kind", "key"],
    "integer": ["value", "name"],
    "payload": ["kind", "value"],
    "get": ["tenant", "kind", "key", "now"],
    "put": ["tenant", "kind", "key", "value", "expected", "now", "ttl"],
    "forget": ["tenant", "kind", "key", "expected"],
    "purge": ["tenant", "now"],
}
USES_DB = {"get", "put", "forget", "purge"}


class Store:
    """A database with a few rows, on one backend, shared by all examples of a test."""

    def __init__(self, backend, folder):
        self.backend = backend
        self.db = backend.connect(Path(folder) / "hostile.db")
        self.revision = backend.put(self.db, "orchard", "fact", "a", FACT, None, 100, 10)
        backend.put(self.db, "harbour", "checkpoint", "a",
                    {"schema": 1, "step": 0, "items": []}, None, 100, 10)
        backend.put(self.db, "orchard", "fact", "old", FACT, None, 90, 5)    # expired at 95

    def valid(self, function):
        """Arguments that the function accepts."""
        name = {"tenant": "orchard", "kind": "fact", "key": "a"}
        return {"identity": name,
                "integer": {"value": 5, "low": 0, "high": 10, "name": "value"},
                "payload": {"kind": "fact", "value": FACT},
                "get": name | {"now": 105},
                "put": name | {"value": FACT, "expected": self.revision, "now": 105, "ttl": 10},
                "forget": name | {"expected": self.revision},
                "purge": {"tenant": "orchard", "now": 105}}[function]

    def call(self, function, arguments):
        """Call with `arguments`; return "accepted" or "rejected"; fail on anything else."""
        before = self.backend.fingerprint(self.db)
        try:
            if function in USES_DB:
                result = getattr(self.backend.store, function)(self.db, **arguments)
            else:
                result = getattr(self.backend.store, function)(**arguments)
        except (ValueError, Conflict) as error:
            assert self.backend.fingerprint(self.db) == before, \
                f"rejected {error!r} but the store changed"
            assert not self.db.in_transaction
            return "rejected"
        if function == "put":
            self.revision = result
        return "accepted"


@pytest.fixture(scope="module")
def store(backend):
    with TemporaryDirectory() as folder:
        store = Store(backend, folder)
        yield store
        store.db.close()


CASES = [(function, argument) for function, names in ARGUMENTS.items() for argument in names]


def examples(backend, count):
    """Hypothesis settings for `count` examples, this backend's share of them."""
    return settings(max_examples=backend.size(count), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("function, argument", CASES, ids=[f"{f}-{a}" for f, a in CASES])
def test_any_value_in_one_argument(store, function, argument, figures):
    @examples(store.backend, scaled(40, 500))
    @given(value=hostile)
    def check(value):
        arguments = store.valid(function) | {argument: value}
        figures[store.backend.figure("hostile inputs: tried")] += 1
        figures[store.backend.figure(f"hostile inputs: {store.call(function, arguments)}")] += 1

    check()


@pytest.mark.parametrize("function", list(ARGUMENTS))
def test_any_values_in_every_argument(store, function, figures):
    @examples(store.backend, scaled(40, 500))
    @given(data=st.data())
    def check(data):
        arguments = store.valid(function)
        for name in ARGUMENTS[function]:
            arguments[name] = data.draw(hostile, label=name)
        figures[store.backend.figure("hostile inputs: tried")] += 1
        figures[store.backend.figure(f"hostile inputs: {store.call(function, arguments)}")] += 1

    check()


def test_the_hostile_values_are_really_rejected(store):
    # Guard against a fuzz that only ever feeds values the store happens to accept.
    for function, argument, value in [("put", "ttl", math.nan), ("get", "tenant", FRAGMENTS[0]),
                                      ("forget", "expected", True), ("purge", "now", 10**400),
                                      ("put", "value", {"schema": 1, "step": 0, "items": [1]})]:
        assert store.call(function, store.valid(function) | {argument: value}) == "rejected"
    assert store.call("get", store.valid("get")) == "accepted"


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


# What PostgreSQL's column types refuse to store at all (the rest reach the row, as on SQLite).
REFUSED_BY_POSTGRES = {"text revision", "real revision", "revision past 2**63", "BLOB revision",
                       "text expiry", "real expiry", "BLOB expiry"}


@pytest.mark.parametrize("change", TAMPERED.values(), ids=TAMPERED.keys())
def test_get_refuses_a_tampered_row_without_echoing_it(backend, change):
    db = backend.connect()
    written = FACT | {"text": SECRET}
    revision = backend.put(db, "orchard", "fact", "a", written, None, 100, 10)
    stored = [backend.tamper(db, column, value) for column, value in change.items()]
    case = next(name for name, known in TAMPERED.items() if known is change)
    if not all(stored):     # the column's type refused the value: the row is as written
        assert backend.name == "postgres" and case in REFUSED_BY_POSTGRES, case
        assert backend.get(db, "orchard", "fact", "a", 101) == {
            "revision": revision, "expires": 110, "value": written}
        return
    assert backend.name == "sqlite" or case not in REFUSED_BY_POSTGRES, case
    with pytest.raises(ValueError) as caught:
        backend.get(db, "orchard", "fact", "a", 101)
    assert SECRET not in str(caught.value)
    assert "Fictional" not in str(caught.value)
    db.close()


def test_get_refuses_a_body_that_is_not_utf8_without_echoing_it(backend):
    db = backend.connect()
    backend.put(db, "orchard", "fact", "a", FACT | {"text": SECRET}, None, 100, 10)
    if not backend.tamper_body_bytes(db, GOOD.encode() + b"\xff"):
        # PostgreSQL keeps text valid UTF-8: such a body cannot be stored at all.
        assert backend.name == "postgres"
        assert backend.get(db, "orchard", "fact", "a", 101)["value"]["text"] == SECRET
        return
    try:
        backend.get(db, "orchard", "fact", "a", 101)
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


def test_get_of_any_tampered_row_returns_a_valid_record_or_raises_value_error(backend, figures):
    db = backend.connect()
    backend.put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    good = backend.physical_rows(db)

    @examples(backend, scaled(150, 3000))
    @given(changes=st.dictionaries(st.sampled_from(["revision", "expires", "body"]),
                                   column_values | bodies, min_size=1))
    def check(changes):
        for column, value in zip(("revision", "expires", "body"), good[0][3:]):
            backend.tamper(db, column, value)       # start again from the good row
        # SQLite cannot store some values (NaN becomes NULL, which NOT NULL refuses);
        # PostgreSQL's column types refuse more.
        assume(all(backend.tamper(db, column, value) for column, value in changes.items()))
        figures[backend.figure("tampered rows read")] += 1
        try:
            record = backend.get(db, "orchard", "fact", "a", 101)
        except ValueError:
            return
        if record is not None:  # whatever get returns must pass the write-side checks
            payload("fact", record["value"])
            integer(record["revision"], 1, 2**63 - 1)
            integer(record["expires"], 102, 10**10 + 86400)

    check()
    db.close()


@pytest.mark.parametrize("table, column, value", [("records", "expires", "later"),
                                                  ("sequence", "value", "seven"),
                                                  ("records", "expires", -1),
                                                  ("sequence", "value", -1)])
def test_put_over_a_tampered_row_raises_value_error(backend, table, column, value):
    db = backend.connect()
    revision = backend.put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    if not backend.tamper(db, column, value, table=table):
        assert backend.name == "postgres" and isinstance(value, str)   # a bigint refuses text
        return
    with pytest.raises(ValueError):
        backend.put(db, "orchard", "fact", "a", FACT, revision, 101, 10)
    assert not db.in_transaction
    db.close()


# --- fact text never appears in an error ----------------------------------------------

def test_no_error_message_contains_the_fact_text(backend):
    db = backend.connect()

    @examples(backend, scaled(60, 1000))
    @given(secret=st.text(min_size=1, max_size=60).map(lambda s: "SECRET" + s))
    def check(secret):
        for row in backend.physical_rows(db):   # every example starts from an empty store
            assert backend.forget(db, *row[:4])
        no_secret_in_errors(backend, db, secret)

    check()
    db.close()


def no_secret_in_errors(backend, db, secret):
    put, get, payload = backend.put, backend.get, backend.store.payload
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
        assert backend.tamper(db, "body", body)
        with pytest.raises(ValueError) as caught:
            get(db, "orchard", "fact", "a", 101)
        assert secret not in str(caught.value)


# --- text is data; tenants stay apart -------------------------------------------------

sql_text = st.one_of(st.sampled_from(FRAGMENTS),
                     st.text(alphabet=st.sampled_from("'\";-/\\*%_?:()[]{}=<> \t\n\x00abcXYZ\u2603"),
                             min_size=1, max_size=256),
                     st.text(min_size=1, max_size=256))


def test_sql_looking_text_is_stored_verbatim_and_tenants_stay_apart(backend):
    db = backend.connect()

    @examples(backend, scaled(60, 1000))
    @given(texts=st.lists(sql_text, min_size=1, max_size=6), data=st.data())
    def check(texts, data):
        for row in backend.physical_rows(db):   # every example starts from an empty store
            assert backend.forget(db, *row[:4])
        text_is_data(backend, db, texts, data)

    check()
    db.close()


def text_is_data(backend, db, texts, data):
    put, get, forget, purge = backend.put, backend.get, backend.forget, backend.purge
    theirs = put(db, "harbour", "fact", "a", FACT, None, 100, 5)
    put(db, "harbour", "checkpoint", "a", {"schema": 1, "step": 1, "items": ["x"]}, None, 100, 5)
    harbour = [row for row in backend.physical_rows(db) if row[0] == "harbour"]
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
    assert [row for row in backend.physical_rows(db) if row[0] == "harbour"] == harbour
    assert len(backend.physical_rows(db)) == 2


def test_the_examples_do_not_depend_on_which_modules_are_loaded(tmp_path, monkeypatch):
    # Hypothesis would otherwise mix literals of loaded local modules into its examples
    # (tests/conftest.py says why that made the counts above drift): load one, then ask the
    # function Hypothesis takes those literals from.
    import importlib

    from hypothesis.internal.conjecture import providers

    literal = "zq-literal-of-a-module-just-loaded"
    (tmp_path / "freshly_loaded.py").write_text(f"NAME = {literal!r}\nLIMIT = 987654321\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("freshly_loaded")
    constants = providers._get_local_constants()
    assert literal not in constants.strings and 987654321 not in constants.integers
    assert len(constants.strings) == len(constants.integers) == 0


# --- poison rows: values that answer the checks one way and the encoder another ----------

class LyingLength(str):
    def __len__(self):
        return 1


class HidingDict(dict):
    """Iterates, and answers `in`, as if its field "extra" were not there."""

    def __iter__(self):
        return (name for name in dict.__iter__(self) if name != "extra")

    def __contains__(self, name):
        return name != "extra" and dict.__contains__(self, name)

    def __len__(self):
        return dict.__len__(self) - 1


class Posing(str):
    """A str that compares and hashes as `pose`, whatever it really holds."""

    def __new__(cls, really, pose):
        posing = super().__new__(cls, really)
        posing.pose = pose
        return posing

    def __eq__(self, other):
        return other == self.pose

    def __hash__(self):
        return hash(self.pose)


class HidingList(list):
    def __iter__(self):
        return iter(list.__getitem__(self, slice(0, 1)))

    def __len__(self):
        return 1


POISON = {
    "a str whose len() lies": ("fact", FACT | {"text": LyingLength("x" * 300)}),
    "a dict that hides a field": ("fact", HidingDict(FACT | {"extra": "hidden"})),
    "a field name posing as another": (
        "fact", {"schema": 1, Posing("txt", "text"): "Fictional", "source": "note-1", "reviewed": False}),
    "a list that hides its items": (
        "checkpoint", {"schema": 1, "step": 0, "items": HidingList(["a"] * 9 + [7])}),
    "a kind posing as fact": (Posing("note", "fact"), FACT),
}


@pytest.mark.parametrize("case", POISON)
def test_a_value_that_lies_to_the_checks_is_refused_and_nothing_is_written(backend, case,
                                                                          tmp_path):
    kind, value = POISON[case]
    db = backend.connect(tmp_path / "poison.db")
    backend.put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    before = backend.fingerprint(db)
    with pytest.raises(ValueError):
        backend.put(db, "orchard", kind, "b", value, None, 100, 10)
    assert backend.fingerprint(db) == before
    assert backend.get(db, "orchard", "fact", "a", 101)["value"] == FACT
    db.close()


SURROGATES = {
    "two lone surrogates that json would read back as one character":
        ("fact", FACT | {"text": "\ud800\udc00"}, "fact.text"),
    "a lone high surrogate": ("fact", FACT | {"source": "note-\ud800"}, "fact.source"),
    "a lone low surrogate in an item": (
        "checkpoint", {"schema": 1, "step": 0, "items": ["a", "\udfff b"]}, r"checkpoint.items\[1\]"),
}


@pytest.mark.parametrize("case", SURROGATES)
def test_a_surrogate_code_point_is_refused_naming_the_field_and_nothing_is_written(
        backend, case, tmp_path):
    """A surrogate is no character and has no UTF-8 form: what is written must be what is read."""
    kind, value, field = SURROGATES[case]
    db = backend.connect(tmp_path / "surrogates.db")
    backend.put(db, "orchard", "fact", "a", FACT, None, 100, 10)
    before = backend.fingerprint(db)
    with pytest.raises(ValueError, match=f"^{field} .*surrogate") as caught:
        backend.put(db, "orchard", kind, "b", value, None, 100, 10)
    assert "\\ud" not in str(caught.value).lower() and "\\udc" not in repr(caught.value).lower()
    assert backend.fingerprint(db) == before
    assert backend.put(db, "orchard", "fact", "b", FACT | {"text": "\U00010000 is one character"},
                       None, 100, 10) == 2
    assert backend.get(db, "orchard", "fact", "b", 101)["value"]["text"] == \
        "\U00010000 is one character"
    db.close()
