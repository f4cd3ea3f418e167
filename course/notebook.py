"""How every edition and the grader read a chapter: one definition of each part of a notebook.

A chapter is a Jupyter notebook (nbformat 4). Its parts:

- a **directive cell**: a code cell of nbdev directives alone (`#| default_exp validation`). It
  tells the exporter where the chapter's code goes and a reader nothing, so no edition keeps it.
- the **exercise section**: from the first markdown cell that holds a heading "Exercises", at
  any level (`## Exercises`, `### Exercises`), to the end of the notebook.
- an **answer cell**: a code cell that nbgrader's metadata marks as a solution
  (`"nbgrader": {"solution": true, "grade_id": "exercise-1-1"}`). In the author's source it
  holds a **solution region**, the lines between `### BEGIN SOLUTION` and `### END SOLUTION`:
  at the top of the cell it follows the `name = ____` line the learner starts from; indented,
  it is the body of a function. In a learner's copy or a hand-in the region has been replaced.
- a **check cell**: the code cell after an answer cell that calls `qN.check(answer)`.

course/editions/steps.py makes the editions out of these parts, course/grader/chapters.py
reads the graded exercises with them. Nothing else defines them.
"""
import json
import re

# The region and its markers. Group 1 is the indent (empty at the top of a cell), group 2 the
# worked answer between the markers.
REGION = re.compile(r"^([ \t]*)### BEGIN SOLUTION\n(.*?)^[ \t]*### END SOLUTION\n?", re.M | re.S)
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
# The blank line a top-level answer starts from: `wide_fact = ____`.
BLANK = re.compile(r"^[ \t]*[A-Za-z_][A-Za-z0-9_]* = ____[ \t]*(#.*)?\n", re.M)
EXERCISES_HEADING = re.compile(r"^#{1,6}[ \t]+Exercises[ \t]*#*[ \t]*$", re.M)
CHECK_CALL = re.compile(r"\bq\d+\.check\(")
# nbgrader's own stub for Python, which its ClearSolutions writes where a region was.
NBGRADER_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")


def is_directive_cell(cell):
    lines = [line for line in cell.get("source", "").splitlines() if line.strip()]
    return cell.get("cell_type") == "code" and bool(lines) and all(line.startswith("#|") for line in lines)


def is_answer_cell(cell):
    return (cell.get("cell_type") == "code"
            and bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution")))


def has_solution(cell):
    """An answer cell as the author wrote it: its solution region is still in it."""
    return is_answer_cell(cell) and REGION.search(cell.get("source", "")) is not None


def is_check_cell(cell):
    return cell.get("cell_type") == "code" and CHECK_CALL.search(cell.get("source", "")) is not None


def opens_exercises(cell):
    return cell.get("cell_type") == "markdown" and EXERCISES_HEADING.search(cell.get("source", "")) is not None


def exercises_start(cells):
    """The index of the cell that opens the exercise section; len(cells) when there is none."""
    return next((index for index, cell in enumerate(cells) if opens_exercises(cell)), len(cells))


def replace_regions(source, replacement):
    """The source with each solution region replaced by replacement(indent), a string of whole
    lines (or "" to drop the region)."""
    return REGION.sub(lambda match: replacement(match.group(1)), source + "\n").rstrip("\n")


def at_top_level(source):
    """Whether a solution region sits at the top of the cell (not inside a function)."""
    return any(match.group(1) == "" for match in REGION.finditer(source))


def nbgrader_stubbed(source):
    """The source with every solution region replaced by nbgrader's own stub, as its
    generate_assignment leaves an answer cell for the student."""
    return replace_regions(source, lambda indent: "".join(f"{indent}{line}\n" for line in NBGRADER_STUB))


def worked_answer(source):
    """The answer cell as a worked answer: the region's lines kept, the markers and the blank
    line it replaces gone."""
    source = REGION.sub(lambda match: match.group(2), source + "\n")
    return BLANK.sub("", source).strip("\n") + "\n"


def without_markers(source):
    """The answer cell as a student who solved it would leave it: the blank line and the worked
    answer both kept, only the marker lines gone."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in MARKERS)


def exercise_number(grade_id):
    """nbgrader's grade_id exercise-1-1 (or exercise-a-1) is Exercise 1.1 (or A.1)."""
    match = re.fullmatch(r"exercise-([0-9a-z]+)-([0-9]+)", grade_id)
    if not match:
        raise ValueError(f"grade_id {grade_id!r} is not of the form exercise-N-M")
    return f"{match[1].upper()}.{match[2]}"


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


def load(path):
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
    """Version 4 notebook JSON, parsed, as nodes: each cell with its metadata and its source
    joined into one string. ValueError when a part has the wrong shape (the grader's bounded
    reader of hand-ins, course/grader/reading.py, parses within its caps, then calls this)."""
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
