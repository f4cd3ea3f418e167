"""A name the learner's kernel does not know, said in one sentence instead of a traceback.

A learner's copy opens with the chapters' stored outputs, but its kernel starts empty: a learner
who jumps to an exercise and runs its check cell first would meet a red
`NameError: name 'q1' is not defined`. Each chapter's exercises start with one cell that imports
everything they use (SETUP below lists what it binds), so the sentence can say what to run:

    q1 is not defined yet in this kernel: run the first cell under Exercises (it imports the
    exercises), then your answer cell and this cell again.

This module is an IPython extension. tools/venv (and the course hub's environment, and
Binder's postBuild) list it in the environment's IPython kernel configuration,
etc/ipython/ipython_kernel_config.py, so every kernel of the environment loads it; it turns
itself on only in a kernel started in a learner's copy (a folder holding `.workbook.json`, which
course/editions/learner.py writes), as JupyterLab starts a notebook's kernel in the notebook's folder.
Everywhere else (nbval on the author's chapters, make notebooks, the grader, nbgrader's
autograde) a NameError stays an error, which is how those runs fail. `%unload_ext
workbook.teaching.exercises.kernel` brings the tracebacks back in a learner's kernel too.

Exercise.check() uses sentence() too, for an answer that calls a name the exercises' first cell
imports (a right answer to 2.1 that calls `get`, run before that cell).
"""
import linecache
import os
import re
import sys
import traceback
from pathlib import Path

MANIFEST = ".workbook.json"  # what course/editions/learner.py writes into a learner's copy

# What the first code cell under "## Exercises" binds, by the chapter part of the exercises'
# numbers ("2" for 2.1 ...; "A" for the PostgreSQL appendix). tests/chapters/test_kernel.py holds it to
# the chapters.
SETUP = {
    "1": {"json", "re", "ENCODE", "MAX_BYTES", "MAX_TEXT", "identity", "payload", "q1", "q2", "q3", "____"},
    "2": {"connect", "get", "q1", "q2", "q3", "____"},
    "3": {"connect", "get", "Conflict", "identity", "put", "q1", "q2", "q3", "show_steps", "____"},
    "4": {"pd", "forget", "purge", "shown", "connect", "get", "put", "PLAN", "PLAN_COLUMNS", "q1", "q2", "q3",
          "____"},
    "5": {"connect", "get", "put", "Forget", "Get", "Purge", "Put", "fact", "PREDICT", "q1", "q2", "q3",
          "table", "____"},
    "6": {"q1", "q2", "q3", "____"},
    "A": {"q1", "q2", "q3", "____"},
}
# Names the exercises' own modules give (workbook.teaching.exercises and its chapters): a cell that uses
# one is an exercise's cell.
EXERCISE_NAMES = {"____", "show_steps", "PLAN", "PLAN_COLUMNS", "PREDICT", "table"}
CHECK = re.compile(r"\bq\d+\s*\.\s*(?:check|compare)\s*\(")


def chapter_of(notebook):
    """The chapter part of a notebook's exercise numbers: "02-visibility.ipynb" -> "2",
    "appendix-postgres.ipynb" -> "A"; None for any other name."""
    name = Path(notebook or "").name
    found = re.match(r"(\d+)-", name)
    if found:
        return str(int(found.group(1)))
    return "A" if name.startswith("appendix-postgres") else None


def chapter_of_exercise(number):
    return str(number).split(".")[0]


def is_exercise_name(name):
    return name in EXERCISE_NAMES or re.fullmatch(r"q\d+", name) is not None


def run_setup_first(name, then):
    """The sentence for a name that the exercises' first cell binds."""
    what = "the exercises" if is_exercise_name(name) else name
    return (f"{name} is not defined yet in this kernel: run the first cell under Exercises "
            f"(it imports {what}), then {then}.")


def setup_missing(number, name):
    """For Exercise.check(): what to run first, when an answer to exercise `number` called
    `name`, which the chapter's first exercise cell imports; else None."""
    if name in SETUP.get(chapter_of_exercise(number), ()):
        return run_setup_first(name, "your answer cell and this cell again")
    return None


def sentence(name, chapter=None, cell="", namespace=None):
    """One sentence about `name`, undefined in a learner's kernel, while running `cell` in
    `chapter` (None: not known; every chapter's exercise names then count)."""
    setup = SETUP.get(chapter) or set().union(*SETUP.values())
    namespace = namespace or {}
    checking = CHECK.search(cell) is not None
    if name in setup:
        if checking:
            return run_setup_first(name, "your answer cell and this cell again")
        used = set(re.findall(r"\b\w+\b", cell))
        if is_exercise_name(name) or any(is_exercise_name(other) for other in used):
            return run_setup_first(name, "this cell again")
        return (f"{name} is not defined yet in this kernel: run the cells above this one (Run > "
                "Run All Above Selected Cell), or in the exercises just the first cell under "
                "Exercises, then this cell again.")
    argument = re.search(rf"\b(q\d+)\s*\.\s*(?:check|compare)\s*\(\s*{re.escape(name)}\s*\)", cell)
    number = getattr(namespace.get(argument.group(1)), "number", None) if argument else None
    if number:
        return (f"{name} is not defined yet in this kernel: run your answer cell for Exercise "
                f"{number} (the one that sets {name}), then this check again.")
    return (f"{name} is not defined in this kernel yet: check its spelling, or run the cell that "
            "defines it first (Run > Run All Above Selected Cell runs every cell above this one).")


def in_learners_copy(folder=None):
    return (Path(folder or os.getcwd()) / MANIFEST).is_file()


def running_chapter():
    """The chapter of the notebook this kernel runs, from the path the Jupyter server gives its
    kernels (JPY_SESSION_NAME), else None."""
    return chapter_of(os.environ.get("JPY_SESSION_NAME"))


def cell_source(tb):
    """The source of the cell whose code raised, from the frames of its traceback."""
    for frame, _ in traceback.walk_tb(tb):
        if frame.f_code.co_name == "<module>":
            lines = linecache.getlines(frame.f_code.co_filename)
            if lines:
                return "".join(lines)
    return ""


def handler(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler for NameError: one sentence on stdout, no traceback.
    Any other NameError (UnboundLocalError, one without a name) gets the usual traceback."""
    name = getattr(value, "name", None)
    if etype is not NameError or not isinstance(name, str) or not name:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    # one write, so the sentence arrives as one output (print writes the newline apart)
    sys.stdout.write(sentence(name, running_chapter(), cell_source(tb), shell.user_ns) + "\n")
    return None


def load_ipython_extension(ip):
    if in_learners_copy():
        ip.set_custom_exc((NameError,), handler)


def unload_ipython_extension(ip):
    if getattr(ip, "custom_exceptions", ()) == (NameError,):
        ip.set_custom_exc((), None)
