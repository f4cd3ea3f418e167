"""The class edition of the `workbook` package: the package without its checks and worked answers.

The students' environment gets it (`make class` writes CLASS/package/, which pip installs), and
so does the grader's sandbox: nothing a student's code can read there gives an answer away.
A check there says that the grader judges the answer; solution() says solutions are hidden.
"""
import re
import shutil
from pathlib import Path

from course import ROOT
PACKAGE = ROOT / "workbook"
# What the class and grading editions leave out of the package: every check (a checker knows
# what a right answer does) and the worked answers.
WITHHELD = ("teaching/exercises/checks", "teaching/exercises/answers.json")
PACKAGE_PROJECT = '''\
# The class edition of the agent memory workbook's package, written by `make class`: the
# package without its checks and worked answers. Install it, with the workbook's pins, with
# `pip install -r <this folder>/requirements.txt <this folder>`.
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "workbook"
version = "{version}"
description = "The agent memory workbook's package, class edition (no checks, no worked answers)."
requires-python = ">=3.12"

[tool.setuptools.packages.find]
include = ["workbook*"]

[tool.setuptools.package-data]
"workbook" = ["benchmarks/*.json"]
'''


def withheld(relative):
    return any(relative == part or relative.startswith(part + "/") for part in WITHHELD)


def write_package(dest, package=PACKAGE, project=True):
    """Write the class edition of the package into dest/workbook (and, with `project`, the
    pyproject.toml that lets pip install dest). Returns dest/workbook."""
    dest = Path(dest)
    target = dest / "workbook"
    shutil.rmtree(target, ignore_errors=True)
    for path in sorted(Path(package).rglob("*")):
        relative = path.relative_to(package).as_posix()
        if "__pycache__" in path.parts or withheld(relative) or not path.is_file():
            continue
        copy_to = target / relative
        copy_to.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, copy_to)
    if project:
        version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
        (dest / "pyproject.toml").write_text(PACKAGE_PROJECT.format(version=version.group(1)))
        shutil.copy2(ROOT / "requirements.txt", dest / "requirements.txt")  # the same pins
    return target
