"""The instructor's package: everything around the store that a course needs.

    editions/  one notebook model (course.notebook) and the editions made from the chapters:
               the learner's copy, the class release, the HTML edition, the worked answers
    grader/    make grade: student code runs in sandbox/, verdicts are decided in judge/
               (AUDIT.md lists the trusted code)
    hub/       make hub: a course on a real JupyterHub, and its files

It works on the clone it is installed from (editable, by make venv): ROOT.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
