"""The store reads and encodes as the specification's code does, on rows and payloads built to
find a difference: odd JSON a file may hold, bodies at the byte limit, escapes of every kind.

`get` must refuse (ValueError) every stored row the specification's `get` refuses, and return
what it returns for every row it accepts. The store is stricter in two ways only: a revision or
deadline that is not an int in range is refused (chapter 2), and so is a surrogate code point,
which has no UTF-8 form (chapter 1). `payload` must give the very bytes the specification's
`json.dumps(value, sort_keys=True, ensure_ascii=True)` gives, or refuse what it refuses.
"""
import json
import random

import pytest

from workbook import store
from workbook.specification import store as spec

FACT = {"schema": 1, "text": "Fictional team likes checklists.",
        "source": "workshop-note-1", "reviewed": False}
CHECKPOINT = {"schema": 1, "step": 2, "items": ["collected", "drafted"]}
COMPACT = {"separators": (",", ":"), "sort_keys": True}
NOW = 100


class AsText(bytes):
    """Bytes stored with the TEXT type (CAST), as a damaged file may hold them."""


def compact_checkpoint(length):
    """An 8-item checkpoint whose compact JSON is `length` bytes (canonical: 12 more)."""
    chars = length - len(json.dumps({"schema": 1, "step": 0, "items": [""] * 8}, **COMPACT))
    sizes = [chars // 8 + (1 if i < chars % 8 else 0) for i in range(8)]
    body = json.dumps({"schema": 1, "step": 0, "items": ["a" * n for n in sizes]}, **COMPACT)
    assert len(body) == length
    return body


def escaped_fact(length):
    """A fact whose canonical, all-ASCII JSON is exactly `length` bytes (\\u0001 escapes)."""
    room = length - len(json.dumps({**FACT, "text": "", "source": ""}, sort_keys=True))
    text_escapes, rest = divmod(min(room, 256 * 6), 6)
    text = "\x01" * text_escapes + "a" * rest
    left = room - len(json.dumps(text)) + 2
    source = "\x01" * (left // 6)
    source += "a" * (left - 6 * len(source))
    body = json.dumps({**FACT, "text": text, "source": source}, sort_keys=True)
    assert len(body) == length
    return body


def stored_rows():
    """(label, kind, revision, expires, body): rows a get may meet in a file."""
    fact, cp = json.dumps(FACT, sort_keys=True), json.dumps(CHECKPOINT, sort_keys=True)
    rows = [
        ("canonical fact", "fact", 5, 200, fact),
        ("canonical checkpoint", "checkpoint", 5, 200, cp),
        ("compact fact", "fact", 5, 200, json.dumps(FACT, **COMPACT)),
        ("indented fact", "fact", 5, 200, json.dumps(FACT, indent=2)),
        ("leading space", "fact", 5, 200, " " + fact),
        ("trailing space", "fact", 5, 200, fact + " \n"),
        ("trailing data", "fact", 5, 200, fact + "x"),
        ("two documents", "fact", 5, 200, fact + fact),
        ("truncated", "fact", 5, 200, fact[:-1]),
        ("empty", "fact", 5, 200, ""),
        ("null", "fact", 5, 200, "null"),
        ("list", "fact", 5, 200, "[]"),
        ("string", "fact", 5, 200, '"text"'),
        ("deep nesting", "fact", 5, 200, "[" * 100_000),
        ("spaces over limit", "fact", 5, 200, " " * 2049),
        ("blob body", "fact", 5, 200, b"{}"),
        ("invalid UTF-8 as text", "fact", 5, 200, AsText(b"\xff" + fact.encode())),
        ("lone surrogate bytes as text", "fact", 5, 200,
         AsText(fact.replace("Fictional", "\ud800").encode("utf-8", "surrogatepass"))),
        ("integer body", "fact", 5, 200, 7),
        ("NUL inside", "fact", 5, 200, AsText(fact.encode() + b"\x00")),
        ("fact read as checkpoint", "checkpoint", 5, 200, fact),
        ("duplicate keys", "fact", 5, 200, '{"schema": 2, ' + fact[1:]),
        ("escaped letters", "fact", 5, 200, fact.replace("F", "\\u0046")),
        ("escaped slash", "fact", 5, 200, fact.replace("-", "\\/")),
        ("surrogate pair escape", "fact", 5, 200,
         json.dumps({**FACT, "text": "\U0001F600" * 50}, sort_keys=True)),
        ("lone surrogate escape", "fact", 5, 200, fact.replace("Fictional", "\\ud800")),
        ("DEL raw, fits re-encoded", "fact", 5, 200,
         json.dumps({**FACT, "text": "\x7f" * 100}, ensure_ascii=False)),
        ("DEL raw, over re-encoded", "fact", 5, 200,
         json.dumps({**FACT, "text": "\x7f" * 256, "source": "\x7f" * 256},
                    ensure_ascii=False, **COMPACT)),
        ("non-ASCII raw, fits", "fact", 5, 200,
         json.dumps({**FACT, "text": "\u00e9" * 200}, ensure_ascii=False)),
        ("non-ASCII raw, over re-encoded", "fact", 5, 200,
         json.dumps({**FACT, "text": "\u2603" * 256, "source": "\u2603" * 256},
                    ensure_ascii=False, **COMPACT)),
        ("astral raw", "fact", 5, 200,
         json.dumps({**FACT, "text": "\U0001F600" * 100}, ensure_ascii=False)),
        ("canonical 2048 bytes", "fact", 5, 200, escaped_fact(2048)),
        ("canonical 2049 bytes", "fact", 5, 200, escaped_fact(2049)),
        ("revision as text", "fact", "five", 200, fact),
        ("revision as real", "fact", 5.5, 200, fact),
        ("expires as text", "fact", 5, "later", fact),
        ("expires over bound", "fact", 5, 10**10 + 86401, fact),
        ("revision zero", "fact", 0, 200, fact),
    ]
    rows += [(f"compact checkpoint {length} bytes", "checkpoint", 5, 200,
              compact_checkpoint(length)) for length in range(2030, 2050)]
    for change in ({"schema": 2}, {"schema": True}, {"schema": 1.0}, {"extra": 1},
                   {"reviewed": "yes"}, {"reviewed": 0}, {"text": ""}, {"text": "x" * 257},
                   {"source": 7}, {"text": None}):
        rows.append((f"fact with {change}", "fact", 5, 200,
                     json.dumps({**FACT, **change}, sort_keys=True)))
    rows.append(("fact without source", "fact", 5, 200,
                 json.dumps({k: v for k, v in FACT.items() if k != "source"})))
    for change in ({"step": 3}, {"step": True}, {"step": -1}, {"items": ["a"] * 9},
                   {"items": "a"}, {"items": [1]}, {"items": [""]}, {"items": None}):
        rows.append((f"checkpoint with {change}", "checkpoint", 5, 200,
                     json.dumps({**CHECKPOINT, **change}, sort_keys=True)))
    return rows


# Stored rows the store refuses although the specification's get returns them.
STRICTER = {"lone surrogate escape": "surrogate code point"}


def outcome(call):
    try:
        return "returned", call()
    except Exception as error:  # noqa: BLE001 - which exception is part of what is compared
        return "raised", error


def read(implementation, row):
    """What implementation.get answers for `row`, laid straight into its table."""
    _, kind, revision, expires, body = row
    db = implementation.connect(":memory:")
    try:
        value = "CAST(? AS TEXT)" if isinstance(body, AsText) else "?"
        db.execute(f"INSERT INTO records VALUES (?, ?, ?, ?, ?, {value})",
                   ("orchard", kind, "k", revision, expires,
                    bytes(body) if isinstance(body, AsText) else body))
        return outcome(lambda: implementation.get(db, "orchard", kind, "k", NOW))
    finally:
        db.close()


@pytest.mark.parametrize("row", stored_rows(), ids=[row[0] for row in stored_rows()])
def test_get_refuses_what_the_specification_refuses_and_returns_what_it_returns(row):
    label, _, revision, expires, _ = row
    ours, theirs = read(store, row), read(spec, row)
    assert ours[1] is not None, "the row was not found: the test row is broken"
    in_range = type(revision) is int and type(expires) is int and 1 <= revision \
        and expires <= 10**10 + 86400
    if theirs[0] == "returned" and in_range and label not in STRICTER:
        assert ours == theirs
    else:
        assert ours[0] == "raised" and type(ours[1]) is ValueError, ours
        assert STRICTER.get(label, "") in str(ours[1])


# Strings from pools that stress the encoder: quotes and backslashes, control characters, DEL,
# non-ASCII, astral characters (escaped as surrogate pairs) and lone surrogates.
ALPHABET = ("abc xyz-_/", "\"\\", "\x00\x01\x08\t\n\x0c\r\x1f", "\x7f", "\u00e9\u2603",
            "\U0001F600", "\ud800\udfff")
SURROGATES = set("\ud800\udfff")


def generated(rng):
    def string():
        pools = "".join(rng.sample(ALPHABET, rng.randint(1, 3)))
        return "".join(rng.choices(pools, k=rng.choice((0, 1, 2, 5, 40, 255, 256, 257))))

    if rng.random() < 0.5:
        kind, value = "fact", {"schema": 1, "text": string(), "source": string(),
                               "reviewed": rng.choice((True, False))}
    else:
        kind, value = "checkpoint", {"schema": 1, "step": rng.randint(0, 2),
                                     "items": [string() for _ in range(rng.choice((0, 1, 3, 8, 9)))]}
    if rng.random() < 0.1:
        value[rng.choice(sorted(value))] = rng.choice((None, True, 1, 1.0, "1", [], {}, -1, 3))
    if rng.random() < 0.05:
        kind = "fact" if kind == "checkpoint" else "checkpoint"
    return kind, value


def test_payload_gives_the_specifications_bytes_or_refuses_what_it_refuses():
    rng, accepted = random.Random(1), 0
    for _ in range(1000):
        kind, value = generated(rng)
        ours, theirs = (outcome(lambda: module.payload(kind, value)) for module in (store, spec))
        items = value.get("items")
        strings = [value.get("text"), value.get("source"), *(items if type(items) is list else ())]
        surrogate = any(type(s) is str and SURROGATES & set(s) for s in strings)
        if theirs[0] == "returned" and not surrogate:
            assert ours == theirs, (kind, value)
            accepted += 1
        else:
            assert ours[0] == "raised" and type(ours[1]) is ValueError, (kind, value)
    assert accepted > 100   # the generator reaches the encoder, not only the checks
