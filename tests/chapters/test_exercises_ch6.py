"""Chapter 6 checks: a test that kills the broken store, typical near-misses, and no answer."""
import pytest

from workbook.teaching.exercises import answers
from workbook.teaching.exercises.checks import ch6 as checks
from workbook.teaching.exercises.ch6 import q1, q2, q3

NOTE = {"schema": 1, "text": "Fictional note", "source": "note-1", "reviewed": False}


def solution(exercise):
    namespace = {}
    exec(answers()[exercise.number], namespace)
    return next(v for k, v in namespace.items() if k.startswith("test_"))


def test_each_solution_is_correct():
    for exercise in (q1, q2, q3):
        assert exercise.verdict(solution(exercise)).correct, exercise.number


def test_a_test_that_checks_nothing_is_not_enough():
    for exercise in (q1, q2, q3):
        verdict = exercise.verdict(lambda store: store.connect())
        assert verdict.status == "not yet" and "passes against a broken store too" in verdict.sentence


def test_purge_checked_one_tick_after_the_deadline_misses_the_bug():
    def after_deadline(store):
        db = store.connect()
        store.put(db, "orchard", "fact", "a", NOTE, None, 100, 10)
        assert store.purge(db, "orchard", 111) == 1
    assert q1.verdict(after_deadline).status == "not yet"


def test_a_test_that_fails_on_the_real_store_is_refused():
    def wrong_promise(store):
        db = store.connect()
        store.put(db, "orchard", "fact", "a", NOTE, None, 100, 10)
        assert store.purge(db, "orchard", 109) == 1
    assert "fails on the real store" in q1.verdict(wrong_promise).sentence


def test_crashing_instead_of_asserting_is_named():
    def crashes_on_broken(store):
        db = store.connect()
        first = store.put(db, "orchard", "fact", "a", NOTE, None, 100, 10)
        store.forget(db, "orchard", "fact", "a", first)
        second = store.put(db, "orchard", "fact", "a", NOTE, None, 101, 10)
        if second == first:
            raise RuntimeError("same revision twice")
    sentence = q3.verdict(crashes_on_broken).sentence
    assert "crashed with RuntimeError instead of failing an assert" in sentence


def test_using_the_real_functions_directly_cannot_pass():
    from workbook.store import connect, forget, put

    def ignores_the_argument(store):
        db = connect()
        first = put(db, "orchard", "fact", "a", NOTE, None, 100, 10)
        put(db, "orchard", "fact", "a", NOTE, first, 101, 10)
        assert forget(db, "orchard", "fact", "a", first) is False
    assert q2.verdict(ignores_the_argument).status == "not yet"


def test_no_answer_and_stub():
    def stub(store):
        raise NotImplementedError()
    for exercise in (q1, q2, q3):
        assert exercise.verdict(None).status == "not attempted"
        assert exercise.verdict(stub).status == "not attempted"


def with_store(monkeypatch, functions):
    """workbook.reference's cross-check, run against the real store with `functions` replaced."""
    from workbook import reference
    for name, function in functions.items():
        monkeypatch.setattr(reference, name, function)
    return reference.cross_check


@pytest.mark.parametrize("name, functions", checks.CORRECT, ids=[n for n, _ in checks.CORRECT])
def test_each_correct_store_agrees_with_the_reference_model(monkeypatch, name, functions):
    for seed in range(3):
        with_store(monkeypatch, functions)(seed=seed, operations=400)


BROKEN = [(check.__name__, functions) for check in (checks.check_purge_killer,
                                                     checks.check_forget_killer,
                                                     checks.check_put_killer)
          for functions in check.broken]


@pytest.mark.parametrize("kind, functions", BROKEN, ids=[f"{k}-{i}" for i, (k, _) in enumerate(BROKEN)])
def test_each_broken_store_disagrees_with_the_reference_model(monkeypatch, kind, functions):
    with pytest.raises(AssertionError):
        for seed in range(5):
            with_store(monkeypatch, functions)(seed=seed, operations=600)
