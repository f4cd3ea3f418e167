"""Read a figure where a chapter's prose quotes it, and the cells and code it describes.

Used by tests/project/test_quoted_figures.py: a chapter's sentence about its own code ("these
three helpers") is held to that code. Measured figures are not quoted in prose: they live in
records that their commands write (docs/bench/ and the like).
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


def ci_commands():
    """The commands the README says CI runs, in its order: the sentence '`make checks` is what
    CI runs' (or '`make a` and `make b` are ...'). .ci/run is held to it."""
    text = " ".join(README.read_text().split())
    found = re.search(r"((?:`make [a-z0-9-]+`(?:, | and ))*`make [a-z0-9-]+`) (?:is|are) what CI runs", text)
    assert found, "the README no longer says which commands CI runs ('... is what CI runs')"
    return re.findall(r"`(make [a-z0-9-]+)`", found.group(1))


def checks():
    """What make checks runs, in its order (the Makefile's CHECKS): make test and the slow suites."""
    makefile = (ROOT / "Makefile").read_text()
    found = re.search(r"^CHECKS = (.+)$", makefile, re.M)
    assert found, "the Makefile no longer names what make checks runs (CHECKS = ...)"
    return [f"make {target}" for target in found.group(1).split()]
