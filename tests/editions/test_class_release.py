"""The class release (make class): an nbgrader course folder whose check cells carry the points
defined in the exercise modules, while the author's chapters carry no grade cell at all."""
import ast
import importlib
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
from course import notebook as notebook_model
from course.editions import release as editions_release
from course.notebook import REGION
from course.grader.chapters import GRADED, SOURCE, graded_chapters, read_chapter
from course.editions.release import HIDDEN_TESTS, FOR_GRADING, release_notebook

CHAPTER_1 = SOURCE / "01-purpose-and-validation.ipynb"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("class")
    return out, editions_release.write_release(out, timeout=7)


def test_the_graded_chapters_are_named_and_hold_the_18_exercises():
    chapters = graded_chapters()
    assert [c.stem for c in chapters] == list(GRADED) == sorted(p.stem for p in SOURCE.glob("0[1-6]-*.ipynb"))
    assert [e.number for c in chapters for e in c.exercises] == [f"{c}.{n}" for c in range(1, 7) for n in (1, 2, 3)]
    assert not any(stem.startswith("appendix") for stem in GRADED)


def test_points_come_from_the_exercise_module(monkeypatch):
    from workbook.teaching.exercises import ch1
    monkeypatch.setattr(ch1.q2, "points", 4)
    chapter = read_chapter(CHAPTER_1)
    assert [e.points for e in chapter.exercises] == [ch1.q1.points, 4, ch1.q3.points]
    cells = {c.get("id"): c for c in release_notebook(chapter, solutions=False).cells}
    assert cells["c01-036"].metadata["nbgrader"]["points"] == 4


def test_the_release_is_an_nbgrader_course_folder(release):
    out, written = release
    assert written == [f"{stem}.ipynb" for stem in GRADED]
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.ipynb")) == sorted(
        [f"source/{stem}/{stem}.ipynb" for stem in GRADED] + [f"handout/{stem}.ipynb" for stem in GRADED])
    config = (out / "nbgrader_config.py").read_text()
    ast.parse(config)
    assert "c.Execute.timeout = 7" in config and "c.OverwriteCells.add_missing_cells = True" in config


def test_every_check_cell_becomes_a_locked_autograder_cell_with_hidden_tests(release):
    out, _ = release
    for chapter in graded_chapters():
        source = nbformat.read(out / "source" / chapter.stem / chapter.filename, as_version=4)
        handout = nbformat.read(out / "handout" / chapter.filename, as_version=4)
        by_id = {c.get("id"): c for c in source.cells}
        handed = {c.get("id"): c for c in handout.cells}
        for exercise in chapter.exercises:
            cell, given = by_id[exercise.check_id], handed[exercise.check_id]
            assert cell.metadata["nbgrader"] == {
                "grade": True, "grade_id": exercise.check_grade_id, "locked": True,
                "points": exercise.points, "schema_version": 3, "solution": False, "task": False}
            assert cell.source.startswith(f"{exercise.attribute}.check({exercise.expression})\n### BEGIN HIDDEN TESTS")
            assert given.source == f"{exercise.attribute}.check({exercise.expression})"
            assert given.metadata["editable"] is False and given.metadata["deletable"] is False
            assert "### BEGIN SOLUTION" in by_id[exercise.answer_id].source
            assert "raise NotImplementedError()" in handed[exercise.answer_id].source
        text = nbformat.writes(handout)
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
        assert all(not c.get("outputs") for c in handout.cells if c.cell_type == "code")


def test_the_authors_chapters_carry_no_grade_cells():
    for path in sorted(SOURCE.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            assert cell.metadata.get("nbgrader", {}).get("grade") is not True, (path.name, cell.get("id"))
            assert "HIDDEN TESTS" not in cell.source


def hidden_test(exercise):
    return HIDDEN_TESTS.format(number=exercise.number, module=exercise.module,
                               attribute=exercise.attribute, expression=exercise.expression)


class Shell:
    def __init__(self, succeeded):
        self.last_execution_succeeded = succeeded


@pytest.fixture
def modules_back():
    """The test imports the exercise modules afresh (and so do the hidden tests); give the rest
    of this process its own modules back, unpatched."""
    saved = {n: m for n, m in sys.modules.items() if n.startswith("workbook.teaching.exercises")}
    yield
    for name in [n for n in sys.modules if n.startswith("workbook.teaching.exercises")]:
        del sys.modules[name]
    sys.modules.update(saved)


@pytest.mark.parametrize("answer, succeeded, passes", [
    ({"schema": 1, "text": "\U0001F600" * 165, "source": "\U0001F600", "reviewed": False}, True, True),
    ({"schema": 1, "text": "short", "source": "s", "reviewed": False}, True, False),
    (None, True, False),
    ({"schema": 1, "text": "\U0001F600" * 165, "source": "\U0001F600", "reviewed": False}, False, False),
], ids=["right", "wrong", "blank", "answer-cell-raised"])
def test_the_hidden_test_fails_unless_the_fresh_check_says_correct(answer, succeeded, passes, modules_back):
    exercise = read_chapter(CHAPTER_1).exercises[0]
    for name in [n for n in sys.modules if n.startswith("workbook.teaching.exercises")]:
        del sys.modules[name]  # a copy of the modules for this test alone, to patch below
    exercises = importlib.import_module("workbook.teaching.exercises")
    # a patched verdict in the learner's kernel: the hidden test must not believe it
    exercises.Exercise.verdict = lambda self, answer=None: exercises.Verdict(self.number, "correct", "trust me.")
    namespace = {"get_ipython": lambda: Shell(succeeded), "wide_fact": answer, "q1": None}
    code = hidden_test(exercise)
    if passes:
        exec(code, namespace)
    else:
        with pytest.raises(AssertionError, match=r"^Exercise 1\.1: "):
            exec(code, namespace)


def test_each_release_tells_students_to_keep_an_answer_in_its_answer_cell(release):
    # make grade runs only answer cells, so a helper in a cell of its own would be missing there
    out, _ = release
    for chapter in graded_chapters():
        for path in (out / "handout" / chapter.filename, out / "source" / chapter.stem / chapter.filename):
            told = [c for c in nbformat.read(path, as_version=4).cells if FOR_GRADING in c.source]
            assert len(told) == 1 and told[0].cell_type == "markdown"
            assert told[0].source.startswith("## Exercises")
        assert not any(FOR_GRADING in c.source for c in chapter.notebook.cells)


def test_the_release_drops_directive_only_cells_as_the_learners_edition_does(release):
    # a fetched chapter used to open on a stray code cell `#| default_exp validation`
    out, _ = release
    for chapter in graded_chapters():
        kept = [c.get("id") for c in chapter.notebook.cells if not notebook_model.is_directive_cell(c)]
        assert len(kept) < len(chapter.notebook.cells), chapter.filename  # each chapter has one
        for path in (out / "handout" / chapter.filename, out / "source" / chapter.stem / chapter.filename):
            cells = nbformat.read(path, as_version=4).cells
            assert [c.get("id") for c in cells] == kept, path
            assert not cells[0].source.startswith("#|"), path
    # `#| export` cells hold code and stay
    assert any(c.source.startswith("#| export") for c in release_notebook(graded_chapters()[0], solutions=False).cells)


def test_the_handout_runs_in_the_learners_hands_like_the_old_student_edition():
    # editions_release.student_notebook is the hand-out of one chapter; the stubs are nbgrader's own
    handout = editions_release.student_notebook(CHAPTER_1)
    answers = [c for c in handout.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert [c.source for c in answers] == [
        "wide_fact = ____\n# YOUR CODE HERE\nraise NotImplementedError()",
        "full_checkpoint = ____\n# YOUR CODE HERE\nraise NotImplementedError()",
        "def to_key(title):\n    # YOUR CODE HERE\n    raise NotImplementedError()",
    ]
    assert [("raises-exception" in c.metadata.get("tags", [])) for c in answers] == [True, True, False]
    assert REGION.search("x = ____\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION").group(1) == ""


def test_a_second_make_class_keeps_nbgrader_state_beside_the_release(tmp_path):
    """An instructor runs nbgrader inside the release folder; making the release again replaces
    what it wrote (source/, handout/, the config) and nothing nbgrader keeps there."""
    out = tmp_path / "class"
    editions_release.write_release(out, timeout=7)
    kept = {"gradebook.db": b"nbgrader's gradebook",
            "submitted/ada/01-purpose-and-validation/01-purpose-and-validation.ipynb": b"{}",
            "autograded/ada/x.txt": b"graded", "release/x.txt": b"released"}
    for name, data in kept.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    (out / "source" / "stale-chapter").mkdir()
    editions_release.write_release(out, timeout=7)
    assert {name: (out / name).read_bytes() for name in kept} == kept
    assert not (out / "source" / "stale-chapter").exists()
