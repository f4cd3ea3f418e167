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
from test_postgres_holes import crash_server, crashed, raw_put  # noqa: F401
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
    db = postgres.connect(url)
    try:
        record = postgres.get(db, "orchard", "fact", key, 101)
        assert record is not None and record["revision"] == revision, \
            "an acknowledged write was lost in the crash"
        following = postgres.put(db, "orchard", "fact", f"{key}-next", FACT, None, 100, 60)
        assert following > revision, "a revision acknowledged before the crash was handed out again"
    finally:
        db.close()


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
