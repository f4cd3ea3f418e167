"""make test-a11y: axe-core in Debian's Chromium, driven by Playwright's Python client, with the
browser test's own fixtures (its Chromium, and `make lab` in a temporary copy of the tree); and
the HTML edition's pages read without a browser (test_html_pages.py)."""
import fcntl

import pytest

from labpage import browser, lab, page  # noqa: F401 (fixtures)


@pytest.fixture(scope="session")
def html_edition_built(tmp_path_factory, worker_id):
    """The HTML edition, built once per run for the pages' structure (test_html_pages.py) and
    axe-core's checks (test_html_edition.py). make test-a11y runs its files on two workers, and
    those two files usually land on different ones: the first to ask builds it (about 10 s)
    under a lock in the run's own temporary folder, which pytest-xdist's workers share; the other
    waits for it and reads the same pages."""
    from course.editions import html as html_edition
    run = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        run = run.parent
    out = run / "html-edition"
    with open(run / "html-edition.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.exists():
            building = run / "html-edition.new"
            html_edition.build(building)
            building.rename(out)
    return out
