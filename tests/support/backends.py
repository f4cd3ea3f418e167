"""The two backends every store test runs against, behind one `backend` fixture (conftest.py).

A backend is the store's nine names plus what a test needs from behind the store's back:
open a fresh store or a named one, list its physical rows and its counter, set the
counter, tamper with a column, and fingerprint everything it holds. SQLite's are what the
tests did before; PostgreSQL's run on one temporary server per test process (or on
WORKBOOK_POSTGRES_URL's), one schema per store, as the store's own role, which owns
nothing and may only call the store's four functions (which row-level security binds).
Whatever a test reads or tampers with behind the store's back goes through a separate owner
connection, as an administrator's would.

`rebound` runs an existing function with some of its global names pointing elsewhere: the
same code object, so reference.cross_check, demo.advance and the spec's test methods run
unchanged against the PostgreSQL store instead of being copied.
"""
import itertools
import os
import sqlite3
import types
import weakref
from pathlib import Path

import workbook.store
from workbook import demo, reference

SQLITE_RAISES = (OverflowError, UnicodeEncodeError, sqlite3.IntegrityError)
# The tests' servers are throwaway clusters: fsync off, because what these tests kill is the
# server's processes, never the machine, and what PostgreSQL has handed to the kernel survives
# a process crash. (The appendix's and make bench-postgres's servers keep fsync on.)
TEST_SERVER_SETTINGS = {"fsync": "off"}


def rebound(function, **names):
    """`function` with the global names in `names` bound to other objects."""
    return types.FunctionType(function.__code__, function.__globals__ | names,
                              function.__name__, function.__defaults__, function.__closure__)


class Backend:
    """What both backends share: the store's names, and functions rebound to them."""

    def __init__(self, store):
        self.store = store
        self.Conflict = store.Conflict
        self.get, self.put = store.get, store.put
        self.forget, self.purge = store.forget, store.purge
        self.advance = rebound(demo.advance, get=store.get, put=store.put)

    def store_names(self):
        """The names the store's tests import, bound to this backend."""
        return {"connect": self.connect, "get": self.get, "put": self.put,
                "forget": self.forget, "purge": self.purge, "Conflict": self.Conflict,
                "advance": self.advance}

    def cross_check(self, **arguments):
        """Chapter 6's cross_check, driving this backend's store."""
        check = rebound(reference.cross_check, **self.store_names(),
                        physical_rows=self.physical_rows, counter=self.counter)
        return check(**arguments)

    def figure(self, name):
        """A reliability figure's name for this backend (SQLite's names are unchanged)."""
        return name if self.name == "sqlite" else f"{self.name}: {name}"


class SQLiteBackend(Backend):
    name = "sqlite"

    def __init__(self):
        super().__init__(workbook.store)
        self.physical_rows, self.counter = reference.physical_rows, reference.counter

    def connect(self, path=None):
        return self.store.connect(":memory:" if path is None else path)

    def size(self, count):
        return count

    def set_counter(self, db, value):
        db.execute("UPDATE sequence SET value=?", (value,))

    def tamper(self, db, column, value, table="records"):
        """Write `value` into every row's `column`; False if SQLite cannot store it."""
        try:
            db.execute(f"UPDATE {table} SET {column}=?", (value,))
        except SQLITE_RAISES:
            return False
        return True

    def tamper_body_bytes(self, db, body):
        """Store `body` (bytes, maybe not UTF-8) as the body's text, as a broken writer might."""
        db.execute("UPDATE records SET body=CAST(? AS TEXT)", (body,))
        return True

    def fingerprint(self, db):
        """The database file byte for byte, and whether a rollback journal is left."""
        path = Path(db.execute("PRAGMA database_list").fetchone()[2])
        return path.read_bytes(), Path(f"{path}-journal").exists()


class PostgresBackend(Backend):
    """The store on a PostgreSQL server: `server` is a TemporaryServer or ExistingServer."""

    name = "postgres"

    def __init__(self, server, prefix="store", share=10):
        from workbook import postgres, postgres_install
        super().__init__(postgres)
        self.install = postgres_install
        self.server, self.prefix, self.share = server, prefix, share
        self.admin = postgres.psycopg.connect(server.conninfo(), autocommit=True)
        self.role = f"{prefix}_role"
        self.password = postgres_install.create_role(self.admin, self.role)
        if self.owns_server():
            # What a database that holds only stores should withhold from every role; on
            # WORKBOOK_POSTGRES_URL's server that is its administrator's decision.
            postgres_install.withhold_from_public(self.admin)
        self.numbers = itertools.count(1)
        self.named = {}                         # path -> schema, for stores opened by path
        self.schemas = weakref.WeakKeyDictionary()
        self.installed = []

    def owns_server(self):
        """Whether the server is a temporary one of this run's own (one that can be killed)."""
        return hasattr(self.server, "kill")

    def size(self, count):
        """A PostgreSQL run's share of a count: each call is a round trip to the server."""
        return max(1, count // self.share)

    def new_schema(self):
        schema = f"{self.prefix}_{next(self.numbers)}"
        self.install.install(self.admin, schema, self.role)
        self.installed.append(schema)
        return schema

    def connect(self, path=None):
        """A fresh store for None or ":memory:"; for a path, the store that path names."""
        if path is None or path == ":memory:":
            schema = self.new_schema()
        else:
            key = os.fspath(path)
            if key not in self.named:
                self.named[key] = self.new_schema()
            schema = self.named[key]
        db = self.store.connect(self.conninfo(schema))
        self.schemas[db] = schema
        return db

    def conninfo(self, schema):
        return self.server.conninfo(self.role, password=self.password,
                                    options=f"-c search_path={schema}")

    def owner(self, db, statement, *arguments):
        """Run `statement` as the tables' owner in `db`'s store; {records} and {sequence}
        in it stand for that store's tables (in its schema's tables_of)."""
        sql = self.store.sql
        schema = sql.Identifier(self.install.tables_of(self.schemas[db]))
        query = sql.SQL(statement).format(records=sql.SQL("{}.records").format(schema),
                                          sequence=sql.SQL("{}.sequence").format(schema))
        return self.admin.execute(query, arguments or None)

    def physical_rows(self, db):
        return sorted(self.owner(
            db, "SELECT tenant, kind, key, revision, expires, body FROM {records}"))

    def counter(self, db):
        return self.owner(db, "SELECT value FROM {sequence} WHERE singleton=1").fetchone()[0]

    def set_counter(self, db, value):
        self.owner(db, "UPDATE {sequence} SET value=%s", value)

    def tamper(self, db, column, value, table="records"):
        """Write `value`'s text form into every row's `column`; False if its type refuses it.

        The text form, then the column's own type: what the server accepts from a person
        typing the value in. (Binding the Python value directly would let the server
        convert some, 1.5 into the bigint 2, which is no longer tampering.)
        """
        types = {"revision": "bigint", "expires": "bigint", "value": "bigint", "body": "text"}
        psycopg = self.store.psycopg
        try:
            with self.admin.transaction():
                if table == "sequence":     # the owner can rewind the counter, on purpose only
                    self.owner(db, "ALTER TABLE {sequence} DISABLE TRIGGER forward_only")
                self.owner(db, f"UPDATE {{{table}}} SET {column} = CAST(%s::text AS {types[column]})",
                           value)
                if table == "sequence":
                    self.owner(db, "ALTER TABLE {sequence} ENABLE TRIGGER forward_only")
        except (psycopg.Error, OverflowError, ValueError):
            return False
        return True

    def tamper_body_bytes(self, db, body):
        """PostgreSQL's text is valid UTF-8 by construction: False when `body` is not."""
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return self.tamper(db, "body", body.decode("utf-8"))

    def fingerprint(self, db):
        """Every row and the counter, as the owner sees them."""
        return self.physical_rows(db), self.counter(db)

    def close(self):
        """Drop what this run made on the server; a temporary server goes whole instead."""
        if self.owns_server():
            self.admin.close()
            return
        for schema in self.installed:
            self.install.uninstall(self.admin, schema)
        self.install.drop_role(self.admin, self.role)
        self.admin.close()


SQLITE = SQLiteBackend()
