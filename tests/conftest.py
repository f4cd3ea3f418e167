import collections
import os

import pytest
from hypothesis import settings

import backends
from soak import SOAK

# Hypothesis draws the same examples on every run (as its own "ci" profile does), so that the
# counts every make test prints at its end are the same from run to run; make soak draws new ones.
settings.register_profile("workbook", derandomize=not SOAK, print_blob=True)
settings.load_profile("workbook")


def without_local_constants():
    """Keep Hypothesis from mixing the literals of the workbook's own modules into its examples.

    Hypothesis (pinned at 6.170) also draws strings and numbers found in whichever local,
    non-test modules are imported when a test runs. Which those are depends on what else the
    same xdist worker ran before (a chapter's exercises, a broken copy loaded from a temporary
    folder), and every string edited in the package would change them, so the same
    derandomized test tried different examples from run to run and its counts moved. The examples now depend on the tests' own strategies alone, which name the hostile
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


# The store's backends (tests/support/backends.py): every test that takes `backend` runs once on
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
    from workbook.postgres import workbook_server
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
