"""Write the static edition: every chapter as an HTML page, with an index, readable offline.

    python course/editions/html.py [OUT]      (default: build/html; make html runs this)

The pages show the chapters as stored, outputs included (make test holds those outputs to a
fresh run). nbconvert's lab template embeds its CSS; images are embedded as data: URIs; the
template's require.js, MathJax, Mermaid and widget-manager scripts, all fetched from a CDN,
are left out (course/editions/html_template/offline). A widget output keeps what its static
fallback says: the time explorer's HTML tables and its PNG picture. No src or href points
at the network: a link in a chapter's prose becomes its text followed by the address in
parentheses, which a reader can copy but the page never loads. The notebooks are only read.

For a reader with a screen reader (WCAG 2.1 AA; make test-a11y), the pages are also made
easier to follow than nbconvert leaves them (``accessible``): each code cell's source is a
group named "Code of cell n" with its text marked as code, and its outputs a group named
"Output of cell n"; nbconvert's tabindex="0" on every cell and output is removed (a tab stop
with no name), except on an output or a text that holds a table, which may scroll sideways and
so must be reachable by the keyboard (named, then, by its group; a few lines of script in the page
keep that tab stop only while the table is wider than the page); an exercise's bold lead-in
("**Exercise 5.1.**") becomes a heading one level below the section it is in; a worked answer
(its ``### BEGIN SOLUTION`` cell and the checks that run it) waits in a closed
<details> "Show the worked answer", so that reading on does not give the answer before the
reader has chosen theirs; and a cell of nbdev directives only (``#| default_exp``) is left
out. The two navigation bars are named "Chapters, top" and "Chapters, bottom".
"""
import copy
import html
import re
import sys
from pathlib import Path

import nbformat
from bs4 import BeautifulSoup
from nbconvert import HTMLExporter

from course import ROOT
from course.notebook import has_solution, is_directive_cell
TEMPLATES = Path(__file__).resolve().parent / "html_template"
WIDGET = "application/vnd.jupyter.widget-view+json"
EXERCISE = re.compile(r"^\s*(Exercise [A-Z0-9]+\.\d+)\.?\s*$")
CHECK = re.compile(r"^\s*q\d+\.(check|compare)\(.*\)\s*$")
HEADING = re.compile(r"^h[1-6]$")
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
    picture, with its alt and description (workbook.teaching.figures); an output whose HTML has no
    picture but that also holds a PNG is split in two so that both appear, HTML first, the
    PNG keeping its metadata (and so its alt).
    """
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    nb.cells = [cell for cell in nb.cells if not is_directive_cell(cell)]
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


def worked(cell):
    """"answer" for a cell holding a worked solution, "check" or "compare" for a call that runs
    one (q1.check(visible), q1.compare(visible)), else None."""
    if cell.cell_type != "code":
        return None
    if has_solution(cell):
        return "answer"
    match = CHECK.match(cell.source)
    if match and cell.get("outputs"):
        return match[1]
    return None


def accessible(page, nb):
    """The page's cells as a screen reader needs them (see the module's docstring)."""
    soup = BeautifulSoup(page, "html.parser")
    cells = {f"cell-id={cell.get('id')}": cell for cell in nb.cells}
    for number, element in enumerate(soup.select("div.jp-Cell.jp-CodeCell"), start=1):
        cell = cells.get(element.get("id"))
        count = cell.get("execution_count") if cell is not None else None
        name = f"cell {count or number}"
        area = element.select_one(".jp-InputArea")
        if area is not None:
            area["role"], area["aria-label"] = "group", f"Code of {name}"
            for pre in area.select(".highlight pre"):
                code = soup.new_tag("code")
                for child in list(pre.contents):
                    code.append(child.extract())
                pre.append(code)
        outputs = element.select_one(".jp-OutputArea")
        if outputs is not None:
            outputs["role"], outputs["aria-label"] = "group", f"Output of {name}"
    for element in soup.select(".jp-MarkdownOutput"):
        if element.find("table"):  # a markdown table scrolls sideways on a narrow page
            element["tabindex"] = "0"
            element["role"], element["aria-label"] = "group", "Text with a table"
            element["data-workbook-scroll"] = ""
    for element in soup.find_all(attrs={"tabindex": "0"}):
        if element.has_attr("data-workbook-scroll"):
            continue
        scrolls = "jp-OutputArea-output" in element.get("class", []) and element.find("table")
        if scrolls:  # a wide table scrolls sideways: keep it reachable, and name the tab stop
            group = element.find_parent(class_="jp-OutputArea")
            name = group.get("aria-label", "Output") if group is not None else "Output"
            parts = group.select(".jp-OutputArea-output") if group is not None else [element]
            element["role"] = "group"
            element["data-workbook-scroll"] = ""  # the page's script keeps the stop only if it scrolls
            if len(parts) == 1:  # the one output names itself; its area need not say it again
                element["aria-label"] = name
                del group["role"], group["aria-label"]
            else:
                place = next(i for i, part in enumerate(parts, start=1) if part is element)
                element["aria-label"] = f"{name}, part {place}"
        else:
            del element["tabindex"]
    exercise_headings(soup)
    worked_answers(soup, cells)
    return str(soup)


def exercise_headings(soup):
    """``<p><strong>Exercise 5.1.</strong> ...</p>`` becomes ``<h3>Exercise 5.1</h3><p>...</p>``,
    one level below the heading before it."""
    level = 1
    for element in soup.find_all([HEADING, "p"]):
        if HEADING.match(element.name):
            if not element.has_attr("data-workbook-exercise"):
                level = int(element.name[1])
            continue
        lead = element.find(True, recursive=False)
        if lead is None or lead.name != "strong" or element.contents[0] is not lead:
            continue
        match = EXERCISE.match(lead.get_text())
        if match is None:
            continue
        anchor = match[1].replace(" ", "-")
        heading = soup.new_tag(f"h{min(level + 1, 6)}", id=anchor)
        heading["data-workbook-exercise"] = ""
        heading.string = match[1]
        link = soup.new_tag("a", href=f"#{anchor}", attrs={"class": "anchor-link"})
        link.string = "¶"
        heading.append(link)
        lead.extract()
        if element.contents and isinstance(element.contents[0], str):
            element.contents[0].replace_with(element.contents[0].lstrip())
        element.insert_before(heading)
        if not element.get_text(strip=True):
            element.decompose()


def worked_answers(soup, cells):
    """Each run of adjacent worked-answer cells (the solution, the checks that run it) inside
    one closed <details>."""
    groups, current = [], []
    for element in soup.select("div.jp-Cell"):
        kind = worked(cells[element["id"]]) if element.get("id") in cells else None
        if kind and current and current[-1][0].find_next_sibling("div") is element:
            current.append((element, kind))
        elif kind:
            current = [(element, kind)]
            groups.append(current)
        else:
            current = []
    for group in groups:
        details = soup.new_tag("details", attrs={"class": "workbook-worked-answer"})
        summary = soup.new_tag("summary")
        kinds = {kind for _, kind in group}
        summary.string = ("Show the worked answer" if "answer" in kinds
                          else "Show the run beside the worked answer" if "compare" in kinds
                          else "Show the check of the worked answer")
        details.append(summary)
        group[0][0].insert_before(details)
        for element, _ in group:
            details.append(element.extract())


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
        shown = static_outputs(nb)
        body, _ = exporter.from_notebook_node(shown, resources=resources)
        target = out / pages[index][0]
        target.write_text(unlink(accessible(body, shown)), encoding="utf-8")
        written.append(target)
    items = "\n".join(
        f'<li><a href="{name}">{html.escape(title)}</a><br>'
        f'<span class="summary">{html.escape(summary_of(nb))}</span></li>'
        for (name, title), nb in zip(pages, books))
    index = out / "index.html"
    index.write_text(INDEX.format(items=items), encoding="utf-8")
    return [index, *written]


def main(argv=None):
    """workbook-html [OUT]: the HTML edition into OUT (default build/html)."""
    argv = sys.argv[1:] if argv is None else argv
    target = Path(argv[0]) if argv else ROOT / "build" / "html"
    for page in build(target):
        print(page.relative_to(ROOT) if page.is_relative_to(ROOT) else page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
