"""What the class edition of the package needs beside it on the hub.

The students' kernels import the class edition of the `workbook` package, which
course/editions/package.py writes (write_package): no `workbook/teaching/exercises/answers.json` (the
worked answers) and no `workbook/teaching/exercises/checks/` (the verdict code). There `solution()` says
solutions are hidden, and a check says the answer is judged when graded.

Some chapters read files of "the repository beside the package" (workbook.__file__'s
parents[1]): chapters 1 and 6 the specification's code and tests (workbook/specification/store.py,
workbook/specification/test_store.py), the appendices the recorded benchmarks (docs/bench/*.json) and the
chapters' code cells (notebooks/). write_beside(dest) puts exactly those beside dest/workbook,
with notebooks/ as the hand-out edition (the chapters' cells, no worked answers), so that the
package installed editable from `dest` runs every chapter.
"""
import shutil
from pathlib import Path

from course import ROOT
BESIDE = ["workbook/specification/store.py", "workbook/specification/test_store.py", "workbook/benchmarks/results.json", "workbook/benchmarks/postgres.json"]


def write_beside(dest, source=ROOT):
    """The files the chapters read beside the package, into `dest` (beside dest/workbook)."""
    import nbformat
    from course.grader.chapters import graded_chapters
    from course.editions.release import release_notebook
    dest = Path(dest)
    for name in BESIDE:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(source) / name, dest / name)
    (dest / "notebooks").mkdir(exist_ok=True)
    for chapter in graded_chapters(Path(source) / "notebooks"):
        nbformat.write(nbformat.from_dict(release_notebook(chapter, solutions=False, keep_directives=True)),
                       dest / "notebooks" / chapter.filename)
    return dest
