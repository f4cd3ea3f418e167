"""Long random histories give the same results and exception classes as the spec's reference code."""
import random

import pytest

from workbook.specification import store as spec
from workbook import store

TENANTS = ["orchard", "harbour", "x", "Orchard", "../etc", "", None, "a" * 33]
KINDS = ["checkpoint", "fact", "facts", None]
KEYS = ["a", "run-a", "b-2", "x' OR 1=1 --", 7]
TIMES = [0, 100, 105, 110, 120, 10**10, -1, 10**10 + 1, True, 1.0]
TTLS = [1, 5, 10, 86400, 0, 86401, True, "10"]


def random_value(rng, kind):
    if kind == "checkpoint" and rng.random() < 0.8:
        value = {"schema": 1, "step": rng.choice([0, 1, 2, 3, True]),
                 "items": rng.choice([[], ["collected"], ["x"] * 8, ["x"] * 9, [""], [1]])}
    else:
        value = {"schema": 1, "text": rng.choice(["Fictional note", "", "\u2603" * 256, "y" * 257]),
                 "source": rng.choice(["note-1", "\u2603" * 256]),
                 "reviewed": rng.choice([False, True, "yes", 0])}
    if rng.random() < 0.1:
        value[rng.choice(["schema", "extra"])] = rng.choice([2, True, "1"])
    return rng.choice([value] * 9 + [[value], "text"])


def outcome(call):
    try:
        return ("ok", call())
    except (ValueError, store.Conflict, spec.Conflict) as error:
        return ("raised", "Conflict" if "Conflict" in type(error).__name__ else type(error).__name__)


def physical(db):
    rows = db.execute("SELECT * FROM records ORDER BY tenant, kind, key").fetchall()
    return rows, db.execute("SELECT value FROM sequence").fetchone()


def step(rng, ours, theirs, revisions):
    tenant, kind, key = rng.choice(TENANTS[:3] * 4 + TENANTS), rng.choice(KINDS[:2] * 6 + KINDS), rng.choice(KEYS[:3] * 3 + KEYS)
    now = rng.choice(TIMES[:6] * 3 + TIMES)
    action = rng.choice(["put", "put", "get", "get", "forget", "purge"])
    if action == "put":
        value = random_value(rng, kind)
        expected = rng.choice([None, None] + revisions[-3:] + [0, 999, True])
        ttl = rng.choice(TTLS[:4] * 3 + TTLS)
        args = (tenant, kind, key, value, expected, now, ttl)
        calls = (lambda: store.put(ours, *args), lambda: spec.put(theirs, *args))
    elif action == "get":
        args = (tenant, kind, key, now)
        calls = (lambda: store.get(ours, *args), lambda: spec.get(theirs, *args))
    elif action == "forget":
        args = (tenant, kind, key, rng.choice(revisions[-4:] + [0, 1, 999, None]))
        calls = (lambda: store.forget(ours, *args), lambda: spec.forget(theirs, *args))
    else:
        args = (tenant, now)
        calls = (lambda: store.purge(ours, *args), lambda: spec.purge(theirs, *args))
    mine, reference = outcome(calls[0]), outcome(calls[1])
    assert mine == reference, (action, args)
    if action == "put" and mine[0] == "ok":
        revisions.append(mine[1])
    assert physical(ours) == physical(theirs)
    assert not ours.in_transaction
    return action, mine[0] if mine[0] == "ok" else mine[1]


@pytest.mark.parametrize("seed", range(4))
def test_random_history_matches_the_reference(seed):
    rng = random.Random(seed)
    ours, theirs = store.connect(), spec.connect()
    seen, revisions = set(), []
    for _ in range(1500):
        seen.add(step(rng, ours, theirs, revisions))
    # The history must have exercised both paths of every operation.
    for action in ("put", "get", "forget", "purge"):
        assert (action, "ok") in seen and (action, "ValueError") in seen, action
    assert ("put", "Conflict") in seen
