"""What a course's CI log shows when a test fails: make test's own command, its output in a file,
holds no colour codes unless colour is asked for, and a chapter cell's changed output shows its
whole difference; tools/nbval_cell.py names the cell and prints both sides whole, labelled.
docs/instructors.md quotes both runs. The runs happen in a temporary folder laid out as the
repository is (its conftest.py and pyproject.toml, a notebooks/ and a tests/ folder)."""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "instructors.md").read_text()
ESCAPE = "\x1b["
ROWS = [f"row {n}: value {n * n}" for n in range(12)]


def notebook(path, *cells):
    """A notebook of code cells, each given as (source, stored stdout or None)."""
    made = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    for number, (source, stored) in enumerate(cells):
        cell = nbformat.v4.new_code_cell(source, id=f"t-{2 * number + 1:03}", execution_count=number + 1)
        if stored is not None:
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=stored)]
        made.cells += [nbformat.v4.new_markdown_cell(f"Part {number}."), cell]
    nbformat.write(made, path)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    tree = tmp_path_factory.mktemp("course")
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy(ROOT / name, tree / name)
    (tree / "notebooks").mkdir()
    (tree / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "nbval_sanitize.cfg", tree / "tests")  # make test's command names it
    # the guide's example: Cell 1 stored "stored before" and now prints "computed now"
    notebook(tree / "notebooks" / "course.ipynb", ("x = 1", None), ('print("computed now")', "stored before\n"))
    # a long output with one line changed, and a cell that raises (the kernel colours its traceback)
    table = "\n".join(ROWS).replace("value 49", "value 50") + "\n"
    notebook(tree / "notebooks" / "table.ipynb",
             (f"print({chr(10).join(ROWS)!r})", table), ("def f():\n    return 1 / 0\nf()", None))
    # make test names its folders of tests/; the course has them, the first holding one test
    folders = [arg for arg in make_test_command() if arg.startswith("tests/") and (ROOT / arg).is_dir()]
    for folder in folders:
        (tree / folder).mkdir(parents=True, exist_ok=True)
    (tree / folders[0] / "test_words.py").write_text(
        "def test_words():\n    assert 'apple banana cherry' == 'apple banana cheery'\n")
    return tree


def environment(**extra):
    plain = {name: value for name, value in os.environ.items()
             if name not in ("FORCE_COLOR", "PY_COLORS", "NO_COLOR", "MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    return {**plain, "COLUMNS": "80", **extra}


def make_test_command(*variables):
    """make test's pytest command, as `make -n` shows it, with this interpreter."""
    shown = subprocess.run(["make", "--no-print-directory", "-n", "test", *variables], cwd=ROOT,
                           env=environment(), capture_output=True, text=True, check=True).stdout
    (line,) = [line for line in shown.splitlines() if " -m pytest " in line]
    python, *arguments = shlex.split(line)     # make test's -k "not postgres" is quoted
    assert python == ".venv/bin/python"
    return [sys.executable, *arguments]


def run_into_a_file(course, tmp_path, xdist=True, **extra):
    command = make_test_command()
    if not xdist:
        at = command.index("-n")
        assert command[at + 1].isdigit() and command[at + 2:at + 4] == ["--dist", "loadscope"]
        command[at:at + 4] = ["-p", "no:xdist"]
    log = tmp_path / "make-test.log"
    with open(log, "w") as handle:
        done = subprocess.run(command, cwd=course, env=environment(**extra), stdout=handle,
                              stderr=subprocess.STDOUT, timeout=300)
    return done.returncode, log.read_text()


def test_make_tests_output_in_a_file_has_no_colour_codes_and_whole_diffs(course, tmp_path):
    code, log = run_into_a_file(course, tmp_path)
    assert code == 1 and "4 failed, 1 passed" in log, log
    assert ESCAPE not in log, [line for line in log.splitlines() if ESCAPE in line][:5]
    assert "ZeroDivisionError: division by zero" in log  # the kernel's traceback, uncoloured
    # every line of the long output, and the changed one on both sides
    assert "Skipping" not in log and "- row 7: value 49" in log and "+ row 7: value 50" in log
    assert all(f"    {row}" in log for row in ROWS if "49" not in row)
    # the guide's example is this run's report on course.ipynb's Cell 1
    shown = re.search(r"### Reading an nbval failure.*?```\n(.*?)```", GUIDE, re.S).group(1).splitlines()
    start = log.index(shown[0])
    report = [line for line in log[start:].splitlines() if not line.startswith("[gw")]
    assert [line.rstrip() for line in report[:len(shown)]] == [line.rstrip() for line in shown]


def test_colour_comes_when_asked_for(course, tmp_path):
    # without pytest-xdist, to be quicker: the workers take the controller's decision anyway
    code, log = run_into_a_file(course, tmp_path, FORCE_COLOR="1", xdist=False)
    assert code == 1
    nbvals = "\x1b[91mNotebook cell execution failed"
    kernels = "\x1b[31mZeroDivisionError"
    assert nbvals in log and kernels in log and "\x1b[31m\x1b[1m" in log  # nbval, the kernel, pytest
    assert make_test_command("COLOR=yes")[-1] == "--color=yes" and make_test_command()[-1] == "--color=auto"


def test_nbval_cell_names_the_cell_and_prints_both_outputs_whole_and_labelled(course):
    command = re.search(r"\$ \.venv/bin/python (tools/nbval_cell\.py .*)\n", GUIDE).group(1).split()
    assert command == ["tools/nbval_cell.py", "notebooks/course.ipynb", "1"]
    done = subprocess.run([sys.executable, str(ROOT / command[0]), *command[1:]], cwd=course,
                          env=environment(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    printed = [line.rstrip() for line in done.stdout.splitlines()]
    assert printed[0] == """nbval's Cell 1 is cell index 3, id t-003: print("computed now")"""
    assert "Left is the output stored in the notebook" in printed[1]
    left, right = printed.index("  Left:"), printed.index("  Right:")
    assert printed[left + 1] == "    stored before" and printed[right + 1] == "    computed now"
    assert ESCAPE not in done.stdout
    shown = re.search(r"\$ \.venv/bin/python tools/nbval_cell\.py .*?\n(.*?)```", GUIDE, re.S).group(1)
    shown = [line.rstrip() for line in shown.splitlines()]
    assert printed[:len(shown)] == shown


def test_nbval_cell_says_which_cells_there_are_when_n_is_out_of_range(course):
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "nbval_cell.py"), "notebooks/course.ipynb", "2"],
                          cwd=course, capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "N: notebooks/course.ipynb has 2 code cells, so nbval counts Cell 0 to Cell 1\n"
