"""A course on a real JupyterHub (make hub; docs/hub.md): the roster and the students' system
accounts, the environment their servers run in, nbgrader's exchange and the feedback it carries.

    roster       the roster CSV: usernames and display names, checked at the boundary
    accounts     one system user per student and the instructor, their private homes, first passwords
    clone        this clone closed to the students, and no start beside another open copy of the answers
    environment  what the hub and the servers run: a world-readable Python, the course venv, the proxy
    exchange     the instructor's nbgrader course folder and the exchange between them
    collect      nbgrader's collect, skipping a submission made in another student's name
    feedback     make grade's verdicts as nbgrader feedback, released through the exchange
"""

from pathlib import Path

FILES = Path(__file__).resolve().parent / "files"  # the hub's configuration, start script and proxy lock
