"""Every figure a notebook stores says what it shows, where every front end finds it.

A picture output (image/png) must carry a real text alternative: a short alt in its image/png
metadata (IPython's place, which nbconvert reads), the same alt on the <img> of its text/html
(what JupyterLab and the HTML edition show), followed by the full description in a <details>
block, and the description as text/plain (which nbval compares). A figure added without one
fails here; a markdown image without alt text fails too.
"""
import base64
import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from workbook.teaching.figures import PLACEHOLDER, DescribedFigure, described

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
DEFAULT_REPR = re.compile(r"^<.*(Figure|Image|object).*>$", re.S)


def text(value):
    return "".join(value) if isinstance(value, list) else value


def figures(path):
    """(cell id, output) for every output holding a picture."""
    for cell in json.loads(path.read_text())["cells"]:
        for output in cell.get("outputs", []):
            if any(mime.startswith("image/") for mime in output.get("data", {})):
                yield cell.get("id"), output


def problems(output):
    """What is missing from one picture output's description, as sentences (none: fine)."""
    data, found = output.get("data", {}), []
    alt = (output.get("metadata", {}).get("image/png") or {}).get("alt", "")
    if len(alt.split()) < 8 or alt == PLACEHOLDER:
        found.append("no alt of a sentence or more in metadata['image/png']['alt']")
    if DEFAULT_REPR.match(text(data.get("text/plain", "")).strip()) or \
            len(text(data.get("text/plain", ""))) <= len(alt):
        found.append("text/plain is not the full description")
    page = BeautifulSoup(text(data.get("text/html", "")), "html.parser")
    pictures = page.find_all("img")
    if not pictures or any(img.get("alt") != alt for img in pictures):
        found.append("text/html has no <img> with that alt")
    elif pictures[-1]["src"] != "data:image/png;base64," + text(data.get("image/png", "")).strip():
        found.append("the <img> in text/html is not the stored picture")
    details = pictures[-1].find_next("details") if pictures else None
    if details is None or details.summary is None or \
            len(details.get_text(" ", strip=True)) <= len(alt):
        found.append("no <details> block with the full description after the picture")
    return found


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_stored_figure_carries_its_description(notebook):
    missing = {cell: said for cell, output in figures(notebook) if (said := problems(output))}
    assert missing == {}, f"{notebook.name}: figures without a description: {missing}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_markdown_images_have_alt_text(notebook):
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            source = text(cell["source"])
            assert not re.search(r"!\[\s*\]\(", source), (notebook.name, cell.get("id"))
            for img in BeautifulSoup(source, "html.parser").find_all("img"):
                assert img.get("alt", "").strip(), (notebook.name, cell.get("id"))


def test_the_figures_are_where_the_issue_counts_them():
    counted = {path.stem: sum(1 for _ in figures(path)) for path in NOTEBOOKS}
    assert {name: n for name, n in counted.items() if n} == {
        "04-deletion": 2, "05-recovery-and-timelines": 5, "appendix-costs": 1}


def test_a_figure_without_a_description_is_caught():
    from matplotlib.figure import Figure
    from workbook.teaching.figures import png_bytes

    figure = Figure(figsize=(2, 1))
    figure.subplots().plot([1, 2, 3])
    bare = {"output_type": "display_data", "metadata": {},
            "data": {"image/png": base64.b64encode(png_bytes(figure)).decode(),
                     "text/plain": "<Figure size 200x100 with 1 Axes>"}}
    assert len(problems(bare)) == 4
    good = described(figure, "A rising line", "A line rising from 1 to 3 over three points, "
                     "evenly spaced.", ["The points are 1, 2 and 3, at x = 0, 1 and 2."])
    assert isinstance(good, DescribedFigure)
    data, metadata = good._repr_mimebundle_()
    assert problems({"data": data, "metadata": metadata}) == []
    with pytest.raises(ValueError, match="non-empty alt"):
        described(figure, "A title", " ", [])


# ---------------------------------------------------------------- what a listener hears of a timeline

def described_outputs(path):
    """(cell id, alt, <details> soup) for every stored picture with a description, in order."""
    for cell_id, output in figures(path):
        alt = (output.get("metadata", {}).get("image/png") or {}).get("alt", "")
        page = BeautifulSoup(text(output["data"].get("text/html", "")), "html.parser")
        yield cell_id, alt, page.find("details")


def table_rows(table):
    columns = [th.get_text() for th in table.thead.find_all("th")]
    return [dict(zip(columns, (td.get_text() for td in tr.find_all("td"))))
            for tr in table.tbody.find_all("tr")]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_stored_timeline_has_one_events_table_in_the_order_things_happened(notebook):
    for cell_id, alt, details in described_outputs(notebook):
        if not alt.startswith("Timeline “"):
            continue
        [table] = details.find_all("table")  # one table, not one per lane
        rows = table_rows(table)
        assert list(rows[0])[:2] == ["step", "tick"] and "get returns" in rows[0], cell_id
        steps = [int(r["step"]) for r in rows if r["step"] != "no operation"]
        assert steps == sorted(steps), cell_id
        for before, after in zip(rows, rows[1:]):
            if before.get("pass", "1") == after.get("pass", "1"):
                assert int(after["tick"]) >= int(before["tick"]), (cell_id, before, after)
        assert all(r["step"].strip() for r in rows), cell_id  # a deadline says "no operation"
        said = details.get_text(" ")
        assert said.count("the file is closed and reopened") <= 1, cell_id
        assert "marker" not in said and "one per identity" not in said, cell_id


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_stored_still_points_to_its_figure_and_does_not_repeat_it(notebook):
    """An explorer's still names the figure it steps through, says its description is there,
    lists the steps still to come, and repeats none of the figure's description."""
    drawn = {}
    for cell_id, alt, details in described_outputs(notebook):
        if alt.startswith("Timeline “"):
            title = alt.split("“", 1)[1].split("”", 1)[0]
            drawn[title] = [p.get_text() for p in details.find_all("p")]
            continue
        if not alt.startswith("The timeline “"):
            continue
        title = alt.split("“", 1)[1].split("”", 1)[0]
        assert title in drawn, (cell_id, title, list(drawn))  # the figure above, by its title
        said = [p.get_text() for p in details.find_all("p")]
        assert said[0] == f"The same run as the figure above (“{title}”); its description is there."
        assert re.fullmatch(r"Still to come: (step \d+, [a-z ]+ \d+(; |\.$))+", said[1]) or \
            said[1] == "Nothing is still to come: this is the last step.", said[1]
        assert details.find("table") is None and not set(said) & set(drawn[title]), cell_id
        assert "→" not in alt and (" returns " in alt or " raises " in alt), alt


def test_the_exercise_figure_says_whether_the_prediction_matches():
    [(cell_id, alt, details)] = [found for found in described_outputs(
        ROOT / "notebooks" / "05-recovery-and-timelines.ipynb") if "you predicted" in found[1]]
    said = "Your prediction matches the run: visible 100 to 109 and 111 to 113."
    assert said in alt and said in details.get_text(" "), cell_id
