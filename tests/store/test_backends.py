"""The specification's ten tests (test_store.py) on every backend (the PostgreSQL backend's own
parts are tested in tests/postgres/test_temporary_servers.py).

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
import types
import unittest

import pytest

from backends import rebound
from workbook.specification import test_store

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
            tables = sql.Identifier(backend.install.tables_of(backend.schemas[self]))
            statement = sql.SQL(BEHIND_THE_STORE[query]).format(
                schema=schema, records=sql.SQL("{}.records").format(tables),
                sequence=sql.SQL("{}.sequence").format(tables))
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
