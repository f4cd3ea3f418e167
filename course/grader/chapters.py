"""The graded chapters and their exercises, read from the author's source notebooks.

An exercise in a chapter is two cells (course/notebook.py names every part of a chapter): the
answer cell, with nbgrader's solution metadata (`grade_id: exercise-N-M`) and its solution
region, and the check cell after it, `qM.check(<expression>)`. Points come from the exercise
module (`Exercise.points` in workbook/teaching/exercises/chN.py), the one place they are set.
"""
import ast
import importlib
from dataclasses import dataclass
from pathlib import Path

from course import ROOT
from course.notebook import Node, exercises_start, has_solution, is_check_cell, load

SOURCE = ROOT / "notebooks"

# The chapters a gradebook covers, in order (3 exercises each, 18 in all). The appendices are not
# graded: the costs appendix has no exercises, and the PostgreSQL appendix's exercises (A.1-A.3)
# need a database server beside every student. Add a chapter here to grade it.
GRADED = (
    "01-purpose-and-validation",
    "02-visibility",
    "03-revisions",
    "04-deletion",
    "05-recovery-and-timelines",
    "06-failure-cases-and-limits",
)


@dataclass(frozen=True)
class Exercise:
    number: str       # "1.1"
    chapter: str      # the chapter's file stem
    grade_id: str     # the answer cell's nbgrader grade_id, "exercise-1-1"
    answer_id: str    # the answer cell's id
    check_id: str     # the check cell's id
    module: str       # "workbook.teaching.exercises.ch1"
    attribute: str    # "q1"
    expression: str   # what the check cell passes to check(): "wide_fact"
    name: str | None  # the name the answer defines, when the expression is a plain name
    points: int

    @property
    def check_grade_id(self):
        """The grade_id of the autograder cell the class release makes of the check cell."""
        return "check-" + self.number.replace(".", "-")


@dataclass
class Chapter:
    stem: str
    number: int
    notebook: Node
    exercises: tuple

    @property
    def filename(self):
        return self.stem + ".ipynb"

    def code_cells(self):
        return [cell for cell in self.notebook.cells if cell.get("cell_type") == "code"]

    def exercise_cells(self):
        """The code cells of the exercise section (course/notebook.py), whose first cell imports
        everything its exercises use, so that it runs on its own."""
        cells = self.notebook.cells
        start = exercises_start(cells)
        if start == len(cells):
            raise ValueError(f"{self.filename}: no markdown cell opens with the heading 'Exercises'")
        return [cell for cell in cells[start:] if cell.get("cell_type") == "code"]


def parse_check(source, where):
    """('q1', 'wide_fact') from a check cell reading `q1.check(wide_fact)`; ValueError otherwise."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        raise ValueError(f"{where}: the check cell is not valid Python") from None
    body = tree.body
    if (len(body) != 1 or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Call)
            or not isinstance(body[0].value.func, ast.Attribute) or body[0].value.func.attr != "check"
            or not isinstance(body[0].value.func.value, ast.Name)
            or len(body[0].value.args) != 1 or body[0].value.keywords):
        raise ValueError(f"{where}: a check cell must be exactly one call qN.check(answer)")
    call = body[0].value
    return call.func.value.id, ast.get_source_segment(source, call.args[0])


def read_chapter(path):
    """The chapter at path with its exercises, each checked against its exercise module."""
    path = Path(path)
    notebook = load(path)
    number = int(path.stem[:2])
    module_name = f"workbook.teaching.exercises.ch{number}"
    module = importlib.import_module(module_name)
    cells = [cell for cell in notebook.cells if cell.get("cell_type") == "code"]
    exercises = []
    for index, cell in enumerate(cells):
        if not has_solution(cell):
            continue
        grade_id = cell.metadata["nbgrader"].get("grade_id", "")
        where = f"{path.name}, cell {cell.get('id')}"
        check = next((c for c in cells[index + 1:] if is_check_cell(c)), None)
        if check is None:
            raise ValueError(f"{where}: no qN.check(...) cell follows the answer cell")
        attribute, expression = parse_check(check.source, f"{path.name}, cell {check.get('id')}")
        exercise = getattr(module, attribute, None)
        if exercise is None:
            raise ValueError(f"{where}: {module_name} has no {attribute}")
        if grade_id != "exercise-" + exercise.number.replace(".", "-"):
            raise ValueError(f"{where}: grade_id {grade_id!r} does not name exercise {exercise.number}")
        points = exercise.points
        if type(points) is not int or points < 0:
            raise ValueError(f"{module_name}.{attribute}: points must be a non-negative int")
        name = expression if expression.isidentifier() else None
        exercises.append(Exercise(exercise.number, path.stem, grade_id, cell.get("id"), check.get("id"),
                                  module_name, attribute, expression, name, points))
    if not exercises:
        raise ValueError(f"{path.name}: no exercises (no answer cell with nbgrader solution metadata)")
    return Chapter(path.stem, number, notebook, tuple(exercises))


def graded_chapters(source=SOURCE, stems=GRADED):
    return [read_chapter(Path(source) / f"{stem}.ipynb") for stem in stems]


def select(wanted, stems=GRADED):
    """The graded chapters named in `wanted`, in course order: a comma-separated list of chapter
    numbers ("1,2" or "01,02") or file stems. ValueError naming CHAPTERS for anything else."""
    by_number = {int(stem[:2]): stem for stem in stems}
    chosen = set()
    for part in str(wanted).split(","):
        part = part.strip()
        if part.isdigit() and int(part) in by_number:
            chosen.add(by_number[int(part)])
        elif part in stems:
            chosen.add(part)
        else:
            known = ", ".join(str(n) for n in sorted(by_number))
            raise ValueError(f"CHAPTERS: {part!r} is not a graded chapter; give numbers from {known}, "
                             "separated by commas")
    return tuple(stem for stem in stems if stem in chosen)


def own_cell(source, width=60):
    """A chapter's own cell in words a student can find it by: its first line of code, quoted."""
    lines = [line.strip() for line in source.splitlines()]
    first = next((line for line in lines if line and not line.startswith("#|")), "")
    if len(first) > width:
        first = first[:width - 3] + "..."
    return f'the chapter\'s own cell that begins "{first}"' if first else "an empty cell of the chapter"
