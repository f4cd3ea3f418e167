"""make test-a11y: axe-core in Debian's Chromium, driven by Playwright's Python client, with the
browser test's own fixtures (its Chromium, and `make lab` in a temporary copy of the tree)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser.test_lab import browser  # noqa: E402,F401 (the fixture)
