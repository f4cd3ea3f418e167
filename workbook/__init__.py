"""The agent memory workbook: a small SQLite store for AI-agent checkpoints and facts, built chapter by chapter in Jupyter.

Modules:

- `workbook.teaching.exercises.checks.ch6`: Checks of chapter 6's exercises: a test that kills a broken store and passes on correct ones.
- `workbook.teaching.exercises.kernel`: A name the learner's kernel does not know, said in one sentence instead of a traceback.
- `workbook.teaching.exercises.postgres`: Appendix exercises (PostgreSQL): lock what you change, write a tenant policy, retry a lost race.
- `workbook.teaching.explorer`: Step through an observed run: what ``get`` returns beside what ``records`` holds.
- `workbook.teaching.figures`: A figure with its text alternative: the picture, a short ``alt`` and the full description.
- `workbook.teaching.postgres_server`: A throwaway PostgreSQL server for the appendices, the exercises, the tests and the benchmark.
- `workbook.teaching.timeline.description`: The timeline in words: what a reader who cannot see the picture needs from it."""

__version__ = "0.1.0"

import sys as _sys

# The store opens SQLite with sqlite3.connect(..., autocommit=True), new in 3.12.
# Fail at import with a plain sentence instead of a TypeError deep in connect().
_NEEDED = (3, 12)
if _sys.version_info[:2] < _NEEDED:
    raise ImportError(
        "workbook needs Python %d.%d or later (for sqlite3 autocommit); "
        "this is Python %d.%d.%d at %s"
        % (_NEEDED + tuple(_sys.version_info[:3]) + (_sys.executable,)))
