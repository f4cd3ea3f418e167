"""Grading a submission asks the checks again; printed verdicts in the notebook count for nothing."""
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import grade  # noqa: E402
import student  # noqa: E402

CHAPTER_1 = ROOT / "notebooks" / "01-purpose-and-validation.ipynb"


def test_instructor_chapter_grades_correct(tmp_path):
    shutil.copy(CHAPTER_1, tmp_path)
    verdicts = grade.grade_notebook(tmp_path / CHAPTER_1.name)
    assert [v["status"] for v in verdicts] == ["correct"] * 3


def test_student_chapter_grades_not_attempted(tmp_path):
    nbformat.write(student.student_notebook(CHAPTER_1), tmp_path / CHAPTER_1.name)
    assert grade.main(tmp_path) == 1
    assert [v["status"] for v in grade.grade_notebook(tmp_path / CHAPTER_1.name)] == ["not attempted"] * 3


def test_a_faked_verdict_does_not_fool_the_grader(tmp_path):
    notebook = student.student_notebook(CHAPTER_1)
    for cell in notebook.cells:
        if "raise NotImplementedError()" in cell.source and "wide_fact" in cell.source:
            cell.source = 'wide_fact = {"schema": 1, "text": "short", "source": "s", "reviewed": False}'
            cell.metadata["tags"] = []
        if cell.source.strip() == "q1.check(wide_fact)":
            cell.source = 'print("Exercise 1.1: correct: trust me.")\nq1.check(wide_fact)'
    nbformat.write(notebook, tmp_path / CHAPTER_1.name)
    verdicts = grade.grade_notebook(tmp_path / CHAPTER_1.name)
    assert verdicts[0]["status"] == "not yet"
    assert "only" in verdicts[0]["sentence"]
