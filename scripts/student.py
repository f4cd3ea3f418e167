"""Write the student edition of the chapters: solutions replaced by stubs, outputs cleared.

    python scripts/student.py [OUT]      (default: build/student)

Every region between `### BEGIN SOLUTION` and `### END SOLUTION` (nbgrader's markers) becomes
`# YOUR CODE HERE` and `raise NotImplementedError()` at the marker's indentation. A stub at the top
level of a cell makes that cell raise when run, so the cell is tagged `raises-exception`: the
notebook still runs top to bottom, and the exercise's check() then says "not attempted". Nothing
else changes. nbgrader is not needed.
"""
import re
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
REGION = re.compile(r"^([ \t]*)### BEGIN SOLUTION\n.*?^[ \t]*### END SOLUTION\n?", re.M | re.S)


def stub(match):
    indent = match.group(1)
    return f"{indent}# YOUR CODE HERE\n{indent}raise NotImplementedError()\n"


def student_cell(cell):
    """Return the cell with solutions stubbed, and whether running it now raises."""
    source, count = REGION.subn(stub, cell.source)
    if not count:
        return cell, False
    cell.source = source.rstrip("\n")
    top_level = any(m.group(1) == "" for m in REGION.finditer(cell["_original"]))
    return cell, top_level


def student_notebook(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        cell["_original"] = cell.source
        cell, raises = student_cell(cell)
        del cell["_original"]
        cell.metadata.pop("execution", None)
        cell.outputs = []
        cell.execution_count = None
        if raises:
            tags = cell.metadata.setdefault("tags", [])
            if "raises-exception" not in tags:
                tags.append("raises-exception")
    return notebook


def main(out=ROOT / "build" / "student"):
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    (out / "notebooks").mkdir(parents=True)
    written = []
    for path in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        nbformat.write(student_notebook(path), out / "notebooks" / path.name)
        written.append(path.name)
    print(f"student edition: {len(written)} chapters in {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return written


if __name__ == "__main__":
    main(*sys.argv[1:])
