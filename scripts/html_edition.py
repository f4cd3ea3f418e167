"""Write the static edition: every chapter as an HTML page, with an index, readable offline.

    python scripts/html_edition.py [OUT]      (default: build/html; make html runs this)

The pages show the chapters as stored, outputs included (make test holds those outputs to a
fresh run). nbconvert's lab template embeds its CSS; images are embedded as data: URIs; the
template's require.js, MathJax, Mermaid and widget-manager scripts, all fetched from a CDN,
are left out (scripts/html_template/offline). A widget output keeps what its static
fallback says: the time explorer's HTML tables and its PNG picture. No src or href points
at the network: a link in a chapter's prose becomes its text followed by the address in
parentheses, which a reader can copy but the page never loads. The notebooks are only read.
"""
import copy
import html
import re
import sys
from pathlib import Path

import nbformat
from bs4 import BeautifulSoup
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = Path(__file__).resolve().parent / "html_template"
WIDGET = "application/vnd.jupyter.widget-view+json"
NETWORK = re.compile(r"^\s*(https?:)?//", re.I)


def chapters(notebooks=ROOT / "notebooks"):
    """The six chapters in order, then the appendix."""
    return (sorted(Path(notebooks).glob("[0-9][0-9]-*.ipynb"))
            + sorted(Path(notebooks).glob("appendix-*.ipynb")))


def static_outputs(nb):
    """A copy of the notebook with widgets replaced by their static fallback.

    The widget view needs the widget manager's JavaScript, so it is dropped with the saved
    widget state (make notebooks already drops both from the stored chapters). What remains of
    the output (text, HTML, a PNG) is shown. A described figure's HTML already holds its
    picture, with its alt and description (workbook.figures); an output whose HTML has no
    picture but that also holds a PNG is split in two so that both appear, HTML first, the
    PNG keeping its metadata (and so its alt).
    """
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        outputs = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            data.pop(WIDGET, None)
            if "text/html" in data and "image/png" in data and "<img" not in data["text/html"]:
                picture = copy.deepcopy(output)
                picture.data = {"image/png": data.pop("image/png"), "text/plain": "picture"}
                picture.metadata = copy.deepcopy(output.get("metadata", {}))
                picture.pop("execution_count", None)
                picture.output_type = "display_data"
                outputs += [output, picture]
            else:
                outputs.append(output)
        if cell.cell_type == "code":
            cell.outputs = outputs
    return nb


def title_of(nb, fallback):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if match:
                return match[1].strip()
    return fallback


def summary_of(nb):
    """The chapter's first paragraph after its title, as plain text."""
    for cell in nb.cells:
        if cell.cell_type == "markdown" and re.search(r"^#\s", cell.source, re.M):
            paragraphs = [p.strip() for p in cell.source.split("\n\n")]
            text = next((p for p in paragraphs[1:] if p and not p.startswith("#")), "")
            return re.sub(r"[*_`]", "", " ".join(text.split()))
    return ""


def unlink(page):
    """Replace every <a href="http..."> by its text and the address in parentheses.

    Any other tag whose src or href would reach the network is an error: the page must
    not load anything.
    """
    if not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I):
        return page  # the usual case: leave nbconvert's page byte for byte
    soup = BeautifulSoup(page, "html.parser")
    for tag in soup.find_all("a", href=NETWORK):
        address, text = tag["href"], tag.get_text()
        tag.replace_with(text if address.rstrip("/") in text else f"{text} ({address})")
    for tag in soup.find_all(attrs={"href": NETWORK}) + soup.find_all(attrs={"src": NETWORK}):
        raise ValueError(f"a <{tag.name}> would load {tag.get('href') or tag.get('src')}")
    return str(soup)


def navigation(pages, index):
    links = ['<a href="index.html">All chapters</a>']
    if index > 0:
        links.append(f'<a href="{pages[index - 1][0]}">← {html.escape(pages[index - 1][1])}</a>')
    if index + 1 < len(pages):
        links.append(f'<a href="{pages[index + 1][0]}">{html.escape(pages[index + 1][1])} →</a>')
    return " ".join(links)


INDEX = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>The agent memory workbook</title>
<style type="text/css">
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 46em;
        margin: 2em auto; padding: 0 1em; line-height: 1.5; color: #1a1a1a; }}
li {{ margin-bottom: 0.8em; }}
.summary {{ color: #444; }}
</style>
</head>
<body>
<main>
<h1>The agent memory workbook</h1>
<p>The chapters as executed, with their outputs. This edition reads offline and runs
nothing: to run a cell, change it or move a slider, open the workbook with <code>make lab</code>.</p>
<ol>
{items}
</ol>
</main>
</body>
</html>
"""


def build(out=ROOT / "build" / "html", notebooks=ROOT / "notebooks"):
    """Write one page per chapter and index.html into ``out``; return the pages' paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter(template_name="offline", extra_template_basedirs=[str(TEMPLATES)],
                            embed_images=True, exclude_anchor_links=False)
    sources = chapters(notebooks)
    books = [nbformat.read(path, as_version=4) for path in sources]
    pages = [(path.stem + ".html", title_of(nb, path.stem)) for path, nb in zip(sources, books)]
    written = []
    for index, (path, nb) in enumerate(zip(sources, books)):
        resources = {"metadata": {"name": pages[index][1], "path": str(path.parent)},
                     "workbook_nav": navigation(pages, index)}
        body, _ = exporter.from_notebook_node(static_outputs(nb), resources=resources)
        target = out / pages[index][0]
        target.write_text(unlink(body), encoding="utf-8")
        written.append(target)
    items = "\n".join(
        f'<li><a href="{name}">{html.escape(title)}</a><br>'
        f'<span class="summary">{html.escape(summary_of(nb))}</span></li>'
        for (name, title), nb in zip(pages, books))
    index = out / "index.html"
    index.write_text(INDEX.format(items=items), encoding="utf-8")
    return [index, *written]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "html"
    for page in build(target):
        print(page.relative_to(ROOT) if page.is_relative_to(ROOT) else page)
