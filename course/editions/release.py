"""The class release: an nbgrader course folder made from the author's chapters.

    OUT/nbgrader_config.py            settings for nbgrader (per-cell time limit, deleted checks put back)
    OUT/source/<chapter>/<chapter>.ipynb
                                      one nbgrader assignment per graded chapter: the worked answers,
                                      and each check cell made an autograder cell with its points
    OUT/handout/<chapter>.ipynb       the hand-out: what `nbgrader generate_assignment` makes of the
                                      source (stubs, no hidden tests, outputs cleared), for classes
                                      that do not use nbgrader

Each check cell `qN.check(answer)` becomes a locked nbgrader test cell (`grade: true`, `points`
from Exercise.points). Learners see only the check line, which prints one sentence and never
raises. Below it, between nbgrader's `### BEGIN HIDDEN TESTS` / `### END HIDDEN TESTS`, sit two
assertions that only nbgrader's autograder runs: the answer cell above ran without an error, and
a freshly imported copy of the exercise module says correct. So `nbgrader autograde` awards
exactly the points `make grade` does. The author's notebooks stay free of grade cells.

The chapter's exercises introduction (the markdown cell with the heading "## Exercises") gains
FOR_GRADING: where an answer goes, that a stub left raising earns nothing, and that `make grade`
runs answer cells only, so a helper defined in a cell of its own would be missing there.

A code cell of nbdev directives alone (`#| default_exp validation`) is dropped, as the learner's
edition drops it (a directive cell, course/notebook.py): it exports nothing from a student's
copy, and as the first cell of a fetched chapter it only puzzles.

    OUT/package/                      the class edition of the `workbook` package, for the
                                      students' environment (`pip install OUT/package`): the
                                      package without its checks (workbook/teaching/exercises/checks/) and
                                      without the worked answers (answers.json), so that nothing
                                      a student's code can read there gives an answer away. The
                                      grader's sandbox sees the same edition (write_package).
"""
import argparse
import copy
import shutil
from pathlib import Path

import nbformat

from nbconvert.preprocessors import Preprocessor

from course.editions.package import write_package
from course.editions.steps import ClearOutputs, DropDirectiveCells, StubSolutions, TagRaisingAnswers, apply
from course.grader.chapters import GRADED, ROOT, SOURCE, graded_chapters, read_chapter
from course.notebook import opens_exercises

COURSE_ID = "agent-memory-workbook"

FOR_GRADING = ("**For grading:** write each answer where its cell says `____` or "
               "`# YOUR CODE HERE`, and delete the stub's `raise NotImplementedError()`: an answer "
               "cell that still raises earns nothing. Only your answer cells are graded, run after "
               "the first cell of these exercises, so keep everything an answer needs beyond what "
               "that cell imports (a helper function, an import, a constant) inside that answer "
               "cell.")

HIDDEN_TESTS = '''\
### BEGIN HIDDEN TESTS
# Run by nbgrader's autograder only. Full points when the answer cell above ran without an error
# and a freshly imported copy of the check says correct: a check patched in the notebook, or a
# printed verdict, counts for nothing.
import importlib as _importlib, sys as _sys
assert get_ipython().last_execution_succeeded, "Exercise {number}: no points: the answer cell above raised an error, so its answer does not count."
for _name in [_n for _n in _sys.modules if _n.startswith("workbook.teaching.exercises")]:
    del _sys.modules[_name]
_verdict = _importlib.import_module("{module}").{attribute}.verdict({expression})
assert _verdict.correct, str(_verdict)
### END HIDDEN TESTS'''

CONFIG = '''\
# nbgrader settings for the agent memory workbook's class release (written by `make class`).
# Run nbgrader in this folder; docs/instructors.md has the whole recipe.
import copy

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader.converters.autograde import Autograde
from nbgrader.preprocessors import Execute, OverwriteCells

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "{course}"
# Each cell may run this many seconds, like make grade's TIMEOUT. A cell over it is interrupted
# and fails (nbgrader's Execute.interrupt_on_timeout, on by default), and the cells after it
# still run. nbgrader's LimitOutput keeps at most 1,000 lines of a cell's output.
c.Execute.timeout = {timeout}
# A check cell that a student deleted is put back and run, as make grade runs every check.
c.OverwriteCells.add_missing_cells = True


class ExecuteWithoutStuckCells(Execute):
    \"\"\"nbgrader's Execute, except that a cell that does not stop when interrupted (it ignores the
    interrupt, or its output keeps coming: nbgrader's IOPub timeout) or that ends the kernel fails
    alone. nbgrader would drop the whole notebook ("Removing failed assignment"); here the kernel
    is started again and the notebook runs again with that cell raising instead, as make grade
    runs a chapter again without an answer that will not stop. A kernel that ends before its
    first cell is started again (three starts in all): kernels started at once by two nbgrader
    runs can be given the same port, and the second then cannot bind it.\"\"\"

    def preprocess(self, nb, resources=None, km=None):
        handed_in, stuck, starts = copy.deepcopy(nb), {{}}, 1
        while True:
            self.running = None
            try:
                done, resources = super().preprocess(nb, resources, km)
                break
            except (CellTimeoutError, RuntimeError) as error:   # DeadKernelError is a RuntimeError
                if self.running is None and isinstance(error, RuntimeError) and starts < 3:
                    starts += 1   # the kernel ended before its first cell: start it again
                    continue
                if (not isinstance(error, (CellTimeoutError, DeadKernelError)) or self.running is None
                        or self.running in stuck or len(stuck) >= 20):
                    raise
                stuck[self.running] = ("ended the kernel" if isinstance(error, DeadKernelError)
                                       else f"did not stop when interrupted at the {{self.timeout}} s limit")
                nb = copy.deepcopy(handed_in)
                for index, why in stuck.items():
                    nb.cells[index].source = f"raise RuntimeError('this cell {{why}}')"
        for index in stuck:  # the student's own code, with the error it earned
            done.cells[index].source = handed_in.cells[index].source
        return done, resources

    def preprocess_cell(self, cell, resources, index):
        self.running = index
        return super().preprocess_cell(cell, resources, index)


class OverwriteCellsWarningOnlyIfChanged(OverwriteCells):
    \"\"\"nbgrader's OverwriteCells, without its false warning for every check cell handed back as
    it was released: nbgrader records a locked cell's checksum before it removes the hidden
    tests, so a release copy never matches it (jupyter/nbgrader#1961). The cell is put back from
    the source either way; this warns only when a student changed it.\"\"\"

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {{}}).get("grade_id")
        self.as_released = False
        if grade_id is not None:
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
                self.as_released = cell.source == without_hidden_tests(source.source)
            except Exception:  # nbgrader's own lookup reports a missing cell
                pass
        return super().preprocess_cell(cell, resources, cell_index)

    def report_change(self, name, attr, old, new):
        if not (attr == "checksum" and self.as_released):
            super().report_change(name, attr, old, new)


def without_hidden_tests(source):
    kept, hidden = [], False
    for line in source.splitlines():
        if line.strip() == "### BEGIN HIDDEN TESTS":
            hidden = True
        elif line.strip() == "### END HIDDEN TESTS":
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\\n".join(kept)


c.Autograde.autograde_preprocessors = [
    ExecuteWithoutStuckCells if step is Execute else step
    for step in Autograde.autograde_preprocessors.default()]
c.Autograde.sanitize_preprocessors = [
    OverwriteCellsWarningOnlyIfChanged if step is OverwriteCells else step
    for step in Autograde.sanitize_preprocessors.default()]
'''


def grade_metadata(exercise):
    return {"grade": True, "grade_id": exercise.check_grade_id, "locked": True,
            "points": exercise.points, "schema_version": 3, "solution": False, "task": False}


class ForGrading(Preprocessor):
    """The exercises' introduction says where answers go and what make grade runs."""

    def preprocess(self, nb, resources):
        introductions = [cell for cell in nb.cells if opens_exercises(cell)]
        if len(introductions) != 1:
            raise ValueError(f"{resources['name']}: expected one markdown cell with the heading "
                             f"'Exercises', found {len(introductions)}")
        introductions[0].source = introductions[0].source.rstrip("\n") + "\n\n" + FOR_GRADING
        return nb, resources


class GradeChecks(Preprocessor):
    """Each check cell becomes a locked nbgrader autograder cell with its exercise's points; in
    nbgrader's source it also carries the hidden tests that make autograde award what make
    grade awards (HIDDEN_TESTS), in the hand-out it cannot be edited or deleted."""

    def __init__(self, chapter, solutions, **kwargs):
        super().__init__(**kwargs)
        self.checks = {exercise.check_id: exercise for exercise in chapter.exercises}
        self.solutions = solutions

    def preprocess_cell(self, cell, resources, index):
        exercise = self.checks.get(cell.get("id"))
        if exercise is None:
            return cell, resources
        cell.metadata["nbgrader"] = grade_metadata(exercise)
        if self.solutions:
            cell.source = cell.source.rstrip("\n") + "\n" + HIDDEN_TESTS.format(
                number=exercise.number, module=exercise.module, attribute=exercise.attribute,
                expression=exercise.expression)
        else:
            cell.metadata["deletable"] = False
            cell.metadata["editable"] = False
        return cell, resources


def release_steps(chapter, solutions):
    """nbgrader's source (solutions: the worked answers and the hidden tests) or the hand-out
    (nbgrader's stubs, cells locked as generate_assignment locks them), step by step."""
    return [DropDirectiveCells(), ForGrading(), ClearOutputs(),
            TagRaisingAnswers(), *([] if solutions else [StubSolutions()]),
            GradeChecks(chapter, solutions)]


def release_notebook(chapter, solutions):
    """The chapter for the class: with solutions and hidden tests (nbgrader's source), or without
    them and with cells locked the way nbgrader's generate_assignment locks them (the hand-out)."""
    notebook = nbformat.from_dict(copy.deepcopy(chapter.notebook))
    return apply(notebook, release_steps(chapter, solutions), {"name": chapter.filename})


def write_release(out, source=SOURCE, stems=GRADED, timeout=10):
    """Write the course folder; return the chapters' file names."""
    out = Path(out)
    # Only what this writes is replaced: nbgrader's own state in the same folder (gradebook.db,
    # release/, submitted/, autograded/, feedback/) survives a second make class.
    for mine in ("source", "handout", "package"):
        shutil.rmtree(out / mine, ignore_errors=True)
    (out / "handout").mkdir(parents=True)
    (out / "nbgrader_config.py").write_text(CONFIG.format(course=COURSE_ID, timeout=timeout))
    written = []
    for chapter in graded_chapters(source, stems):
        assignment = out / "source" / chapter.stem
        assignment.mkdir(parents=True)
        nbformat.write(nbformat.from_dict(release_notebook(chapter, solutions=True)),
                       assignment / chapter.filename)
        nbformat.write(nbformat.from_dict(release_notebook(chapter, solutions=False)),
                       out / "handout" / chapter.filename)
        written.append(chapter.filename)
    write_package(out / "package")
    return written


def student_notebook(path):
    """The hand-out edition of one chapter."""
    return release_notebook(read_chapter(path), solutions=False)


def main(argv=None):
    """make class: write the class release into OUT (default build/class)."""
    parser = argparse.ArgumentParser(prog="workbook-class", description="Write the class release of the graded chapters.")
    parser.add_argument("out", nargs="?", default=ROOT / "build" / "class",
                        help="the course folder to write (default build/class)")
    parser.add_argument("--timeout", type=int, default=10,
                        help="nbgrader's per-cell time limit in seconds (default 10)")
    arguments = parser.parse_args(argv)
    out = Path(arguments.out)
    written = write_release(out, timeout=arguments.timeout)
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    print(f"class release: {len(written)} chapters in {shown}/ (nbgrader source/, the hand-out "
          "handout/ and package/, the package without checks or answers for the students' "
          "environment)")
    return 0
