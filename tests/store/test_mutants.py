"""The spec's three broken copies: each one must make the tests fail by assertion.

The copies are built by chapter 6's exported helpers (workbook.reference): copy the installed package (the
specification's tests inside it) to a temporary folder, change one code fragment (each pattern must match exactly once,
wherever the line sits in the file), and run the spec's suite and the model cross-check there in
a fresh Python process. The unchanged copy must pass.
"""
import pytest

from workbook.reference import MUTANTS, broken_copy, run_suite


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant(mutant, tmp_path, figures):
    results = run_suite(broken_copy(tmp_path, MUTANTS[mutant]))
    assert len(results) == 11, results                # the ten spec tests and the cross-check
    assert "error" not in results.values(), results   # no check stopped by another error
    if not MUTANTS[mutant]:
        assert set(results.values()) == {"passed"}, results
        return
    for suite in ("test_store.", "cross_check("):
        verdicts = [v for test, v in results.items() if test.startswith(suite)]
        assert "assertion" in verdicts, (suite, results)
    figures["spec mutants killed (spec suite and model cross-check each)"] += 1


def test_a_pattern_that_does_not_match_is_refused(tmp_path):
    with pytest.raises(ValueError, match="matched 0 times in writes.py"):
        broken_copy(tmp_path, [("writes.py", r"no such code", "")])


def test_a_copy_that_cannot_import_is_reported(tmp_path):
    copy = broken_copy(tmp_path, [("writes.py", r"def\s+put\(", "def put((")])
    with pytest.raises(RuntimeError, match="the copy did not run: SyntaxError"):
        run_suite(copy)
