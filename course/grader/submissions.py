"""A class folder: its students, each student's notebook for each chapter, and the answer cells.

Layouts (they may be mixed):

    class/alice/01-purpose-and-validation.ipynb    a sub-folder per student, notebooks anywhere
    class/alice/01-purpose-and-validation/01-purpose-and-validation.ipynb   inside it (nbgrader's
                                                   submitted/<student>/<assignment>/ works as is)
    class/bob.ipynb                                a single notebook named by its student
    alice/01-purpose-and-validation.ipynb ...      one student's own folder (chapter-named notebooks
                                                   directly inside): the folder's name is the student

Hidden folders and files (.ipynb_checkpoints, .git) are ignored. Which chapter a notebook is comes
from its cells (the chapter's cell ids or nbgrader grade_ids), then from its file name (01-...).

From a student's notebook only the answer cells are taken, one per exercise, found in this order:
  1. the code cell with the answer cell's id (c01-032): the chapter, the hand-out and nbgrader's
     release all keep the author's cell ids;
  2. else the code cell whose nbgrader metadata has the answer's grade_id (exercise-1-1);
  3. else the code cell that defines the name the check asks about (`wide_fact = ...`,
     `def to_key(...)`) at its top level, leaving out cells that are the chapter's own.
When several cells qualify, the last one wins (nbgrader, too, keeps the last of duplicated ids).
"""
import ast
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from course.notebook import load


@dataclass
class Student:
    name: str
    notebooks: dict = field(default_factory=dict)   # chapter stem -> (Path, notebook)
    unreadable: dict = field(default_factory=dict)  # chapter stem -> why the notebook cannot be read
    notes: list = field(default_factory=list)


@dataclass(frozen=True)
class Answer:
    source: str
    found_by: str   # "cell id", "grade_id" or "name"


def hidden(path, base):
    return any(part.startswith(".") for part in path.relative_to(base).parts)


MOST_BYTES = 50 << 20  # of one notebook: a chapter with outputs is about 1 MB


def read_notebook(path):
    """The notebook, or (None, reason) when it cannot be read. Only a regular file is read: a
    link (to the author's chapters, or to another student's work), a FIFO or a device is not."""
    try:
        found = os.lstat(path)
    except OSError as error:
        return None, type(error).__name__
    if stat.S_ISLNK(found.st_mode):
        return None, "it is a link, and the grader reads only files handed in"
    if not stat.S_ISREG(found.st_mode):
        return None, "it is not a regular file"
    if found.st_size > MOST_BYTES:
        return None, f"it is larger than {MOST_BYTES >> 20} MB"
    try:
        return load(path), None
    except Exception as error:  # invalid JSON, not a notebook, unreadable file
        return None, f"{type(error).__name__}"


def chapter_of(notebook, path, chapters):
    """The stem of the chapter this notebook is, or None."""
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
    for chapter in chapters:
        if path.stem == chapter.stem or path.stem.startswith(chapter.stem[:3]):
            return chapter.stem
    return None


def nbgrader_id(cell):
    meta = cell.get("metadata", {}).get("nbgrader", {})
    found = meta.get("grade_id") if isinstance(meta, dict) else None
    return found if isinstance(found, str) else None


def collect(student, paths, chapters, base, known):
    """Assign the student's notebooks to chapters, noting what is ignored or doubled. A notebook
    of a chapter in `known` but not in `chapters` (one left out of this grading) is left alone."""
    graded = {chapter.stem for chapter in chapters}
    found = {}
    for path in sorted(paths):
        notebook, reason = read_notebook(path)
        stem = chapter_of(notebook, path, known)
        shown = str(path.relative_to(base))
        if stem is None:
            student.notes.append(f"{shown} is none of the graded chapters and was not graded.")
            continue
        if stem not in graded:
            continue
        found.setdefault(stem, []).append((path, notebook, reason))
    for stem, candidates in found.items():
        named = [c for c in candidates if c[0].name == stem + ".ipynb"]
        path, notebook, reason = (named or candidates)[-1]
        if len(candidates) > 1:
            student.notes.append(f"{len(candidates)} notebooks are chapter {int(stem[:2])}; "
                                 f"{path.relative_to(base)} was graded.")
        if reason is None:
            student.notebooks[stem] = (path, notebook)
        else:
            student.unreadable[stem] = f"{path.relative_to(base)} could not be read ({reason})"


def notebooks_under(folder):
    """Every .ipynb under folder, hidden folders left out, links to folders not followed (a
    notebook that is a link is found, and refused when read)."""
    found = []
    for root, folders, files in os.walk(folder, followlinks=False):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        found += [Path(root) / name for name in sorted(files) if name.endswith(".ipynb")]
    return found


MOST_NAME = 100  # characters of a student's name as the gradebook shows it


def shown(name):
    """A student's name as the gradebook, the summary and the feedback file show it: every
    character that does not print as itself (a control character, any whitespace but a plain
    space, a backslash) written as an escape, so two folders whose names differ only there stay
    two students; a name longer than MOST_NAME cut and told apart by a digest of the whole."""
    text = "".join(c if c == " " or (c.isprintable() and not c.isspace() and c != "\\")
                   else c.encode("unicode_escape").decode("ascii") if c != "\\" else "\\\\"
                   for c in name)
    if len(text) > MOST_NAME:
        digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
        text = f"{text[:MOST_NAME - 14]}..{digest}"
    return text


def students(folder, chapters, known=None):
    """The students of a class folder, sorted by name. `known`: every chapter a notebook may be
    (default: `chapters`), when only some of them are graded."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"SUBMISSION: {folder} is not a folder")
    known = list(known or chapters)
    stems = {chapter.stem for chapter in known}
    found = {}   # name -> (folder the notebooks are shown relative to, notebook paths)
    own_folder = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir() and not entry.is_symlink():
            found[entry.name] = (entry, notebooks_under(entry))
        elif entry.suffix == ".ipynb":
            if entry.stem in stems:
                own_folder.append(entry)              # one student's own folder
            else:
                found[entry.stem] = (folder, [entry])  # a notebook named by its student
    if own_folder:
        found.setdefault(folder.resolve().name, (folder, []))[1].extend(own_folder)
    result = []
    for name in sorted(found):
        student = Student(shown(name))
        base, paths = found[name]
        collect(student, paths, chapters, base, known)
        result.append(student)
    return result


def defined_names(source):
    """The names a cell binds at its top level; empty when it is not valid Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
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
    """{exercise number: Answer} for the exercises whose answer cell the notebook holds."""
    cells = [cell for cell in notebook.cells if cell.get("cell_type") == "code"]
    answer_ids = {e.answer_id for e in chapter.exercises}
    own = {cell.source for cell in chapter.code_cells() if cell.get("id") not in answer_ids}
    found = {}
    taken = set()
    for exercise in chapter.exercises:
        by_id = [c for c in cells if c.get("id") == exercise.answer_id]
        by_grade_id = [c for c in cells if nbgrader_id(c) == exercise.grade_id]
        if by_id:
            found[exercise.number] = Answer(by_id[-1].get("source", ""), "cell id")
        elif by_grade_id:
            found[exercise.number] = Answer(by_grade_id[-1].get("source", ""), "grade_id")
        else:
            continue
        taken.add(id(by_id[-1] if by_id else by_grade_id[-1]))
    for exercise in chapter.exercises:
        if exercise.number in found or exercise.name is None:
            continue
        by_name = [c for c in cells if id(c) not in taken
                   and c.source not in own
                   and exercise.name in defined_names(c.source)]
        if by_name:
            found[exercise.number] = Answer(by_name[-1].source, "name")
            taken.add(id(by_name[-1]))
    return found
