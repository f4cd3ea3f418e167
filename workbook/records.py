import json
import sqlite3

from workbook.validation import MAX_BYTES, identity, integer, payload

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS records (
        tenant TEXT, kind TEXT, key TEXT, revision INTEGER NOT NULL,
        expires INTEGER NOT NULL, body TEXT NOT NULL,
        PRIMARY KEY (tenant, kind, key))""",
    """CREATE TABLE IF NOT EXISTS sequence (
        singleton INTEGER PRIMARY KEY CHECK(singleton=1),
        value INTEGER NOT NULL)""",
    "INSERT OR IGNORE INTO sequence VALUES (1, 0)",
)


def connect(path=":memory:"):
    db = sqlite3.connect(path, autocommit=True, timeout=1)
    for statement in SCHEMA:
        db.execute(statement)
    return db


def stored(kind, revision, expires, body):
    """Check a row read back from the file as strictly as a write; return its value."""
    integer(revision, 1, 2**63 - 1, name="stored revision")
    integer(expires, 0, 10**10 + 86400, name="stored expires")
    if not isinstance(body, str):
        raise ValueError(f"stored body must be text, got {type(body).__name__}")
    size = len(body.encode("utf-8", "surrogatepass"))
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
    row = db.execute("""SELECT revision, expires, body FROM records
        WHERE tenant=? AND kind=? AND key=? AND expires>?""",
        (tenant, kind, key, now)).fetchone()
    if row is None:
        return None
    revision, expires, body = row
    return {"revision": revision, "expires": expires,
            "value": stored(kind, revision, expires, body)}
