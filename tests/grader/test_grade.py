"""A generated class graded by `course/grader/cli.py`, once, and read back: the exact gradebook,
then one test per trick, time limit and error, and the files.

The class submits chapter 1 only (a few hundred milliseconds per student), so chapters 2 to 6
prove the "missing, 0 points, with a reason" path; `make test-nbgrader` grades the full
six-chapter class and compares it with nbgrader's points.
"""
import csv
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
from course.grader.chapters import SOURCE, read_chapter
from course.grader.verdicts import ONLY_ANSWER_CELLS
from course.grader.judge.sandboxes import isolation_here
from course.grader.demo_class import KINDS, first_chapter_tricks, write_class
from course.editions import learner

LIMIT = 3  # seconds per cell (chapter 1's cells take milliseconds, a check under a second on a
           # loaded machine): each loop below costs this much
EXERCISES = [f"{c}.{n}" for c in range(1, 7) for n in (1, 2, 3)]

# Chapter 1's points for each student, from what each one did (see classroom/students.py).
EXPECTED = {
    "blank": [0, 0, 0],
    "by-grade-id": [1, 1, 1],
    "by-name": [1, 1, 1],
    "captured-solution": [0, 1, 1],
    "commented-check": [1, 1, 1],
    "deleted-check": [1, 1, 1],
    "duplicated-check": [0, 1, 1],
    "edited-setup-cell": [1, 1, 1],
    "endless-loop": [0, 1, 1],
    "error-cell": [0, 1, 1],
    "escape-codes": [0, 1, 1],
    "exec-answer": [0, 1, 1],
    "exits-python": [1, 0, 1],
    "forks-a-sleeper": [1, 1, 1],
    "helper-in-own-cell": [1, 1, 0],
    "kept-the-raise": [0, 1, 1],
    "extra-cell": [0, 1, 1],
    "fake-printed-verdict": [0, 1, 1],
    "ignores-interrupt": [0, 1, 1],
    "loop-in-function": [1, 1, 0],
    "partly-wrong": [1, 0, 1],
    "patched-verdict": [0, 0, 0],
    "right": [1, 1, 1],
    "sleeping-loop": [0, 1, 1],
    "tamperer": [0, 0, 0],
    "flat-notebook": [1, 1, 1],
    "floods-output": [0, 1, 1],
    "unreadable": [0, 0, 0],
    "learner-edition": [0, 0, 0],
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    chapter_1 = [read_chapter(SOURCE / "01-purpose-and-validation.ipynb")]
    tricks = first_chapter_tricks()
    assert set(tricks) | set(KINDS) | {"flat-notebook", "unreadable", "learner-edition"} == set(EXPECTED)
    write_class(folder, chapter_1, tricks=tricks)
    # A folder of single notebooks named by student works too, and a notebook that is not JSON
    # makes its chapter ungradable for that student alone.
    (folder / "right" / "01-purpose-and-validation.ipynb").rename(folder / "flat-notebook.ipynb")
    write_class(folder, chapter_1, kinds={"right": KINDS["right"]})
    (folder / "unreadable").mkdir()
    (folder / "unreadable" / "01-purpose-and-validation.ipynb").write_text('{"cells": [')
    # make lab's learner edition, handed in untouched: ____ blanks, and `return ____` in to_key
    (folder / "learner-edition").mkdir()
    nbformat.write(learner.learner_notebook(SOURCE / "01-purpose-and-validation.ipynb"),
                   folder / "learner-edition" / "01-purpose-and-validation.ipynb")
    out = tmp_path_factory.mktemp("grades")
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "workbook-grade"), str(folder), "--out", str(out),
                           "--timeout", str(LIMIT), "--jobs", "4", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    return {"folder": folder, "out": out, "json": printed, "stdout": done.stdout, "stderr": done.stderr,
            "students": {s["student"]: s for s in printed["students"]}}


def marks(graded, student):
    return {m["exercise"]: m for m in graded["students"][student]["exercises"]}


def verdict(graded, student, exercise):
    mark = marks(graded, student)[exercise]
    return mark["points"], mark["status"], mark["sentence"]


def test_the_class_gets_exactly_the_expected_gradebook(graded):
    header = "student," + ",".join(EXERCISES) + ",total,maximum,late,refused,isolation,bounds"
    isolation = "isolated" if isolation_here().complete else "NOT ISOLATED: not tamper-proof"
    bounds = "per student" if graded["json"]["bounds"]["grouped"] else "per process only"
    rows = [f"{name}," + ",".join(map(str, points + [0] * 15)) + f",{sum(points)},18,,,{isolation},{bounds}"
            for name, points in sorted(EXPECTED.items())]
    assert (graded["out"] / "gradebook.csv").read_text() == "\n".join([header] + rows) + "\n"


def test_every_row_lists_all_18_exercises_and_missing_ones_say_why(graded):
    with open(graded["out"] / "gradebook.csv") as handle:
        # student, 18 exercises, total, maximum, late, refused, isolation, bounds
        assert all(len(row) == 1 + 18 + 6 for row in csv.reader(handle))
    for student in graded["students"].values():
        assert [m["exercise"] for m in student["exercises"]] == EXERCISES
        for mark in student["exercises"][3:]:
            assert mark["points"] == 0 and mark["status"] == "missing"
            assert mark["sentence"] == (f"no notebook for chapter {mark['exercise'][0]} "
                                        f"({mark['chapter']}) was submitted.")


def test_points_and_maximum_come_from_exercise_points(graded):
    from workbook.teaching.exercises import ch1
    right = marks(graded, "right")
    assert [right[n]["maximum"] for n in ("1.1", "1.2", "1.3")] == [q.points for q in (ch1.q1, ch1.q2, ch1.q3)]
    assert graded["students"]["right"]["maximum"] == 18


def test_a_right_student_gets_the_checks_own_praise(graded):
    points, status, sentence = verdict(graded, "right", "1.1")
    assert (points, status) == (1, "correct") and "2048-byte limit" in sentence


def test_a_blank_student_is_not_attempted(graded):
    assert {m["status"] for m in graded["students"]["blank"]["exercises"][:3]} == {"not attempted"}


def test_the_learners_blanks_are_not_attempted_to_the_fresh_check_too(graded):
    assert [verdict(graded, "learner-edition", n)[:2] for n in ("1.1", "1.2", "1.3")] == [(0, "not attempted")] * 3


# ---------------------------------------------------------------- the tricks of the issue

def test_a_printed_fake_verdict_in_place_of_the_check_counts_for_nothing(graded):
    assert verdict(graded, "fake-printed-verdict", "1.1")[:2] == (0, "not yet")


def test_a_duplicated_check_line_counts_for_nothing(graded):
    assert verdict(graded, "duplicated-check", "1.1")[:2] == (0, "not yet")
    assert graded["students"]["duplicated-check"]["points"] == 2


def test_a_patched_verdict_and_check_in_an_answer_cell_count_for_nothing(graded):
    assert [verdict(graded, "patched-verdict", n)[:2] for n in ("1.1", "1.2", "1.3")] == [(0, "not yet")] * 3
    assert all("trust me" not in m["sentence"] for m in graded["students"]["patched-verdict"]["exercises"])


def test_exec_of_the_exercise_answer_earns_nothing(graded):
    points, status, sentence = verdict(graded, "exec-answer", "1.1")
    assert (points, status) == (0, "error") and sentence.endswith("in your answer to 1.1.")


def test_the_output_of_solution_is_hidden_while_grading(graded):
    assert verdict(graded, "captured-solution", "1.1")[0] == 0


def test_an_honest_commented_check_still_counts(graded):
    assert verdict(graded, "commented-check", "1.3")[:2] == (1, "correct")


def test_a_deleted_check_cell_is_still_checked(graded):
    assert verdict(graded, "deleted-check", "1.2")[:2] == (1, "correct")


def test_only_answer_cells_are_taken_from_a_submission(graded):
    # a patch in a cell of the student's own, and a set-up cell replaced by `raise SystemExit`
    assert verdict(graded, "extra-cell", "1.1")[:2] == (0, "not yet")
    assert graded["students"]["edited-setup-cell"]["points"] == 3


def test_the_tamperer_who_tries_everything_at_once_gets_nothing(graded):
    assert graded["students"]["tamperer"]["points"] == 0


# ------------------------------------------------------------------ time limits and errors

def test_a_name_error_fails_only_its_exercise(graded):
    assert verdict(graded, "error-cell", "1.1") == (
        0, "error", "NameError (name 'undefined_helper' is not defined) in your answer to 1.1. "
        + ONLY_ANSWER_CELLS)
    assert [verdict(graded, "error-cell", n)[1] for n in ("1.2", "1.3")] == ["correct", "correct"]


def test_an_answer_above_a_leftover_stub_is_an_error_that_says_to_delete_the_raise(graded):
    # the untouched stub is "not attempted"; code above the stub's raise did not run to its end
    assert verdict(graded, "blank", "1.1")[:2] == (0, "not attempted")
    points, status, sentence = verdict(graded, "kept-the-raise", "1.1")
    assert (points, status) == (0, "error")
    assert "raise NotImplementedError() is still in the cell; delete it" in sentence


def test_a_helper_in_a_cell_of_its_own_is_missing_and_the_feedback_says_why(graded):
    points, status, sentence = verdict(graded, "helper-in-own-cell", "1.3")
    assert (points, status) == (0, "not yet")
    assert "NameError" in sentence and sentence.endswith(". " + ONLY_ANSWER_CELLS)
    # a wrong answer without a NameError gets no such advice
    assert ONLY_ANSWER_CELLS not in verdict(graded, "partly-wrong", "1.2")[2]


def test_an_endless_loop_is_stopped_at_the_limit_and_the_next_cells_run(graded):
    for student in ("endless-loop", "sleeping-loop"):
        assert verdict(graded, student, "1.1") == (
            0, "error", f"your answer to 1.1 did not finish within the {LIMIT} s limit.")
        assert [verdict(graded, student, n)[1] for n in ("1.2", "1.3")] == ["correct", "correct"]


def test_a_loop_inside_the_answer_function_fails_its_check_only(graded):
    # The check's own limit sits just inside the cell's (2.4 s of 3), so the loop ends as the
    # check's "not yet", the verdict the learner's notebook gives, not as a cell that ran over.
    points, status, sentence = verdict(graded, "loop-in-function", "1.3")
    assert (points, status) == (0, "not yet")
    assert sentence.startswith(f"your answer was still running after {max(LIMIT * 0.8, LIMIT - 1):g} seconds")


def test_an_answer_that_ignores_the_interrupt_is_killed_and_the_chapter_goes_on(graded):
    assert verdict(graded, "ignores-interrupt", "1.1") == (
        0, "error", f"your answer to 1.1 did not stop when interrupted at the {LIMIT} s limit.")
    assert graded["students"]["ignores-interrupt"]["points"] == 2


def test_a_dead_python_process_fails_one_exercise_not_the_class(graded):
    assert verdict(graded, "exits-python", "1.2") == (
        0, "error", "your answer to 1.2 ended the Python process (exit code 3).")
    assert graded["students"]["exits-python"]["points"] == 2
    assert graded["students"]["right"]["points"] == 3


def processes_naming(text):
    """Processes whose command line holds `text`: for the grader's children (forks, so they
    keep the grader's command line, which names the class folder), and whatever they forked."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if text.encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_a_process_left_behind_by_an_answer_neither_holds_up_the_class_nor_survives_it(graded):
    assert graded["students"]["forks-a-sleeper"]["points"] == 3
    assert processes_naming(str(graded["folder"])) == []
    # the probe itself sees a process that names the folder
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", str(graded["folder"])])
    try:
        for _ in range(100):  # until it has exec'd
            if processes_naming(str(graded["folder"])):
                break
            time.sleep(0.05)
        assert processes_naming(str(graded["folder"])) == [sleeper.pid]
    finally:
        sleeper.kill()
        sleeper.wait()


def test_no_output_holds_escape_codes(graded):
    assert verdict(graded, "escape-codes", "1.1")[2] == "ValueError (red alert) in your answer to 1.1."
    texts = [graded["stdout"]] + [p.read_text() for p in graded["out"].rglob("*") if p.is_file()]
    assert texts and not any("\x1b" in text for text in texts)


def test_an_unreadable_notebook_is_ungradable_for_that_student_alone(graded):
    points, status, sentence = verdict(graded, "unreadable", "1.1")
    assert (points, status) == (0, "ungradable")
    assert sentence.startswith("01-purpose-and-validation.ipynb could not be read")


# ------------------------------------------------------------ finding answers, the files

def test_answers_are_found_by_cell_id_then_grade_id_then_name(graded):
    assert {m["found_by"] for m in graded["students"]["right"]["exercises"][:3]} == {"cell id"}
    assert {m["found_by"] for m in graded["students"]["by-grade-id"]["exercises"][:3]} == {"grade_id"}
    assert {m["found_by"] for m in graded["students"]["by-name"]["exercises"][:3]} == {"name"}
    assert graded["students"]["flat-notebook"]["points"] == 3


def test_each_student_gets_a_feedback_file_with_a_verdict_per_exercise(graded):
    files = sorted(p.stem for p in (graded["out"] / "feedback").iterdir())
    assert files == sorted(EXPECTED)
    lines = (graded["out"] / "feedback" / "error-cell.txt").read_text().splitlines()
    assert lines[0] == "error-cell: 2 of 18 points"
    assert lines[1].startswith("Chapters graded: 1, 2, 3, 4, 5, 6. ")
    assert ("  1.1   0 of 1   error: NameError (name 'undefined_helper' is not defined) in your answer "
            "to 1.1. " + ONLY_ANSWER_CELLS) in lines
    assert sum(line.startswith(("  1.", "  2.", "  3.", "  4.", "  5.", "  6.")) for line in lines) == 18


def test_feedback_reads_as_the_notebook_prints_a_verdict(graded):
    from workbook.teaching.exercises import ch1
    printed = str(ch1.q1.verdict(None)).split(": ", 1)[1]  # what the learner's own check says
    assert printed.startswith("not attempted. ")
    blank = (graded["out"] / "feedback" / "blank.txt").read_text()
    assert "  1.1   0 of 1   not attempted. " in blank and "not attempted:" not in blank


def test_no_feedback_names_an_internal_cell_id(graded):
    # a student cannot find "c01-030" in JupyterLab; the feedback quotes the cell's first line
    texts = [p.read_text() for p in (graded["out"] / "feedback").iterdir()]
    texts.append((graded["out"] / "grades.json").read_text())
    assert not any(re.search(r"\bc0\d-\d{3}\b", text) for text in texts)


def test_students_are_graded_in_parallel(graded):
    run = graded["json"]["run"]
    assert re.fullmatch(r"[0-9a-f]{32}", run["seed"])  # of the checks' own cases, new in every run
    assert {key: run[key] for key in ("jobs", "peak", "chapters", "timeout_seconds")} == {
        "jobs": 4, "peak": 4, "chapters": len(EXPECTED) - 1, "timeout_seconds": LIMIT}
