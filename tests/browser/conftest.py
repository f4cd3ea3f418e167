"""make test-browser: JupyterLab's fixtures, shared with tests/a11y (tests/support/labpage.py)."""
from labpage import browser, lab, page  # noqa: F401 (fixtures)
