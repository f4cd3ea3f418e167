"""Does a version of the store validate exactly like the store it replaces?

Used to hold a faster proposal (bench/proposal.diff, not adopted) to the rules: it must reject
every stored row the spec's get rejects, keep the store's own extra rules (revision and
expires must be ints), accept and return the same values, raise the same messages, and
encode every payload to the same bytes as json.dumps(sort_keys=True, ensure_ascii=True).
Each check returns a list of mismatches (empty: none found). tests/tooling/test_bench.py runs
them on the store itself (which must pass trivially) and on the proposal when it applies.
"""

import json
import random

FACT = {"schema": 1, "text": "Fictional team likes checklists.",
        "source": "workshop-note-1", "reviewed": False}
CHECKPOINT = {"schema": 1, "step": 2, "items": ["collected", "drafted"]}
COMPACT = {"separators": (",", ":"), "sort_keys": True}
NOW = 100


def _compact_checkpoint(length):
    """An 8-item checkpoint whose compact JSON is `length` bytes (canonical: +12)."""
    fixed = len(json.dumps({"schema": 1, "step": 0, "items": [""] * 8}, **COMPACT))
    chars = length - fixed
    sizes = [chars // 8 + (1 if i < chars % 8 else 0) for i in range(8)]
    value = {"schema": 1, "step": 0, "items": ["a" * n for n in sizes]}
    body = json.dumps(value, **COMPACT)
    assert len(body) == length
    return body


def _escaped_fact(length):
    """A fact whose canonical, all-ASCII JSON is exactly `length` bytes (\\u0001 escapes)."""
    base = len(json.dumps({**FACT, "text": "", "source": ""}, sort_keys=True))
    room = length - base                    # bytes for the two strings' contents
    text_escapes, rest = divmod(min(room, 256 * 6), 6)
    text = "\x01" * text_escapes + "a" * rest
    source = "\x01" * ((room - len(json.dumps(text)) + 2) // 6)
    source += "a" * (room - len(json.dumps(text)) + 2 - 6 * len(source))
    body = json.dumps({**FACT, "text": text, "source": source}, sort_keys=True)
    assert len(body) == length, (len(body), length)
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
        ("canonical 2048 bytes", "fact", 5, 200, _escaped_fact(2048)),
        ("canonical 2049 bytes", "fact", 5, 200, _escaped_fact(2049)),
        ("revision as text", "fact", "five", 200, fact),
        ("revision as real", "fact", 5.5, 200, fact),
        ("expires as text", "fact", 5, "later", fact),
        ("expires over bound", "fact", 5, 10**10 + 86401, fact),
        ("revision zero", "fact", 0, 200, fact),
    ]
    for length in range(2030, 2050):
        rows.append((f"compact checkpoint {length} bytes", "checkpoint", 5, 200,
                     _compact_checkpoint(length)))
    changes = [{"schema": 2}, {"schema": True}, {"schema": 1.0}, {"extra": 1},
               {"reviewed": "yes"}, {"reviewed": 0}, {"text": ""}, {"text": "x" * 257},
               {"source": 7}, {"text": None}]
    for change in changes:
        rows.append((f"fact with {change}", "fact", 5, 200,
                     json.dumps({**FACT, **change}, sort_keys=True)))
    missing = dict(FACT)
    del missing["source"]
    rows.append(("fact without source", "fact", 5, 200, json.dumps(missing)))
    for change in ({"step": 3}, {"step": True}, {"step": -1}, {"items": ["a"] * 9},
                   {"items": "a"}, {"items": [1]}, {"items": [""]}, {"items": None}):
        rows.append((f"checkpoint with {change}", "checkpoint", 5, 200,
                     json.dumps({**CHECKPOINT, **change}, sort_keys=True)))
    return rows


def _outcome(call):
    try:
        return ("ok", call())
    except Exception as error:  # noqa: BLE001 - the kind and text are what we compare
        return ("error", type(error).__name__, str(error))


class AsText(bytes):
    """Bytes to store with the TEXT type (CAST), e.g. invalid UTF-8 a tampered file holds."""


def _read(get, connect, row):
    label, kind, revision, expires, body = row
    db = connect(":memory:")
    try:
        value = "CAST(? AS TEXT)" if isinstance(body, AsText) else "?"
        db.execute(f"INSERT INTO records VALUES (?, ?, ?, ?, ?, {value})",
                   ("orchard", kind, "k", revision, expires, bytes(body)
                    if isinstance(body, AsText) else body))
        return _outcome(lambda: get(db, "orchard", kind, "k", NOW))
    finally:
        db.close()


# Rows the store refuses on purpose although the spec's get accepts them: a surrogate code
# point has no UTF-8 form, and chapter 1 refuses it in any text (issue 20's second attack).
STRICTER_THAN_THE_SPEC = {"lone surrogate escape"}


def check_reads(candidate, store, spec):
    """Mismatches of candidate.get against the store's get and the spec's get."""
    problems = []
    for row in stored_rows():
        label, kind, revision, expires = row[:4]
        got = _read(candidate.get, candidate.connect, row)
        want = _read(store.get, store.connect, row)
        if got != want:
            problems.append(f"{label}: {got!r:.200} but the store gives {want!r:.200}")
        if got[0] == "ok" and got[1] is None:
            problems.append(f"{label}: row not found (test row is broken)")
        int_columns = type(revision) is int and type(expires) is int
        if int_columns and 1 <= revision and expires <= 10**10 + 86400:
            ref = _read(spec.get, spec.connect, row)
            if ref[0] == "error" and got[0] == "ok":
                problems.append(f"{label}: the spec's get rejects it ({ref[1]}) "
                                "but the candidate accepts it")
            if ref[0] == "ok" and got != ref and label not in STRICTER_THAN_THE_SPEC:
                problems.append(f"{label}: the spec's get accepts it but the candidate "
                                f"gives {got!r:.200}")
        elif got[0] == "ok":
            problems.append(f"{label}: a non-int or out-of-range revision/expires accepted")
    return problems


ALPHABET = ("abc xyz-_/", "\"\\", "\x00\x01\x08\t\n\x0c\r\x1f", "\x7f", "\u00e9\u2603",
            "\U0001F600", "\ud800\udfff")


def _string(rng):
    n = rng.choice((0, 1, 2, 5, 40, 255, 256, 257))
    pools = rng.sample(ALPHABET, rng.randint(1, 3))
    return "".join(rng.choice(rng.choice(pools)) for _ in range(n))


def _value(rng):
    if rng.random() < 0.5:
        value = {"schema": 1, "text": _string(rng), "source": _string(rng),
                 "reviewed": rng.choice((True, False))}
        kind = "fact"
    else:
        value = {"schema": 1, "step": rng.randint(0, 2),
                 "items": [_string(rng) for _ in range(rng.choice((0, 1, 3, 8, 9)))]}
        kind = "checkpoint"
    if rng.random() < 0.1:
        key = rng.choice(sorted(value))
        value[key] = rng.choice((None, True, 1, 1.0, "1", [], {}, -1, 3))
    if rng.random() < 0.05:
        kind = "fact" if kind == "checkpoint" else "checkpoint"
    return kind, value


def check_payloads(candidate, store, count=3000, seed=1):
    """Mismatches of candidate.payload against the store's (same bytes or same error)."""
    rng, problems = random.Random(seed), []
    for _ in range(count):
        kind, value = _value(rng)
        got = _outcome(lambda: candidate.payload(kind, value))
        want = _outcome(lambda: store.payload(kind, value))
        if got != want:
            problems.append(f"payload({kind}, {value!r:.120}): {got!r:.160} "
                            f"but the store gives {want!r:.160}")
        elif got[0] == "ok" and got[1] != json.dumps(value, sort_keys=True,
                                                     ensure_ascii=True):
            problems.append(f"payload({kind}, {value!r:.120}) differs from json.dumps")
    return problems


class _Name(str):
    pass


def check_identity(candidate, store):
    """Mismatches of candidate.identity against the store's, asked twice (memo or not)."""
    cases = [("orchard", "fact", "a"), ("orchard", "checkpoint", "run-1"),
             ("Orchard", "fact", "a"), ("orchard", "facts", "a"), ("", "fact", "a"),
             ("a" * 32, "fact", "b" * 32), ("a" * 33, "fact", "b"), (None, "fact", "a"),
             (["orchard"], "fact", "a"), ("orchard", "fact", ["a"]), ("orchard", None, "a"),
             (_Name("orchard"), "fact", "a"), (_Name("Bad"), "fact", "a"),
             ("x' OR 1=1 --", "fact", "a"), ("orchard\n", "fact", "a"),
             ("orchard", "fact", "a\x00")]
    problems = []
    for args in cases * 2:
        got = _outcome(lambda: candidate.identity(*args))
        want = _outcome(lambda: store.identity(*args))
        if got != want:
            problems.append(f"identity{args!r}: {got!r} but the store gives {want!r}")
    return problems


def check_all(candidate, store, spec):
    return (check_reads(candidate, store, spec) + check_payloads(candidate, store)
            + check_identity(candidate, store))


if __name__ == "__main__":  # python -m bench.validation_check: check the proposal
    from bench import impls
    keep = []
    proposal = impls.proposal(keep=keep).module
    current = impls.store().module
    spec = impls.reference().module
    found = check_all(proposal, current, spec)
    print("\n".join(found) or f"proposal validates like the store: "
          f"{len(stored_rows())} stored rows, 3000 payloads, identity cases")
    for folder in keep:
        folder.cleanup()
    raise SystemExit(1 if found else 0)

