"""The third attacker's eight holes, each a test that failed on the store before they closed.

A helper who held the store's password tried the hardened store again and got in eight ways:

1. a put's transaction committed without waiting for the disk after the put (SET LOCAL
   synchronous_commit = off, and the other ways to have the last word before a commit): the
   write was acknowledged, lost in a crash, and its revision handed out again;
2. the same through the API: a call inside psycopg's pipeline mode;
3. a role default (debug_print_plan) put every call's parameters into the server's log;
4. role defaults that broke the store (client_encoding, idle_session_timeout,
   local_preload_libraries) with raw errors or untrue advice;
5. a role default that slowed it (enable_indexscan = off);
6. session advisory locks filled the lock table every session shares;
7. temporary files, a backend's memory, large objects and temporary tables had no bound;
8. the server's check accepted bodies payload() never writes (\\u0041 for A).

The crash trials here kill the server with SIGKILL (a server of their own) right after a commit
returned; tests/test_postgres_trials.py runs longer trials of the same kind.
"""
import json
import re
import subprocess
import sys

import pytest

from backends import TEST_SERVER_SETTINGS
from test_postgres_attacks import FACT, SECRET, put_fact, role_default  # noqa: F401
from test_postgres_role import store  # noqa: F401
from workbook import postgres, postgres_install
from workbook.teaching import postgres_server
from workbook.validation import ENCODE, payload

psycopg = postgres.psycopg
sql = postgres.sql


# --- 1 and 2: an acknowledged write survives a crash, whatever the session says ----------

def raw_put(raw, key, extra=""):
    """The store's put, called with raw SQL as its role would; `extra` is added to the select
    list after the call (it runs after put, in the same statement)."""
    return raw.execute(f"SELECT p.revision{extra} FROM crash.put('orchard', 'fact', %s, %s, "
                       "NULL, 100, 60) p", (key, payload("fact", FACT))).fetchone()[0]


OFF = "SET LOCAL synchronous_commit = off"


def after_put(raw, key):
    raw.execute("BEGIN")
    revision = raw_put(raw, key)
    raw.execute(OFF)
    raw.execute("COMMIT")
    return revision


def in_the_same_statement(raw, key):
    return raw_put(raw, key, ", set_config('synchronous_commit', 'off', true)")


def constraints_immediate_before(raw, key):
    raw.execute("BEGIN")
    raw.execute("SET CONSTRAINTS ALL IMMEDIATE")
    revision = raw_put(raw, key)
    raw.execute(OFF)
    raw.execute("COMMIT")
    return revision


def constraints_immediate_after(raw, key):
    raw.execute("BEGIN")
    revision = raw_put(raw, key)
    raw.execute("SET CONSTRAINTS ALL IMMEDIATE")
    raw.execute(OFF)
    raw.execute("COMMIT")
    return revision


def cursor_with_hold(raw, key):
    """A cursor WITH HOLD runs its query at commit, after every deferred trigger."""
    raw.execute("BEGIN")
    revision = raw_put(raw, key)
    raw.execute("DECLARE late CURSOR WITH HOLD FOR "
                "SELECT set_config('synchronous_commit', 'off', true)")
    raw.execute("COMMIT")
    raw.execute("CLOSE late")
    return revision


def deferred_trigger_of_its_own(raw, key):
    """A deferred trigger on the role's own temporary table, fired at commit after the put."""
    raw.execute("BEGIN")
    raw.execute("CREATE TEMP TABLE late (n int) ON COMMIT DROP")
    raw.execute("""CREATE OR REPLACE FUNCTION pg_temp.off() RETURNS trigger LANGUAGE plpgsql AS
        $$BEGIN PERFORM set_config('synchronous_commit', 'off', true); RETURN NULL; END$$""")
    raw.execute("CREATE CONSTRAINT TRIGGER late AFTER INSERT ON late DEFERRABLE INITIALLY "
                "DEFERRED FOR EACH ROW EXECUTE FUNCTION pg_temp.off()")
    revision = raw_put(raw, key)
    raw.execute("INSERT INTO late VALUES (1)")
    raw.execute("COMMIT")
    return revision


def undone_in_a_savepoint(raw, key):
    """The check's note that this transaction is safe already, made in a savepoint (by a put
    whose check fired at once) and then rolled back, before the put that counts."""
    raw.execute("BEGIN")
    raw.execute("SAVEPOINT early")
    raw.execute("SET CONSTRAINTS ALL IMMEDIATE")
    raw_put(raw, f"{key}-undone")
    raw.execute("ROLLBACK TO SAVEPOINT early")
    raw.execute("SET CONSTRAINTS ALL DEFERRED")
    revision = raw_put(raw, key)
    raw.execute(OFF)
    raw.execute("COMMIT")
    return revision


def two_puts(raw, key):
    raw.execute("BEGIN")
    raw_put(raw, f"{key}-first")
    revision = raw_put(raw, key)
    raw.execute(OFF)
    raw.execute("COMMIT")
    return revision


# The role's own set_config, which crash_server makes in public (the role may create there,
# as every role might before PostgreSQL 15).
SHADOW = """CREATE FUNCTION public.set_config(text, text, boolean) RETURNS text LANGUAGE sql
    AS $$SELECT pg_catalog.set_config('synchronous_commit', 'off', true)$$"""


def set_config_of_its_own(raw, key):
    """The role's own set_config ahead of PostgreSQL's on the session's search_path, where code
    that runs at the commit would find it."""
    raw.execute("SET search_path = crash, public, pg_catalog")
    return raw_put(raw, key)


def pipeline(raw, key):
    """psycopg's pipeline mode: the put and the setting travel together before one Sync."""
    with raw.pipeline():
        answer = raw.execute("SELECT p.revision FROM crash.put('orchard', 'fact', %s, %s, NULL, "
                             "100, 60) p", (key, payload("fact", FACT)))
        raw.execute("SELECT set_config('synchronous_commit', 'off', true)")
    return answer.fetchone()[0]


TRICKS = [after_put, in_the_same_statement, constraints_immediate_before,
          constraints_immediate_after, cursor_with_hold, deferred_trigger_of_its_own,
          undone_in_a_savepoint, two_puts, set_config_of_its_own, pipeline]


@pytest.fixture(scope="module")
def crash_server():
    """A server of this module's own, which its tests kill: (server, the role's raw URL).

    Its WAL writer, the process that flushes commits that did not wait for the disk, sleeps
    ten seconds between rounds instead of a fifth of one, and it is woken early only from a
    long sleep or by a megabyte of WAL: so a commit that did not wait is still in the server's
    memory when the kill comes, however slow the machine, and a test of one can fail."""
    server = postgres_server.TemporaryServer(TEST_SERVER_SETTINGS | {"wal_writer_delay": "10s"})
    with server:
        with psycopg.connect(server.conninfo(), autocommit=True) as admin:
            password = postgres_install.create_role(admin)
            postgres_install.install(admin, "crash")
            # Two tricks need rights a database shared with other roles may have left every
            # role: a temporary table, and CREATE in public (PostgreSQL's default before 15).
            for right in ("TEMPORARY ON DATABASE postgres", "CREATE ON SCHEMA public"):
                admin.execute(sql.SQL("GRANT {} TO {}").format(
                    sql.SQL(right), sql.Identifier(postgres_install.STORE_ROLE)))
        url = server.conninfo(postgres_install.STORE_ROLE, password=password,
                              options="-c search_path=crash")
        with psycopg.connect(url, autocommit=True) as raw:
            raw.execute(SHADOW)         # once: made again by several writers, it would collide
        yield server, url


def crashed(server):
    """SIGKILL the server and every process it started, then start it again (recovery). The
    checkpoint that ends recovery runs in the background and would flush, along with its own
    record, a commit that did not wait: CHECKPOINT waits until one has finished."""
    server.kill()
    server.start()
    with psycopg.connect(server.conninfo(), autocommit=True) as admin:
        admin.execute("CHECKPOINT")


@pytest.mark.parametrize("trick", TRICKS, ids=[trick.__name__ for trick in TRICKS])
def test_a_raw_write_acknowledged_survives_a_crash_whatever_it_did_to_commit_waiting(
        crash_server, trick):
    server, url = crash_server
    key = trick.__name__.replace("_", "-")
    with psycopg.connect(url, autocommit=True) as raw:
        revision = trick(raw, key)          # acknowledged: the commit returned
        crashed(server)
    assert_kept(url, key, revision)


def assert_kept(url, key, revision):
    """After a crash: the write acknowledged with `revision` is there, and the next put gets a
    revision above it."""
    db = postgres.connect(url)
    try:
        record = postgres.get(db, "orchard", "fact", key, 101)
        assert record is not None and record["revision"] == revision, \
            "an acknowledged write was lost in the crash"
        next_revision = postgres.put(db, "orchard", "fact", "next", FACT, None, 100, 60)
        assert next_revision > revision, "a revision acknowledged before the crash was handed out again"
        assert postgres.forget(db, "orchard", "fact", "next", next_revision)
    finally:
        db.close()


def test_a_raw_forget_acknowledged_stays_forgotten_after_a_crash(crash_server):
    server, url = crash_server
    db = postgres.connect(url)
    revision = postgres.put(db, "orchard", "fact", "forgotten", FACT, None, 100, 60)
    db.close()
    with psycopg.connect(url, autocommit=True) as raw:
        raw.execute("BEGIN")
        assert raw.execute("SELECT crash.forget('orchard', 'fact', 'forgotten', %s)",
                           (revision,)).fetchone() == (True,)
        raw.execute(OFF)
        raw.execute("COMMIT")
        crashed(server)
    db = postgres.connect(url)
    try:
        assert postgres.get(db, "orchard", "fact", "forgotten", 101) is None
    finally:
        db.close()


@pytest.mark.parametrize("call", ["get", "put", "forget", "purge"])
def test_a_call_in_pipeline_mode_is_refused_and_writes_nothing(store, call):
    backend, db, raw, schema = store
    revision = put_fact(backend, db)
    arguments = {"get": ("orchard", "fact", "a", 101),
                 "put": ("orchard", "fact", "a", FACT, revision, 101, 60),
                 "forget": ("orchard", "fact", "a", revision), "purge": ("orchard", 1000)}[call]
    with pytest.raises(psycopg.ProgrammingError, match="pipeline mode"):
        with db.pipeline():
            getattr(backend, call)(db, *arguments)
    assert db.info.pipeline_status == psycopg.pq.PipelineStatus.OFF
    assert backend.physical_rows(db)[0][3] == revision == backend.counter(db)
    getattr(backend, call)(db, *arguments)          # outside one it works


# --- 3, 4 and 5: no role or database default changes what the store does ----------------

def refusal_of(backend, schema):
    """The ValueError connect() raises for `schema`'s store, or None if it connects."""
    try:
        postgres.connect(backend.conninfo(schema)).close()
    except ValueError as error:
        return str(error)
    return None


@pytest.mark.parametrize("name, value", [("debug_print_plan", "on"),
                                         ("enable_indexscan", "off"),
                                         ("idle_session_timeout", "1s"),
                                         ("work_mem", "2GB")])
def test_a_role_default_the_store_did_not_set_is_refused_with_the_command_that_clears_it(
        store, role_default, name, value):
    backend, db, raw, schema = store
    role_default(name, value)
    said = refusal_of(backend, schema)
    assert said is not None, f"connect accepted a role default {name} = {value}"
    assert name in said and f"ALTER ROLE {backend.role} RESET {name}" in said
    assert f"= {value}" not in said and f"{name}={value}" not in said   # never its value


@pytest.mark.parametrize("where", ["database", "role in database"])
def test_a_database_default_the_store_did_not_set_is_refused_too(store, where):
    backend, db, raw, schema = store
    database = backend.admin.info.dbname
    target = {"database": sql.SQL("DATABASE {}").format(sql.Identifier(database)),
              "role in database": sql.SQL("ROLE {} IN DATABASE {}").format(
                  sql.Identifier(backend.role), sql.Identifier(database))}[where]
    backend.admin.execute(sql.SQL("ALTER {} SET enable_seqscan = off").format(target))
    try:
        said = refusal_of(backend, schema)
    finally:
        backend.admin.execute(sql.SQL("ALTER {} RESET enable_seqscan").format(target))
    command = {"database": f"ALTER DATABASE {database} RESET enable_seqscan",
               "role in database": f"ALTER ROLE {backend.role} IN DATABASE {database} "
                                   "RESET enable_seqscan"}[where]
    assert said is not None and command in said
    assert refusal_of(backend, schema) is None


def test_a_pool_refuses_a_connection_with_a_foreign_role_default(store, role_default):
    backend, db, raw, schema = store
    role_default("debug_print_plan", "on")
    pooled = postgres.Connection.connect(postgres.store_conninfo(backend.conninfo(schema)),
                                         autocommit=True)
    try:
        with pytest.raises(ValueError, match="debug_print_plan"):
            postgres.configure(pooled)
    finally:
        pooled.close()


def test_no_role_default_puts_a_facts_text_into_the_servers_log(store, role_default,
                                                                 postgres_server):
    backend, db, raw, schema = store
    log = getattr(postgres_server, "folder", None)
    if log is None:
        pytest.skip("WORKBOOK_POSTGRES_URL's server keeps its log where this test cannot read it")
    log = log / "server.log"
    for name in ("debug_print_plan", "debug_print_parse", "debug_print_rewritten"):
        role_default(name, "on")
    start = log.stat().st_size
    try:
        api = postgres.connect(backend.conninfo(schema))
    except ValueError:
        pass
    else:
        put_fact(backend, api, key="logged", text=SECRET)
        api.close()
    written = log.read_bytes()[start:].decode("utf-8", "replace")
    # A plan prints a text constant as the decimal values of its bytes, wrapped mid-number.
    digits = "".join(str(byte) for byte in SECRET.encode())
    leaked = SECRET in written or digits in re.sub(r"\s", "", written)
    assert not leaked, "the server's log holds a fact's text"


@pytest.mark.parametrize("name, value", [("client_encoding", "SQL_ASCII"),
                                         ("local_preload_libraries", "no_such_library")])
def test_a_role_default_that_would_stop_every_login_is_overridden(
        store, role_default, name, value):
    backend, db, raw, schema = store
    role_default(name, value)
    api = postgres.connect(backend.conninfo(schema))
    try:
        revision = put_fact(backend, api, key="overridden")
        assert backend.get(api, "orchard", "fact", "overridden", 101)["revision"] == revision
    finally:
        api.close()


def test_a_login_the_server_refuses_is_reported_as_refused_not_as_a_server_that_is_down(
        store):
    backend, db, raw, schema = store
    url = backend.server.conninfo("no_such_role", options=f"-c search_path={schema}")
    with pytest.raises(postgres.ServerUnavailable) as caught:
        postgres.connect(url)
    said = str(caught.value)
    assert "refused the login" in said and "no_such_role" in said
    assert "check that it runs" not in said


# --- 6 and 7: what the role may take from everyone's share ---------------------------

@pytest.mark.parametrize("statement", [
    "SELECT pg_advisory_lock(1)", "SELECT pg_try_advisory_lock(1, 2)",
    "SELECT pg_advisory_lock_shared(1)", "SELECT pg_advisory_xact_lock(1)",
    "SELECT lo_create(0)", "SELECT lo_from_bytea(0, 'x')", "SELECT lo_creat(-1)",
    "CREATE TEMP TABLE filler (n int)",
    "SELECT pg_logical_emit_message(false, 'filler', 'x')",
])
def test_the_role_takes_no_advisory_lock_large_object_or_temporary_table(store, statement):
    backend, db, raw, schema = store
    if not hasattr(backend.server, "kill"):
        pytest.skip("on WORKBOOK_POSTGRES_URL's server, what PUBLIC may do is its administrator's")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        raw.execute(statement)


def test_the_roles_temporary_files_are_bounded_and_it_cannot_lift_the_bound(store):
    backend, db, raw, schema = store
    raw.execute("SET work_mem = '64kB'")
    with pytest.raises(psycopg.errors.ConfigurationLimitExceeded, match="temp_file_limit"):
        raw.execute("SELECT count(*) FROM (SELECT g FROM generate_series(1, 2000000) g "
                    "ORDER BY g DESC) sorted")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        raw.execute("SET temp_file_limit = -1")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        raw.execute(sql.SQL("ALTER ROLE {} RESET temp_file_limit").format(
            sql.Identifier(backend.role)))


def test_one_session_of_the_temporary_server_cannot_take_much_memory(store):
    backend, db, raw, schema = store
    if not hasattr(backend.server, "kill"):
        pytest.skip("a memory bound on WORKBOOK_POSTGRES_URL's server is its operator's")
    with pytest.raises(psycopg.errors.OutOfMemory):
        raw.execute("SELECT length(repeat('x', 600000000))")
    assert put_fact(backend, db) == 1           # the server and the session go on


# --- 8: the server accepts exactly what payload writes ---------------------------------

ESCAPED_OTHERWISE = [("A", "\\u0041"), ("/", "\\/"), ("\n", "\\u000a"), ("\t", "\\u0009"),
                     ('"', "\\u0022"), ("\\", "\\u005c"), ("\b", "\\u0008"),
                     ("\u00e9", "\\u00E9"), ("\x7f", "\\u007F"),
                     ("\U0001F600", "\\uD83D\\uDE00")]


@pytest.mark.parametrize("character, instead", ESCAPED_OTHERWISE,
                         ids=[repr(character) for character, _ in ESCAPED_OTHERWISE])
def test_the_server_accepts_exactly_the_escapes_payload_writes(store, character, instead):
    backend, db, raw, schema = store
    value = FACT | {"text": "x" + character}
    good = payload("fact", value)
    written = ENCODE(character)[1:-1]               # payload's own form of the character
    other = good.replace(f'"x{written}"', f'"x{instead}"')
    assert other != good and json.loads(other) == value     # the same fact, written otherwise
    call = f"SELECT * FROM {schema}.put('orchard', 'fact', 'a', %s, NULL, 100, 60)"
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        raw.execute(call, (other,))
    assert raw.execute(call, (good,)).fetchone()[0] == 1
    assert backend.get(db, "orchard", "fact", "a", 101)["value"] == value


# --- small things a user meets -----------------------------------------------------------

def test_importing_the_store_without_its_extra_says_what_to_install():
    program = ("import sys; sys.modules['psycopg'] = None\n"
               "try:\n    import workbook.postgres\n"
               "except ImportError as error:\n    print(error)\n")
    said = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True).stdout
    assert "pip install 'workbook[postgres]'" in said
