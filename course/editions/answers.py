"""The worked answers, copied out of the chapters' answer cells into the package.

    workbook-answers [ROOT]        (tools/export runs it after nbdev's export)

Each answer cell's worked answer is its solution region, minus the markers and the
`name = ____` line the learner starts from (course/notebook.py's worked_answer). They are stored
base64-encoded in workbook/teaching/exercises/answers.json, so that nothing prints them by
accident; `qN.solution()` decodes them on request. Hidden, not secret.
"""
import base64
import json
import sys
from pathlib import Path

import nbformat

from course import ROOT
from course.notebook import exercise_number, has_solution, worked_answer

TARGET = Path("workbook") / "teaching" / "exercises" / "answers.json"


def solution_cells(notebook):
    """(exercise number, cell) for every answer cell of a notebook that holds its solution, in order."""
    for cell in notebook.cells:
        if has_solution(cell):
            yield exercise_number(cell.metadata["nbgrader"]["grade_id"]), cell


def extract(folder=ROOT / "notebooks"):
    found = {}
    for path in sorted(Path(folder).glob("*.ipynb")):
        for number, cell in solution_cells(nbformat.read(path, as_version=4)):
            if number in found:
                raise ValueError(f"{path.name}: Exercise {number} has two solution cells")
            found[number] = worked_answer(cell.source)
    return found


def encoded(found):
    stored = {number: base64.b64encode(code.encode("utf-8")).decode("ascii")
              for number, code in found.items()}
    return json.dumps(stored, indent=1, sort_keys=True) + "\n"


def write(root=ROOT):
    """Copy the worked answers of ROOT/notebooks into ROOT's package; return them."""
    root = Path(root)
    found = extract(root / "notebooks")
    (root / TARGET).write_text(encoded(found))
    return found


def main(argv=None):
    """workbook-answers [ROOT]: the worked answers of the chapters into the package."""
    write(*(sys.argv[1:] if argv is None else argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
