"""A student's notebook, read within stated caps: which chapter it is, and its answer cells.

This runs in a judge process (course.grader.judge.job), inside that job's budget; the grader's
own process never parses a submission. Each cap is checked before the work it bounds, so the
cost of reading is linear in what a student hands in:

    MOST_BYTES    of one notebook file, checked before it is parsed
    MOST_VALUES   JSON values in it (bounded from above by its commas and brackets, counted
                  before parsing: json.loads then holds at most about 250 bytes per value)
    MOST_CELL     characters of a code cell the grader reads for an answer: a larger answer cell
                  is refused with a sentence, and a larger cell is never parsed (ast.parse holds
                  about a kilobyte per character of source)

Which chapter a notebook is comes from its cells (the chapter's cell ids or nbgrader grade_ids),
then from its file name. From a notebook only the answer cells are taken, one per exercise:
  1. the code cell with the answer cell's id (c01-032): the chapter, the hand-out and nbgrader's
     release all keep the author's cell ids;
  2. else the code cell whose nbgrader metadata has the answer's grade_id (exercise-1-1);
  3. else the code cell that defines the name the check asks about (`wide_fact = ...`,
     `def to_key(...)`) at its top level, leaving out cells that are the chapter's own.
When several cells qualify, the last one wins (nbgrader, too, keeps the last of duplicated ids).
"""
import ast
import json
from dataclasses import dataclass

from course.notebook import as_notebook

MOST_BYTES = 16 << 20     # a chapter with its outputs is about 1 MB; the largest, 0.8 MB
MOST_VALUES = 500_000     # a chapter holds about 3,000
MOST_CELL = 64 << 10      # an answer cell holds a few hundred characters


class Unreadable(ValueError):
    """A notebook the grader does not read; the message says why, in a few words."""


@dataclass(frozen=True)
class Answer:
    source: str
    found_by: str   # "cell id", "grade_id" or "name"


def load(data):
    """The notebook in `data` (bytes) as nbformat 4 nodes, or Unreadable."""
    if len(data) > MOST_BYTES:
        raise Unreadable(f"it is larger than {MOST_BYTES >> 20} MB")
    if data.count(b",") + data.count(b"[") + data.count(b"{") >= MOST_VALUES:
        raise Unreadable(f"it holds more than {MOST_VALUES:,} JSON values")
    try:
        found = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise Unreadable("it is not UTF-8 text") from None
    except RecursionError:
        raise Unreadable("it is nested too deeply to be a notebook") from None
    except ValueError:
        raise Unreadable("it is not valid JSON") from None
    if not isinstance(found, dict) or not isinstance(found.get("cells"), list):
        raise Unreadable("it is not a notebook (no list of cells)")
    if found.get("nbformat") != 4:
        raise Unreadable("it is not an nbformat 4 notebook (save it again with JupyterLab)")
    try:
        return as_notebook(found)
    except ValueError as error:
        raise Unreadable(str(error)) from None


def nbgrader_id(cell):
    meta = cell.get("metadata", {}).get("nbgrader", {})
    found = meta.get("grade_id") if isinstance(meta, dict) else None
    return found if isinstance(found, str) else None


def chapter_of(notebook, filename, chapters):
    """The stem of the chapter this notebook is (None: none of them), from its cells, else from
    its file name; `notebook` None when it could not be read."""
    if notebook is not None:
        ids = {cell.get("id") for cell in notebook.cells if isinstance(cell.get("id"), str)}
        grade_ids = {nbgrader_id(cell) for cell in notebook.cells}
        scores = []
        for chapter in chapters:
            own_ids = {e.answer_id for e in chapter.exercises} | {e.check_id for e in chapter.exercises}
            own_grade_ids = {e.grade_id for e in chapter.exercises} | {e.check_grade_id for e in chapter.exercises}
            scores.append((len(ids & own_ids) + len(grade_ids & own_grade_ids), chapter.stem))
        best = max(scores)
        if best[0] > 0 and [s for s, _ in scores].count(best[0]) == 1:
            return best[1]
    stem = filename[:-len(".ipynb")] if filename.endswith(".ipynb") else filename
    for chapter in chapters:
        if stem == chapter.stem or stem.startswith(chapter.stem[:3]):
            return chapter.stem
    return None


def defined_names(source):
    """The names a cell binds at its top level; empty when it is not valid Python or is larger
    than MOST_CELL characters (never parsed)."""
    if len(source) > MOST_CELL:
        return set()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def answers(notebook, chapter):
    """{exercise number: Answer} for the exercises whose answer cell the notebook holds. An answer
    cell larger than MOST_CELL characters is kept with its size only (too_large() says so)."""
    cells = [cell for cell in notebook.cells if cell.get("cell_type") == "code"]
    answer_ids = {e.answer_id for e in chapter.exercises}
    own = {cell.source for cell in chapter.code_cells() if cell.get("id") not in answer_ids}
    found, taken, names = {}, set(), {}
    for exercise in chapter.exercises:
        by_id = [c for c in cells if c.get("id") == exercise.answer_id]
        by_grade_id = [c for c in cells if nbgrader_id(c) == exercise.grade_id]
        if by_id:
            found[exercise.number] = Answer(by_id[-1].source, "cell id")
        elif by_grade_id:
            found[exercise.number] = Answer(by_grade_id[-1].source, "grade_id")
        else:
            continue
        taken.add(id(by_id[-1] if by_id else by_grade_id[-1]))
    for exercise in chapter.exercises:
        if exercise.number in found or exercise.name is None:
            continue
        by_name = []
        for cell in cells:
            if id(cell) in taken or cell.source in own:
                continue
            if id(cell) not in names:
                names[id(cell)] = defined_names(cell.source)
            if exercise.name in names[id(cell)]:
                by_name.append(cell)
        if by_name:
            found[exercise.number] = Answer(by_name[-1].source, "name")
            taken.add(id(by_name[-1]))
    return found


def too_large(answer):
    """The sentence for an answer cell larger than MOST_CELL characters, or None."""
    if len(answer.source) <= MOST_CELL:
        return None
    return (f"holds {len(answer.source):,} characters, more than the {MOST_CELL:,} the grader "
            "reads of an answer cell")
