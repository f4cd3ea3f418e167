"""Both editions run: the instructor's passes every check, the student's says "not attempted"."""
import importlib
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import student  # noqa: E402

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
CHECK = re.compile(r"\bq(\d+)\.check\(")


def exercises(notebook):
    """(solution region, exercise) pairs: each region is answered by the next check cell."""
    chapter = importlib.import_module(f"workbook.exercises.ch{int(notebook.stem[:2])}")
    cells = [c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]
    found = []
    for index, cell in enumerate(cells):
        for region in student.REGION.finditer(cell.source):
            check = next(c for c in cells[index:] if CHECK.search(c.source))
            found.append((region.group(0), getattr(chapter, "q" + CHECK.search(check.source)[1])))
    return found


def printed(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o["output_type"] == "stream")


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_has_three_exercises_whose_solutions_match_the_package(notebook):
    pairs = exercises(notebook)
    assert len(pairs) >= 3
    for region, exercise in pairs:
        code = "".join(l.strip() for l in region.splitlines()[1:-1])
        assert code.replace(" ", "") in exercise.answer.replace(" ", "").replace("\n", ""), exercise.number


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_solution_cells_carry_nbgrader_metadata(notebook):
    # nbgrader generate_assignment refuses a solution region in a cell not marked as a solution.
    cells = nbformat.read(notebook, as_version=4).cells
    marked = [c.metadata.get("nbgrader", {}) for c in cells if "### BEGIN SOLUTION" in c.source]
    assert marked and all(m.get("solution") is True and m.get("grade") is False for m in marked)
    ids = [m["grade_id"] for m in marked]
    assert len(set(ids)) == len(ids) and all(i.startswith(f"exercise-{int(notebook.stem[:2])}-") for i in ids)


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_instructor_edition_passes_every_check(notebook):
    checks = [printed(c) for c in nbformat.read(notebook, as_version=4).cells
              if c.cell_type == "code" and CHECK.search(c.source)]
    assert len(checks) >= 3
    for output in checks:
        assert re.fullmatch(r"Exercise \d\.\d+: correct: .+\n", output), output


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_student_edition_runs_and_every_check_says_not_attempted(notebook, tmp_path):
    edition = student.student_notebook(notebook)
    assert "### BEGIN SOLUTION" not in json.dumps(edition)
    assert all(not c.get("outputs") for c in edition.cells if c.cell_type == "code")
    # Runs top to bottom; nbclient only tolerates errors in cells tagged raises-exception.
    NotebookClient(edition, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    checks = [printed(c) for c in edition.cells if c.cell_type == "code" and CHECK.search(c.source)]
    assert len(checks) >= 3
    for output in checks:
        assert output.startswith(f"Exercise {int(notebook.stem[:2])}.") and "not attempted." in output, output
    stubs = [c for c in edition.cells if "raise NotImplementedError()" in c.get("source", "")]
    for cell in stubs:
        raised = [o for o in cell.outputs if o["output_type"] == "error"]
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        assert bool(raised) == tagged and (not raised or raised[0]["ename"] == "NotImplementedError")


def test_student_build_writes_every_chapter(tmp_path):
    assert student.main(tmp_path / "edition") == [p.name for p in CHAPTERS]
    assert sorted(p.name for p in (tmp_path / "edition" / "notebooks").iterdir()) == [p.name for p in CHAPTERS]
