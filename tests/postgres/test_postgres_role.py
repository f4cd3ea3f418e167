"""The PostgreSQL store against its own role, its callers' mistakes and a lost connection.

The store's role logs in with raw SQL, as anyone holding its password could, and tries what
issue 20 found and more: temporary tables and operators that shadow the store's names, its
own grants, SET ROLE, the counter, revisions, locks held open, COPY, the functions' helpers
and their arguments. Whatever it does, the revisions it is handed stay unique, the counter
moves only through put, and another tenant's rows stay where they were. Then the callers'
mistakes: a transaction left open around a call, one connection shared by two threads, an
AsyncConnection, a pool that lends one connection to several borrowers in turn.
"""
import threading
import time

import pytest

from workbook import postgres, postgres_install
from workbook.validation import payload

psycopg = postgres.psycopg
FACT = {"schema": 1, "text": "Fictional preference", "source": "note-1", "reviewed": False}
DENIED = psycopg.errors.InsufficientPrivilege


@pytest.fixture
def store(postgres_backend):
    """(backend, the store's API connection, a raw connection as the store's role, schema)."""
    backend = postgres_backend
    db = backend.connect()
    schema = backend.schemas[db]
    raw = psycopg.connect(backend.conninfo(schema), autocommit=True)
    yield backend, db, raw, schema
    raw.close()
    db.close()


@pytest.fixture
def shared_database(postgres_backend):
    """The store's role with TEMPORARY on the database and the advisory-lock functions, granted
    by name, as on a database shared with other roles, where nobody ran withhold_from_public:
    the store must hold there too."""
    backend, sql = postgres_backend, postgres.sql
    rights = [sql.SQL("TEMPORARY ON DATABASE {}").format(sql.Identifier(backend.admin.info.dbname)),
              sql.SQL("EXECUTE ON FUNCTION pg_advisory_lock(bigint)")]
    for right in rights:
        backend.admin.execute(sql.SQL("GRANT {} TO {}").format(right, sql.Identifier(backend.role)))
    yield
    for right in rights:
        backend.admin.execute(sql.SQL("REVOKE {} FROM {}").format(right,
                                                                  sql.Identifier(backend.role)))


def refused(raw, statement, error=DENIED):
    with pytest.raises(error):
        raw.execute(statement)


def put_fact(backend, db, tenant="orchard", key="a", expected=None, now=100):
    return backend.put(db, tenant, "fact", key, FACT, expected, now, 60)


# --- the role's own connection ----------------------------------------------------------

def test_temporary_tables_of_the_same_names_change_nothing(store, shared_database):
    backend, db, raw, schema = store
    first = put_fact(backend, db)
    for name in ("sequence", "records"):    # pg_temp comes first on an unpinned search_path
        raw.execute(f"CREATE TEMP TABLE {name} (singleton int, value bigint, tenant text, "
                    "kind text, key text, revision bigint, expires bigint, body text)")
    raw.execute("INSERT INTO sequence (singleton, value) VALUES (1, 0)")
    raw.execute(f"SET search_path = pg_temp, {schema}")
    # The same session, through the API: the functions name their own schema first.
    api = postgres.connect(backend.conninfo(schema))
    api.execute(f"CREATE TEMP TABLE sequence (singleton int, value bigint)")
    api.execute("INSERT INTO sequence VALUES (1, 0)")
    second = put_fact(backend, api, key="b")
    api.close()
    assert second == first + 1 == backend.counter(db)
    assert [row[3] for row in backend.physical_rows(db)] == [first, second]


def test_the_role_has_no_rights_on_the_tables(store):
    backend, db, raw, schema = store
    tables = postgres_install.tables_of(schema)
    revision = put_fact(backend, db)
    for statement in (f"SELECT * FROM {tables}.records", f"SELECT * FROM {tables}.sequence",
                      f"UPDATE {tables}.sequence SET value = 9223372036854775807",
                      f"UPDATE {tables}.records SET revision = 1",
                      f"DELETE FROM {tables}.records",
                      f"INSERT INTO {tables}.records VALUES ('orchard', 'fact', 'b', 1, 200, '{{}}')",
                      f"TRUNCATE {tables}.records", f"COPY {tables}.records TO STDOUT",
                      f"COPY {tables}.sequence FROM STDIN",
                      f"ALTER TABLE {tables}.records DISABLE ROW LEVEL SECURITY",
                      f"ALTER TABLE {tables}.sequence DISABLE TRIGGER forward_only",
                      f"CREATE TABLE {schema}.extra (n int)",
                      f"CREATE FUNCTION {schema}.put(text) RETURNS int LANGUAGE sql AS 'SELECT 1'",
                      f"SELECT {tables}.valid_body('fact', '{{}}')",
                      f"SELECT {tables}.checked('orchard', 'fact', 'a', 1)",
                      f"SELECT {tables}.forward_only()",
                      f"SET ROLE {backend.role}_definer", "SET ROLE postgres",
                      f"GRANT {backend.role}_definer TO {backend.role}",
                      f"ALTER FUNCTION {schema}.get(text, text, text, bigint) RESET search_path",
                      f"DROP POLICY one_tenant ON {tables}.records",
                      f"COPY {tables}.records FROM PROGRAM 'true'",
                      "SELECT lo_import('/etc/hostname')", "SELECT pg_read_file('PG_VERSION')",
                      "SET SESSION AUTHORIZATION postgres", "CREATE EXTENSION amcheck",
                      "CREATE SCHEMA mine"):
        refused(raw, statement, (DENIED, psycopg.errors.UndefinedFunction))
    with raw.transaction(force_rollback=True):
        refused(raw, f"LOCK TABLE {tables}.records IN ACCESS EXCLUSIVE MODE")
    with raw.transaction(force_rollback=True):
        refused(raw, f"SELECT value FROM {tables}.sequence FOR UPDATE")
    assert backend.physical_rows(db)[0][3] == revision == backend.counter(db)


def test_shadowing_operators_and_functions_in_pg_temp_change_nothing(store, shared_database):
    backend, db, raw, schema = store
    put_fact(backend, db)
    put_fact(backend, db, tenant="harbour")
    # An equality that is always true, and set_config that does nothing, in the role's own
    # temporary schema: neither is ever searched for by the functions.
    raw.execute("CREATE FUNCTION pg_temp.always(text, text) RETURNS boolean "
                "LANGUAGE sql AS 'SELECT true'")
    raw.execute("CREATE OPERATOR pg_temp.= (LEFTARG = text, RIGHTARG = text, "
                "FUNCTION = pg_temp.always)")
    raw.execute("CREATE FUNCTION pg_temp.set_config(text, text, boolean) RETURNS text "
                "LANGUAGE sql AS 'SELECT $2'")
    raw.execute(f"SET search_path = pg_temp, {schema}, pg_catalog")
    assert raw.execute(f"SELECT {schema}.purge('orchard', 1000)").fetchone() == (1,)
    assert [row[0] for row in backend.physical_rows(db)] == ["harbour"]


def test_public_is_not_writable_and_not_searched(store):
    backend, db, raw, schema = store
    refused(raw, "CREATE TABLE public.records (n int)")
    refused(raw, "CREATE FUNCTION public.put(text) RETURNS int LANGUAGE sql AS 'SELECT 1'")


def test_raw_calls_with_bad_arguments_are_refused_by_the_server(store):
    backend, db, raw, schema = store
    put_fact(backend, db, tenant="harbour")
    before = backend.fingerprint(db)
    good = payload("fact", FACT)
    invalid = psycopg.errors.InvalidParameterValue
    for arguments in [("Orchard", "fact", "a", good, None, 100, 60),
                      (None, "fact", "a", good, None, 100, 60),
                      ("orchard", "note", "a", good, None, 100, 60),
                      ("orchard", "fact", "a' OR true --", good, None, 100, 60),
                      ("orchard", "fact", "a", good, 0, 100, 60),
                      ("orchard", "fact", "a", good, None, -1, 60),
                      ("orchard", "fact", "a", good, None, 100, 0),
                      ("orchard", "fact", "a", good, None, 100, 86401),
                      ("orchard", "fact", "a", "{}", None, 100, 60),
                      ("orchard", "fact", "a", None, None, 100, 60),
                      # valid JSON that payload() would not write, or get would refuse
                      ("orchard", "fact", "a", good.replace('"text"', '"txt"'), None, 100, 60),
                      ("orchard", "fact", "a", good.replace(": 1,", ": 1.0,"), None, 100, 60),
                      ("orchard", "fact", "a", good.replace('", "text', '",  "text'), None, 100, 60),
                      ("orchard", "fact", "a", payload("fact", FACT | {"text": "x" * 256})
                       .replace('"x', '"xx'), None, 100, 60),
                      ("orchard", "fact", "a", good.replace("Fictional", "Fictional\\u00E9"),
                       None, 100, 60),
                      ("orchard", "checkpoint", "a", good, None, 100, 60),
                      ("orchard", "checkpoint", "a",
                       payload("checkpoint", {"schema": 1, "step": 0, "items": ["a"] * 8})
                       .replace('["a"', '["a", "a"'), None, 100, 60)]:
        with pytest.raises(invalid):
            raw.execute(f"SELECT * FROM {schema}.put(%s, %s, %s, %s, %s, %s, %s)", arguments)
    for call, arguments in (("get", (None, "fact", "a", 100)), ("get", ("harbour", "fact", "a", -1)),
                            ("forget", ("harbour", "fact", "a", None)),
                            ("purge", (None, 100)), ("purge", ("harbour", 10**10 + 1))):
        marks = ", ".join(["%s"] * len(arguments))
        with pytest.raises(invalid):
            raw.execute(f"SELECT * FROM {schema}.{call}({marks})", arguments)
    assert backend.fingerprint(db) == before


def test_every_body_payload_writes_passes_the_servers_check(store):
    backend, db, raw, schema = store
    values = [("fact", FACT | {"text": "\x00\x1f\x7f\"\\\n\t\u2603\U0001F600\U00010000" + "x" * 246}),
              ("fact", FACT | {"text": "\U0001F600" * 150, "reviewed": True}),
              ("checkpoint", {"schema": 1, "step": 2, "items": ["\\\"/" * 10] * 8}),
              ("checkpoint", {"schema": 1, "step": 0, "items": []})]
    for number, (kind, value) in enumerate(values):
        revision = backend.put(db, "orchard", kind, f"k{number}", value, None, 100, 60)
        assert backend.get(db, "orchard", kind, f"k{number}", 101) == {
            "revision": revision, "expires": 160, "value": value}


def test_a_session_can_read_another_tenant_only_by_naming_it(store):
    """The limit the server cannot close: the role is trusted to name its tenant."""
    backend, db, raw, schema = store
    put_fact(backend, db, tenant="harbour")
    assert raw.execute(f"SELECT revision FROM {schema}.get('orchard', 'fact', 'a', 101)"
                       ).fetchone() == (None,)
    raw.execute("SELECT set_config('workbook.tenant', 'harbour', false)")
    assert raw.execute(f"SELECT revision FROM {schema}.get('orchard', 'fact', 'a', 101)"
                       ).fetchone() == (None,)
    assert raw.execute(f"SELECT revision FROM {schema}.get('harbour', 'fact', 'a', 101)"
                       ).fetchone() != (None,)


def test_row_level_security_binds_the_functions_themselves(store):
    """Defence in depth: the definer, as which the functions run, sees no tenant unset."""
    backend, db, raw, schema = store
    tables = postgres_install.tables_of(schema)
    put_fact(backend, db)
    with backend.admin.transaction(force_rollback=True):
        backend.admin.execute(f"SET LOCAL ROLE {backend.role}_definer")
        assert backend.admin.execute(f"SELECT count(*) FROM {tables}.records").fetchone() == (0,)
        backend.admin.execute("SELECT set_config('workbook.tenant', 'harbour', true)")
        assert backend.admin.execute(f"DELETE FROM {tables}.records").rowcount == 0


def test_advisory_locks_listen_and_prepared_statements_do_not_reach_the_store(store, shared_database):
    backend, db, raw, schema = store
    raw.execute("SELECT pg_advisory_lock(1), pg_advisory_lock(0)")
    raw.execute("LISTEN records")
    raw.execute(f"PREPARE hijack AS SELECT * FROM {schema}.put('orchard', 'fact', 'a', $1, "
                "NULL, 100, 60)")
    assert put_fact(backend, db) == 1
    refused(raw, f"EXECUTE hijack('{{}}')", psycopg.errors.InvalidParameterValue)
    assert backend.counter(db) == 1


# --- locks held open -------------------------------------------------------------------

def hog(raw, schema):
    """Open a transaction as the role, take the record's and the counter's locks through
    put, and leave it open."""
    raw.execute("BEGIN")
    raw.execute(f"SELECT * FROM {schema}.put('harbour', 'fact', 'hog', %s, NULL, 100, 60)",
                (payload("fact", FACT),))


def in_thread(function):
    """Start function() in a thread; return a dict that gets its result or error."""
    answer = {}

    def run():
        try:
            answer["result"] = function()
        except BaseException as error:
            answer["error"] = error
    answer["thread"] = threading.Thread(target=run, daemon=True)
    answer["thread"].start()
    return answer


def test_a_transaction_left_open_is_ended_by_the_server_and_others_go_on(store):
    backend, db, raw, schema = store
    hog(raw, schema)
    started = time.monotonic()
    other = in_thread(lambda: put_fact(backend, db))        # another tenant, the same counter
    other["thread"].join(10)
    assert not other["thread"].is_alive(), "a transaction left open stopped every put"
    # the hog's revision 1 was never committed, so it is handed out now
    assert other.get("result") == 1 and time.monotonic() - started < 2
    with pytest.raises(psycopg.Error):     # the server ended the idle session
        raw.execute("SELECT 1")
    assert raw.closed


def test_a_session_that_switches_its_timeouts_off_cannot_make_others_wait_long(store):
    backend, db, raw, schema = store
    raw.execute("SET idle_in_transaction_session_timeout = 0")
    raw.execute("SET statement_timeout = 0")
    hog(raw, schema)
    started = time.monotonic()
    other = in_thread(lambda: put_fact(backend, db))
    other["thread"].join(10)
    try:
        assert not other["thread"].is_alive(), "a hog without timeouts stopped every put"
        assert isinstance(other.get("error"), postgres.ServerUnavailable), other
        assert "held a lock this call needs for 2s" in str(other["error"])
        assert 1.5 < time.monotonic() - started < 5
        # Nothing of the failed put was kept; reads never wait.
        assert backend.get(db, "orchard", "fact", "a", 100) is None
    finally:
        raw.execute("ROLLBACK")
    assert put_fact(backend, db) == 1


# --- the caller's mistakes --------------------------------------------------------------

@pytest.mark.parametrize("call", ["get", "put", "forget", "purge"])
def test_a_call_inside_the_callers_transaction_fails_loudly(store, call):
    backend, db, raw, schema = store
    revision = put_fact(backend, db)
    arguments = {"get": ("orchard", "fact", "a", 101),
                 "put": ("orchard", "fact", "a", FACT, revision, 101, 60),
                 "forget": ("orchard", "fact", "a", revision), "purge": ("orchard", 1000)}[call]
    db.execute("BEGIN")
    with pytest.raises(psycopg.ProgrammingError, match="within a transaction"):
        getattr(backend, call)(db, *arguments)
    db.execute("ROLLBACK")
    assert backend.physical_rows(db)[0][3] == revision
    getattr(backend, call)(db, *arguments)      # and outside one it works


def test_a_connection_in_use_by_one_thread_refuses_a_second(store):
    # The first call waits on a row lock the owner holds; the second must be refused while it
    # waits. The wait is read from a connection of its own (pg_stat_activity is read once per
    # transaction, so the owner's own connection, inside its transaction, would keep its first
    # reading). Once the server shows the wait, the first call holds the connection's lock, so
    # the refusal does not depend on how soon the second call comes.
    backend, db, raw, schema = store
    tables = postgres_install.tables_of(schema)
    revision = put_fact(backend, db)
    admin = backend.admin
    with postgres.psycopg.connect(backend.server.conninfo(), autocommit=True) as watcher:
        with admin.transaction():
            admin.execute(f"SELECT 1 FROM {tables}.records FOR UPDATE")
            first = in_thread(lambda: put_fact(backend, db, expected=revision))
            deadline = time.monotonic() + 60
            while watcher.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
                                  (db.info.backend_pid,)).fetchone() != ("Lock",):
                assert time.monotonic() < deadline, "the first call never reached the lock"
                time.sleep(0.005)
            with pytest.raises(psycopg.ProgrammingError, match="another call is running"):
                backend.get(db, "orchard", "fact", "a", 101)
        first["thread"].join(60)
    # the owner's transaction ended within the functions' 2 s lock wait, or the first call says so
    assert first.get("result") == revision + 1 or isinstance(first.get("error"),
                                                             postgres.ServerUnavailable), first


def test_a_call_still_being_sent_by_one_thread_refuses_a_second(store):
    """libpq reports a statement as running only once it has been sent, so a second thread
    could find the connection idle while the first call is on its way; here the first call is
    held while psycopg converts its arguments, before anything is sent."""
    backend, db, raw, schema = store
    revision = put_fact(backend, db)
    converting, go_on = threading.Event(), threading.Event()

    class HeldOnce(psycopg.types.string.StrDumper):
        def dump(self, obj):
            if threading.current_thread() is not threading.main_thread() and not converting.is_set():
                converting.set()
                go_on.wait(60)
            return super().dump(obj)

    db.adapters.register_dumper(str, HeldOnce)
    first = in_thread(lambda: put_fact(backend, db, expected=revision))
    assert converting.wait(60), "the first call never converted its arguments"
    assert db.info.transaction_status == psycopg.pq.TransactionStatus.IDLE  # what libpq says
    # without the store's own lock the second call would wait for the first: let it go on
    # after a while, so that such a wait ends in a failure rather than a hang
    release = threading.Timer(10, go_on.set)
    release.start()
    try:
        with pytest.raises(psycopg.ProgrammingError, match="another call is running"):
            backend.get(db, "orchard", "fact", "a", 101)
    finally:
        go_on.set()
        release.cancel()
    first["thread"].join(60)
    assert first.get("result") == revision + 1, first


def test_two_threads_sharing_a_connection_lose_no_acknowledged_write(store):
    backend, db, raw, schema = store
    put_fact(backend, db, key="tally")
    acknowledged, refusals = [], []

    def increments():
        for _ in range(60):
            try:
                record = backend.get(db, "orchard", "fact", "tally", 100)
                revision = backend.put(db, "orchard", "fact", "tally", FACT,
                                       record["revision"], 100, 60)
            except (backend.Conflict, psycopg.ProgrammingError) as error:
                refusals.append(type(error))
                continue
            acknowledged.append(revision)

    threads = [threading.Thread(target=increments) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not db.in_transaction
    rows = backend.physical_rows(db)
    assert rows[0][3] == max(acknowledged) == backend.counter(db)
    assert len(set(acknowledged)) == len(acknowledged) == backend.counter(db) - 1


def test_an_async_connection_is_refused_with_a_reason(store):
    backend, db, raw, schema = store
    import asyncio

    async def attempt():
        async with await psycopg.AsyncConnection.connect(backend.conninfo(schema)) as adb:
            with pytest.raises(ValueError, match="AsyncConnection.*asyncio.to_thread"):
                backend.get(adb, "orchard", "fact", "a", 100)
    asyncio.run(attempt())
    with pytest.raises(ValueError, match="db must be a connection from workbook.postgres"):
        backend.get(raw, "orchard", "fact", "a", 100)


def test_a_lost_connection_raises_server_unavailable_with_what_to_do(store):
    backend, db, raw, schema = store
    put_fact(backend, db)
    backend.admin.execute("SELECT pg_terminate_backend(%s)", (db.info.backend_pid,))
    with pytest.raises(postgres.ServerUnavailable, match="connection to the PostgreSQL server "
                       "was lost .*connect again, and read before you write again"):
        backend.get(db, "orchard", "fact", "a", 101)
    with pytest.raises(postgres.ServerUnavailable, match="lost earlier; connect again"):
        backend.get(db, "orchard", "fact", "a", 101)
    with pytest.raises(postgres.ServerUnavailable, match="could not connect"):
        postgres.connect("host=/nonexistent-folder dbname=postgres")


def test_a_pooled_connection_carries_nothing_into_the_next_checkout(store, shared_database):
    """The recipe the appendix teaches: psycopg_pool with the store's configure and reset."""
    from psycopg_pool import ConnectionPool
    backend, db, raw, schema = store
    revision = put_fact(backend, db)
    with ConnectionPool(postgres.store_conninfo(backend.conninfo(schema)), min_size=1,
                        max_size=1, open=True,
                        connection_class=postgres.Connection, kwargs={"autocommit": True},
                        configure=postgres.configure, reset=postgres.reset) as pool:
        with pool.connection() as lent:
            pid = lent.info.backend_pid
            assert backend.get(lent, "orchard", "fact", "a", 101)["revision"] == revision
            for statement in ("SET workbook.tenant = 'harbour'", "SET statement_timeout = 0",
                              "SET search_path = pg_temp", "CREATE TEMP TABLE records (n int)",
                              "SELECT pg_advisory_lock(7)", "LISTEN store",
                              "PREPARE mine AS SELECT 1"):
                lent.execute(statement)
            for _ in range(6):      # enough for psycopg to prepare the call on the server
                backend.get(lent, "orchard", "fact", "a", 101)
        with pool.connection() as lent:
            assert lent.info.backend_pid == pid     # the same session, lent again
            assert lent.execute("""SELECT current_setting('workbook.tenant', true),
                current_setting('statement_timeout'), current_setting('search_path'),
                (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
                    AND pid = pg_backend_pid()),
                (SELECT count(*) FROM pg_listening_channels()),
                (SELECT count(*) FROM pg_prepared_statements),
                to_regclass('pg_temp.records')""").fetchone() == (
                "", "5s", schema, 0, 0, 0, None)
            assert backend.get(lent, "orchard", "fact", "a", 101)["revision"] == revision


# --- roles connect() refuses --------------------------------------------------------------

@pytest.mark.parametrize("grant", [
    "GRANT postgres TO {login} WITH INHERIT FALSE",          # may SET ROLE to a superuser
    "GRANT {role}_definer TO {login} WITH INHERIT FALSE",     # may SET ROLE to the definer
    "GRANT SELECT, UPDATE ON {tables}.sequence TO {login}",   # the old design's grants
    "GRANT USAGE ON SCHEMA {tables} TO {login}",              # could queue for their locks
    "GRANT CREATE ON SCHEMA {schema} TO {login}",             # could shadow the functions
    "ALTER ROLE {login} CREATEROLE",                          # could grant itself anything
])
def test_connect_refuses_a_role_that_could_get_around_the_functions(store, grant):
    backend, db, raw, schema = store
    admin, sql = backend.admin, postgres.sql
    login = f"{backend.role}_other"
    admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(login)))
    try:
        admin.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(
            sql.Identifier(schema), sql.Identifier(login)))
        admin.execute(sql.SQL("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA {} TO {}").format(
            sql.Identifier(schema), sql.Identifier(login)))
        url = backend.server.conninfo(login, options=f"-c search_path={schema}")
        postgres.connect(url).close()           # as it is, the role is fine
        admin.execute(grant.format(login=login, role=backend.role, schema=schema,
                                   tables=postgres_install.tables_of(schema)))
        with pytest.raises(ValueError, match="connect as the role create_role made"):
            postgres.connect(url)
    finally:
        admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(login)))
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(login)))


def test_connect_refuses_the_owner_and_a_schema_with_no_store(store):
    backend, db, raw, schema = store
    with pytest.raises(ValueError, match="is a superuser"):
        postgres.connect(backend.server.conninfo(options=f"-c search_path={schema}"))
    with pytest.raises(ValueError, match="no store in the first schema"):
        postgres.connect(backend.conninfo("no_such_schema"))
