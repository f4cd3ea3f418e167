"""Checks of chapter 4's exercises: a purge job with a text-free report, an honest forget, and a
purge prediction."""
import tempfile
from pathlib import Path

from workbook.deletion import forget, purge
from workbook.teaching.exercises import NotYet, raised
from workbook.teaching.exercises.ch4 import PLAN, PURGE_NOW, PURGE_TENANT
from workbook.records import connect, get
from workbook.writes import put

TENANTS = ["orchard", "harbour", "meadow", "quarry", "pasture", "dock"]
KEYS = ["ladder", "gate", "harvest", "buoy", "shed", "rope", "crate", "well"]
THINGS = ["ladder", "gate", "crate", "buoy", "lantern", "rope", "shed door", "well cover"]


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


class Job:
    """One purge job: the rows planted (each written at `written`), the tenants and the time."""

    def __init__(self, rng=None):
        if rng is None:
            self.planted, self.tenants, self.now, self.written = PLANTED, JOB_TENANTS, JOB_NOW, 100
            return
        self.now = rng.randint(1000, 10**6)
        self.written = self.now - 500
        tenants = rng.sample(TENANTS, 4)
        self.tenants = tenants[:3]      # the last of them holds no rows at all
        owners = tenants[:2] + [tenants[3]]  # the fourth is not on the job's list
        rows, seen = [], set()
        for owner in owners:
            for deadline in (self.now - rng.randint(1, 400), self.now, self.now + rng.randint(1, 400)):
                key, kind = rng.choice(KEYS), rng.choice(["fact", "checkpoint"])
                if (owner, kind, key) in seen:
                    continue
                seen.add((owner, kind, key))
                rows.append((owner, kind, key, deadline,
                             f"Fictional: the {owner} {rng.choice(THINGS)} note {rng.randint(1, 999)}."))
        self.planted = rows

    def store(self):
        db = connect()
        for tenant, kind, key, deadline, text in self.planted:
            value = fact(text) if kind == "fact" else {"schema": 1, "step": 1, "items": [text]}
            put(db, tenant, kind, key, value, None, self.written, deadline - self.written)
        return db

    def kept(self):
        return {row[:3] for row in self.planted if row[0] not in self.tenants or row[3] > self.now}

    def counts(self):
        return {t: sum(1 for row in self.planted if row[0] == t and row[3] <= self.now)
                for t in self.tenants}


def check_purge_job(purge_job, rng=None):
    if not callable(purge_job):
        raise NotYet("purge_job should be a function of (db, tenants, now) that returns a report.")
    jobs = [Job()] + ([Job(rng)] if rng else [])
    for job in jobs:
        said = check_one_job(purge_job, job)
    return said


def check_one_job(purge_job, job):
    db = job.store()
    try:
        report = purge_job(db, list(job.tenants), job.now)
        left = present(db)
    finally:
        db.close()
    expected, counts, now = job.kept(), job.counts(), job.now
    for row in sorted(expected - left):
        if row[0] not in job.tenants:
            raise NotYet(f"the {name(row)} row is gone, but {row[0]} was not on the list: "
                         "purge each listed tenant and no other.")
        raise NotYet(f"the {name(row)} row is gone, but its deadline is after {now}; "
                     "only rows whose deadline has been reached may go.")
    due = left - expected
    if due and len(due) == sum(counts.values()):
        raise NotYet(f"no row was purged: the listed tenants still hold all {len(due)} rows whose "
                     f"deadline is at or before {now}; call purge for each tenant on the list.")
    for row in sorted(due):
        deadline = next(d for t, k, key, d, _ in job.planted if (t, k, key) == row)
        boundary = "; purge removes the boundary too" if deadline == now else ""
        raise NotYet(f"the {name(row)} row is still present, but its deadline {deadline} is at "
                     f"or before {now}{boundary}.")
    if not isinstance(report, list) or not all(isinstance(e, dict) for e in report):
        raise NotYet("return the report as a list of dicts, one per tenant.")
    if len(report) != len(job.tenants):
        raise NotYet(f"the report should hold one entry per tenant, {len(job.tenants)} here "
                     f"(an empty tenant too), not {len(report)}.")
    for index, (entry, tenant) in enumerate(zip(report, job.tenants)):
        missing = sorted({"operation", "time", "tenant", "count"} - set(entry))
        if missing:
            raise NotYet(f"report entry {index} has no {', '.join(missing)}; each entry needs "
                         "operation, time, tenant and count.")
        if entry["tenant"] != tenant:
            raise NotYet(f"report entry {index} should be for {tenant!r}, in the order the "
                         "tenants were given.")
        if entry["operation"] != "purge" or entry["time"] != now:
            raise NotYet(f"each entry should say operation 'purge' and time {now}, "
                         "the now the job ran with.")
        if entry["count"] != counts[tenant]:
            raise NotYet(f"the report says {tenant} lost {entry['count']!r} rows; it lost "
                         f"{counts[tenant]}: use the number purge returns.")
    shown = repr(report)
    if any(text in shown for *_, text in job.planted):
        raise NotYet("the report contains the text of a purged record: it is now one more copy "
                     "of what you deleted, so record counts, not contents.")
    outside = sorted({row[0] for row in job.planted} - set(job.tenants))
    return (f"counts {', '.join(f'{t} {counts[t]}' for t in job.tenants)}; {', '.join(outside)} and "
            "the rows still before their deadline are untouched, and no record's text is in the "
            "report.")


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


def attempt(forget_current, what, *args):
    """forget_current(*args); an exception it raises becomes NotYet naming the case."""
    try:
        return forget_current(*args)
    except NotImplementedError:
        raise
    except Exception as error:
        raise NotYet(f"{what}, forget_current raised {raised(error)}") from None


class Names:
    """The identities 4.2 uses: the chapter's, or (with rng) others."""

    def __init__(self, rng=None):
        if rng is None:
            self.tenant, self.other, self.key, self.missing, self.old = (
                "orchard", "harbour", "gate", "never-written", "old")
            self.now = 100
        else:
            self.tenant, self.other = rng.sample(TENANTS, 2)
            self.key, self.missing, self.old = rng.sample(KEYS, 3)
            self.now = rng.randint(1000, 10**6)


def check_simple_cases(forget_current, names):
    db = connect()
    t, now = names.tenant, names.now
    try:
        put(db, t, "fact", names.key, fact("Fictional: gate note."), None, now, 10)
        put(db, names.other, "fact", names.key, fact("Fictional: another gate note."), None, now, 10)
        what = "with one visible revision"
        result = attempt(forget_current, what, db, t, "fact", names.key, now + 5)
        honest(result, what)
        if (t, "fact", names.key) in present(db):
            raise NotYet("with one visible revision and nobody else writing, forget_current "
                         "should remove it; the row is still present.")
        if result is not True:
            raise NotYet("forget_current removed the only revision but returned False; "
                         "True must mean removed, and it was.")
        if (names.other, "fact", names.key) not in present(db):
            raise NotYet(f"forgetting {t}'s {names.key!r} also removed {names.other}'s "
                         f"{names.key!r}: keep the tenant in every condition.")
        what = "for a key that was never written"
        result = attempt(forget_current, what, db, t, "fact", names.missing, now + 5)
        honest(result, what)
        if result is not False:
            raise NotYet("for a key that was never written, forget_current should return False: "
                         "nothing was removed.")
        put(db, t, "fact", names.old, fact("Fictional: an old note."), None, now, 10)
        what = f"for a fact that expired at {now + 10}"
        result = attempt(forget_current, what, db, t, "fact", names.old, now + 12)
        honest(result, what)
        gone = (t, "fact", names.old) not in present(db)
        if result != gone:
            raise NotYet(f"{what}, forget_current returned {result}, but the row is "
                         f"{'gone' if gone else 'still present'}; True must mean removed.")
    finally:
        db.close()


def check_forget_current(forget_current, rng=None):
    if not callable(forget_current):
        raise NotYet("forget_current should be a function of (db, tenant, kind, key, now).")
    names = Names()
    check_simple_cases(forget_current, names)
    said = check_interposed(forget_current, names)
    if rng:
        names = Names(rng)
        check_simple_cases(forget_current, names)
        # Stores that look the same, another worker writing in some of them only, in an order an
        # answer cannot count on: only forgetting the revision read passes them all.
        for interpose in rng.sample([True, True, True, False, False], 5):
            check_interposed(forget_current, names, interpose)
    return said


def check_interposed(forget_current, names, interpose=True):
    t, key, now = names.tenant, names.key, names.now
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "store.db")
        mine, other = connect(path), connect(path)
        try:
            first = put(other, t, "fact", key, fact("Fictional: first note."), None, now, 10)
            newer = []

            def write():
                if not interpose:
                    return
                try:
                    newer.append(put(other, t, "fact", key, fact("Fictional: newer note."),
                                     first, now + 6, 10))
                except Exception:  # locked out by the learner's transaction: no newer revision
                    pass

            proxy = Interposed(mine, write)
            what = "when another worker writes between your read and your delete"
            result = attempt(forget_current, what, proxy, t, "fact", key, now + 6)
            if mine.in_transaction:
                mine.execute("ROLLBACK")
            record = get(other, t, "fact", key, now + 6)
        finally:
            mine.close()
            other.close()
    honest(result, what)
    if not proxy.fired:
        raise NotYet("the check saw no DELETE through db.execute; forget_current should delete "
                     "with forget (or db.execute) on the connection it was given.")
    if not interpose and (result is not True or record is not None):
        raise NotYet("with nobody else writing, forget_current should remove the one visible "
                     "revision and return True.")
    if not newer:  # nobody wrote, or the learner's transaction kept the other worker out
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
    return (f"it removed the visible revision, answered False for a missing key, left "
            f"{names.other} alone, and when revision {newer[0]} arrived between your read and your "
            f"delete it returned False and left revision {newer[0]} in place.")


# Exercise 4.3: predict which rows a purge leaves.

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


def rule(row):
    """The rule that decides whether `row` remains, said without saying whether it does."""
    steps = [s for s in PLAN if s[2:5] == row]
    if not steps:
        return "a row is present only if some step writes it"
    last = steps[-1]
    if last[1] == "forget":
        return "forget removes a row at once, before any purge runs"
    if row[0] != PURGE_TENANT:
        return (f"purge({PURGE_TENANT!r}, {PURGE_NOW}) removes rows of {PURGE_TENANT} only; "
                "another tenant's row stays, whatever its deadline")
    moved = (" (the last put on an identity sets its deadline: a rewrite moves it)"
             if len(steps) > 1 else "")
    return (f"purge removes each row of its tenant whose deadline, the time + ttl of its last put, "
            f"is at or before its now, and keeps the others{moved}")


def check_prediction(remaining, rng=None):
    if not isinstance(remaining, (set, frozenset)) or not all(
            isinstance(r, tuple) and len(r) == 3 for r in remaining):
        raise NotYet('give a set of (tenant, kind, key) tuples, like {("orchard", "fact", "b")}.')
    actual = run_plan()
    gone, missing = sorted(remaining - actual, key=repr), sorted(actual - remaining, key=repr)
    if gone or missing:
        wrong = len(gone) + len(missing)
        parts = [f"{len(gone)} you list {'is' if len(gone) == 1 else 'are'} not present"] if gone else []
        parts += [f"{len(missing)} present {'is' if len(missing) == 1 else 'are'} not in your set"] \
            if missing else []
        first = min(gone + missing, key=lambda row: [s[2:5] for s in PLAN].index(row)
                    if row in [s[2:5] for s in PLAN] else len(PLAN))
        raise NotYet(f"{wrong} {'row is' if wrong == 1 else 'rows are'} wrong ({' and '.join(parts)}). "
                     f"The first rule your set breaks: {rule(first)}.")
    return (f"{len(actual)} rows remain, as you predicted: "
            f"{', '.join(name(r) for r in sorted(actual))}.")
