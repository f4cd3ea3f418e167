"""A chapter's sentence about its own code or outputs still matches what it counts.

nbval holds each notebook's outputs to a live run, but never its sentences: "It prints seven
lines" stays in the prose after the demonstration prints eight. Each check below reads a figure
where a chapter writes it and recomputes it from its source now: a cell's stored output (which
nbval keeps honest) or the code. A check fails both when the figure is stale and when its sentence
is reworded, so a rewrite cannot drop it quietly. Measured figures (test counts, benchmark
results) are not held here: prose links to the records their commands write.
"""
import ast
import inspect

import pytest

from quoted import output, prose, quoted, source
from workbook import records, reference, store
from workbook.reference import MUTANTS
from workbook.specification import test_store
from workers import PROCESSES

CH1, CH2, CH3 = "01-purpose-and-validation.ipynb", "02-visibility.ipynb", "03-revisions.ipynb"
CH4, CH5 = "04-deletion.ipynb", "05-recovery-and-timelines.ipynb"
CH6, APPENDIX = "06-failure-cases-and-limits.ipynb", "appendix-costs.ipynb"
POSTGRES = "appendix-postgres.ipynb"


def seconds(*settings):
    """The PostgreSQL store's timeouts, in whole seconds, as workbook.postgres sets them."""
    from workbook import postgres
    values = {**postgres.TIMEOUTS, "lock wait": postgres.LOCK_WAIT}
    return [int(values[name].removesuffix("s")) for name in settings]


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
    tree = ast.parse(inspect.getsource(test_store))
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


QUOTES = [  # (where, cell, the quoting sentence, the figures now)
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
    (CH6, "c06-004f", r"subject: (\w+) processes", lambda: [PROCESSES]),
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
    (POSTGRES, "apg-013", r"a transaction left open is ended after (\w+) second, a statement "
     r"after (\w+), a lock waited for after (\w+)\.",
     lambda: seconds("idle_in_transaction_session_timeout", "statement_timeout", "lock_timeout")),
    (POSTGRES, "apg-046f", r"gives up after (\w+) seconds", lambda: seconds("lock wait")),
    (POSTGRES, "apg-046l", r"got the role's own (\w+)-second timeout",
     lambda: seconds("statement_timeout")),
]


@pytest.mark.parametrize("where, cell_id, pattern, now", QUOTES,
                         ids=[f"{w.split('-')[0]}-{c or 'readme'}-{i}"
                              for i, (w, c, _, _) in enumerate(QUOTES)])
def test_quoted_figure_matches_its_source(where, cell_id, pattern, now):
    text = prose(where, cell_id)
    assert quoted(text, pattern, f"{where} {cell_id or ''}") == now()


def test_a_reworded_or_stale_quote_is_caught():
    with pytest.raises(AssertionError, match="no longer says"):
        quoted("It prints eight lines.", r"It prints (\w+) lines and more", "a sample")
    assert quoted("It prints eight lines.", r"It prints (\w+) lines", "a sample") != [7]
