"""make test-a11y: axe-core in Debian's Chromium, driven by Playwright's Python client, with the
browser test's own fixtures (its Chromium, and `make lab` in a temporary copy of the tree)."""
from labpage import browser, lab, page  # noqa: F401 (fixtures)
