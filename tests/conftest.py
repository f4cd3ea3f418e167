import sys
from pathlib import Path

# Lets tests import the spec's reference code (tests/spec_reference.py) by name.
sys.path.insert(0, str(Path(__file__).parent))


# Reliability figures: tests add counts with figures["name"] += n; the end of the run prints them.
import collections

import pytest

from soak import SOAK

FIGURES = collections.Counter()


@pytest.fixture(scope="session")
def figures():
    return FIGURES


def pytest_terminal_summary(terminalreporter):
    if FIGURES:
        terminalreporter.section("reliability figures" + (" (soak)" if SOAK else ""))
        for name, value in FIGURES.items():
            terminalreporter.write_line(f"{name}: {value:,}")
