"""A learner who jumps straight to an exercise, in a fresh kernel: never a traceback.

A learner's copy shows the chapters' stored outputs while its kernel starts empty. Each
chapter's learner's edition runs here in a kernel of its own, started in a learner's copy in a
temporary folder, as JupyterLab starts it (this venv's IPython configuration, which tools/venv
installs, loads workbook.teaching.exercises.kernel). Between tries the kernel's names are reset, which
leaves it as a fresh kernel would be, without paying for a new one:

- each exercise section, run in order after only the exercises' first cell, prints no error;
- each cell of the exercises, run alone, prints nothing or one friendly sentence, and a check
  cell exactly that sentence, saying what to run first.

Outside a learner's copy (nbval on the author's chapters, the grader) a NameError stays an error.
"""
import ast
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

from workbook.teaching.exercises import kernel

ROOT = Path(__file__).resolve().parents[2]
from course import notebook as notebook_model
from course.editions import learner

EXERCISE = re.compile(r"^\*\*Exercise ([0-9A-Z]+)\.(\d+)\.\*\*", re.M)
CHECK = re.compile(r"\bq\d+\.(check|compare)\(")
WITH_EXERCISES = [path for path in sorted((ROOT / "notebooks").glob("*.ipynb"))
                  if any(EXERCISE.search(c.source) for c in nbformat.read(path, as_version=4).cells
                         if c.cell_type == "markdown")]


def setup_and_sections(notebook):
    """The exercises' first code cell, and each exercise's cells: from its **Exercise N.M.**
    paragraph to the next one, or to the next heading."""
    cells = notebook.cells[notebook_model.exercises_start(notebook.cells) + 1:]
    setup = next(c for c in cells if c.cell_type == "code")
    sections, current = [], None
    for cell in cells:
        if cell.cell_type == "markdown" and EXERCISE.match(cell.source):
            current = (".".join(EXERCISE.match(cell.source).groups()), [])
            sections.append(current)
        elif cell.cell_type == "markdown" and cell.source.startswith("#"):
            current = None
        elif current is not None:
            current[1].append(cell)
    return setup, sections


def bound(source):
    """The names a cell's top-level statements bind."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


@pytest.mark.parametrize("notebook", WITH_EXERCISES, ids=lambda p: p.stem)
def test_the_kernel_knows_what_each_chapters_first_exercise_cell_imports(notebook):
    setup, sections = setup_and_sections(nbformat.read(notebook, as_version=4))
    chapter = kernel.chapter_of(notebook.name)
    assert [number for number, _ in sections] == [f"{chapter}.{n}" for n in (1, 2, 3)]
    assert kernel.SETUP[chapter] == bound(setup.source)
    from_exercises = set()
    for node in ast.parse(setup.source).body:
        if isinstance(node, ast.ImportFrom) and node.module.startswith("workbook.teaching.exercises"):
            from_exercises |= {alias.asname or alias.name for alias in node.names}
    assert {name for name in from_exercises if not re.fullmatch(r"q\d+", name)} <= kernel.EXERCISE_NAMES


def test_every_sentence_is_one_line_and_names_no_exception():
    cells = ["q1.check(wide_fact)", "wide_fact = ____", "show_steps()", "x = json.dumps({})",
             "q1.check(wide_fact)", "print(typo)", ""]
    names = ["q1", "____", "show_steps", "json", "wide_fact", "typo", "get"]
    for chapter in [None, *kernel.SETUP]:
        for cell, name in zip(cells, names):
            said = kernel.sentence(name, chapter, cell, {"q1": type("Q", (), {"number": "1.1"})()})
            assert "\n" not in said and said.endswith(".") and said.count(". ") == 0, said
            assert said.startswith(f"{name} is not defined") and "Error" not in said, said


def test_a_right_answer_run_before_the_first_exercise_cell_is_told_what_to_run(capsys):
    from workbook.teaching.exercises.ch2 import q1
    namespace = {}
    exec("def last_visible(db, tenant, kind, key, start):\n"  # 2.1's answer, without its imports
         "    record = get(db, tenant, kind, key, start)\n"
         "    return None if record is None else record['expires'] - 1\n", namespace)
    q1.check(namespace["last_visible"])
    assert capsys.readouterr().out == (
        "Exercise 2.1: get is not defined yet in this kernel: run the first cell under Exercises "
        "(it imports get), then your answer cell and this cell again.\n")
    exec("def last_visible(db, tenant, kind, key, start):\n    return lookup(db)\n", namespace)
    q1.check(namespace["last_visible"])  # a name no exercise cell imports: the answer's own slip
    assert capsys.readouterr().out == ("Exercise 2.1: not yet: running your answer raised NameError: "
                                       "name 'lookup' is not defined.\n")


def test_the_extension_is_on_only_in_a_learners_copy(tmp_path, monkeypatch):
    registered = []

    class Shell:
        def set_custom_exc(self, exceptions, handler):
            registered.append(exceptions)
    monkeypatch.chdir(tmp_path)
    kernel.load_ipython_extension(Shell())
    assert registered == []  # the author's chapters, make notebooks, the grader: tracebacks
    (tmp_path / learner.MANIFEST).write_text("{}")
    kernel.load_ipython_extension(Shell())
    assert registered == [(NameError,)]
    assert kernel.MANIFEST == learner.MANIFEST


def test_this_venv_loads_the_extension_in_every_kernel():
    installed = Path(sys.prefix) / "etc" / "ipython" / "ipython_kernel_config.py"
    assert installed.read_text() == (ROOT / "jupyterlab" / "ipython_kernel_config.py").read_text(), \
        "run tools/venv"


class Kernel:
    """A kernel of this venv started in `folder`, as JupyterLab starts one."""

    def __init__(self, folder):
        self.folder = folder
        self.manager = KernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME,
                                     kernel_spec_manager=NbvalKernelspecManager())
        self.manager.start_kernel(cwd=str(folder), env=dict(os.environ))
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def run(self, code, silent=False):
        """The outputs of running `code`, as a notebook would store them."""
        outputs = []

        def keep(message):
            kind = message["msg_type"]
            if kind in ("stream", "error", "display_data", "execute_result"):
                outputs.append({"output_type": kind, **message["content"]})
        reply = self.client.execute_interactive(code, silent=silent, output_hook=keep, timeout=120)
        return outputs if not silent else reply["content"]["status"]

    def fresh(self, notebook):
        """Every name of the learner's gone, as in a new kernel of `notebook` (the modules it
        imported stay, which only makes it faster), with the notebook's path where the Jupyter
        server gives it to the kernels it starts."""
        assert self.run(f"__import__('os').environ['JPY_SESSION_NAME'] = {str(self.folder / notebook)!r}\n"
                        "(lambda shell: [shell.user_ns.pop(name) for name in [\n"
                        "    name for name in shell.user_ns if name not in shell.user_ns_hidden\n"
                        "    and (not name.startswith('_') or name == '____')]])(get_ipython())", silent=True) == "ok"

    def close(self):
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def text(outputs):
    return "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")


def no_error(outputs, cell):
    bad = [o for o in outputs if o["output_type"] == "error"
           or (o["output_type"] == "stream" and o["name"] == "stderr")]
    assert not bad, f"{cell.source}\n{bad}"


@pytest.fixture(scope="module")
def learners_kernel(tmp_path_factory):
    """One kernel, started in a learner's copy of every chapter as make lab makes it."""
    folder = tmp_path_factory.mktemp("learner") / "my-workbook"
    learner.sync(folder, ROOT / "notebooks")
    running = Kernel(folder)
    yield running
    running.close()


@pytest.mark.parametrize("notebook", WITH_EXERCISES, ids=lambda p: p.stem)
def test_each_exercise_section_runs_after_only_the_first_exercise_cell(learners_kernel, notebook):
    setup, sections = setup_and_sections(nbformat.read(learners_kernel.folder / notebook.name, as_version=4))
    for number, cells in sections:
        learners_kernel.fresh(notebook.name)
        for cell in [setup, *cells]:
            if cell.cell_type != "code":
                continue
            outputs = learners_kernel.run(cell.source)
            no_error(outputs, cell)
            if CHECK.search(cell.source):
                assert re.fullmatch(rf"Exercise {re.escape(number)}: [^\n]+\n", text(outputs)), \
                    (cell.source, outputs)


@pytest.mark.parametrize("notebook", WITH_EXERCISES, ids=lambda p: p.stem)
def test_each_worked_answer_is_right_after_only_the_first_exercise_cell(learners_kernel, notebook):
    # The author's chapter, answers in: the exercises' first cell imports all that they use.
    setup, sections = setup_and_sections(nbformat.read(notebook, as_version=4))
    for number, cells in sections:
        learners_kernel.fresh(notebook.name)
        for cell in [setup, *cells]:
            if cell.cell_type == "code":
                outputs = learners_kernel.run(cell.source)
                no_error(outputs, cell)
                if re.search(r"\bq\d+\.check\(", cell.source):
                    assert text(outputs).startswith(f"Exercise {number}: correct: "), text(outputs)


@pytest.mark.parametrize("notebook", WITH_EXERCISES, ids=lambda p: p.stem)
def test_each_exercise_cell_run_alone_says_at_most_one_sentence(learners_kernel, notebook):
    _, sections = setup_and_sections(nbformat.read(learners_kernel.folder / notebook.name, as_version=4))
    checks = 0
    for number, cells in sections:
        for cell in cells:
            if cell.cell_type != "code":
                continue
            learners_kernel.fresh(notebook.name)
            outputs = learners_kernel.run(cell.source)
            no_error(outputs, cell)
            said = text(outputs)
            assert len(outputs) <= 1 and said.count("\n") == len(outputs), (cell.source, outputs)
            if outputs:
                assert "is not defined yet in this kernel: run the first cell under Exercises" in said, said
            if CHECK.search(cell.source):
                checks += 1
                assert said.endswith("then your answer cell and this cell again.\n"), said
    assert checks >= 3


def test_outside_a_learners_copy_a_name_error_stays_an_error(tmp_path):
    running = Kernel(tmp_path)
    try:
        outputs = running.run("q1.check(wide_fact)")
    finally:
        running.close()
    assert [o["output_type"] for o in outputs] == ["error"] and outputs[0]["ename"] == "NameError"
