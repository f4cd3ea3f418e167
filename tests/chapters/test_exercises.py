"""Every exercise talks to the learner the same way: one line per call, never a traceback."""
import importlib
import json
import os
import signal
import sys
import threading
import time

import pytest

from workbook.teaching.exercises import Exercise, NotYet, ____, answers

EXERCISES = [(chapter, name, getattr(importlib.import_module(f"workbook.teaching.exercises.ch{chapter}"), name))
             for chapter in range(1, 7) for name in ("q1", "q2", "q3")] + [
    ("A", name, getattr(importlib.import_module("workbook.teaching.exercises.postgres"), name))
    for name in ("q1", "q2", "q3")]


def lines(capsys):
    return capsys.readouterr().out.splitlines()


@pytest.fixture(autouse=True)
def appendix_checks_use_the_sessions_server(request):
    """The appendix's checks run on this test process's PostgreSQL server, as
    test_exercises_postgres.py's do, rather than starting one of their own inside a check's
    time limit."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("chapter") == "A":
        from workbook.teaching.exercises.postgres import practise_on
        practise_on(request.getfixturevalue("postgres_server"))


@pytest.mark.parametrize("chapter, name, exercise", EXERCISES,
                         ids=[f"ch{c}.{n}" for c, n, _ in EXERCISES])
def test_check_hint_and_solution_read_as_one_sentence_each(chapter, name, exercise, capsys,
                                                           monkeypatch):
    number = f"{chapter}.{name[1]}"
    assert exercise.number == number
    for blank in (None, ____, [____], {"text": ____}):
        exercise.check(blank)
        (line,) = lines(capsys)
        assert line.startswith(f"Exercise {number}: not attempted.")
    assert exercise.hints, "every exercise has at least one hint"
    for level in range(1, len(exercise.hints) + 1):
        exercise.hint(level)
        (line,) = lines(capsys)
        assert line.startswith(f"Exercise {number}, hint {level} of {len(exercise.hints)}:")
        more = f"({name}.hint({level + 1}) for more)"
        assert line.endswith(more) == (level < len(exercise.hints))
    exercise.hint()
    assert lines(capsys)[0].startswith(f"Exercise {number}, hint 1 of")
    exercise.hint(len(exercise.hints) + 1)
    assert lines(capsys)[0].startswith(f"Exercise {number}, hint {len(exercise.hints)} of "
                                       f"{len(exercise.hints)} (there is no hint {len(exercise.hints) + 1}):")
    exercise.solution()
    shown = lines(capsys)
    assert shown[0] == f"Exercise {number}, a solution:" and answers()[number].strip() in "\n".join(shown)
    monkeypatch.setenv("WORKBOOK_HIDE_SOLUTIONS", "1")
    exercise.solution()
    (line,) = lines(capsys)
    assert line.startswith(f"Exercise {number}: solutions are hidden")


@pytest.mark.parametrize("chapter, name, exercise", EXERCISES,
                         ids=[f"ch{c}.{n}" for c, n, _ in EXERCISES])
def test_no_attribute_shows_the_answer(chapter, name, exercise):
    # The worked answer is one solution() call away, never in a repr, a field or tab completion.
    answer = max(answers()[exercise.number].splitlines(), key=len).strip()
    seen = repr(exercise) + json.dumps({k: str(v) for k, v in vars(exercise).items()})
    assert answer not in seen and not hasattr(exercise, "answer")


@pytest.mark.parametrize("chapter, name, exercise", EXERCISES,
                         ids=[f"ch{c}.{n}" for c, n, _ in EXERCISES])
def test_a_stub_returning_the_blank_is_not_attempted(chapter, name, exercise):
    verdict = exercise.verdict(lambda *args, **kwargs: ____)
    assert verdict.status in ("not attempted", "not yet"), verdict
    if verdict.status == "not yet":  # exercises whose answer is a value, not a function
        assert "____" not in verdict.sentence


def test_answers_are_stored_encoded():
    stored = (importlib.resources.files("workbook.teaching.exercises") / "answers.json").read_text()
    assert "def " not in stored and "BEGIN SOLUTION" not in stored
    assert sorted(answers()) == sorted(e.number for _, _, e in EXERCISES)


def slow_checker(answer):
    answer()
    return "finished"


LOOPING = Exercise("9.1", "never finish", slow_checker)


def test_an_endless_loop_is_stopped_at_the_time_limit():
    def forever():
        while True:
            pass
    started = time.monotonic()
    verdict = LOOPING.verdict(forever, seconds=0.5)
    assert time.monotonic() - started < 2
    assert verdict.status == "not yet"
    assert verdict.sentence == ("your answer was still running after 0.5 seconds, this check's "
                                "time limit; look for a loop that never ends.")


def test_the_loop_cannot_hide_the_limit_by_catching_exceptions():
    def stubborn():
        while True:
            try:
                while True:
                    pass
            except Exception:
                pass
    assert "still running after 0.3 seconds" in LOOPING.verdict(stubborn, seconds=0.3).sentence


def test_the_default_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("WORKBOOK_CHECK_SECONDS", "0.4")
    assert "after 0.4 seconds" in LOOPING.verdict(lambda: time.sleep(5)).sentence
    monkeypatch.setenv("WORKBOOK_CHECK_SECONDS", "soon")  # not a number: the default stands
    assert LOOPING.verdict(lambda: None).correct


def test_the_limit_also_holds_off_the_main_thread():
    found = {}
    thread = threading.Thread(target=lambda: found.update(
        verdict=LOOPING.verdict(lambda: time.sleep(3), seconds=0.3)))
    thread.start()
    thread.join(60)     # the answer sleeps 3 s: a verdict from a limit that held says 0.3 s
    assert "still running after 0.3 seconds" in found["verdict"].sentence


@pytest.fixture
def interrupt_as_in_a_kernel():
    """SIGINT raising KeyboardInterrupt, as in a Jupyter kernel. A test run started in the
    background of a non-interactive shell (a CI script's `make test &`, nohup) inherits SIGINT
    ignored, and Python keeps an ignored SIGINT ignored: there the interrupt never arrived and
    the check met its time limit instead (a loaded run, 60 s later)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_an_interrupt_is_answered_in_one_sentence(interrupt_as_in_a_kernel):
    def interrupted():
        os.kill(os.getpid(), signal.SIGINT)  # what Jupyter's interrupt button sends the kernel
        # Python raises KeyboardInterrupt at its next check for signals, which a long sleep
        # would put off until it ended: short sleeps let it through at once, however loaded
        # the machine. Only an interrupt that never arrives meets the time limit.
        while True:
            time.sleep(0.01)
    verdict = LOOPING.verdict(interrupted, seconds=60)
    assert verdict.status == "not yet" and verdict.sentence.startswith("the check was interrupted")


def test_the_alarm_is_put_back_after_a_check():
    before = signal.getsignal(signal.SIGALRM)
    LOOPING.verdict(lambda: None, seconds=1)
    assert signal.getsignal(signal.SIGALRM) == before and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_errors_and_stubs_become_sentences():
    def broken():
        raise KeyError("nope")

    def stub():
        raise NotImplementedError()

    def wrong():
        raise NotYet("because.")
    assert LOOPING.verdict(broken).sentence == "running your answer raised KeyError: 'nope'."
    assert LOOPING.verdict(lambda: 1 / 0).sentence == "running your answer raised ZeroDivisionError: division by zero."
    assert LOOPING.verdict(lambda: exec("raise RuntimeError")).sentence == "running your answer raised RuntimeError."
    assert LOOPING.verdict(stub).status == "not attempted"
    assert LOOPING.verdict(wrong).sentence == "because."


def test_compare_waits_for_a_prediction_and_shows_a_wrong_one_only_when_asked(capsys):
    shown = []

    def reveal(answer, show=True):
        if show:
            shown.append(answer)

    def right_is_one(answer):
        if answer != [1]:
            raise NotYet("1 of 1 entries is not what the run prints.")
        return "matches"
    exercise = Exercise("9.2", "predict", right_is_one, reveal=reveal)
    exercise.compare(____)
    assert capsys.readouterr().out.startswith("Exercise 9.2: make your prediction first")
    exercise.compare([2])
    assert shown == [] and capsys.readouterr().out == (
        "Exercise 9.2: not yet: 1 of 1 entries is not what the run prints. The run itself gives "
        "the answer away, so it waits until you ask for it: q2.compare(your prediction, "
        "reveal=True).\n")
    exercise.compare([2], reveal=True)
    exercise.compare([1])
    assert shown == [[2], [1]]


def test_a_check_after_a_cell_that_raised_says_the_answer_would_not_count(capsys, monkeypatch):
    """The class hand-out's stub: the learner writes the answer above `raise NotImplementedError()`
    and keeps that line. The grader gives nothing for a cell that raised, so the check says so."""
    import types
    shell = types.SimpleNamespace(last_execution_succeeded=False)
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    LOOPING.check(lambda: None)
    assert capsys.readouterr().out.startswith("Exercise 9.1: not yet: the cell you ran just before")
    LOOPING.check(____)
    assert "delete any raise NotImplementedError() line" in capsys.readouterr().out
    shell.last_execution_succeeded = True
    LOOPING.check(lambda: None)
    assert capsys.readouterr().out == "Exercise 9.1: correct: finished\n"


@pytest.mark.parametrize("chapter, name, exercise", [e for e in EXERCISES if e[2].reveal],
                         ids=[f"ch{c}.{n}" for c, n, e in EXERCISES if e.reveal])
def test_compare_shows_nothing_for_a_prediction_check_calls_invalid(chapter, name, exercise, capsys):
    """compare() reveals the real run only for a prediction that check() would compare."""
    for invalid in ("no idea", 42, [object()]):
        assert exercise.verdict(invalid).status == "not yet"
        assert exercise.compare(invalid) is None
        (line,) = capsys.readouterr().out.splitlines()
        assert line.startswith(f"Exercise {exercise.number}: ")


@pytest.mark.parametrize("chapter, name, exercise", EXERCISES,
                         ids=[f"ch{c}.{n}" for c, n, _ in EXERCISES])
def test_compare_answers_every_exercise_in_one_line_never_a_traceback(chapter, name, exercise,
                                                                      capsys):
    """docs/learners.md offers qN.compare(prediction): on an exercise with no run to show it
    says so in a sentence (it used to raise TypeError: 'NoneType' object is not callable)."""
    assert exercise.compare(____) is None
    (line,) = lines(capsys)
    assert line.startswith(f"Exercise {exercise.number}: ")
    if exercise.reveal is None:
        assert line.endswith(f"has no run to compare with; {name}.check(your answer) says "
                             "whether your answer is right.")


def test_every_prediction_exercise_can_show_its_run():
    predictions = {"2.3", "3.2", "4.3", "5.1"}
    assert {e.number for _, _, e in EXERCISES if e.reveal} == predictions


def test_an_edition_without_checks_says_who_checks(tmp_path, capsys, monkeypatch):
    """The class and grading editions leave workbook/teaching/exercises/checks/ out: a check then says,
    in one sentence, that the grader judges the answer, and compare() shows nothing."""
    from workbook.teaching.exercises import ChecksAbsent, InChecks
    missing = InChecks("ch99", "check_anything")
    with pytest.raises(ChecksAbsent):
        missing(1)
    exercise = Exercise("9.3", "anything", missing, reveal=InChecks("ch99", "show"))
    exercise.check(41)
    assert capsys.readouterr().out.startswith("Exercise 9.3: this copy of the workbook holds no checks")
    exercise.compare([1])
    assert "does not run the real sequence" in capsys.readouterr().out
    exercise.check(____)
    assert "not attempted" in capsys.readouterr().out
