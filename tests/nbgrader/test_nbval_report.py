"""How nbval reports a failing cell, as docs/instructors.md tells a course to read it: "Cell N"
counts code cells from 0, and in the diff the stored output is the `+` side, the output just
computed the `-` side. A real nbval run on a small notebook, so a new nbval or pytest that
changes either shows up here."""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
# tools/nbval_cell.py is a script the docs run by its path, not a module on the path
spec = importlib.util.spec_from_file_location("nbval_cell", ROOT / "tools" / "nbval_cell.py")
nbval_cell = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nbval_cell)

ESCAPES = re.compile(r"\x1b\[[0-9;]*m")


def test_nbval_counts_code_cells_from_zero_and_shows_the_stored_output_as_plus(tmp_path):
    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    notebook.cells = [nbformat.v4.new_markdown_cell("# A course notebook"),
                      nbformat.v4.new_code_cell("x = 1", id="t-001", execution_count=1),
                      nbformat.v4.new_markdown_cell("Its output was stored when the author ran it."),
                      nbformat.v4.new_code_cell('print("computed now")', id="t-003", execution_count=2)]
    notebook.cells[3].outputs = [nbformat.v4.new_output("stream", name="stdout", text="stored before\n")]
    path = tmp_path / "course.ipynb"
    nbformat.write(notebook, path)
    run = subprocess.run([sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:cacheprovider",
                          "-p", "no:xdist", str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env=os.environ | {"CI": "true"})
    # Under CI (as on the project's CI), pytest repeats the whole message in its short summary
    report, summary = ESCAPES.sub("", run.stdout).split("short test summary info")
    assert run.returncode == 1, report
    assert "course.ipynb::Cell 1" in report and "Cell 1: Cell outputs differ" in report
    assert nbval_cell.locate(path, 1) == (3, "t-003", 'print("computed now")')
    diff = [line.strip() for line in report.splitlines() if line.strip().startswith(("+ ", "- "))]
    assert diff == ["- computed now", "+ stored before"]
    assert "Cell 1: Cell outputs differ" in summary

