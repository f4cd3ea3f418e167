"""The graded chapters and their exercises, read from the author's source notebooks.

An exercise in a chapter is two cells: the answer cell, which carries nbgrader's solution
metadata (`grade_id: exercise-N-M`) and the worked answer between `### BEGIN SOLUTION` and
`### END SOLUTION`, and the next code cell that calls `qM.check(<expression>)`. Points come from
the exercise module (`Exercise.points` in workbook/teaching/exercises/chN.py), the one place they are set.
"""
import ast
import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from course import ROOT
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

# nbgrader's markers, and the stub nbgrader's ClearSolutions writes for Python in their place.
REGION = re.compile(r"^([ \t]*)### BEGIN SOLUTION\n.*?^[ \t]*### END SOLUTION\n?", re.M | re.S)
STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
CHECK_CALL = re.compile(r"\bq\d+\.check\(")
EXERCISES = re.compile(r"^## Exercises[ \t]*$", re.M)  # the heading that opens a chapter's exercises


def stubbed(source):
    """The source with every solution region replaced by nbgrader's stub, and whether a stub sits
    at the top level of the cell (so that running the cell raises NotImplementedError)."""
    top_level = any(match.group(1) == "" for match in REGION.finditer(source))
    replaced = REGION.sub(lambda m: "".join(f"{m.group(1)}{line}\n" for line in STUB), source)
    return replaced.rstrip("\n"), top_level


def without_markers(source):
    """The answer cell as a student who solved it would leave it: the worked answer kept, the
    marker lines gone."""
    lines = [line for line in source.splitlines()
             if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")]
    return "\n".join(lines)


class Node(dict):
    """A notebook, cell or metadata dict whose keys read as attributes, as nbformat's do."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


def nodes(value):
    if isinstance(value, dict):
        return Node({key: nodes(item) for key, item in value.items()})
    if isinstance(value, list):
        return [nodes(item) for item in value]
    return value


def load_notebook(path):
    """A notebook as nbformat.read(path, as_version=4) gives it, for version 4 files, without
    importing nbformat (whose schema validator takes a second to import; the grader reads
    notebooks often and validates none). Other versions go through nbformat."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict) or data.get("nbformat") != 4 or not isinstance(data.get("cells"), list):
        import nbformat
        return nbformat.read(path, as_version=4)
    return as_notebook(data)


def as_notebook(data):
    """Version 4 notebook JSON (parsed) as nodes, each cell with metadata and its source joined;
    ValueError naming what has the wrong shape."""
    notebook = nodes(data)
    for cell in notebook.cells:
        if not isinstance(cell, dict):
            raise ValueError("a cell is not a JSON object")
        cell.setdefault("metadata", Node())
        cell.setdefault("source", "")
        if isinstance(cell.source, list) and all(isinstance(line, str) for line in cell.source):
            cell.source = "".join(cell.source)
        if not isinstance(cell.source, str) or not isinstance(cell.metadata, dict):
            raise ValueError("a cell's source or metadata has the wrong type")
    return notebook


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
        """The code cells after the markdown heading "## Exercises": the exercise section, whose
        first cell imports everything its exercises use, so that it runs on its own."""
        cells = self.notebook.cells
        start = next((index for index, cell in enumerate(cells) if cell.get("cell_type") == "markdown"
                      and EXERCISES.search(cell.get("source", ""))), None)
        if start is None:
            raise ValueError(f"{self.filename}: no markdown cell opens with the heading '## Exercises'")
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
    notebook = load_notebook(path)
    number = int(path.stem[:2])
    module_name = f"workbook.teaching.exercises.ch{number}"
    module = importlib.import_module(module_name)
    cells = [cell for cell in notebook.cells if cell.get("cell_type") == "code"]
    exercises = []
    for index, cell in enumerate(cells):
        meta = cell.metadata.get("nbgrader", {})
        if not (meta.get("solution") and REGION.search(cell.source)):
            continue
        grade_id = meta.get("grade_id", "")
        where = f"{path.name}, cell {cell.get('id')}"
        check = next((c for c in cells[index + 1:] if CHECK_CALL.search(c.source)), None)
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
