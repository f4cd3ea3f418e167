"""The instructor's package: everything around the store that a course needs.

    notebook   what a chapter's parts are, for every edition and the grader
    editions/  the editions made from the chapters: the learner's copy, the class release, the
               HTML edition, the worked answers
    grader/    make grade: student code runs in sandbox/, verdicts are decided in judge/
               (AUDIT.md lists the trusted code)
    hub/       make hub: a course on a real JupyterHub, and its files

Its commands work on a clone of the workbook: ROOT.
"""
from pathlib import Path

INSTALLED = Path(__file__).resolve().parents[1]


def clone_here(start=None):
    """The clone the commands work on: the folder they run in, or the nearest one above it, that
    holds the workbook's pyproject.toml and notebooks/ (as nbdev finds its settings); else the
    clone this package was installed from. Two clones may share one .venv (the browser and hub
    tests run make lab and make hub in a temporary copy of the tree): each works on its own."""
    here = Path.cwd() if start is None else Path(start)
    for folder in (here.resolve(), *here.resolve().parents):
        project = folder / "pyproject.toml"
        if (folder / "notebooks").is_dir() and project.is_file() \
                and 'name = "workbook"' in project.read_text(errors="replace"):
            return folder
    return INSTALLED


ROOT = clone_here()
