"""The class edition of the workbook package: what a student's kernel imports on the hub.

It is the `workbook` package without what would give a graded answer away:
`workbook/exercises/answers.json` (the worked answers) and `workbook/exercises/checks/` (the
verdict code, the oracle a student could run against guesses). In this edition `solution()`
says solutions are hidden (the hub also sets WORKBOOK_HIDE_SOLUTIONS=1), and a check says the
answer is judged when graded. make grade judges with the full package, in the repository.

write_package(dest) writes an installable copy (pyproject.toml and workbook/) into `dest`. It
stands in for scripts/classroom/release.py's write_package (make class's CLASS/package/) until
that lands; scripts/hub.py takes that one when it is there.

Some chapters read files of "the repository beside the package" (workbook.__file__'s
parents[1]): chapter 1 and 6 the specification's code and tests (tests/spec_reference.py,
tests/test_store.py), the appendices the recorded benchmarks (docs/bench/*.json) and the
chapters' code cells (notebooks/). write_beside(dest) puts exactly those beside the package,
with notebooks/ as the hand-out edition (the chapters' cells, no worked answers), so that a
package installed editable from `dest` runs every chapter.
"""
import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LEFT_OUT = {("exercises", "answers.json"), ("exercises", "checks")}
PYPROJECT = """\
# The class edition of the agent memory workbook's package (no worked answers, no verdict code),
# written by make hub; install with: pip install --no-deps .
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "workbook"
version = "{version}"
description = "The agent memory workbook, class edition"
requires-python = ">=3.12"
dependencies = []

[tool.setuptools.packages.find]
include = ["workbook*"]
"""


def left_out(folder, names):
    folder = Path(folder)
    skipped = {name for name in names if name == "__pycache__" or name.endswith(".pyc")}
    skipped |= {name for name in names if (folder.name, name) in LEFT_OUT}
    return skipped


def write_package(dest, source=ROOT):
    """Write the class edition of the package into `dest` (replaced); return `dest`."""
    dest, source = Path(dest), Path(source)
    version = tomllib.loads((source / "pyproject.toml").read_text())["project"]["version"]
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(source / "workbook", dest / "workbook", ignore=left_out)
    (dest / "pyproject.toml").write_text(PYPROJECT.format(version=version))
    return dest


BESIDE = ["tests/spec_reference.py", "tests/test_store.py", "docs/bench/results.json", "docs/bench/postgres.json"]


def write_beside(dest, source=ROOT):
    """The files the chapters read beside the package, into `dest` (beside dest/workbook)."""
    import sys
    sys.path.insert(0, str(Path(source) / "scripts"))
    import nbformat
    from classroom.chapters import graded_chapters
    from classroom.release import release_notebook
    dest = Path(dest)
    for name in BESIDE:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(source) / name, dest / name)
    (dest / "notebooks").mkdir(exist_ok=True)
    for chapter in graded_chapters(Path(source) / "notebooks"):
        nbformat.write(nbformat.from_dict(release_notebook(chapter, solutions=False)),
                       dest / "notebooks" / chapter.filename)
    return dest
