"""The editions made from the source chapters.

The author's edition (notebooks/) passes every check. The learner's edition, which make lab
copies into my-workbook/, holds no worked answer, keeps the teaching outputs, and every answer
cell in it runs and leaves its check saying "not attempted".
"""
import importlib
import json
import re
from pathlib import Path

import nbformat
import pytest

from workbook.teaching.exercises import ____, answers

ROOT = Path(__file__).resolve().parents[2]
from course import notebook as notebook_model
from course.editions import answers as solution_cells
from course.editions import learner

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CHECK = re.compile(r"\bq(\d+)\.(check|compare)\(")


def printed(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o["output_type"] == "stream")


def code_cells(notebook, pattern=CHECK):
    return [c for c in notebook.cells if c.cell_type == "code" and pattern.search(c.source)]


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_every_solution_cell_carries_nbgrader_metadata_and_a_blank(notebook):
    # nbgrader generate_assignment refuses a solution region in a cell not marked as a solution.
    cells = nbformat.read(notebook, as_version=4).cells
    marked = [c for c in cells if "### BEGIN SOLUTION" in c.source]
    assert len(marked) >= 3
    for cell in marked:
        meta = cell.metadata.get("nbgrader", {})
        assert meta.get("solution") is True and meta.get("grade") is False
        assert meta["grade_id"].startswith(f"exercise-{int(notebook.stem[:2])}-")
        top_level = notebook_model.REGION.search(cell.source).group(1) == ""
        assert not top_level or re.match(r"\w+ = ____\n", cell.source), cell.source


def test_the_package_holds_the_notebooks_worked_answers():
    assert answers() == solution_cells.extract(), "run make export"
    assert sorted(answers()) == [f"{c}.{n}" for c in [*range(1, 7), "A"] for n in (1, 2, 3)]


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_instructor_edition_passes_every_check(notebook):
    checks = code_cells(nbformat.read(notebook, as_version=4), re.compile(r"\bq\d\.check\("))
    assert len(checks) >= 3
    for cell in checks:
        assert re.fullmatch(r"Exercise \d\.\d+: correct: .+\n", printed(cell)), printed(cell)


def squeezed(text):
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_learner_edition_shows_no_answer(notebook):
    edition = learner.learner_notebook(notebook)
    assert "BEGIN SOLUTION" not in json.dumps(edition)
    shown = squeezed(json.dumps([[c.source, c.get("outputs")] for c in edition.cells],
                                ensure_ascii=False).encode().decode("unicode_escape"))
    chapter = int(notebook.stem[:2])
    for number, code in answers().items():
        if not number.startswith(f"{chapter}."):
            continue
        body = "\n".join(line for line in code.splitlines() if not line.startswith("def "))
        assert squeezed(body) not in shown, number
        value = re.fullmatch(r"(?s).*^\w+ = (.+)", code.strip(), re.M)
        if value:  # a predicted value or a built one: not printed anywhere either
            assert squeezed(value[1]) not in shown, number
    for cell in edition.cells[notebook_model.exercises_start(edition.cells):]:
        assert not cell.get("outputs"), cell.source  # no verdict, run or plot to peek at


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_learner_edition_keeps_the_teaching_outputs(notebook):
    # every cell but the nbdev directive cells (#| default_exp), which do nothing in a copy
    source = [c for c in nbformat.read(notebook, as_version=4).cells if not notebook_model.is_directive_cell(c)]
    edition = learner.learner_notebook(notebook)
    start = notebook_model.exercises_start(source)
    pointer = "\n\n" + learner.POINTER  # chapter 1's way to the copy's how-to file
    assert [c.source for c in source[:start] if "### BEGIN" not in c.source] == \
        [c.source.replace(pointer, "") for c in edition.cells[:start] if "### BEGIN" not in c.source]
    def shown(cells):  # what an output shows, not the execution count it was numbered with
        return [[{k: v for k, v in o.items() if k != "execution_count"} for o in c.get("outputs", [])]
                for c in cells]
    assert shown(source[:start]) == shown(edition.cells[:start])
    assert all(c.get("execution_count") is None for c in edition.cells)
    assert [c.get("id") for c in source] == [c.get("id") for c in edition.cells]


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_every_learner_stub_runs_and_its_check_says_not_attempted(notebook):
    """Each answer cell as the learner meets it runs without raising, and the check after it
    says "not attempted". (make test-browser runs the whole edition in JupyterLab.)"""
    chapter = importlib.import_module(f"workbook.teaching.exercises.ch{int(notebook.stem[:2])}")
    cells = learner.learner_notebook(notebook).cells
    stubs = [index for index, cell in enumerate(cells) if notebook_model.is_answer_cell(cell)]
    assert len(stubs) >= 3
    for index in stubs:
        namespace = {"____": ____}
        exec(cells[index].source, namespace)   # defines the blank or the stub function
        check = next(c for c in cells[index:] if c.cell_type == "code" and CHECK.search(c.source))
        name, argument = re.fullmatch(r"(q\d)\.check\((\w+)\)", check.source.strip()).groups()
        verdict = getattr(chapter, name).verdict(namespace[argument])
        assert verdict.status == "not attempted", (notebook.stem, name, verdict)
        assert "____" in str(verdict)  # it says which blank to replace
