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

from workbook.figures import PLACEHOLDER, DescribedFigure, described

ROOT = Path(__file__).resolve().parents[1]
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
    from workbook.figures import png_bytes

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
