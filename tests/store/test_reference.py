"""The dictionary model (workbook.reference) and each backend's store agree, step by step.

The cross-checks take the `backend` fixture: chapter 6's own cross_check, run on SQLite and,
rebound to workbook.postgres, on a PostgreSQL server (a smaller share of the operations there:
every call is a round trip to the server).
"""
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest

from soak import scaled
from workbook.reference import Reference
from workbook.store import Conflict

FACT = {"schema": 1, "text": "Fictional preference", "source": "note-1", "reviewed": False}


def test_600_operations_agree_and_cover_every_path(backend, figures):
    operations = backend.size(600)
    counts = backend.cross_check(seed=0, operations=operations)
    assert counts["operations"] == operations
    # Every kind of step happened, so agreement means something.
    for name in ("writes", "conflicts", "invalid", "reads", "forgets succeeded",
                 "rows purged", "clock forward", "clock backward"):
        assert counts[name] > 0, name
    assert counts["forgets attempted"] > counts["forgets succeeded"]
    # 12 gets + the rows + the counter after every step, plus every operation's own result.
    steps = counts["operations"] - counts["clock forward"] - counts["clock backward"]
    assert counts["comparisons"] == 14 * counts["operations"] + steps
    figures[backend.figure("model cross-check: operations")] += counts["operations"]
    figures[backend.figure("model cross-check: comparisons")] += counts["comparisons"]


@pytest.mark.parametrize("seed", range(1, scaled(4, 51)))
def test_more_seeds_agree(backend, seed, figures):
    counts = backend.cross_check(seed=seed, operations=backend.size(scaled(600, 3000)))
    figures[backend.figure("model cross-check: operations")] += counts["operations"]
    figures[backend.figure("model cross-check: comparisons")] += counts["comparisons"]


def test_cross_check_on_a_file(backend):
    # On PostgreSQL a path names a store (a schema) that later connections reopen.
    operations = backend.size(300)
    with TemporaryDirectory() as folder:
        counts = backend.cross_check(seed=7, operations=operations,
                                     path=Path(folder) / "check.db")
    assert counts["operations"] == operations


def test_cross_check_is_deterministic(backend):
    operations = backend.size(200)
    assert (backend.cross_check(seed=3, operations=operations)
            == backend.cross_check(seed=3, operations=operations))


def test_model_follows_the_spec_timeline():
    model = Reference()
    first = model.put("orchard", "fact", "a", FACT, None, 100, 10)
    assert model.get("orchard", "fact", "a", 109)["expires"] == 110
    assert model.get("orchard", "fact", "a", 110) is None           # exclusive deadline
    with pytest.raises(Conflict):
        model.put("orchard", "fact", "a", FACT, first, 110, 10)      # expired: purge first
    assert model.get("orchard", "fact", "a", 105) is not None       # clock back: visible again
    assert model.purge("harbour", 110) == 0
    assert model.purge("orchard", 110) == 1
    second = model.put("orchard", "fact", "a", FACT, None, 110, 10)
    assert second == first + 1
    assert not model.forget("orchard", "fact", "a", first)
    assert model.forget("orchard", "fact", "a", second)
    assert model.counter == second and model.rows == {}
    third = model.put("orchard", "fact", "a", FACT, None, 110, 10)
    assert third > second                                            # never reused
    with pytest.raises(ValueError):
        model.put("orchard", "fact", "a", FACT | {"schema": True}, third, 111, 10)


def test_model_and_store_agree_when_the_counter_runs_out(backend):
    db, model = backend.connect(), Reference()
    backend.set_counter(db, 2**63 - 2)
    model.counter = 2**63 - 2
    for party in (lambda *a: backend.put(db, *a), model.put):
        assert party("orchard", "fact", "a", FACT, None, 100, 10) == 2**63 - 1
        with pytest.raises(ValueError, match=r"stored counter must be an int from 0 to 2\*\*63-2"):
            party("orchard", "fact", "b", FACT, None, 100, 10)
    assert backend.physical_rows(db) == model.physical_rows()
    assert backend.counter(db) == model.counter == 2**63 - 1
    assert not backend.forget(db, "orchard", "fact", "b", 2**63 - 1)
    assert backend.purge(db, "orchard", 110) == model.purge("orchard", 110) == 1
    assert backend.get(db, "orchard", "fact", "a", 100) is None
    db.close()
