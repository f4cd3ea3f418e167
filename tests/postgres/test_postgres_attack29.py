"""The fourth attacker's three holes (attack-29), each a test that failed on the store before
it closed.

1. On a database where withhold_from_public had not run, the store's role made a temporary
   function named `durable` and a deferred trigger with it. `durable` trusted any deferred
   trigger whose function had its name and an owner carrying MARK, and the login role carries
   MARK too: the role's trigger fired after the check at the commit, switched
   synchronous_commit off, and a crash lost the acknowledged write and reused its revision.
2. The role wrote as much as it liked into the server's log: RAISE WARNING from a DO block,
   and failing statements, each message quoting its input whole.
3. The role changed its own password and locked the service out; create_role run again kept
   the password it found, so the administrator had no way back.
"""
import pytest

from backends import TEST_SERVER_SETTINGS
from test_postgres_attacks import FACT, put_fact  # noqa: F401
from test_postgres_holes import assert_kept, crash_server, crashed, raw_put  # noqa: F401
from test_postgres_role import store  # noqa: F401
from workbook import postgres, postgres_install
from workbook.teaching import postgres_server

psycopg = postgres.psycopg
sql = postgres.sql


# --- 1: no object of the login role's passes for the store's own check --------------------

@pytest.mark.parametrize("name", ["durable", "probed"])
def test_a_temporary_function_named_like_the_checks_own_does_not_pass_for_it(
        crash_server, name):
    """crash_server's role has TEMPORARY on the database, as on a database where nobody ran
    withhold_from_public; the server is killed the moment the commit returns."""
    server, url = crash_server
    key = f"temporary-{name}"
    with psycopg.connect(url, autocommit=True) as raw:
        raw.execute("BEGIN")
        raw.execute("CREATE TEMP TABLE late (n int) ON COMMIT DROP")
        raw.execute(f"""CREATE OR REPLACE FUNCTION pg_temp.{name}() RETURNS trigger
            LANGUAGE plpgsql AS $$BEGIN
                PERFORM set_config('synchronous_commit', 'off', true);
                RETURN NULL;
            END$$""")
        raw.execute(f"CREATE CONSTRAINT TRIGGER late AFTER INSERT ON pg_temp.late DEFERRABLE "
                    f"INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pg_temp.{name}()")
        revision = raw_put(raw, key)
        raw.execute("INSERT INTO late VALUES (1)")      # queued after durable's own event
        raw.execute("COMMIT")                           # returned: acknowledged
        crashed(server)
    assert_kept(url, key, revision)


def test_the_check_trusts_a_trigger_function_by_its_owner_the_definer_not_by_name_or_mark(
        store):
    """The check's own query, read from the installed function: it names no MARK and no
    function name, only the definer (the function's own current_user) as the owner."""
    backend, db, raw, schema = store
    source = backend.admin.execute(
        "SELECT prosrc FROM pg_proc WHERE oid = %s::regprocedure",
        (f"{postgres_install.tables_of(schema)}.durable()",)).fetchone()[0]
    assert postgres_install.MARK not in source and "proname" not in source
    assert "proowner" in source and "current_user" in source


# --- 2: the role's share of the server's log is bounded ------------------------------------

BIG = 1_000_000         # characters in each message the role tries to have logged
BOUND = 64 * 2**10      # what the whole test may add to the log: a few lines, not megabytes


def log_of(postgres_server):
    folder = getattr(postgres_server, "folder", None)
    if folder is None:
        pytest.skip("WORKBOOK_POSTGRES_URL's server keeps its log where this test cannot read it")
    return folder / "server.log"


def test_the_role_cannot_fill_the_servers_log(store, postgres_server):
    backend, db, raw, schema = store
    log = log_of(postgres_server)
    start = log.stat().st_size
    raw.add_notice_handler(lambda diagnostic: None)
    raw.execute(f"DO $$BEGIN FOR i IN 1..3 LOOP RAISE WARNING '%', repeat('x', {BIG}); "
                "END LOOP; END$$")
    raw.execute(f"DO $$BEGIN RAISE LOG '%', repeat('x', {BIG}); END$$")
    for _ in range(3):      # an error quotes its input; its statement is logged whole
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            raw.execute("SELECT '" + "y" * BIG + "'::int")
    with psycopg.connect(backend.conninfo(schema), autocommit=True) as ending:
        ending.execute("SET exit_on_error = on")        # every error now a FATAL
        with pytest.raises(psycopg.Error):
            ending.execute("SELECT '" + "z" * BIG + "'::int")
    grown = log.stat().st_size - start
    assert grown < BOUND, f"the role wrote {grown} bytes into the server's log"
    assert put_fact(backend, db) == 1           # the store goes on


@pytest.mark.parametrize("statement", [
    "SET log_min_messages = warning", "SET log_min_error_statement = error",
    "ALTER ROLE {role} RESET log_min_messages", "ALTER ROLE {role} SET log_min_messages = log",
    "ALTER ROLE {role} RESET log_min_error_statement"])
def test_the_role_cannot_lift_the_bound_on_its_log(store, statement):
    backend, db, raw, schema = store
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        raw.execute(statement.format(role=backend.role))


# --- 3: the administrator's way back after the role changed its own password --------------

def require_passwords(server):
    """The temporary server trusts its socket; make it ask the store's role for its password."""
    with psycopg.connect(server.conninfo(), autocommit=True) as admin:
        hba = admin.execute("SHOW hba_file").fetchone()[0]
        with open(hba, "w") as rules:
            rules.write("local all postgres trust\nlocal all all scram-sha-256\n")
        admin.execute("SELECT pg_reload_conf()")


def logs_in(url):
    try:
        postgres.connect(url).close()
    except postgres.ServerUnavailable as error:
        assert "password authentication failed" in str(error)
        return False
    return True


def test_create_role_with_reset_password_lets_the_service_back_in():
    with postgres_server.TemporaryServer(TEST_SERVER_SETTINGS) as server:
        with psycopg.connect(server.conninfo(), autocommit=True) as admin:
            first = postgres_install.create_role(admin)
            postgres_install.install(admin, "locked")
        require_passwords(server)

        def url(password):
            return server.conninfo(postgres_install.STORE_ROLE, password=password,
                                   options="-c search_path=locked")
        assert logs_in(url(first))
        attacker = psycopg.connect(url(first), autocommit=True)     # the role changes its own
        attacker.execute(sql.SQL("ALTER ROLE {} PASSWORD 'only-the-attacker-knows'").format(
            sql.Identifier(postgres_install.STORE_ROLE)))
        assert not logs_in(url(first))
        with psycopg.connect(server.conninfo(), autocommit=True) as admin:
            assert postgres_install.create_role(admin) is None     # a re-run keeps it, as said
            assert not logs_in(url(first))
            second = postgres_install.create_role(admin, reset_password=True)
        assert isinstance(second, str) and second not in (first, "only-the-attacker-knows")
        with pytest.raises(psycopg.OperationalError):      # its open session was ended too
            attacker.execute("SELECT 1")
        attacker.close()
        assert logs_in(url(second)), "the new password does not log in"
        assert not logs_in(url("only-the-attacker-knows")), "the attacker's password still works"
        with postgres.connect(url(second)) as db:
            assert postgres.put(db, "orchard", "fact", "back", FACT, None, 100, 60) == 1


def test_reset_password_refuses_a_role_the_workbook_did_not_make(postgres_backend):
    admin = postgres_backend.admin
    with pytest.raises(ValueError, match="did not make"):
        postgres_install.create_role(admin, admin.info.user, reset_password=True)
