"""Every exercise of every chapter talks to the learner the same way: one line per call."""
import importlib

import pytest

EXERCISES = [(chapter, name, getattr(importlib.import_module(f"workbook.exercises.ch{chapter}"), name))
             for chapter in range(1, 7) for name in ("q1", "q2", "q3")]


def lines(capsys):
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("chapter, name, exercise", EXERCISES,
                         ids=[f"ch{c}.{n}" for c, n, _ in EXERCISES])
def test_check_hint_and_solution_read_as_one_sentence_each(chapter, name, exercise, capsys,
                                                           monkeypatch):
    number = f"{chapter}.{name[1]}"
    assert exercise.number == number
    exercise.check(None)
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
    exercise.solution()
    shown = lines(capsys)
    assert shown[0] == f"Exercise {number}, a solution:" and exercise.answer.strip() in "\n".join(shown)
    monkeypatch.setenv("WORKBOOK_HIDE_SOLUTIONS", "1")
    exercise.solution()
    (line,) = lines(capsys)
    assert line.startswith(f"Exercise {number}: solutions are hidden")
