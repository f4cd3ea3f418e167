"""The static edition (make html): every chapter readable offline, nothing fetched from the
network, its structure what a screen reader needs. In make test-a11y, beside axe-core's checks of
the same build (tests/a11y/conftest.py builds the edition once per worker for both): building and parsing
eight pages took a tenth of make test's time."""
import functools
import re
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[2]
from course.editions import html as html_edition

CHAPTERS = html_edition.chapters()
NETWORK = re.compile(r"^\s*(https?:)?//", re.I)
LOADING = ("src", "href", "srcset", "action", "formaction", "poster", "data", "xlink:href",
           "background", "cite", "ping")


@pytest.fixture(scope="module")
def built(html_edition_built):
    return html_edition_built


PARSED = {}


def soup_of(path):
    """The page parsed, once per page: the tests only read it (parsing is most of this file's
    time)."""
    if path not in PARSED:
        PARSED[path] = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    return PARSED[path]


def network_loads(soup):
    """Every attribute or stylesheet address in the page that would reach the network."""
    found = [(tag.name, name, value) for tag in soup.find_all(True)
             for name, value in tag.attrs.items()
             if name in LOADING and any(NETWORK.match(part.strip().split(" ")[0])
                                        for part in str(value).split(","))]
    for style in soup.find_all("style") + soup.find_all(style=True):
        text = style.string or "" if style.name == "style" else style["style"]
        found += [("style", "url", u) for u in re.findall(
            r"""(?:url\(\s*['"]?|@import\s+['"])((?:https?:)?//[^'")\s]+)""", text or "")]
    return found


def headings(nb):
    found = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in re.findall(r"^#{1,6}\s+(.+)$", cell.source, re.M):
                found.append(re.sub(r"[*_`]", "", line).strip())
    return found


def expected_tables(nb):
    count = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            count += len(re.findall(r"^\s*\|?\s*:?-{3,}", cell.source, re.M))
        for output in cell.get("outputs", []):
            count += output.get("data", {}).get("text/html", "").count("<table")
    return count


def expected_images(nb):
    return sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


@functools.cache
def nb_of(path):
    return nbformat.read(path, as_version=4)


def test_index_links_every_chapter(built):
    index = soup_of(built / "index.html")
    links = [a["href"] for a in index.find_all("a")]
    assert links == [p.stem + ".html" for p in CHAPTERS]
    assert all((built / link).is_file() for link in links)
    titles = [a.get_text() for a in index.find_all("a")]
    assert titles[0].startswith("Chapter 1")
    assert network_loads(index) == [] and not index.find_all("script")


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_page_holds_headings_tables_and_images(built, notebook):
    nb = nbformat.read(notebook, as_version=4)
    page = soup_of(built / f"{notebook.stem}.html")
    shown = [" ".join(h.get_text().replace("¶", "").split())
             for h in page.find_all(re.compile(r"^h[1-6]$"))]
    for heading in headings(nb):
        assert " ".join(heading.split()) in shown, heading
    title = "Appendix" if notebook.stem.startswith("appendix") else f"Chapter {int(notebook.stem[:2])}"
    assert page.title.get_text().startswith(title)
    assert len(page.find_all("table")) >= expected_tables(nb)
    pictures = [img for img in page.find_all("img")
                if img.get("src", "").startswith("data:image/png;base64,")]
    assert len(pictures) >= expected_images(nb)
    assert all(img["src"].startswith("data:") for img in page.find_all("img"))


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_page_loads_nothing_from_the_network(built, notebook):
    text = (built / f"{notebook.stem}.html").read_text(encoding="utf-8")
    page = soup_of(built / f"{notebook.stem}.html")
    assert network_loads(page) == []
    assert [s for s in page.find_all("script") if s.get("src")] == []
    assert not page.find_all("link", href=True)  # every stylesheet is inline
    for library in ("require.js", "require.min.js", "MathJax.js", "mermaid", "html-manager",
                    "application/vnd.jupyter.widget-state+json"):
        assert library not in text, library


def test_links_become_text_and_widgets_their_static_fallback(tmp_path):
    from workbook.teaching.explorer import explore
    from workbook.teaching.timeline import late_purge_scenario

    bundle, metadata = explore(late_purge_scenario(), order=2)._repr_mimebundle_()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Chapter 7 · Links\n\nSee [SQLite's docs]"
                                      "(https://sqlite.org/lang.html) and "
                                      "<https://example.org/x>. [Back](#Links)."),
        nbformat.v4.new_code_cell("explore(late_purge_scenario(), order=2)", execution_count=1,
                                  outputs=[nbformat.v4.new_output("display_data", data=bundle,
                                                                  metadata=metadata)]),
    ]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(nb, notebooks / "07-links.ipynb")
    source = (notebooks / "07-links.ipynb").read_bytes()
    html_edition.build(tmp_path / "out", notebooks)
    assert (notebooks / "07-links.ipynb").read_bytes() == source  # only read
    page = soup_of(tmp_path / "out" / "07-links.html")
    assert network_loads(page) == []
    prose = " ".join(page.get_text().split())
    assert "See SQLite's docs (https://sqlite.org/lang.html) and https://example.org/x." in prose
    assert page.find("a", href="#Links") is not None  # a link within the page stays
    # the explorer: its HTML tables, then its picture; no widget script or state
    assert "step 3 of 6 · now = 108 · get orchard / fact / preference returns None" in prose
    assert "records holds these rows" in prose and len(page.find_all("table")) >= 2
    assert [img["src"][:22] for img in page.find_all("img")] == ["data:image/png;base64,"]
    assert "widget-view+json" not in str(page) and "widget-state" not in str(page)


def test_a_remote_image_stops_the_build(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Chapter 8\n\n![logo](https://example.org/a.png)")]
    nbformat.write(nb, tmp_path / "08-remote.ipynb")
    with pytest.raises(ValueError, match="would load https://example.org/a.png"):
        html_edition.build(tmp_path / "out", tmp_path)


# ---------------------------------------------------------------- WCAG 2.1 AA (make test-a11y runs axe)

def test_every_picture_has_a_real_alt_and_its_description_after_it(built):
    from workbook.teaching.figures import PLACEHOLDER

    for notebook in CHAPTERS:
        page = soup_of(built / f"{notebook.stem}.html")
        for img in page.find_all("img"):
            alt = img.get("alt", "")
            assert alt.strip() and alt != PLACEHOLDER, (notebook.stem, alt[:60])
        figures = [img for img in page.find_all("img") if img.find_parent(class_="workbook-figure")]
        assert len(figures) == expected_images(nb := nbformat.read(notebook, as_version=4)), \
            notebook.stem
        for img in figures:
            details = img.find_next_sibling("details")
            assert details is not None and details.summary.get_text().startswith(
                "Text description of the figure"), notebook.stem
        assert nb is not None


def test_a_picture_alone_takes_its_alt_from_the_outputs_metadata(tmp_path):
    import base64

    from matplotlib.figure import Figure
    from workbook.teaching.figures import png_bytes

    figure = Figure(figsize=(2, 1))
    figure.subplots().plot([1, 2])
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Chapter 9 · Alone"),
                nbformat.v4.new_code_cell("picture()", execution_count=1, outputs=[
                    nbformat.v4.new_output("display_data", data={
                        "image/png": base64.b64encode(png_bytes(figure)).decode()},
                        metadata={"image/png": {"alt": "A line rising from 1 to 2."}})])]
    nbformat.write(nb, tmp_path / "09-alone.ipynb")
    html_edition.build(tmp_path / "out", tmp_path)
    [img] = soup_of(tmp_path / "out" / "09-alone.html").find_all("img")
    assert img["alt"] == "A line rising from 1 to 2."


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_language_headings_and_table_headers(built, notebook):
    page = soup_of(built / f"{notebook.stem}.html")
    assert page.html["lang"] == "en"
    # the edition keeps the chapter's levels as its markdown writes them, and adds only an
    # exercise's heading, one level below the heading before it
    levels = [int(h.name[1]) for h in page.find_all(re.compile(r"^h[1-6]$"))]
    written, section = [], 1
    for cell in nb_of(notebook).cells:
        if cell.cell_type == "markdown":
            for m in re.findall(r"^(#{1,6})\s|^\*\*Exercise [A-Z0-9]+\.\d+\.\*\*", cell.source,
                                re.M):
                section = len(m) if m else section
                written.append(len(m) if m else section + 1)
    assert levels == written and levels.count(1) == 1 and levels[0] == 1, (levels, written)
    assert all(b - a <= 1 for a, b in zip(levels, levels[1:])), levels  # no level skipped
    for table in page.find_all("table"):
        assert table.find("th") is not None, str(table)[:200]


def test_the_editions_colours_override_the_themes(built):
    text = (built / "04-deletion.html").read_text(encoding="utf-8")
    theme = text.index("--jp-cell-prompt-not-active-opacity: 0.5")
    ours = text.index("--jp-cell-prompt-not-active-opacity: 1")
    assert theme < ours  # the later :root rule wins
    for name in ("comment", "number", "operator"):
        assert f"--jp-mirror-editor-{name}-color: #" in text[ours:]


# ---------------------------------------------------------------- a screen reader's reading

def code_cells(page):
    return page.select("div.jp-Cell.jp-CodeCell")


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_code_and_its_output_are_named_by_cell(built, notebook):
    page = soup_of(built / f"{notebook.stem}.html")
    for cell in code_cells(page):
        prompt = cell.select_one(".jp-InputPrompt").get_text()
        number = re.fullmatch(r"In\s*\[(\d+)\]:", prompt.strip())[1]
        source = cell.select_one(".jp-InputArea")
        assert (source["role"], source["aria-label"]) == ("group", f"Code of cell {number}")
        assert source.select(".highlight pre > code"), cell["id"]  # marked as code
        if cell.select(".jp-OutputArea-output"):
            named = cell.find(attrs={"aria-label": f"Output of cell {number}"})
            assert named is not None and named["role"] == "group", cell["id"]
            assert named.select(".jp-OutputArea-output") or \
                "jp-OutputArea-output" in named["class"]


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_no_tab_stop_on_a_cell_only_on_a_table_that_may_scroll(built, notebook):
    """nbconvert made every cell and output a tab stop with no name (94 in chapter 4); a table
    keeps one, named, as the page's script leaves it only while the table scrolls."""
    page = soup_of(built / f"{notebook.stem}.html")
    stops = page.find_all(attrs={"tabindex": True})
    for element in stops:
        assert element.find("table") is not None, str(element)[:200]
        assert element.has_attr("data-workbook-scroll") and element.get("aria-label"), \
            str(element)[:200]
    assert not page.select(".jp-Cell-inputWrapper[tabindex]")
    assert len(stops) < len(page.select(".jp-Cell")) / 2


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_the_two_navigation_bars_are_named_apart(built, notebook):
    page = soup_of(built / f"{notebook.stem}.html")
    assert [nav.get("aria-label") for nav in page.find_all("nav")] == \
        ["Chapters, top", "Chapters, bottom"]


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_worked_answers_wait_behind_a_closed_details(built, notebook):
    """A reader who reads on does not hear the answer, or its verdict, before choosing theirs."""
    nb = nb_of(notebook)
    page = soup_of(built / f"{notebook.stem}.html")
    solutions = [c.id for c in nb.cells if c.cell_type == "code" and "### BEGIN SOLUTION" in c.source]
    checks = [c.id for c in nb.cells if c.cell_type == "code" and c.outputs
              and re.match(r"\s*q\d+\.(check|compare)\(", c.source)]
    for cell_id in solutions + checks:
        cell = page.find(id=f"cell-id={cell_id}")
        details = cell.find_parent("details")
        assert details is not None and not details.has_attr("open"), cell_id
        assert details.summary.get_text() in ("Show the worked answer",
                                              "Show the run beside the worked answer")
    hidden = page.find_all("details", class_="workbook-worked-answer")
    assert len(hidden) <= len(solutions) + len(checks)
    # every string of the page outside those (scripts and styles too), read without taking
    # the shared parsed page apart
    inside = {id(details) for details in hidden}
    text = " ".join(string for string in page.find_all(string=True)
                    if not any(id(parent) in inside for parent in string.parents))
    assert "BEGIN SOLUTION" not in text and not re.search(r"Exercise [A-Z0-9]+\.\d+: correct", text)


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_exercises_are_headings_and_directive_cells_are_left_out(built, notebook):
    nb = nb_of(notebook)
    page = soup_of(built / f"{notebook.stem}.html")
    numbers = re.findall(r"^\*\*(Exercise [A-Z0-9]+\.\d+)\.\*\*", "\n".join(
        c.source for c in nb.cells if c.cell_type == "markdown"), re.M)
    headings = [h.get_text().replace("¶", "") for h in page.find_all(re.compile(r"^h[1-6]$"))
                if h.get_text().startswith("Exercise ")]
    assert headings == numbers
    assert not [s for s in page.find_all("strong") if re.match(r"Exercise \w+\.\d+", s.get_text())]
    directives = [c.id for c in nb.cells if c.cell_type == "code" and c.source.startswith("#| default_exp")]
    assert all(page.find(id=f"cell-id={cell_id}") is None for cell_id in directives)
    first = page.select("div.jp-Cell")[0]
    assert first.find("h1") is not None  # the page opens on its title


def test_the_edition_runs_no_cell_and_its_one_script_only_moves_tab_stops(built):
    text = (built / "04-deletion.html").read_text(encoding="utf-8")
    scripts = BeautifulSoup(text, "html.parser").find_all("script")
    assert len(scripts) == 1 and not scripts[0].get("src")
    body = scripts[0].string
    assert "[data-workbook-scroll]" in body and "fetch" not in body and "XMLHttpRequest" not in body
