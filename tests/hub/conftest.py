"""make test-hub: a screenshot of every open page when a test fails, in build/hub/failed-*.png;
and a module whose tests are one story (IN_ORDER = True: test_hub.py's course) runs whole, in
order, in one process, or each test that would run without the ones before it fails at once."""
from pathlib import Path

import pytest

SHOTS = Path(__file__).resolve().parents[2] / "build" / "hub"
_ran = {}  # module name: the names of its tests this process has started, in order


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before any fixture: the tests of this IN_ORDER module that come before `item` in the
    collection are the ones this process ran. A scheduler that deals single tests to several
    processes (pytest-xdist's loadgroup under pytest 9.2, issue 1386) would otherwise give each
    process a hub of its own and half the course, failing far from the cause."""
    module = item.module
    if not getattr(module, "IN_ORDER", False):
        return
    before = [other.name for other in item.session.items if other.module is module]
    before = before[:before.index(item.name)]
    ran = _ran.setdefault(module.__name__, [])
    missing = [name for name in before if name not in ran]
    ran.append(item.name)
    if missing:
        pytest.fail(f"{item.name} runs without {', '.join(missing)} before it in this process: "
                    f"{module.__name__}'s tests share one course and need each other in order, so a "
                    "parallel run must keep the module on one worker (make test-hub: --dist loadfile)",
                    pytrace=False)


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
