"""The worked answers, copied out of the chapters' solution cells into the package.

    python course/editions/answers.py        (tools/export runs it after nbdev's export)

A solution cell carries nbgrader's metadata (grade_id exercise-1-1 for Exercise 1.1) and the
answer between `### BEGIN SOLUTION` and `### END SOLUTION`. Its worked answer is the cell as the
author wrote it, minus the markers and minus the `name = ____` blank the learner starts from.
They are stored base64-encoded in workbook/teaching/exercises/answers.json, so that nothing prints them
by accident; `qN.solution()` decodes them on request. Hidden, not secret.
"""
import base64
import json
import re
import sys
from pathlib import Path

import nbformat

from course import ROOT
REGION = re.compile(r"^([ \t]*)### BEGIN SOLUTION\n(.*?)^[ \t]*### END SOLUTION\n?", re.M | re.S)
BLANK = re.compile(r"^[ \t]*[A-Za-z_][A-Za-z0-9_]* = ____[ \t]*(#.*)?\n", re.M)
TARGET = ROOT / "workbook" / "teaching" / "exercises" / "answers.json"


def exercise_number(grade_id):
    """nbgrader's grade_id exercise-1-1 (or exercise-a-1) is Exercise 1.1 (or A.1)."""
    match = re.fullmatch(r"exercise-([0-9a-z]+)-([0-9]+)", grade_id)
    if not match:
        raise ValueError(f"grade_id {grade_id!r} is not of the form exercise-N-M")
    return f"{match[1].upper()}.{match[2]}"


def solution_cells(notebook):
    """(exercise number, cell) for every solution cell of a notebook, in order."""
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and REGION.search(cell.source):
            yield exercise_number(meta["grade_id"]), cell


def worked(source):
    """The cell's source as a worked answer: markers and the blank line removed."""
    source = REGION.sub(lambda m: m.group(2), source + "\n")
    return BLANK.sub("", source).strip("\n") + "\n"


def extract(folder=ROOT / "notebooks"):
    found = {}
    for path in sorted(Path(folder).glob("*.ipynb")):
        for number, cell in solution_cells(nbformat.read(path, as_version=4)):
            if number in found:
                raise ValueError(f"{path.name}: Exercise {number} has two solution cells")
            found[number] = worked(cell.source)
    return found


def encoded(found):
    stored = {number: base64.b64encode(code.encode("utf-8")).decode("ascii")
              for number, code in found.items()}
    return json.dumps(stored, indent=1, sort_keys=True) + "\n"


def write(root=ROOT):
    """Copy the worked answers of ROOT/notebooks into the package; return them."""
    root = Path(root)
    found = extract(root / "notebooks")
    (root / "workbook" / "teaching" / "exercises" / "answers.json").write_text(encoded(found))
    return found


def main(argv=None):
    """workbook-answers [ROOT]: the worked answers of the chapters into the package."""
    write(*(sys.argv[1:] if argv is None else argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
