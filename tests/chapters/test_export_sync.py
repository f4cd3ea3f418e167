"""The package is the notebooks' export: a fresh export of a clean tree changes nothing.

This is nbdev's CI gate (export, then the tree must be unchanged), run in a temporary copy so
that the test never writes to the repository.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def exported_modules():
    """Modules some chapter or appendix declares with `#| default_exp`, and the package's
    __init__ (nbdev rewrites its docstring)."""
    names = {"__init__"}
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and source.startswith("#| default_exp"):
                names.add(source.split()[2])
    return sorted(names)


def fresh_export(tmp_path, change=None):
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(ROOT / "pyproject.toml", copy)
    shutil.copytree(ROOT / "notebooks", copy / "notebooks")
    shutil.copytree(ROOT / "workbook", copy / "workbook",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if change:
        change(copy)
    shutil.copytree(ROOT / "tools", copy / "tools")
    subprocess.run([str(copy / "tools" / "export")], cwd=copy, check=True, capture_output=True,
                   env={**os.environ, "PYTHON": sys.executable})
    return copy


def differences(copy):
    changed = []
    for name in exported_modules():
        committed = ROOT / "workbook" / f"{name}.py"
        fresh = copy / "workbook" / f"{name}.py"
        if not committed.exists() or committed.read_text() != fresh.read_text():
            changed.append(name)
    answers = Path("teaching") / "exercises" / "answers.json"  # the worked answers, copied from the chapters
    if (ROOT / "workbook" / answers).read_text() != (copy / "workbook" / answers).read_text():
        changed.append(str(answers))
    before = {p.relative_to(ROOT / "workbook") for p in (ROOT / "workbook").rglob("*.py")}
    after = {p.relative_to(copy / "workbook") for p in (copy / "workbook").rglob("*.py")}
    strays = sorted(p.name for p in (copy / "notebooks").iterdir()) != \
        sorted(p.name for p in (ROOT / "notebooks").iterdir())
    return changed + sorted(str(p) for p in after - before) + (["notebooks/"] if strays else [])



def test_committed_package_equals_a_fresh_export(tmp_path):
    assert differences(fresh_export(tmp_path)) == [], "run `make export` and commit the result"


def test_an_edited_but_unexported_cell_and_answer_are_caught(tmp_path):
    def edit_an_export_cell_and_an_answer(copy):
        path = copy / "notebooks" / "01-purpose-and-validation.ipynb"
        notebook = json.loads(path.read_text())
        cell = next(c for c in notebook["cells"] if "".join(c["source"]).startswith("#| export"))
        cell["source"] = "".join(cell["source"]) + "\nEDITED_BUT_NOT_EXPORTED = True\n"
        answer = next(c for c in notebook["cells"] if "### END SOLUTION" in "".join(c["source"]))
        answer["source"] = "".join(answer["source"]).replace("### END SOLUTION",
                                                             "# edited\n### END SOLUTION")
        path.write_text(json.dumps(notebook))

    assert differences(fresh_export(tmp_path, edit_an_export_cell_and_an_answer)) == \
        ["validation", "teaching/exercises/answers.json"]
