"""Every page of the HTML edition passes axe-core's WCAG 2.0/2.1 A and AA rules: 0 violations.

The edition is built fresh (scripts/html_edition.py, as make html builds it) into a temporary
folder and each page is opened from disk in Chromium. The counts go to build/a11y/html.json.
"""
import sys

import pytest
from playwright.sync_api import expect

from axe import ROOT, count, run_axe, save, summary

sys.path.insert(0, str(ROOT / "scripts"))
import html_edition  # noqa: E402

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
