"""make test-a11y: axe-core in Debian's Chromium, driven by Playwright's Python client, with the
browser test's own fixtures (its Chromium, and `make lab` in a temporary copy of the tree); and
the HTML edition's pages read without a browser (test_html_pages.py)."""
import pytest

from labpage import browser, lab, page  # noqa: F401 (fixtures)


@pytest.fixture(scope="session")
def html_edition_built(tmp_path_factory):
    """The HTML edition, built once per pytest worker for the pages' structure (test_html_pages.py)
    and axe-core's checks (test_html_edition.py): make test-a11y runs its files on two workers, so
    when those two files land on different ones each builds it (about 10 s), beside the lab's test."""
    from course.editions import html as html_edition
    out = tmp_path_factory.mktemp("html")
    html_edition.build(out)
    return out
