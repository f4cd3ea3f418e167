"""Shared fixtures: the demo's payloads, fixed clock values and bulk row layout."""

import json

from bench.floor import INSERT_ROW

NOW = 1_000_000
TTL = 86_400
FACT = {"schema": 1, "text": "Fictional team likes checklists.",
        "source": "workshop-note-1", "reviewed": False}
CHECKPOINT = {"schema": 1, "step": 1, "items": ["collected"]}
PAYLOADS = {"fact": FACT, "checkpoint": CHECKPOINT}


def body(kind):
    return json.dumps(PAYLOADS[kind], sort_keys=True, ensure_ascii=True)


def kind_of(i):
    """Alternate the two kinds, so every batch exercises both payload schemas."""
    return "fact" if i % 2 == 0 else "checkpoint"


def lay_rows(db, rows):
    """Insert (tenant, kind, key, revision, expires) rows in one transaction, untimed."""
    bodies = {"fact": body("fact"), "checkpoint": body("checkpoint")}
    db.execute("BEGIN")
    db.executemany(INSERT_ROW, ((t, k, key, rev, exp, bodies[k])
                                for t, k, key, rev, exp in rows))
    db.execute("COMMIT")


def snapshot(db):
    """Every row of both tables, for comparing what two implementations left behind."""
    return (db.execute("SELECT * FROM records ORDER BY tenant, kind, key").fetchall(),
            db.execute("SELECT * FROM sequence").fetchall())
