"""Chapter 4 exercises: a purge job with a text-free report, an honest forget, and a purge prediction."""
import tempfile
from pathlib import Path

from workbook.deletion import forget, purge
from workbook.exercises import Exercise, NotYet
from workbook.records import connect, get
from workbook.writes import put


def fact(text):
    return {"schema": 1, "text": text, "source": "exercise-4", "reviewed": False}


def present(db):
    """Every physical row's identity, visible or not."""
    return set(db.execute("SELECT tenant, kind, key FROM records").fetchall())


def name(row):
    tenant, kind, key = row
    return f"{tenant} {kind} {key!r}"


# Exercise 4.1: a purge job whose report holds counts, never contents.

PLANTED = [  # tenant, kind, key, deadline, text; every row is written at 100
    ("orchard", "fact", "ladder", 200, "Fictional: the orchard ladder leans behind the blue shed."),
    ("orchard", "fact", "gate", 201, "Fictional: the orchard gate sticks after rain."),
    ("orchard", "checkpoint", "harvest", 150, "Fictional: crate count for the pear harvest."),
    ("harbour", "fact", "ladder", 200, "Fictional: the harbour ladder has a loose fourth rung."),
    ("harbour", "fact", "buoy", 260, "Fictional: the red buoy was repainted in spring."),
    ("quarry", "fact", "ladder", 180, "Fictional: the quarry ladder is stored in the cabin."),
]
JOB_TENANTS = ["orchard", "harbour", "meadow"]
JOB_NOW = 200


def planted_store():
    db = connect()
    for tenant, kind, key, deadline, text in PLANTED:
        value = fact(text) if kind == "fact" else {"schema": 1, "step": 1, "items": [text]}
        put(db, tenant, kind, key, value, None, 100, deadline - 100)
    return db


def check_purge_job(purge_job):
    if not callable(purge_job):
        raise NotYet("purge_job should be a function of (db, tenants, now) that returns a report.")
    db = planted_store()
    try:
        report = purge_job(db, list(JOB_TENANTS), JOB_NOW)
        left = present(db)
    finally:
        db.close()
    expected = {row[:3] for row in PLANTED if row[0] not in JOB_TENANTS or row[3] > JOB_NOW}
    counts = {t: sum(1 for row in PLANTED if row[0] == t and row[3] <= JOB_NOW) for t in JOB_TENANTS}
    for row in sorted(expected - left):
        if row[0] not in JOB_TENANTS:
            raise NotYet(f"the {name(row)} row is gone, but quarry was not on the list: "
                         "purge each listed tenant and no other.")
        raise NotYet(f"the {name(row)} row is gone, but its deadline is after {JOB_NOW}; "
                     "only rows whose deadline has been reached may go.")
    for row in sorted(left - expected):
        deadline = next(d for t, k, key, d, _ in PLANTED if (t, k, key) == row)
        raise NotYet(f"the {name(row)} row is still present, but its deadline {deadline} is at "
                     f"or before {JOB_NOW}; purge removes the boundary too.")
    if not isinstance(report, list) or not all(isinstance(e, dict) for e in report):
        raise NotYet("return the report as a list of dicts, one per tenant.")
    if len(report) != len(JOB_TENANTS):
        raise NotYet(f"the report should hold one entry per tenant, {len(JOB_TENANTS)} here "
                     f"(an empty tenant too), not {len(report)}.")
    for index, (entry, tenant) in enumerate(zip(report, JOB_TENANTS)):
        missing = sorted({"operation", "time", "tenant", "count"} - set(entry))
        if missing:
            raise NotYet(f"report entry {index} has no {', '.join(missing)}; each entry needs "
                         "operation, time, tenant and count.")
        if entry["tenant"] != tenant:
            raise NotYet(f"report entry {index} should be for {tenant!r}, in the order the "
                         "tenants were given.")
        if entry["operation"] != "purge" or entry["time"] != JOB_NOW:
            raise NotYet(f"each entry should say operation 'purge' and time {JOB_NOW}, "
                         "the now the job ran with.")
        if entry["count"] != counts[tenant]:
            raise NotYet(f"the report says {tenant} lost {entry['count']!r} rows; it lost "
                         f"{counts[tenant]}: use the number purge returns.")
    shown = repr(report)
    if any(text in shown for *_, text in PLANTED):
        raise NotYet("the report contains the text of a purged record: it is now one more copy "
                     "of what you deleted, so record counts, not contents.")
    return (f"counts {', '.join(f'{t} {counts[t]}' for t in JOB_TENANTS)}; quarry and the rows "
            f"still before their deadline are untouched, and no record's text is in the report.")


# Exercise 4.2: forget whatever revision is visible, without deleting a newer one.

class Interposed:
    """A connection through which another worker writes just before the first DELETE."""

    def __init__(self, db, write):
        self._db, self._write, self.fired = db, write, False

    def execute(self, sql, *parameters):
        if not self.fired and sql.lstrip().upper().startswith("DELETE"):
            self.fired = True
            self._write()
        return self._db.execute(sql, *parameters)

    def __getattr__(self, attribute):
        return getattr(self._db, attribute)


def honest(result, what):
    if type(result) is not bool:
        raise NotYet(f"{what}, forget_current returned {result!r}; return exactly True or False, "
                     "as forget does.")


def check_simple_cases(forget_current):
    db = connect()
    try:
        put(db, "orchard", "fact", "gate", fact("Fictional: gate note."), None, 100, 10)
        put(db, "harbour", "fact", "gate", fact("Fictional: harbour gate note."), None, 100, 10)
        result = forget_current(db, "orchard", "fact", "gate", 105)
        honest(result, "with one visible revision")
        if ("orchard", "fact", "gate") in present(db):
            raise NotYet("with one visible revision and nobody else writing, forget_current "
                         "should remove it; the row is still present.")
        if result is not True:
            raise NotYet("forget_current removed the only revision but returned False; "
                         "True must mean removed, and it was.")
        if ("harbour", "fact", "gate") not in present(db):
            raise NotYet("forgetting orchard's 'gate' also removed harbour's 'gate': keep the "
                         "tenant in every condition.")
        result = forget_current(db, "orchard", "fact", "never-written", 105)
        honest(result, "for a key that was never written")
        if result is not False:
            raise NotYet("for a key that was never written, forget_current should return False: "
                         "nothing was removed.")
        put(db, "orchard", "fact", "old", fact("Fictional: an old note."), None, 100, 10)
        result = forget_current(db, "orchard", "fact", "old", 112)
        honest(result, "for a fact that expired at 110")
        gone = ("orchard", "fact", "old") not in present(db)
        if result != gone:
            raise NotYet(f"for a fact that expired at 110, forget_current returned {result}, but the "
                         f"row is {'gone' if gone else 'still present'}; True must mean removed.")
    finally:
        db.close()


def check_forget_current(forget_current):
    if not callable(forget_current):
        raise NotYet("forget_current should be a function of (db, tenant, kind, key, now).")
    check_simple_cases(forget_current)
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "store.db")
        mine, other = connect(path), connect(path)
        try:
            first = put(other, "orchard", "fact", "gate", fact("Fictional: first note."), None, 100, 10)
            newer = []

            def write():
                try:
                    newer.append(put(other, "orchard", "fact", "gate",
                                     fact("Fictional: newer note."), first, 106, 10))
                except Exception:  # locked out by the learner's transaction: no newer revision
                    pass

            proxy = Interposed(mine, write)
            result = forget_current(proxy, "orchard", "fact", "gate", 106)
            if mine.in_transaction:
                mine.execute("ROLLBACK")
            record = get(other, "orchard", "fact", "gate", 106)
        finally:
            mine.close()
            other.close()
    honest(result, "when another worker writes between your read and your delete")
    if not proxy.fired:
        raise NotYet("the check saw no DELETE through db.execute; forget_current should delete "
                     "with forget (or db.execute) on the connection it was given.")
    if not newer:  # the learner's transaction kept the other worker out
        if result is not True or record is not None:
            raise NotYet("your read and delete kept the other worker out, so the revision you read "
                         "should be gone and forget_current should return True.")
        return ("your transaction kept the other worker out until your delete had finished, and "
                "the missing, foreign and expired cases answer honestly.")
    if record is None or record["revision"] != newer[0]:
        raise NotYet(f"another worker wrote revision {newer[0]} after your read, and your function "
                     "deleted it: forget only the revision you read, and return False when it "
                     "has changed.")
    if result is not False:
        raise NotYet(f"nothing was removed (revision {newer[0]} is still visible), yet "
                     f"forget_current returned {result}; True must mean removed.")
    return (f"it removed the visible revision, answered False for a missing key, left harbour "
            f"alone, and when revision {newer[0]} arrived between your read and your delete it "
            f"returned False and left revision {newer[0]} in place.")


# Exercise 4.3: predict which rows a purge leaves.

PLAN = [  # time, operation, tenant, kind, key, ttl; put sends the current revision, forget too
    (100, "put", "orchard", "fact", "a", 20),
    (100, "put", "orchard", "checkpoint", "a", 10),
    (100, "put", "harbour", "fact", "a", 10),
    (100, "put", "orchard", "fact", "c", 18),
    (105, "put", "orchard", "fact", "b", 16),
    (110, "put", "harbour", "checkpoint", "b", 30),
    (112, "put", "orchard", "fact", "c", 10),
    (115, "forget", "harbour", "checkpoint", "b", None),
    (116, "put", "orchard", "checkpoint", "run", 4),
]
PLAN_COLUMNS = ["time", "operation", "tenant", "kind", "key", "ttl"]
PURGE_TENANT, PURGE_NOW = "orchard", 120


def run_plan():
    """Run PLAN, then purge(db, PURGE_TENANT, PURGE_NOW); return the present rows."""
    db = connect()
    try:
        for now, operation, tenant, kind, key, ttl in PLAN:
            row = db.execute("SELECT revision FROM records WHERE tenant=? AND kind=? AND key=?",
                             (tenant, kind, key)).fetchone()
            current = None if row is None else row[0]
            if operation == "put":
                value = fact(f"Fictional note {key}.") if kind == "fact" else \
                    {"schema": 1, "step": 0, "items": []}
                put(db, tenant, kind, key, value, current, now, ttl)
            else:
                forget(db, tenant, kind, key, current)
        purge(db, PURGE_TENANT, PURGE_NOW)
        return present(db)
    finally:
        db.close()


def why(row):
    steps = [s for s in PLAN if s[2:5] == row]
    if not steps:
        return "it is never written"
    last = steps[-1]
    if last[1] == "forget":
        return f"it was forgotten at {last[0]}, before the purge ran"
    deadline = last[0] + last[5]
    moved = f" (the rewrite at {last[0]} moved it)" if len(steps) > 1 else ""
    if row[0] != PURGE_TENANT:
        return (f"its tenant is {row[0]}, and purge({PURGE_TENANT!r}, {PURGE_NOW}) touches only "
                f"{PURGE_TENANT}, even though the deadline {deadline} has passed")
    if deadline <= PURGE_NOW:
        return f"its deadline {deadline}{moved} is at or before {PURGE_NOW}, so purge removes it"
    return f"its deadline {deadline}{moved} is after {PURGE_NOW}, so purge keeps it"


def check_prediction(remaining):
    if not isinstance(remaining, (set, frozenset)) or not all(
            isinstance(r, tuple) and len(r) == 3 for r in remaining):
        raise NotYet('give a set of (tenant, kind, key) tuples, like {("orchard", "fact", "b")}.')
    actual = run_plan()
    for row in sorted(remaining - actual, key=repr):
        raise NotYet(f"you expect the {name(row)} row to remain, but {why(row)}.")
    for row in sorted(actual - remaining):
        raise NotYet(f"the {name(row)} row remains: {why(row)}.")
    return (f"{len(actual)} rows remain, as you predicted: "
            f"{', '.join(name(r) for r in sorted(actual))}.")


q1 = Exercise(
    "4.1", "Write purge_job(db, tenants, now): purge each tenant and return a text-free report.",
    check_purge_job,
    hints=["Call purge once per tenant; it returns how many rows it removed.",
           "Build one dict per tenant from values you already hold (the operation name, now, the "
           "tenant, the count); never read a row to put it in the report."])

q2 = Exercise(
    "4.2", "Write forget_current(db, tenant, kind, key, now) that forgets the current revision honestly.",
    check_forget_current,
    hints=["Read the record with get to learn its revision, then forget exactly that revision.",
           "forget already refuses when the revision has changed; return what it returns, and "
           "do not read again and retry."])

q3 = Exercise(
    "4.3", f"Predict the rows present after PLAN and purge({PURGE_TENANT!r}, {PURGE_NOW}).",
    check_prediction,
    hints=["Each put sets the deadline to time + ttl; a later put on the same identity replaces it.",
           f"purge removes rows of {PURGE_TENANT} only, with deadline <= {PURGE_NOW}; a forgotten "
           "row is gone already; an expired row of another tenant is still present."])
