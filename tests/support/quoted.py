"""Read a figure where prose quotes it, and the cells and runs it was copied from.

Used by tests/project/test_quoted_figures.py (figures that can be recomputed at any time) and by
conftest.py (the README's reliability figures, which only a whole `make test` run produces).
"""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
WORDS = {word: number for number, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def number(text):
    """'seven', 'Seven', '1,240' or '575' as an int."""
    text = text.replace(",", "")
    return int(text) if text.isdigit() else WORDS[text.lower()]


def quoted(text, pattern, where):
    """The figures `pattern`'s groups capture in `text`; fails if the sentence is gone.

    Runs of whitespace count as one space, so reflowing a paragraph changes nothing.
    """
    found = re.search(pattern, " ".join(text.split()))
    assert found, f"{where} no longer says {pattern!r}: reword this check with the prose"
    return [number(group) for group in found.groups()]


def cells(notebook):
    path = ROOT / "notebooks" / notebook
    return {cell["id"]: cell for cell in json.loads(path.read_text())["cells"]}


def prose(notebook, cell_id):
    """The source of one markdown cell."""
    cell = cells(notebook)[cell_id]
    assert cell["cell_type"] == "markdown", (notebook, cell_id)
    return "".join(cell["source"])


def source(notebook, cell_id):
    """The source of one code cell."""
    cell = cells(notebook)[cell_id]
    assert cell["cell_type"] == "code", (notebook, cell_id)
    return "".join(cell["source"])


def output(notebook, cell_id):
    """The text a code cell stored: its printed lines, then its results as plain text."""
    parts = []
    for item in cells(notebook)[cell_id]["outputs"]:
        parts.append("".join(item.get("text", "")))
        parts.append("".join(item.get("data", {}).get("text/plain", "")))
    return "".join(parts)


def whole_run(config, notebooks=False):
    """True when this session runs all of tests/ (and notebooks/ under nbval), unfiltered."""
    option = config.option
    if (option.keyword or option.markexpr or getattr(option, "lf", False)
            or getattr(option, "deselect", None)):
        return False
    given = {(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args}
    wanted = {ROOT / "tests"} | ({ROOT / "notebooks"} if notebooks else set())
    return wanted <= given and (not notebooks or getattr(option, "nbval", False))


# The README's reliability figures and the names conftest's `figures` counts them under. Only
# figures fixed by the tests' seeds, sizes and derandomized Hypothesis examples are listed (see
# without_local_constants in conftest.py); the number of conflicts retried depends on timing, so
# the README reports one run's value.
RELIABILITY = [
    (r"\*\*Model\*\*: ([\d,]+) seeded operations", "model cross-check: operations"),
    (r"([\d,]+) comparisons", "model cross-check: comparisons"),
    (r"([\d,]+) Hypothesis state-machine", "stateful steps checked against the model"),
    (r"([\d,]+) state-machine steps, against", "postgres: stateful steps checked against the model"),
    (r"\*\*Crashes\*\*: ([\d,]+) SIGKILL trials", "crash trials survived"),
    (r"\(([\d,]+) mid-operation", "crash trials: killed mid-operation"),
    (r"([\d,]+) after the commit", "crash trials: killed after the commit, before returning"),
    (r"increments = ([\d,]+), none lost", "concurrent increments (4 processes), none lost"),
    (r"accepted ([\d,]+) stale writes", "forget/recreate race: stale writes accepted"),
    (r"\*\*Hostile input\*\*: ([\d,]+) calls", "hostile inputs: tried"),
    (r"([\d,]+) were refused", "hostile inputs: rejected"),
    (r"The other ([\d,]+) were valid", "hostile inputs: accepted"),
    (r"([\d,]+) generated tampered rows", "tampered rows read"),
    (r"the spec's ([\d,]+) broken copies",
     "spec mutants killed (spec suite and model cross-check each)"),
    # The same tests on PostgreSQL (tests/support/backends.py), named with the backend in front.
    (r"the spec's ([\d,]+) tests on the server", "postgres: spec tests passed through the backend fixture"),
    (r"([\d,]+) seeded operations on the server", "postgres: model cross-check: operations"),
    (r"on the server with ([\d,]+) comparisons", "postgres: model cross-check: comparisons"),
    (r"([\d,]+) hostile calls on the server", "postgres: hostile inputs: tried"),
    (r"\(([\d,]+) refused, every row", "postgres: hostile inputs: rejected"),
    (r"([\d,]+) tampered server rows", "postgres: tampered rows read"),
    (r"([\d,]+) server crash trials", "postgres: crash trials survived"),
    (r"then restarted\): ([\d,]+) kills", "postgres: crash trials: killed mid-operation"),
    (r"([\d,]+) of them just after an acknowledged commit",
     "postgres: crash trials: killed after the commit, before returning"),
]


def stale_reliability(figures):
    """One line for each README reliability figure that this run's count contradicts."""
    readme = README.read_text()
    stale = []
    for pattern, name in RELIABILITY:
        [said] = quoted(readme, pattern, "README.md")
        if figures.get(name, 0) != said:
            stale.append(f"README.md says {said:,} for {name!r}; this run counted "
                         f"{figures.get(name, 0):,}")
    return stale


def ci_commands():
    """The commands the README says CI runs, in its order: the sentence '`make test`, ... and
    `make test-browser` are what CI runs'. .ci/run and the workflow are held to it."""
    text = " ".join(README.read_text().split())
    found = re.search(r"((?:`make [a-z0-9-]+`(?:, | and ))+`make [a-z0-9-]+`) are what CI runs", text)
    assert found, "the README no longer says which commands CI runs ('... are what CI runs')"
    return re.findall(r"`(make [a-z0-9-]+)`", found.group(1))
