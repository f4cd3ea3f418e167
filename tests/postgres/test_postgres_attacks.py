"""The second attacker's holes: the store's own role, its callers and a restarting server.

A helper who did not write the hardened store attacked it as the store's role would, with
raw SQL on its own connections and with the library's connections used in ways the
library did not expect. Each hole it found is a test here:

- H1 a connection used across os.fork mixed two processes' replies;
- H2 a connection switched to autocommit = False acknowledged puts that were never committed;
- H3 the role set its own defaults (ALTER ROLE ... SET synchronous_commit = off and others):
  writes acknowledged before a server crash were lost and their revisions handed out again,
  and other settings made every later call fail;
- H4 with log_parameter_max_length_on_error = -1 the server's errors carried the bound
  parameters, a fact's text among them, into str(error), its cause or its traceback;
- W1 a session queued CREATE RULE for a lock on the records table and stopped every reader;
- W7 an engineered deadlock came out of put as a raw psycopg error;
- W9 a session's own standard_conforming_strings = off broke its own puts.
"""
import os
import signal
import threading
import time
import traceback

import pytest

from backends import TEST_SERVER_SETTINGS
from test_postgres_role import store  # noqa: F401  (backend, API connection, raw role, schema)
from workbook import postgres, postgres_install
from workbook.teaching import postgres_server
from workbook.validation import payload

psycopg = postgres.psycopg
sql = postgres.sql
FACT = {"schema": 1, "text": "Fictional preference", "source": "note-1", "reviewed": False}
SECRET = "Fictional secret 7f3a: the vault code is 4096"


@pytest.fixture
def role_default(postgres_backend):
    """set(name, value): the store's role sets its own default for every later login, as an
    attacker with its password can (ALTER ROLE ... SET needs no other right). Afterwards the
    role is as create_role left it, its own TIMEOUTS again among its defaults."""
    backend = postgres_backend
    names = []
    raw = psycopg.connect(backend.conninfo("public"), autocommit=True)

    def set_default(name, value):
        raw.execute(sql.SQL("ALTER ROLE {} SET {} = {}").format(
            sql.Identifier(backend.role), sql.Identifier(name), sql.Literal(value)))
        names.append(name)
    yield set_default
    for name in names:
        backend.admin.execute(sql.SQL("ALTER ROLE {} RESET {}").format(
            sql.Identifier(backend.role), sql.Identifier(name)))
    assert postgres_install.create_role(backend.admin, backend.role) is None     # the same password
    raw.close()


def put_fact(backend, db, tenant="orchard", key="a", expected=None, now=100, text=None):
    value = FACT if text is None else FACT | {"text": text}
    return backend.put(db, tenant, "fact", key, value, expected, now, 60)


def tables_schema(backend, db):
    """The schema that holds `db`'s store's tables, as the owner finds it in the catalog."""
    return backend.admin.execute(
        """SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE c.relname = 'records' AND n.nspname IN (%s, %s)""",
        (backend.schemas[db], f"{backend.schemas[db]}_data")).fetchone()[0]


def wait_for(condition, seconds=5, why="the condition"):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{why} did not happen within {seconds} s"
        time.sleep(0.005)


def leaks(error, secret):
    """Every place a logged or printed error could show `secret`."""
    places = {"str": str(error), "repr": repr(error), "cause": repr(error.__cause__),
              "context": repr(error.__context__),
              "traceback": "".join(traceback.format_exception(error))}
    return [place for place, shown in places.items() if secret in shown]


# --- H1: a connection used across os.fork ----------------------------------------------

def test_a_connection_used_in_a_forked_child_is_refused_and_the_parents_still_works(store):
    backend, db, raw, schema = store
    revision = put_fact(backend, db)
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:      # the child: use the parent's connection, report, never clean up
        try:
            os.close(reading)
            try:
                backend.get(db, "orchard", "fact", "a", 101)
                answer = b"answered"
            except psycopg.ProgrammingError as error:
                answer = b"refused" if "os.fork" in str(error) else b"other error"
            except BaseException:
                answer = b"other error"
            os.write(writing, answer)
        finally:
            os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as answer:
        reported = answer.read()
    os.waitpid(child, 0)
    assert reported == b"refused"
    assert backend.get(db, "orchard", "fact", "a", 101)["revision"] == revision
    assert put_fact(backend, db, expected=revision) == revision + 1


# --- H2: autocommit switched off -------------------------------------------------------

@pytest.mark.parametrize("call", ["get", "put", "forget", "purge"])
def test_a_connection_without_autocommit_is_refused(store, call):
    backend, db, raw, schema = store
    revision = put_fact(backend, db)
    db.autocommit = False
    arguments = {"get": ("orchard", "fact", "a", 101),
                 "put": ("orchard", "fact", "a", FACT, revision, 101, 60),
                 "forget": ("orchard", "fact", "a", revision), "purge": ("orchard", 1000)}[call]
    with pytest.raises(psycopg.ProgrammingError, match="autocommit"):
        getattr(backend, call)(db, *arguments)
    assert not db.in_transaction
    db.autocommit = True
    assert backend.physical_rows(db)[0][3] == revision == backend.counter(db)


# --- H3: the role's own defaults, and the session's own settings -----------------------

HOSTILE_DEFAULTS = [
    ("synchronous_commit", "off", "on"),
    ("log_parameter_max_length_on_error", "-1", "0"),
    ("standard_conforming_strings", "off", "on"),
    ("default_transaction_read_only", "on", "off"),
    ("default_transaction_isolation", "serializable", "read committed"),
    ("row_security", "off", "on"),
    ("transaction_timeout", "1", "0"),
    ("exit_on_error", "on", "off"),
    ("statement_timeout", "0", "5s"),
    ("lock_timeout", "0", "2s"),
    ("idle_in_transaction_session_timeout", "0", "1s"),
]


@pytest.mark.parametrize("name, hostile, forced", HOSTILE_DEFAULTS,
                         ids=[name for name, _, _ in HOSTILE_DEFAULTS])
def test_a_role_default_set_by_the_role_itself_does_not_reach_the_store(
        store, role_default, name, hostile, forced):
    backend, db, raw, schema = store
    if name == "transaction_timeout" and db.info.server_version < 170000:
        pytest.skip("transaction_timeout is PostgreSQL 17's")
    role_default(name, hostile)
    api = postgres.connect(backend.conninfo(schema))
    try:
        assert api.execute(sql.SQL("SHOW {}").format(sql.Identifier(name))).fetchone() == (forced,)
        revision = put_fact(backend, api)
        assert backend.get(api, "orchard", "fact", "a", 101)["revision"] == revision
        assert put_fact(backend, api, expected=revision) == revision + 1
    finally:
        api.close()


def test_a_pool_of_connections_that_lack_the_settings_is_refused(store, role_default):
    backend, db, raw, schema = store
    role_default("synchronous_commit", "off")
    plain = postgres.Connection.connect(backend.conninfo(schema), autocommit=True)
    try:
        with pytest.raises(ValueError, match="synchronous_commit"):
            postgres.configure(plain)
    finally:
        plain.close()
    forced = postgres.Connection.connect(postgres.store_conninfo(backend.conninfo(schema)),
                                         autocommit=True)
    try:
        postgres.configure(forced)
        assert put_fact(backend, forced) == 1
    finally:
        forced.close()


@pytest.mark.parametrize("name, value", [("standard_conforming_strings", "off"),    # W9
                                         ("row_security", "off"),
                                         ("synchronous_commit", "off"),
                                         ("plpgsql.variable_conflict", "use_column")])
def test_a_sessions_own_setting_does_not_break_its_own_calls(store, name, value):
    backend, db, raw, schema = store
    db.execute(sql.SQL("SET {} = {}").format(sql.Identifier(*name.split(".")), sql.Literal(value)))
    revision = put_fact(backend, db)
    assert backend.get(db, "orchard", "fact", "a", 101)["revision"] == revision
    assert put_fact(backend, db, expected=revision) == revision + 1
    assert backend.forget(db, "orchard", "fact", "a", revision + 1) is True


def test_a_sessions_read_only_default_gives_server_unavailable_and_writes_nothing(store):
    backend, db, raw, schema = store
    db.execute("SET default_transaction_read_only = on")
    with pytest.raises(postgres.ServerUnavailable, match="nothing was written"):
        put_fact(backend, db)
    assert backend.physical_rows(db) == [] and backend.counter(db) == 0


@pytest.mark.parametrize("where", ["role default", "session"])
def test_acknowledged_writes_survive_a_server_crash_whatever_synchronous_commit_says(where):
    """The attacker's a09: 200 puts with synchronous_commit off, SIGKILL, restart."""
    server = postgres_server.TemporaryServer(TEST_SERVER_SETTINGS)
    with server:
        admin = psycopg.connect(server.conninfo(), autocommit=True)
        password = postgres_install.create_role(admin)
        postgres_install.install(admin, "crash")
        url = server.conninfo(postgres_install.STORE_ROLE, password=password,
                              options="-c search_path=crash")
        if where == "role default":
            with psycopg.connect(url, autocommit=True) as raw:
                raw.execute(f"ALTER ROLE {postgres_install.STORE_ROLE} SET synchronous_commit = off")
        admin.close()
        db = postgres.connect(url)
        if where == "session":
            db.execute("SET synchronous_commit = off")
        acknowledged = [put_fact_on(db, f"k{number}") for number in range(200)]
        server.kill()
        db.close()
        server.start()
        db = postgres.connect(url)
        for number, revision in enumerate(acknowledged):
            record = postgres.get(db, "orchard", "fact", f"k{number}", 101)
            assert record is not None and record["revision"] == revision, number
        assert put_fact_on(db, "next") == max(acknowledged) + 1
        db.close()


def put_fact_on(db, key):
    return postgres.put(db, "orchard", "fact", key, FACT, None, 100, 60)


# --- H4: no error carries a bound parameter --------------------------------------------

@pytest.mark.parametrize("where", ["role default", "session"])
@pytest.mark.parametrize("failure", ["trigger", "lock wait"])
def test_no_error_from_a_failed_put_shows_the_facts_text(store, role_default, where, failure):
    backend, db, raw, schema = store
    tables = sql.Identifier(tables_schema(backend, db))
    revision = put_fact(backend, db)
    if where == "role default":
        role_default("log_parameter_max_length_on_error", "-1")
        db.close()
        db = postgres.connect(backend.conninfo(schema))
        backend.schemas[db] = schema
    else:
        db.execute("SET log_parameter_max_length_on_error = -1")
    admin = backend.admin
    if failure == "trigger":
        admin.execute(sql.SQL("""CREATE FUNCTION {}.refuse() RETURNS trigger LANGUAGE plpgsql
            AS $$BEGIN RAISE EXCEPTION 'simulated failure'
                USING ERRCODE = 'integrity_constraint_violation'; END$$""").format(tables))
        admin.execute(sql.SQL("CREATE TRIGGER refuse BEFORE UPDATE ON {}.records FOR EACH ROW "
                              "EXECUTE FUNCTION {}.refuse()").format(tables, tables))
        expected = psycopg.IntegrityError
    else:
        admin.execute("BEGIN")
        admin.execute(sql.SQL("SELECT 1 FROM {}.records FOR UPDATE").format(tables))
        expected = postgres.ServerUnavailable
    try:
        with pytest.raises(expected) as caught:
            put_fact(backend, db, expected=revision, text=SECRET)
    finally:
        if failure == "trigger":
            admin.execute(sql.SQL("DROP TRIGGER refuse ON {}.records").format(tables))
        else:
            admin.execute("ROLLBACK")
        if where == "role default":
            db.close()
    assert leaks(caught.value, SECRET) == []
    assert backend.physical_rows(db)[0][3] == revision


# --- W7: a deadlock is translated -------------------------------------------------------

def engineered_deadlock(backend, db, raw, schema, key):
    """The raw session holds record a<key> and the counter; the API's put takes b<key> and waits
    for the counter; then the raw session asks for b<key>. What each side came to."""
    first = put_fact(backend, db, key=f"a{key}")
    second = put_fact(backend, db, key=f"b{key}")
    body = payload("fact", FACT)
    put_sql = f"SELECT * FROM {schema}.put('orchard', 'fact', %s, %s, %s, 150, 60)"
    raw.execute("BEGIN")
    raw.execute(put_sql, (f"a{key}", body, first))     # holds record a and the counter
    answer = {}

    def blocked():
        try:
            answer["result"] = put_fact(backend, db, key=f"b{key}", expected=second, now=150,
                                        text=SECRET)
        except BaseException as error:
            answer["error"] = error
    thread = threading.Thread(target=blocked)
    thread.start()
    wait_for(lambda: backend.admin.execute(
        "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
        (db.info.backend_pid,)).fetchone() == ("Lock",), why="the API's put waiting")
    raw_ended = False
    try:
        raw.execute(put_sql, (f"b{key}", body, second))   # waits for b, which the API's put holds
    except psycopg.errors.DeadlockDetected:
        raw_ended = True
    thread.join(10)
    raw.execute("ROLLBACK")
    return first, second, answer, raw_ended


def test_a_deadlock_gives_server_unavailable_saying_nothing_was_written(store, role_default):
    backend, db, raw, schema = store
    role_default("log_parameter_max_length_on_error", "-1")
    raw.close()
    raw = psycopg.connect(backend.conninfo(schema), autocommit=True)
    raw.execute("SET idle_in_transaction_session_timeout = 0")
    # PostgreSQL ends the session whose one deadlock check, deadlock_timeout (1 s) after it
    # began to wait, finds the cycle. The API's put waits first, so it is the one ended, unless
    # on a loaded machine the raw session's wait began after that check (which found no cycle
    # yet): then the raw session is ended, or the API's put gives up on its 2 s lock wait, and
    # the attempt says nothing of a deadlock in the API's put. Such an attempt is made again.
    for attempt in range(5):
        first, second, answer, raw_ended = engineered_deadlock(backend, db, raw, schema, attempt)
        late = isinstance(answer.get("error"), postgres.ServerUnavailable) \
            and "deadlock" not in str(answer["error"])
        if not (raw_ended or late):
            break
    raw.close()
    error = answer.get("error")
    assert isinstance(error, postgres.ServerUnavailable), answer
    assert "deadlock" in str(error) and "nothing was written" in str(error)
    assert leaks(error, SECRET) == []
    assert [row[3] for row in backend.physical_rows(db)
            if row[2] in (f"a{attempt}", f"b{attempt}")] == [first, second]


# --- W1: the role cannot name the tables ------------------------------------------------

@pytest.mark.parametrize("statement", [
    "CREATE RULE r AS ON INSERT TO {tables}.records DO INSTEAD NOTHING",
    "CREATE TRIGGER t BEFORE INSERT ON {tables}.records FOR EACH ROW EXECUTE FUNCTION "
    "{tables}.forward_only()",
    "COMMENT ON TABLE {tables}.records IS 'mine'",
    "LOCK TABLE {tables}.records IN ACCESS EXCLUSIVE MODE",
    "ALTER TABLE {tables}.records ADD COLUMN n int",
    "SELECT * FROM {tables}.records",
])
def test_the_role_cannot_queue_for_a_lock_on_the_tables(store, statement):
    backend, db, raw, schema = store
    put_fact(backend, db, tenant="harbour")
    tables = tables_schema(backend, db)
    reader = psycopg.connect(backend.conninfo(schema), autocommit=True)
    reader.execute("SET idle_in_transaction_session_timeout = 0")
    reader.execute("BEGIN")
    reader.execute(f"SELECT * FROM {schema}.get('orchard', 'fact', 'a', 100)")  # holds a lock
    raw.execute("SET lock_timeout = 0")
    raw.execute("SET statement_timeout = '4s'")
    answer = {}

    def attack():
        started = time.monotonic()
        try:
            raw.execute("BEGIN")
            raw.execute(statement.format(tables=tables))
        except psycopg.Error as error:
            answer["error"] = error
        answer["seconds"] = time.monotonic() - started
    thread = threading.Thread(target=attack)
    thread.start()
    try:
        wait_for(lambda: not thread.is_alive() or backend.admin.execute(
            "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
            (raw.info.backend_pid,)).fetchone() == ("Lock",), why="the attack ending or waiting")
        started = time.monotonic()
        assert backend.get(db, "harbour", "fact", "a", 101)["revision"] == 1
        assert time.monotonic() - started < 1
    finally:
        reader.execute("ROLLBACK")
        thread.join(10)
        raw.execute("ROLLBACK")
        reader.close()
    assert isinstance(answer.get("error"), psycopg.errors.InsufficientPrivilege), answer
    assert answer["seconds"] < 1


# --- the server's own check of a body: no lone surrogate escape -------------------------

def test_the_server_refuses_a_body_with_a_lone_surrogate_escape(store):
    backend, db, raw, schema = store
    good = payload("fact", FACT)
    for text in ("\\ud800", "\\udc00", "x\\udbff", "\\udc00\\ud800", "\\ud800\\u0041"):
        body = good.replace("Fictional", text)
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            raw.execute(f"SELECT * FROM {schema}.put('orchard', 'fact', 'a', %s, NULL, 100, 60)",
                        (body,))
    paired = good.replace("Fictional", "\\ud83d\\ude00")        # payload's own escape of U+1F600
    assert raw.execute(f"SELECT revision FROM {schema}.put('orchard', 'fact', 'a', %s, NULL, "
                       "100, 60)", (paired,)).fetchone() == (1,)
    assert backend.get(db, "orchard", "fact", "a", 101)["value"]["text"] == "\U0001F600 preference"


# --- W5: the role's sessions are limited ------------------------------------------------

def test_the_role_may_open_at_most_its_connection_limit(store):
    backend, db, raw, schema = store
    opened = []
    try:
        with pytest.raises(psycopg.OperationalError, match="too many connections for role"):
            for _ in range(postgres_install.CONNECTION_LIMIT + 1):
                opened.append(psycopg.connect(backend.conninfo(schema)))
        assert backend.admin.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s",
                                     (backend.role,)).fetchone() == (postgres_install.CONNECTION_LIMIT,)
    finally:
        for connection in opened:
            connection.close()
    assert put_fact(backend, db) == 1       # the sessions it had still work
