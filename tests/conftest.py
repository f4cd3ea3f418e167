import collections
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings


# Lets tests import the spec's reference code (tests/spec_reference.py) by name.
sys.path.insert(0, str(Path(__file__).parent))

import backends  # noqa: E402
import quoted  # noqa: E402
from soak import SOAK  # noqa: E402

# Hypothesis draws the same examples on every run (as its own "ci" profile does), so that the
# counts the README quotes are the counts every make test finds; make soak draws new ones.
settings.register_profile("workbook", derandomize=not SOAK, print_blob=True)
settings.load_profile("workbook")


def without_local_constants():
    """Keep Hypothesis from mixing the literals of the workbook's own modules into its examples.

    Hypothesis (pinned at 6.170) also draws strings and numbers found in whichever local,
    non-test modules are imported when a test runs. Which those are depends on what else the
    same xdist worker ran before (a chapter's exercises, a broken copy loaded from a temporary
    folder), and every string edited in the package would change them, so the same
    derandomized test tried different examples from run to run and the README's counts went
    stale. The examples now depend on the tests' own strategies alone, which name the hostile
    values they mean.
    """
    from hypothesis.internal.conjecture import providers
    assert callable(getattr(providers, "_get_local_constants", None)), \
        "Hypothesis no longer has _get_local_constants: see without_local_constants in conftest.py"
    empty = providers.Constants(integers=providers.SortedSet(),
                                floats=providers.SortedSet(key=providers.float_to_int),
                                bytes=providers.SortedSet(), strings=providers.SortedSet())
    providers._get_local_constants = lambda: empty


without_local_constants()

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


# The store's backends (tests/backends.py): every test that takes `backend` runs once on
# SQLite and once on PostgreSQL. The PostgreSQL server is started once per test process (each
# pytest-xdist worker has its own; about half a second) and removed at the end, or is the one
# WORKBOOK_POSTGRES_URL names. If it cannot be had, its tests fail with the reason.
@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def backend(request):
    if request.param == "sqlite":
        return backends.SQLITE
    return request.getfixturevalue("postgres_backend")


@pytest.fixture(scope="session")
def postgres_server():
    from workbook.teaching.postgres_server import workbook_server
    with workbook_server(backends.TEST_SERVER_SETTINGS) as server:
        yield server


@pytest.fixture(scope="session")
def postgres_backend(postgres_server):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    # On a shared server (WORKBOOK_POSTGRES_URL), schemas and the role carry this run's name.
    prefix = "store" if hasattr(postgres_server, "kill") else f"wb_{os.getpid()}_{worker}"
    store = backends.PostgresBackend(postgres_server, prefix=prefix)
    yield store
    store.close()
