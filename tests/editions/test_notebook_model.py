"""One notebook model (course/notebook.py): every edition and the grader read a chapter's parts
the same way, so a heading written another way moves all of them together or none."""
import json
from pathlib import Path

import nbformat
import pytest

from course import notebook as model
from course.editions import learner, release
from course.grader.chapters import read_chapter

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "notebooks" / "01-purpose-and-validation.ipynb"


def with_heading(tmp_path, heading):
    """Chapter 1 with its exercises' heading written as `heading`, under its own file name."""
    notebook = json.loads(CHAPTER.read_text())
    [cell] = [c for c in notebook["cells"] if c["cell_type"] == "markdown"
              and "".join(c["source"]).startswith("## Exercises")]
    cell["source"] = "".join(cell["source"]).replace("## Exercises", heading, 1)
    folder = tmp_path / heading.replace("#", "h").replace(" ", "-")
    folder.mkdir()
    (folder / CHAPTER.name).write_text(json.dumps(notebook))
    return folder / CHAPTER.name


def without_heading(notebook):
    """The notebook as JSON with the exercises' heading line left out, to compare editions."""
    data = json.loads(nbformat.writes(nbformat.from_dict(notebook)))
    for cell in data["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = "\n".join(line for line in "".join(cell["source"]).splitlines()
                                       if "Exercises" not in line or not line.startswith("#"))
    return data


def editions(path):
    chapter = read_chapter(path)
    return {
        "learner": without_heading(learner.learner_notebook(path)),
        "release": without_heading(release.release_notebook(chapter, solutions=True)),
        "hand-out": without_heading(release.release_notebook(chapter, solutions=False)),
        "grader": [cell.get("id") for cell in chapter.exercise_cells()],
    }


@pytest.fixture(scope="module")
def as_written():
    return editions(CHAPTER)


@pytest.mark.parametrize("heading", ["### Exercises", "# Exercises", "## Exercises ##"])
def test_a_heading_variant_is_the_exercise_section_for_every_edition_and_the_grader(tmp_path, heading,
                                                                                    as_written):
    assert editions(with_heading(tmp_path, heading)) == as_written


def test_a_heading_that_only_starts_with_the_word_opens_no_exercise_section(tmp_path):
    path = with_heading(tmp_path, "## Exercises for later")
    cells = nbformat.read(path, as_version=4).cells
    assert model.exercises_start(cells) == len(cells)
    with pytest.raises(ValueError, match="no markdown cell opens with the heading 'Exercises'"):
        read_chapter(path).exercise_cells()
    with pytest.raises(ValueError, match="expected one markdown cell with the heading 'Exercises'"):
        release.release_notebook(read_chapter(path), solutions=True)


def test_the_parts_of_a_cell():
    answer = nbformat.v4.new_code_cell("x = ____\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION",
                                       metadata={"nbgrader": {"solution": True, "grade_id": "exercise-1-1"}})
    inside = "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION"
    assert model.is_answer_cell(answer) and model.has_solution(answer) and model.at_top_level(answer.source)
    assert not model.at_top_level(inside)
    assert model.worked_answer(answer.source) == "x = 1\n"
    assert model.without_markers(answer.source) == "x = ____\nx = 1"
    assert model.nbgrader_stubbed(inside) == "def f():\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    assert model.is_directive_cell(nbformat.v4.new_code_cell("#| default_exp validation"))
    assert not model.is_directive_cell(nbformat.v4.new_code_cell("#| export\nx = 1"))
    assert model.exercise_number("exercise-a-2") == "A.2"
