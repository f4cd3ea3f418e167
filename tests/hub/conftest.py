"""make test-hub: a screenshot of every open page when a test fails, in build/hub/failed-*.png."""
from pathlib import Path

import pytest

SHOTS = Path(__file__).resolve().parents[2] / "build" / "hub"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed or "people" not in item.funcargs:
        return
    browser = item.funcargs.get("browser")
    for number, context in enumerate(browser.contexts if browser else []):
        for page_number, page in enumerate(context.pages):
            try:
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / f"failed-{item.name}-{number}-{page_number}.png"))
            except Exception:  # a page that is gone has nothing to show
                pass
