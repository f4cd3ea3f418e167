"""Appendix exercises (PostgreSQL): lock what you change, write a tenant policy, retry a lost race.

Each check runs your answer on a PostgreSQL server in a scratch schema of its own, which it
removes afterwards: WORKBOOK_POSTGRES_URL's server if it is set, else a temporary server the
checks start at the first check, which stops with the kernel (its reaper removes its folder
however the kernel ends). practise_on(server) lends them a running server instead (the tests
do, to save starting another), for as long as it answers.
"""
import atexit
import threading
import time
from types import SimpleNamespace

from workbook.teaching.exercises import Exercise, NotYet, holds_placeholder

SERVER = {}
ROLE = "exercise_store"


def practise_on(server):
    """Let the checks below use `server` (a TemporaryServer or an ExistingServer) while it runs."""
    SERVER["given"] = server


def answering(server):
    from workbook import postgres
    try:
        postgres.psycopg.connect(server.conninfo(), connect_timeout=3).close()
    except postgres.psycopg.OperationalError:
        return False
    return True


def the_server():
    """The page's server while it answers, else one of the checks' own (started once)."""
    from workbook import postgres
    from workbook.teaching import postgres_server
    given = SERVER.get("given")
    if given is not None and answering(given):
        return given
    if "own" not in SERVER:
        started = postgres_server.workbook_server()
        try:
            SERVER["own"] = started.__enter__()
        except postgres.ServerUnavailable as why:
            raise NotYet(f"no PostgreSQL server can be had for this check: {why}") from None
        atexit.register(started.__exit__, None, None, None)
    return SERVER["own"]


def owner_connection(server):
    """A connection as the server's administrator, who owns what the checks create."""
    from workbook import postgres
    return postgres.psycopg.connect(server.conninfo(), autocommit=True)


def drop(owner, schema):
    """Remove a check's schema, and its role, which owns nothing once the schema is gone."""
    from workbook import postgres_install
    postgres_install.uninstall(owner, schema)
    postgres_install.drop_role(owner, ROLE)


def scratch(schema):
    """(owner connection, a function opening more connections in the schema, cleanup)."""
    from workbook import postgres, postgres_install
    server = the_server()
    owner = owner_connection(server)
    drop(owner, schema)
    postgres_install.create_schema(owner, schema)
    owner.execute(postgres.sql.SQL("SET search_path TO {}").format(postgres.sql.Identifier(schema)))

    def another(role=None, password=None):
        options = f"-c search_path={schema}"
        if role is None:
            return postgres.psycopg.connect(server.conninfo(options=options), autocommit=True)
        return postgres.psycopg.connect(server.conninfo(role, password=password, options=options),
                                        autocommit=True)

    def cleanup():
        drop(owner, schema)
        owner.close()
    return owner, another, cleanup


class OnTheServer(Exercise):
    """An appendix exercise: the server its check runs on is found, or started, before the
    check's time limit starts counting. Starting one takes seconds, many on a busy machine,
    and the limit is there for the learner's code."""

    def verdict(self, answer=None, seconds=None, rng=None):
        if not (answer is None or answer is Ellipsis or holds_placeholder(answer)):
            try:
                the_server()
            except NotYet:
                pass                    # the check says why, in its verdict
        return super().verdict(answer, seconds, rng)


# --- A.1: take the lock before you read -----------------------------------------------

def waiting_on_a_lock(owner, db):
    row = owner.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
                        (db.info.backend_pid,)).fetchone()
    return row is not None and row[0] == "Lock"


def check_next_ticket(next_ticket):
    if not callable(next_ticket):
        raise NotYet("write a function next_ticket(db) that returns the new number.")
    owner, another, cleanup = scratch("exercise_tickets")
    db, rival = another(), another()
    try:
        owner.execute("CREATE TABLE tickets (value BIGINT NOT NULL)")
        owner.execute("INSERT INTO tickets VALUES (0)")
        first = next_ticket(db)
        stored = owner.execute("SELECT value FROM tickets").fetchone()[0]
        if first != 1 or stored != 1:
            raise NotYet(f"from a counter at 0 your function returned {first!r} and left the "
                         f"counter at {stored}; both should be 1.")
        # The rival takes number 2 and holds its lock while your function runs.
        rival.execute("BEGIN")
        rival.execute("UPDATE tickets SET value = value + 1")
        answer = {}

        def call():
            try:
                answer["value"] = next_ticket(db)
            except BaseException as error:      # handed back to the check below
                answer["error"] = error
        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        deadline = time.monotonic() + 3
        while worker.is_alive() and not waiting_on_a_lock(owner, db) and time.monotonic() < deadline:
            time.sleep(0.005)
        rival.execute("COMMIT")
        worker.join(3)
        if worker.is_alive():
            raise NotYet("your function was still waiting after the rival committed.")
        if "error" in answer:
            raise answer["error"]
        stored = owner.execute("SELECT value FROM tickets").fetchone()[0]
        if answer.get("value") == 2:
            raise NotYet("your function and a rival both got ticket 2: it read the counter "
                         "before it had the row's lock; read it with SELECT ... FOR UPDATE "
                         "inside the transaction, or add one in the UPDATE itself.")
        if answer.get("value") != 3 or stored != 3:
            raise NotYet(f"after a rival's ticket 2 your function returned {answer.get('value')!r} "
                         f"and left the counter at {stored}; both should be 3.")
        return ("it waited for the rival's lock and then took the next number: no ticket "
                "handed out twice.")
    finally:
        for connection in (db, rival):
            connection.close()
        cleanup()


# --- A.2: a policy of your own ----------------------------------------------------------

def check_policy(policy):
    from workbook import postgres, postgres_install
    psycopg = postgres.psycopg
    if not isinstance(policy, str) or not policy.strip().upper().startswith("CREATE POLICY"):
        raise NotYet("write policy as a str holding one CREATE POLICY statement for notes.")
    if ";" in policy.strip().rstrip(";"):
        raise NotYet("policy holds more than one statement; give the CREATE POLICY statement alone.")
    owner, another, cleanup = scratch("exercise_notes")
    try:
        owner.execute("CREATE TABLE notes (tenant TEXT NOT NULL, body TEXT NOT NULL)")
        owner.execute("ALTER TABLE notes ENABLE ROW LEVEL SECURITY")
        try:
            owner.execute(policy)
        except psycopg.Error as error:
            raise NotYet(f"the server refused your statement: {error.diag.message_primary}.")
        password = postgres_install.create_role(owner, ROLE)
        owner.execute(postgres.sql.SQL("GRANT USAGE ON SCHEMA exercise_notes TO {}").format(
            postgres.sql.Identifier(ROLE)))
        owner.execute(postgres.sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON notes TO {}").format(
            postgres.sql.Identifier(ROLE)))
        for tenant, count in (("orchard", 2), ("harbour", 3), ("", 1)):
            for number in range(count):
                owner.execute("INSERT INTO notes VALUES (%s, %s)", (tenant, f"note {number}"))
        with another(ROLE, password) as store:
            try:
                unset = store.execute("SELECT count(*) FROM notes").fetchone()[0]
            except psycopg.Error:
                raise NotYet("with no tenant set, reading notes raised an error; "
                             "current_setting('workbook.tenant', true) gives NULL instead "
                             "of failing.") from None
            if unset:
                raise NotYet(f"with no tenant set the store's role sees {unset} notes; it should "
                             "see none.")
            with store.transaction(force_rollback=True):
                store.execute("SELECT set_config('workbook.tenant', 'orchard', true)")
                seen = store.execute("SELECT count(*) FROM notes").fetchone()[0]
                deleted = store.execute("DELETE FROM notes").rowcount
            if seen != 2:
                raise NotYet(f"as orchard the store's role sees {seen} notes; orchard has 2.")
            if deleted != 2:
                raise NotYet(f"as orchard a DELETE with no condition removed {deleted} notes; "
                             "it should remove orchard's 2 (a policy FOR SELECT covers reading "
                             "only; leave FOR out to cover every command).")
            after = store.execute("SELECT count(*) FROM notes").fetchone()[0]
            if after:
                raise NotYet("after a transaction that set the tenant, the setting is '' rather "
                             "than NULL, and the store's role saw the note stored for tenant ''; "
                             "NULLIF(current_setting('workbook.tenant', true), '') makes it NULL.")
            try:
                with store.transaction(force_rollback=True):
                    store.execute("SELECT set_config('workbook.tenant', 'orchard', true)")
                    store.execute("INSERT INTO notes VALUES ('harbour', 'planted')")
            except psycopg.errors.InsufficientPrivilege:
                pass
            else:
                raise NotYet("as orchard the store's role could write a note for harbour; new "
                             "rows must pass the policy too (WITH CHECK, or a USING that applies "
                             "to every command).")
        return ("with no tenant the role sees nothing; as orchard it sees, deletes and writes "
                "orchard's notes only.")
    finally:
        cleanup()


# --- A.3: retry a lost race ----------------------------------------------------------

def check_add_item(add_item):
    from workbook import postgres, postgres_install
    if not callable(add_item):
        raise NotYet("write a function add_item(store, db, item, now).")
    server = the_server()
    owner = owner_connection(server)
    drop(owner, "exercise_race")
    password = postgres_install.create_role(owner, ROLE)
    postgres_install.install(owner, "exercise_race", ROLE)
    url = server.conninfo(ROLE, password=password, options="-c search_path=exercise_race")
    db, rival = postgres.connect(url), postgres.connect(url)
    start = {"schema": 1, "step": 0, "items": []}
    postgres.put(db, "orchard", "checkpoint", "run-a", start, None, 100, 60)
    reads = []

    def get(*arguments):
        record = postgres.get(*arguments)
        reads.append(record)
        if len(reads) == 1:         # a rival writes between your first read and your put
            changed = {"schema": 1, "step": 0, "items": ["rival"]}
            postgres.put(rival, "orchard", "checkpoint", "run-a", changed, record["revision"],
                         100, 60)
        return record

    store = SimpleNamespace(get=get, put=postgres.put, Conflict=postgres.Conflict)
    try:
        try:
            add_item(store, db, "mine", 101)
        except postgres.Conflict:
            raise NotYet("a rival wrote first and your function let the Conflict out; catch it, "
                         "read the record again and put once more.") from None
        items = postgres.get(db, "orchard", "checkpoint", "run-a", 101)["value"]["items"]
        if items == ["mine"]:
            raise NotYet("the rival's item is gone: put with the revision you read, not None "
                         "or an old one.")
        if items != ["rival", "mine"]:
            raise NotYet(f"after the race the items are {items!r}; they should be "
                         "['rival', 'mine'].")
        if len(reads) < 2:
            raise NotYet("your function read the record only once; after a Conflict read it again.")
        return "it lost the first race, read again, and kept both items."
    finally:
        db.close()
        rival.close()
        drop(owner, "exercise_race")
        owner.close()


q1 = OnTheServer(
    "A.1", "Write next_ticket(db): raise the counter in column value of table tickets by one "
           "and return it, safely when two callers run at once.",
    check_next_ticket,
    hints=["Two callers that both read 1 before either writes will both hand out 2.",
           "Inside `with db.transaction():` read with `SELECT value FROM tickets FOR UPDATE`, "
           "then UPDATE; or do both at once with `UPDATE tickets SET value = value + 1 "
           "RETURNING value`."],
    seconds=10)

q2 = OnTheServer(
    "A.2", "Write policy: a CREATE POLICY that limits table notes to the tenant in "
           "workbook.tenant, and to nothing when no tenant is set.",
    check_policy,
    hints=["Compare the tenant column with current_setting('workbook.tenant', true): the "
           "second argument makes an unset setting NULL instead of an error, and "
           "NULLIF(..., '') does the same for the '' it gives after a transaction.",
           "CREATE POLICY own_notes ON notes USING (...): without FOR it covers reading, "
           "writing and deleting, and new rows are checked with the same condition."],
    seconds=10)

q3 = OnTheServer(
    "A.3", "Write add_item(store, db, item, now): append item to checkpoint run-a by get and "
           "put, and when put raises store.Conflict, read again and retry.",
    check_add_item,
    hints=["store.put(db, 'orchard', 'checkpoint', 'run-a', value, record['revision'], now, 60) "
           "raises store.Conflict when someone else wrote after your read.",
           "Loop a few times: read with store.get, append to value['items'], put with the "
           "revision you read, and return on success; on store.Conflict go round again."],
    seconds=10)
