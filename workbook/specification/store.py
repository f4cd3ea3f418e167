"""The specification's reference store.py, copied verbatim: the oracle the chapters and the
differential tests compare this package with."""

import json
import re
import sqlite3


class Conflict(Exception):
    pass


def identity(tenant, kind, key):
    for value in (tenant, key):
        if not isinstance(value, str) or not re.fullmatch(
                r"[a-z][a-z0-9-]{0,31}", value):
            raise ValueError("invalid tenant or key")
    if kind not in ("checkpoint", "fact"):
        raise ValueError("invalid kind")


def integer(value, low, high):
    if type(value) is not int or not low <= value <= high:
        raise ValueError("integer outside bounds")


def payload(kind, value):
    if not isinstance(value, dict):
        raise ValueError("payload must be an object")
    if type(value.get("schema")) is not int or value["schema"] != 1:
        raise ValueError("unsupported schema")
    if kind == "checkpoint":
        if set(value) != {"schema", "step", "items"}:
            raise ValueError("checkpoint fields")
        integer(value["step"], 0, 2)
        items = value["items"]
        if not isinstance(items, list) or len(items) > 8:
            raise ValueError("checkpoint items")
        strings = items
    elif kind == "fact":
        if set(value) != {"schema", "text", "source", "reviewed"}:
            raise ValueError("fact fields")
        if type(value["reviewed"]) is not bool:
            raise ValueError("reviewed must be boolean")
        strings = [value["text"], value["source"]]
    else:
        raise ValueError("invalid kind")
    if any(not isinstance(s, str) or not 1 <= len(s) <= 256
           for s in strings):
        raise ValueError("text outside bounds")
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=True)
    if len(encoded.encode("utf-8")) > 2048:
        raise ValueError("payload too large")
    return encoded


def connect(path=":memory:"):
    db = sqlite3.connect(path, autocommit=True, timeout=1)
    db.execute("""CREATE TABLE IF NOT EXISTS records (
        tenant TEXT, kind TEXT, key TEXT, revision INTEGER NOT NULL,
        expires INTEGER NOT NULL, body TEXT NOT NULL,
        PRIMARY KEY (tenant, kind, key))""")
    db.execute("""CREATE TABLE IF NOT EXISTS sequence (
        singleton INTEGER PRIMARY KEY CHECK(singleton=1),
        value INTEGER NOT NULL)""")
    db.execute("INSERT OR IGNORE INTO sequence VALUES (1, 0)")
    return db

def get(db, tenant, kind, key, now):
    identity(tenant, kind, key)
    integer(now, 0, 10**10)
    row = db.execute("""SELECT revision, expires, body FROM records
        WHERE tenant=? AND kind=? AND key=? AND expires>?""",
        (tenant, kind, key, now)).fetchone()
    if row is None:
        return None
    revision, expires, body = row
    if not isinstance(body, str) or len(body.encode("utf-8")) > 2048:
        raise ValueError("stored payload too large")
    decoded = json.loads(body)
    payload(kind, decoded)
    return {"revision": revision, "expires": expires, "value": decoded}


def put(db, tenant, kind, key, value, expected, now, ttl):
    identity(tenant, kind, key)
    integer(now, 0, 10**10)
    integer(ttl, 1, 86400)
    if expected is not None:
        integer(expected, 1, 2**63-1)
    body = payload(kind, value)
    db.execute("BEGIN IMMEDIATE")
    try:
        old = db.execute("""SELECT revision, expires FROM records
            WHERE tenant=? AND kind=? AND key=?""",
            (tenant, kind, key)).fetchone()
        if old is not None and old[1] <= now:
            raise Conflict("expired row: purge before fresh creation")
        current = None if old is None else old[0]
        if current != expected:
            raise Conflict("revision changed")
        revision = db.execute(
            "SELECT value FROM sequence WHERE singleton=1"
        ).fetchone()[0] + 1
        integer(revision, 1, 2**63-1)
        db.execute("UPDATE sequence SET value=? WHERE singleton=1",
                   (revision,))
        db.execute("""INSERT INTO records VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(tenant, kind, key) DO UPDATE SET
            revision=excluded.revision, expires=excluded.expires,
            body=excluded.body""",
            (tenant, kind, key, revision, now+ttl, body))
        db.execute("COMMIT")
        return revision
    except Exception:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def forget(db, tenant, kind, key, expected):
    identity(tenant, kind, key)
    integer(expected, 1, 2**63-1)
    cursor = db.execute("""DELETE FROM records
        WHERE tenant=? AND kind=? AND key=? AND revision=?""",
        (tenant, kind, key, expected))
    return cursor.rowcount == 1

def purge(db, tenant, now):
    identity(tenant, "fact", "unused")
    integer(now, 0, 10**10)
    cursor = db.execute(
        "DELETE FROM records WHERE tenant=? AND expires<=?",
        (tenant, now))
    return cursor.rowcount
