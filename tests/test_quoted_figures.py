"""A figure the prose quotes still matches what it counts.

nbval holds each notebook's outputs to a live run, but never its sentences: "It prints seven
lines" stays in the prose after the demonstration prints eight. Each check below reads a quoted
figure where it is written and recomputes it from its source now: a cell's stored output (which
nbval keeps honest), the code, the recorded benchmark or this test session. A check fails both
when the figure is stale and when its sentence is reworded, so a rewrite cannot drop it quietly.

The README's reliability figures come from a whole `make test` run; conftest.py compares them at
the end of such a run (see tests/quoted.py).
"""
import ast
import collections
import json
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

import test_concurrency
from quoted import (README, RELIABILITY, ROOT, cells, number, output, prose, quoted, source,
                    stale_reliability, whole_run)
from workbook import records, reference, store
from workbook.reference import MUTANTS

CH1, CH2, CH3 = "01-purpose-and-validation.ipynb", "02-visibility.ipynb", "03-revisions.ipynb"
CH4, CH5 = "04-deletion.ipynb", "05-recovery-and-timelines.ipynb"
CH6, APPENDIX = "06-failure-cases-and-limits.ipynb", "appendix-costs.ipynb"
POSTGRES = "appendix-postgres.ipynb"
OPERATIONS = "appendix-postgres-operations.ipynb"


def seconds(*settings):
    """The PostgreSQL store's timeouts, in whole seconds, as workbook.postgres sets them."""
    from workbook import postgres_install
    values = {**postgres_install.TIMEOUTS, "lock wait": postgres_install.LOCK_WAIT}
    return [int(values[name].removesuffix("s")) for name in settings]


def temp_file_limit():
    """The store's role's temp_file_limit, in megabytes, as create_role sets it."""
    from workbook import postgres_install
    return [int(postgres_install.ROLE_LIMITS["temp_file_limit"].removesuffix("MB"))]


def functions(notebook, cell_id):
    """How many functions a code cell defines."""
    tree = ast.parse(source(notebook, cell_id).replace("#| export", ""))
    return sum(isinstance(node, ast.FunctionDef) for node in tree.body)


def imported(notebook, cell_id, module):
    """How many names a code cell imports from `module`."""
    tree = ast.parse(source(notebook, cell_id).replace("#| export", ""))
    return sum(len(node.names) for node in tree.body
               if isinstance(node, ast.ImportFrom) and node.module == module)


def spec_tests():
    tree = ast.parse((ROOT / "tests" / "test_store.py").read_text())
    return sum(node.name.startswith("test_") for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef))


def found(notebook, cell_id, pattern):
    """The figures `pattern` captures in a code cell's stored output."""
    return quoted(output(notebook, cell_id), pattern, f"{notebook} {cell_id}'s output")


def hidden_for(notebook, cell_id):
    """[ticks hidden, from, to] of the one `hidden` band in a stored intervals table."""
    start, end = found(notebook, cell_id, r"hidden (\d+) (\d+)")
    return [end - start, start, end]


def lines_printed(notebook, cell_id):
    return [len(output(notebook, cell_id).strip().splitlines())]


def put_statements():
    """The statements a successful put runs, as the appendix lists them (ROLLBACK aside)."""
    listed = output(APPENDIX, "3e35979e").split("\nput\n")[1].split("\nforget\n")[0]
    return [len([line for line in listed.splitlines() if line.strip() != "ROLLBACK"])]


def before_put_transaction():
    """Lines of put before it begins its transaction: the argument checks."""
    body = source(CH3, "c03-005").split('db.execute("BEGIN IMMEDIATE")')[0].splitlines()
    return [len([line for line in body[2:] if line.strip()])]


def our_600():
    """[operations, reads, clock forward, clock backward, comparisons] of chapter 6's 600-step run."""
    return found(CH6, "c06-014b", r"operations 600 ([\d,]+) .* reads none (\d+) clock forward none "
                 r"(\d+) clock backward none (\d+) comparisons 5,400 ([\d,]+)")


def comparisons_per_step():
    """Comparisons after an operation with a result, and after a clock move, in that run."""
    lookups = len(reference.TENANTS) * len(reference.KINDS) * len(reference.KEYS)
    with_result, clock_move = lookups + 3, lookups + 2   # (result), lookups, rows, counter
    ops, reads, forward, back, comparisons = our_600()
    assert comparisons == with_result * (ops - forward - back) + clock_move * (forward + back)
    return [with_result, clock_move]


QUOTES = [  # (where, cell or None for the README, the quoting sentence, the figures now)
    (CH1, "c01-006", r"These (\w+) helpers", lambda: [functions(CH1, "c01-007")]),
    (CH1, "c01-016", r"(\w+) small helpers keep it readable",
     lambda: [functions(CH1, "c01-017")]),
    (CH2, "c02-002", r"the (\w+) statements that set a database up",
     lambda: [len(records.SCHEMA)]),
    (CH2, "c02-010", r"The same (\w+) statements", lambda: [len(records.SCHEMA)]),
    (CH3, "c03-002", r"`put` needs (\w+) names from chapter 1",
     lambda: [imported(CH3, "c03-003", "workbook.validation")]),
    (CH3, "c03-004", r"The first (\w+) lines check every argument", before_put_transaction),
    (CH4, "c04-002", r"(\w+) small helpers keep the experiments short",
     lambda: [functions(CH4, "c04-003")]),
    (CH4, "c04-024", r"stayed present for (\w+) more ticks, until the purge at (\d+)",
     lambda: [hidden_for(CH4, "c04-023")[0], hidden_for(CH4, "c04-023")[2]]),
    (CH5, "c05-001", r"read its (\w+) lines", lambda: lines_printed(CH5, "c05-025")),
    (CH5, "c05-022", r"It prints (\w+) lines", lambda: lines_printed(CH5, "c05-025")),
    (CH5, "c05-002", r"from the (\w+) chapter modules",
     lambda: [len({getattr(store, name).__module__ for name in store.__all__})]),
    (CH5, "c05-004", r"(\w+) names, and each one", lambda: [len(store.__all__)]),
    (CH5, "c05-006", r"the (\w+) store names it uses",
     lambda: [imported(CH5, "c05-007", "workbook.store")]),
    (CH5, "c05-028", r"counter stays at (\d+)",
     lambda: found(CH5, "c05-027", r"counter stays (\d+)")),
    (CH5, "c05-043", r"For (\w+) ticks, from (\d+) up to (\d+)",
     lambda: hidden_for(CH5, "c05-042")),
    (CH6, "c06-002", r"The specification's (\w+) tests", lambda: [spec_tests()]),
    (CH6, "c06-004", r"`Ran (\d+) tests", lambda: [spec_tests()]),
    (CH6, "c06-004f", r"(\w+) tests, each checking a handful", lambda: [spec_tests()]),
    (CH6, "c06-004f", r"subject: (\w+) processes", lambda: [test_concurrency.PROCESSES]),
    (CH6, "c06-014c", r"(\d+) of our (\d+) operations are reads and clock moves",
     lambda: (lambda ops, reads, forward, back, _: [reads + forward + back, ops])(*our_600())),
    (CH6, "c06-014c", r"an operation with a result makes (\d+) comparisons and a clock move (\d+)",
     comparisons_per_step),
    (CH6, "c06-014d", r"The specification broke (\w+) copies", lambda: [len(MUTANTS) - 1]),
    (CH6, "c06-015c", r"The (\w+) copies share nothing", lambda: [len(MUTANTS)]),
    (CH6, "c06-017", r"a weak one: (\w+) tests",
     lambda: found(CH6, "c06-017a", r"(\d+) of \d+ passed")),
    (APPENDIX, "a710c346", r"A successful `put` runs (\w+) statements", put_statements),
    (APPENDIX, "ff09888f", r"(\w+) thousand rows in (\w+) tenants",
     lambda: (lambda rows, tenants: [rows // 1000, tenants])(
         *found(APPENDIX, "e9b9e901", r"\((\d+), (\d+)\)"))),
    (OPERATIONS, "ops-011", r"a transaction left open is ended after (\w+) second, a statement "
     r"after (\w+), a lock waited for after (\w+)\)",
     lambda: seconds("idle_in_transaction_session_timeout", "statement_timeout", "lock_timeout")),
    (OPERATIONS, "ops-011", r"at most (\d+) MB of temporary files", temp_file_limit),
    (OPERATIONS, "ops-026", r"`temp_file_limit`, (\d+) MB per", temp_file_limit),
    (OPERATIONS, "ops-032", r"gives up after (\w+) seconds", lambda: seconds("lock wait")),
    (OPERATIONS, "ops-036", r"got the role's own (\w+)-second timeout",
     lambda: seconds("statement_timeout")),
    ("README.md", None, r"leaves open is ended after (\d+) s, and no call waits more than "
     r"(\d+) s", lambda: seconds("idle_in_transaction_session_timeout", "lock wait")),
    ("README.md", None, r"Beyond the spec's (\w+) tests", lambda: [spec_tests()]),
    ("README.md", None, r"exactly the specification's (\w+) names", lambda: [len(store.__all__)]),
    ("README.md", None, r"the spec's (\d+) broken copies", lambda: [len(MUTANTS) - 1]),
    ("README.md", None, r"(\d+) processes × [\d,]+ compare-and-swap",
     lambda: [test_concurrency.PROCESSES]),
]


@pytest.mark.parametrize("where, cell_id, pattern, now", QUOTES,
                         ids=[f"{w.split('-')[0]}-{c or 'readme'}-{i}"
                              for i, (w, c, _, _) in enumerate(QUOTES)])
def test_quoted_figure_matches_its_source(where, cell_id, pattern, now):
    text = README.read_text() if cell_id is None else prose(where, cell_id)
    assert quoted(text, pattern, f"{where} {cell_id or ''}") == now()


def test_a_reworded_or_stale_quote_is_caught():
    with pytest.raises(AssertionError, match="no longer says"):
        quoted("It prints eight lines.", r"It prints (\w+) lines and more", "a sample")
    assert quoted("It prints eight lines.", r"It prints (\w+) lines", "a sample") != [7]


def test_a_run_that_counts_otherwise_than_the_readme_is_reported():
    readme = README.read_text()
    as_quoted = {name: quoted(readme, pattern, "README.md")[0] for pattern, name in RELIABILITY}
    assert stale_reliability(as_quoted) == []
    name = "hostile inputs: tried"
    [line] = stale_reliability(as_quoted | {name: as_quoted[name] + 1})
    assert name in line and f"{as_quoted[name] + 1:,}" in line


def finished_session(args):
    option = SimpleNamespace(keyword="", markexpr="", lf=False, deselect=None, collectonly=False)
    config = SimpleNamespace(option=option, args=args,
                             invocation_params=SimpleNamespace(dir=ROOT))
    return SimpleNamespace(config=config, exitstatus=pytest.ExitCode.OK)


def test_a_whole_run_that_contradicts_the_readme_fails_and_a_partial_one_is_not_judged(
        monkeypatch):
    import conftest
    readme = README.read_text()
    counts = {name: quoted(readme, pattern, "README.md")[0] for pattern, name in RELIABILITY}
    counts["tampered rows read"] += 1
    monkeypatch.setattr(conftest, "SOAK", False)
    monkeypatch.setattr(conftest, "FIGURES", collections.Counter(counts))
    monkeypatch.setattr(conftest, "STALE", [])
    partial = finished_session(["tests/test_hostile.py"])
    conftest.pytest_sessionfinish(partial)
    assert partial.exitstatus == pytest.ExitCode.OK and conftest.STALE == []
    whole = finished_session(["tests", "notebooks"])
    conftest.pytest_sessionfinish(whole)
    assert whole.exitstatus == pytest.ExitCode.TESTS_FAILED
    assert ["tampered rows read" in line for line in conftest.STALE] == [True]


def test_readme_mutation_score_adds_up():
    readme = README.read_text()
    killed, made, percent = re.search(r"kills ([\d,]+) of ([\d,]+) mutants \(([\d.]+) %\)",
                                      " ".join(readme.split())).groups()
    [survivors] = quoted(readme, r"The (\d+) survivors", "README.md")
    assert number(made) - number(killed) == survivors
    assert f"{100 * number(killed) / number(made):.1f}" == percent


def test_the_reliability_guide_quotes_the_state_machine_steps_the_readme_does():
    # the README's figure is held to every whole run (RELIABILITY); the guide's copy to the README
    guide = (ROOT / "docs" / "reliability.md").read_text()
    [steps] = quoted(guide, r"\| ([\d,]+) steps \(60 runs of up to 30\)", "docs/reliability.md")
    [said] = quoted(README.read_text(), r"([\d,]+) Hypothesis state-machine", "README.md")
    assert steps == said


def code_cells(notebook):
    return sum(cell["cell_type"] == "code" for cell in cells(notebook).values())


def test_appendix_shows_what_was_timed_and_names_each_chapter_changed_since():
    record = json.loads((ROOT / "docs" / "bench" / "results.json").read_text())
    table = " ".join(output(APPENDIX, "301f1c42").split())
    changed = []
    for chapter in record["notebooks"]["chapters"]:
        now = code_cells(chapter["notebook"])
        shown = re.search(rf"{re.escape(chapter['notebook'])} (\d+) (\d+)", table)
        assert shown, f"the appendix's chapter table no longer lists {chapter['notebook']}"
        assert [int(n) for n in shown.groups()] == [chapter["code_cells"], now], (
            f"{chapter['notebook']}: re-execute notebooks/{APPENDIX}")
        if chapter["code_cells"] != now:
            changed.append(chapter["notebook"])
    if changed:
        assert f"(their code cells differ): {', '.join(changed)}." in table, (
            "the appendix must name every chapter changed since the record was timed")
    else:
        assert "Every chapter has the code cells it had when it was timed." in table


def collected_by_make_test(request):
    """How many tests `make test` collects: this session's, when it is that run."""
    if whole_run(request.config, notebooks=True):
        return len(request.session.items)
    [slow] = re.findall(r"^SLOW_TESTS = ((?:.*\\\n)*.*)$", (ROOT / "Makefile").read_text(), re.M)
    slow = slow.replace("\\\n", " ")
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
               "tests", "notebooks", "--nbval", "--nbval-current-env", *slow.split()]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    return int(re.search(r"(\d+) tests? collected", done.stdout)[1])


def test_the_red_team_is_counted_where_it_is_quoted():
    sys.path[:0] = [str(ROOT / "tests" / "red_team"), str(ROOT / "scripts")]
    import cheaters
    team = len(cheaters.cheaters(0)) + len(cheaters.FILES)
    readme = quoted(README.read_text(), r"a red team of (\d+) determined students", "README.md")
    guide = quoted((ROOT / "docs" / "instructors.md").read_text(), r"`make test-grader`: (\d+) determined", "instructors.md")
    assert readme == guide == [team], "update the red team's size in README.md and docs/instructors.md"


def test_readme_quotes_the_number_of_tests_make_test_runs(request):
    [said] = quoted(README.read_text(), r"`make test` \(([\d,]+) tests", "README.md")
    assert said == collected_by_make_test(request), "update the test count in README.md"


def test_the_grading_benchmark_is_quoted_as_recorded():
    run = json.loads((ROOT / "docs" / "bench" / "grade.json").read_text())
    assert run["points_agree"] and run["students"] >= 30 and run["chapters"] == 6
    readme = re.search(r"took ([\d,]+) s against ([\d,]+) s, ([\d.]+)× faster, with a peak of ([\d,]+) MiB",
                       " ".join(README.read_text().split()))
    guide = re.search(r"`make grade` took ([\d,]+) s and nbgrader ([\d,]+) s: ([\d.]+)× faster\. The grader "
                      r"and every sandbox together peaked at ([\d,]+) MiB",
                      " ".join((ROOT / "docs" / "instructors.md").read_text().split()))
    assert readme and guide, "README.md or docs/instructors.md no longer quotes make bench-grade's run"
    recorded = [f"{run['make_grade_seconds']:,.0f}", f"{run['nbgrader_seconds']:,.0f}", f"{run['ratio']:.2f}",
                f"{run['peak_memory_mib']:,}"]
    readme, guide = list(readme.groups()), list(guide.groups())
    assert readme == guide == recorded, "quote docs/bench/grade.json in README.md and docs/instructors.md"
