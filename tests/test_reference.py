"""The dictionary model (workbook.reference) and the SQLite store agree, step by step."""
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest

from soak import scaled
from workbook.reference import Reference, counter, cross_check, physical_rows
from workbook.store import Conflict, connect, forget, get, purge, put

FACT = {"schema": 1, "text": "Fictional preference", "source": "note-1", "reviewed": False}


def test_600_operations_agree_and_cover_every_path(figures):
    counts = cross_check(seed=0, operations=600)
    assert counts["operations"] == 600
    # Every kind of step happened, so agreement means something.
    for name in ("writes", "conflicts", "invalid", "reads", "forgets succeeded",
                 "rows purged", "clock forward", "clock backward"):
        assert counts[name] > 0, name
    assert counts["forgets attempted"] > counts["forgets succeeded"]
    # 12 gets + the rows + the counter after every step, plus every operation's own result.
    steps = counts["operations"] - counts["clock forward"] - counts["clock backward"]
    assert counts["comparisons"] == 14 * counts["operations"] + steps
    figures["model cross-check: operations"] += counts["operations"]
    figures["model cross-check: comparisons"] += counts["comparisons"]


@pytest.mark.parametrize("seed", range(1, scaled(4, 51)))
def test_more_seeds_agree(seed, figures):
    counts = cross_check(seed=seed, operations=scaled(600, 3000))
    figures["model cross-check: operations"] += counts["operations"]
    figures["model cross-check: comparisons"] += counts["comparisons"]


def test_cross_check_on_a_file():
    with TemporaryDirectory() as folder:
        counts = cross_check(seed=7, operations=300, path=Path(folder) / "check.db")
    assert counts["operations"] == 300


def test_cross_check_is_deterministic():
    assert cross_check(seed=3, operations=200) == cross_check(seed=3, operations=200)


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


def test_model_and_store_agree_when_the_counter_runs_out():
    db, model = connect(), Reference()
    db.execute("UPDATE sequence SET value=?", (2**63 - 2,))
    model.counter = 2**63 - 2
    for party in (lambda *a: put(db, *a), model.put):
        assert party("orchard", "fact", "a", FACT, None, 100, 10) == 2**63 - 1
        with pytest.raises(ValueError, match=r"stored counter must be an int from 0 to 2\*\*63-2"):
            party("orchard", "fact", "b", FACT, None, 100, 10)
    assert physical_rows(db) == model.physical_rows()
    assert counter(db) == model.counter == 2**63 - 1
    assert not forget(db, "orchard", "fact", "b", 2**63 - 1)
    assert purge(db, "orchard", 110) == model.purge("orchard", 110) == 1
    assert get(db, "orchard", "fact", "a", 100) is None
