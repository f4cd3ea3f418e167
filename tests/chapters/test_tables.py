"""Every table a notebook stores reads as it means: whole numbers as integers, no NaN, a caption.

A table is read on screen, aloud and in the HTML edition from what the notebook stores. pandas
turns a column of ints with a gap in it into floats: the stored HTML then said `20.000000` (a
screen reader reads "twenty point zero zero zero zero zero zero") and the gap `nan`. So every
table in every stored output is checked here, in its HTML and in its text; a chapter shows its
tables with `workbook.teaching.figures.shown` (or the timeline's `styled`), which keeps integers
integers and writes a missing value as "none", under a caption a screen reader announces.
"""
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from bs4 import BeautifulSoup

from workbook.teaching.exercises.ch4 import PLAN, PLAN_COLUMNS
from workbook.teaching.figures import shown
from workbook.teaching.timeline import styled

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CHAPTERS = [path for path in NOTEBOOKS if path.name[:2].isdigit()]
MISSING = {"nan", "NaN", "<NA>", "NaT"}
PANDAS_FLOAT = re.compile(r"^-?[\d,]*\d\.\d{6}$")   # a Styler's default format: 20.000000
WHOLE_FLOAT = re.compile(r"^-?[\d,]*\d\.0+$")        # 20.0, 20.00
MISSING_WORD = re.compile(r"(?<![\w<])(nan|NaN|NaT)(?![\w>])|<NA>")


def tables(html):
    """Each table in an HTML output: (caption or None, rows of cell texts, header row first)."""
    found = []
    for table in BeautifulSoup(html, "html.parser").find_all("table"):
        caption = table.find("caption")
        rows = [[cell.get_text(" ", strip=True) for cell in row.find_all(["th", "td"])]
                for row in table.find_all("tr")]
        found.append((caption.get_text(" ", strip=True) if caption else None, rows))
    return found


def problems(html, text=""):
    """What in one output's tables does not read as it means, in words; [] when nothing."""
    said = []
    for caption, rows in tables(html):
        body = [row for row in rows if row and not all(c == "" for c in row)][1:]  # the header aside
        for row in body:
            for cell in row:
                if cell in MISSING:
                    said.append(f"a missing value reads {cell!r}")
                elif PANDAS_FLOAT.match(cell):
                    said.append(f"a number reads {cell!r}, in pandas' default format")
        for column in zip(*[row for row in body if len(row) == len(body[0])]) if body else ():
            numbers = [cell for cell in column if cell not in ("", "none", "None", *MISSING)]
            if numbers and all(WHOLE_FLOAT.match(cell) for cell in numbers):
                said.append(f"a column of whole numbers reads as floats: {numbers[:3]}")
    if tables(html) and MISSING_WORD.search(text):
        said.append(f"the table's text says {MISSING_WORD.search(text)[0]!r}")
    return said


def outputs(notebook):
    """(cell id, HTML, plain text) of every stored output that holds a table."""
    for cell in json.loads(notebook.read_text())["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            html = "".join(data.get("text/html", ""))
            if "<table" in html:
                yield cell["id"], html, "".join(data.get("text/plain", ""))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_stored_table_shows_whole_numbers_as_ints_and_no_nan(notebook):
    found = {cell: problems(html, text) for cell, html, text in outputs(notebook)}
    assert {cell: said for cell, said in found.items() if said} == {}


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_every_table_in_a_chapter_has_a_caption(notebook):
    uncaptioned = [cell for cell, html, _ in outputs(notebook)
                   for caption, _ in tables(html) if not caption]
    assert uncaptioned == []


def test_the_check_finds_a_table_pandas_made_of_ints_with_a_gap():
    # the table of Exercise 4.3 as pandas shows it: its ttl column holds ints and one gap
    frame = pd.DataFrame(PLAN, columns=PLAN_COLUMNS)
    said = problems(frame.style.to_html(), frame.to_string())
    assert any("'20.000000'" in line for line in said), said
    assert any("missing value reads 'nan'" in line for line in said), said
    assert any("'NaN'" in line for line in said), said
    assert any("whole numbers reads as floats" in line
               for line in problems(frame.to_html(), "")), problems(frame.to_html(), "")
    assert problems(frame.to_html(), "") != []


def test_shown_and_styled_keep_ints_ints_and_read_a_gap_as_none():
    frame = pd.DataFrame(PLAN, columns=PLAN_COLUMNS)
    assert frame["ttl"].dtype == float  # what pandas made of it
    for table in (shown(frame, caption="The steps"), styled(frame, "The steps")):
        assert problems(table.to_html(), repr(table)) == []
        html_rows = tables(table.to_html())[0][1]
        assert html_rows[1][-1] == "20" and html_rows[8][-1] == "none", html_rows
        assert "  20\n" in repr(table) and " none\n" in repr(table), repr(table)
    # a column of measured values keeps its decimals, and a None stays the value None
    mixed = shown(pd.DataFrame({"seconds": [1.5, 2.0], "got": [None, "revision 1"]}, dtype=object))
    assert [row[0] for row in tables(mixed.to_html())[0][1][1:]] == ["1.5", "2.0"]
    assert [row[1] for row in tables(mixed.to_html())[0][1][1:]] == ["None", "revision 1"]
    assert frame["ttl"].dtype == float  # the frame itself is not changed
