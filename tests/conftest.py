import collections
import sys
from pathlib import Path

import pytest

# Lets tests import the spec's reference code (tests/spec_reference.py) by name.
sys.path.insert(0, str(Path(__file__).parent))

import quoted  # noqa: E402
from soak import SOAK  # noqa: E402

# Reliability figures: tests add counts with figures["name"] += n; the end of the run prints them.
# Under pytest-xdist each worker counts its own and hands them to the controller when it stops.
FIGURES = collections.Counter()


@pytest.fixture(scope="session")
def figures():
    return FIGURES


# The README's reliability figures that this run contradicts (tests/quoted.py): checked only
# when the session ran all of tests/ unfiltered and unscaled, the run those figures describe.
STALE = []


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["figures"] = dict(FIGURES)
    elif (not SOAK and not session.config.option.collectonly and session.exitstatus == 0
          and quoted.whole_run(session.config)):
        STALE.extend(quoted.stale_reliability(FIGURES))
        if STALE:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    FIGURES.update(getattr(node, "workeroutput", {}).get("figures", {}))


def pytest_terminal_summary(terminalreporter):
    if FIGURES:
        terminalreporter.section("reliability figures" + (" (soak)" if SOAK else ""))
        for name, value in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{name}: {value:,}")
    if STALE:
        terminalreporter.section("stale figures in README.md", red=True)
        for line in STALE:
            terminalreporter.write_line(line)
