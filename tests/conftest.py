import collections
import sys
from pathlib import Path

import pytest

# Lets tests import the spec's reference code (tests/spec_reference.py) by name.
sys.path.insert(0, str(Path(__file__).parent))

from soak import SOAK  # noqa: E402

# Reliability figures: tests add counts with figures["name"] += n; the end of the run prints them.
# Under pytest-xdist each worker counts its own and hands them to the controller when it stops.
FIGURES = collections.Counter()


@pytest.fixture(scope="session")
def figures():
    return FIGURES


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["figures"] = dict(FIGURES)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    FIGURES.update(getattr(node, "workeroutput", {}).get("figures", {}))


def pytest_terminal_summary(terminalreporter):
    if FIGURES:
        terminalreporter.section("reliability figures" + (" (soak)" if SOAK else ""))
        for name, value in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{name}: {value:,}")
