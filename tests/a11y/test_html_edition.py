"""Every page of the HTML edition passes axe-core's WCAG 2.0/2.1 A and AA rules: 0 violations.

The edition is built fresh (course/editions/html.py, as make html builds it) into a temporary
folder and each page is opened from disk in Chromium. The counts go to build/a11y/html.json.
"""

import pytest
from playwright.sync_api import expect

from axe import count, run_axe, save, summary

from course.editions import html as html_edition

PAGES = ["index.html"] + [p.stem + ".html" for p in html_edition.chapters()]
WAIT = 30_000
REPORT = {}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    html_edition.build(out)
    yield out
    save("html", REPORT)


@pytest.mark.parametrize("name", PAGES)
def test_page_has_no_wcag_a_or_aa_violation(browser, built, name):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto((built / name).as_uri())
        # what axe reads: the page's content, laid out (the chapter's cells, or the index's list)
        expect(page.locator("main h1, .jp-Notebook h1").first).to_be_visible(timeout=WAIT)
        assert page.evaluate("() => document.documentElement.lang") == "en"
        result = run_axe(page)
        REPORT[name] = {"axe": result["version"], "elements": count(result),
                        "rules": summary(result), "violations": result["violations"]}
        assert result["violations"] == [], f"{name}: {count(result)} elements: {summary(result)}"
    finally:
        page.close()


TAB_STOPS = """() => {
    const all = [...document.querySelectorAll("*")];
    const scrolls = all.filter(e => ["auto", "scroll"].includes(getComputedStyle(e).overflowX)
        && e.scrollWidth > e.clientWidth && e.getClientRects().length);
    const stops = all.filter(e => e.getAttribute("tabindex") === "0");
    const name = e => e.getAttribute("aria-label") || "";
    return {scrolls: scrolls.length, stops: stops.length,
            unreachable: scrolls.filter(e => !stops.includes(e)).map(e => e.outerHTML.slice(0, 200)),
            needless: stops.filter(e => !scrolls.includes(e)).map(e => e.outerHTML.slice(0, 200)),
            unnamed: stops.filter(e => !name(e)).length};
}"""


@pytest.mark.parametrize("name", PAGES[1:])
def test_a_tab_stop_only_where_the_content_scrolls(browser, built, name):
    """nbconvert made every cell and output a tab stop (94 in chapter 4, none named). Now an
    element is a tab stop exactly while it scrolls sideways, at a desktop width and at a phone's,
    and each has a name."""
    for width in (1280, 400):
        page = browser.new_page(viewport={"width": width, "height": 900})
        try:
            page.goto((built / name).as_uri())
            expect(page.locator(".jp-Notebook h1").first).to_be_visible(timeout=WAIT)
            found = page.evaluate(TAB_STOPS)
            assert found["unreachable"] == [] and found["needless"] == [], (width, found)
            assert found["unnamed"] == 0, (width, found)
            if width == 400 and name.startswith("04"):
                assert 0 < found["stops"] < 20, found  # the chapter's wide tables, no more
        finally:
            page.close()
