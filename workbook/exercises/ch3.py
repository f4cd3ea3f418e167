"""Chapter 3 exercises: a worker step that survives a concurrent writer, predicting put, fresh creation."""
from pathlib import Path
from tempfile import TemporaryDirectory

from workbook.exercises import Exercise, NotYet
from workbook.records import connect, get
from workbook.validation import Conflict
from workbook.writes import put

__all__ = ["q1", "q2", "q3", "show_steps"]


# ---------------------------------------------------------------- Exercise 3.1: increment

VISITS = ("orchard", "fact", "visits")
STATEMENT_LIMIT = 300


def visits(count):
    return {"schema": 1, "text": str(count), "source": "visit-counter", "reviewed": False}


class Runaway(BaseException):
    """Raised into the learner's loop when it never stops; a BaseException so `except Exception` lets it out."""


class Rows:
    """What a cursor gives back, for rows that were already fetched."""

    def __init__(self, rows):
        self._rows = list(rows)

    def fetchone(self):
        return self._rows.pop(0) if self._rows else None

    def fetchall(self):
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self):
        return iter(self.fetchall())


class Interleaved:
    """A connection that lets another worker write right after each of your reads of `records`.

    Every statement goes to the real connection. When a SELECT on records runs outside a
    transaction (a read, as get does it) and turns remain, its rows are fetched first, then a
    second connection to the same file increments the count and commits, then your code gets
    the rows: exactly the moment between your read and your write.
    """

    def __init__(self, db, other, now, turns):
        self._db, self._other, self._now = db, other, now
        self.turns, self.statements, self.interposed = turns, 0, 0

    @property
    def in_transaction(self):
        return self._db.in_transaction

    def execute(self, sql, parameters=()):
        self.statements += 1
        if self.statements > STATEMENT_LIMIT:
            raise Runaway()
        reading = (not self._db.in_transaction and "records" in sql
                   and sql.lstrip()[:6].upper() == "SELECT")
        if not reading or self.turns <= 0:
            return self._db.execute(sql, parameters)
        rows = self._db.execute(sql, parameters).fetchall()
        self.turns -= 1
        self.interposed += 1
        record = get(self._other, *VISITS, self._now)
        put(self._other, *VISITS, visits(int(record["value"]["text"]) + 1),
            record["revision"], self._now, 60)
        return Rows(rows)

    def __getattr__(self, name):
        return getattr(self._db, name)


def stored(db):
    """The visits fact's revision and count, read straight from the store."""
    record = get(db, *VISITS, 0)
    if record is None:
        raise NotYet("the visits fact is gone; increment should replace it, never delete it.")
    return record["revision"], int(record["value"]["text"])


def run_step(increment, db, other, now, turns):
    """Run increment once with `turns` writes by another worker; return (result, proxy, error)."""
    proxy = Interleaved(db, other, now, turns)
    try:
        return increment(proxy, now), proxy, None
    except Runaway:
        return None, proxy, "runaway"
    except Conflict as error:
        return None, proxy, error


def check_increment(increment):
    if not callable(increment):
        raise NotYet("increment should be a function increment(db, now).")
    with TemporaryDirectory() as folder:
        path = Path(folder) / "visits.db"
        db, other = connect(path), connect(path)
        try:
            return check_against(increment, db, other)
        finally:
            db.close()
            other.close()


def check_against(increment, db, other):
    put(db, *VISITS, visits(0), None, 100, 60)
    # Alone: read, add one, write.
    result, _, error = run_step(increment, db, other, 101, turns=0)
    if error == "runaway":
        raise NotYet(f"with nobody else writing, increment ran over {STATEMENT_LIMIT} "
                     "statements without finishing.")
    if error is not None:
        raise NotYet(f"with nobody else writing, increment raised Conflict ({error}); "
                     "pass the revision you read as expected.")
    revision, count = stored(db)
    if count != 1:
        raise NotYet(f"with nobody else writing, increment(db, 101) took the count from 0 to "
                     f"{count}; it should add exactly one.")
    if result != revision:
        raise NotYet(f"increment should return the revision its put returned ({revision}), "
                     f"got {result!r}.")
    # One and then two other writers between the read and the write.
    for turns in (1, 2):
        others = ("one other write", "two other writes")[turns - 1]
        before = count
        result, proxy, error = run_step(increment, db, other, 101 + turns, turns)
        revision, count = stored(db)
        if proxy.interposed == 0:
            raise NotYet("increment never read the visits fact before writing; read it with get "
                         "and pass its revision to put.")
        if error == "runaway":
            raise NotYet(f"after another worker's write, increment ran over {STATEMENT_LIMIT} "
                         "statements; after a Conflict, reread with get before you put again.")
        if error is not None:
            raise NotYet(f"when {others} landed between your read and your write, "
                         "Conflict escaped from increment; catch it, reread and recompute.")
        expected = before + turns + 1
        if count < expected:
            lost = ("one increment was", "two increments were", "three increments were")[
                min(expected - count, 3) - 1]
            raise NotYet(f"with {others} between your read and your write, the count "
                         f"went from {before} to {count}, not {expected}: "
                         f"{lost} lost; after a Conflict, reread the "
                         "record and compute the new count from what you read.")
        if count > expected:
            raise NotYet(f"with {others} between your read and your write, the count "
                         f"went from {before} to {count}, not {expected}: your step counted more "
                         "than once.")
        if result != revision:
            raise NotYet(f"increment should return the revision of its successful put "
                         f"({revision}), got {result!r}.")
    # Another worker writes before every one of your writes: give up, do not spin.
    before = count
    result, proxy, error = run_step(increment, db, other, 104, turns=10**6)
    revision, count = stored(db)
    if error == "runaway":
        raise NotYet("when another worker wins every time, increment never gives up; stop after "
                     "a few attempts (say five) and let the Conflict out.")
    if error is None:
        raise NotYet(f"when another worker wins every time, increment returned {result!r} "
                     "instead of raising Conflict.")
    if count != before + proxy.interposed:
        raise NotYet(f"when another worker wins every time, the count should hold only that "
                     f"worker's {proxy.interposed} increments, but it is {count - before} higher.")
    return ("no update was lost: alone, and with one and then two other writes between your read "
            "and your write, every increment counted; when the other worker won every time, your "
            f"step gave up with Conflict after {proxy.interposed} attempts.")


# ---------------------------------------------------------------- Exercise 3.2: predictions

START = {"schema": 1, "step": 0, "items": []}


def plan(n):
    return {"schema": 1, "text": f"Fictional plan, draft {n}.", "source": "quiz", "reviewed": False}


# tenant, kind, key, value (as shown), expected, now, ttl; then why the store answers as it does.
STEPS = [
    ("orchard", "fact", "plan", "plan(1)", None, 100, 10,
     "a fresh store's sequence starts at 0, so the first write gets 1"),
    ("orchard", "fact", "plan", "plan(2)", None, 101, 10,
     "expected=None creates only when no row exists, and orchard's fact 'plan' exists"),
    ("orchard", "checkpoint", "plan", "START", None, 101, 10,
     "the checkpoint 'plan' is a different identity from the fact, and a Conflict allocates no number"),
    ("orchard", "fact", "plan", "plan(3)", 1, 102, 10,
     "expected 1 is the fact's current revision; the next number of the shared sequence is 3"),
    ("orchard", "fact", "plan", "plan(4)", 1, 103, 10,
     "the fact is at revision 3 now, so expected 1 is stale"),
    ("harbour", "fact", "plan", "plan(5)", 3, 103, 10,
     "harbour has no row 'plan'; an int expected replaces only an existing row with that revision"),
    ("harbour", "fact", "plan", "plan(6)", None, 104, 10,
     "harbour has no row 'plan', so expected=None creates one, taking the next number"),
    ("orchard", "checkpoint", "plan", "START", 2, 111, 10,
     "the checkpoint written at 101 with ttl 10 expired at 111; an expired row refuses every write"),
    ("orchard", "fact", "plan", "plan(7)", 3, 111, 10,
     "the fact written at 102 with ttl 10 expires at 112, so at 111 it is live and revision 3 matches"),
]


def show_steps():
    """Print the puts of Exercise 3.2, numbered, as calls on one fresh store."""
    print(f"START = {START}")
    print("plan(n) = a valid fact whose text mentions draft n")
    for number, (tenant, kind, key, value, expected, now, ttl, _) in enumerate(STEPS, 1):
        print(f"{number}. put(db, {tenant!r}, {kind!r}, {key!r}, {value}, "
              f"expected={expected}, now={now}, ttl={ttl})")


def outcomes():
    db = connect()
    try:
        found = []
        for tenant, kind, key, value, expected, now, ttl, _ in STEPS:
            value = START if value == "START" else plan(int(value[5]))
            try:
                found.append(put(db, tenant, kind, key, value, expected, now, ttl))
            except Conflict:
                found.append("Conflict")
        return found
    finally:
        db.close()


def check_predictions(predictions):
    if not isinstance(predictions, (list, tuple)) or len(predictions) != len(STEPS):
        raise NotYet(f"predictions should be a list of {len(STEPS)} outcomes, one per put.")
    guesses = ["Conflict" if p is Conflict else p for p in predictions]
    for number, guess in enumerate(guesses, 1):
        if guess != "Conflict" and type(guess) is not int:
            raise NotYet(f"step {number}: write each outcome as an int revision or the string "
                         f"'Conflict', got {type(guess).__name__}.")
    for number, (guess, actual, step) in enumerate(zip(guesses, outcomes(), STEPS), 1):
        if guess != actual:
            raise NotYet(f"step {number}: you predicted {guess!r}, the store answered {actual!r}; "
                         f"{step[-1]}.")
    return (f"all {len(STEPS)} outcomes match the store: four Conflicts, and revisions 1 to 5 "
            "with no number spent on a refused write.")


# ---------------------------------------------------------------- Exercise 3.3: create_fresh

def fresh_store():
    """One store with an expired target, expired neighbours, and a live row."""
    db = connect()
    put(db, "orchard", "fact", "report", plan(1), None, 80, 30)        # expires 110: the target
    put(db, "orchard", "checkpoint", "report", START, None, 80, 20)    # expired, same key, other kind
    put(db, "orchard", "fact", "summary", plan(2), None, 80, 20)       # expired, other key
    put(db, "harbour", "fact", "report", plan(3), None, 80, 20)        # expired, other tenant
    put(db, "orchard", "fact", "live", plan(4), None, 100, 60)         # live until 160
    return db


def physical(db):
    return {row[:3]: row[3:] for row in db.execute(
        "SELECT tenant, kind, key, revision, expires, body FROM records")}


def name(identity):
    tenant, kind, key = identity
    return f"{tenant}'s {kind} {key!r}"


def check_create_fresh(create_fresh):
    if not callable(create_fresh):
        raise NotYet("create_fresh should be a function create_fresh(db, tenant, kind, key, value, now, ttl).")
    db = fresh_store()
    try:
        return check_fresh_against(create_fresh, db)
    finally:
        db.close()


def call(create_fresh, db, key, value, now):
    try:
        return create_fresh(db, "orchard", "fact", key, value, now, 30), None
    except Conflict as error:
        return None, error


def check_fresh_against(create_fresh, db):
    before = physical(db)
    # Absent: a plain create.
    revision, error = call(create_fresh, db, "new", plan(5), 110)
    if error is not None:
        raise NotYet(f"create_fresh raised Conflict for a key that has no row at all ({error}).")
    row = physical(db).get(("orchard", "fact", "new"))
    if row is None or row[0] != revision or row[1] != 140:
        raise NotYet(f"after create_fresh(db, 'orchard', 'fact', 'new', value, 110, 30) the row "
                     f"should exist with the revision you returned and deadline 140; "
                     f"returned {revision!r}, found {row[:2] if row else None}.")
    # Expired exactly now: purge that identity only, then create.
    target = ("orchard", "fact", "report")
    revision, error = call(create_fresh, db, "report", plan(6), 110)
    if error is not None:
        raise NotYet("create_fresh raised Conflict for a row whose deadline 110 equals now=110; "
                     "that row has expired (a deadline equal to now has passed), so delete it "
                     "first, then create.")
    after = physical(db)
    for identity, old in before.items():
        if identity not in (target, ("orchard", "fact", "live")) and after.get(identity) != old:
            raise NotYet(f"create_fresh also removed or changed {name(identity)}; delete only the "
                         "identity you are creating.")
    row = after.get(target)
    if row is None or row[0] != revision or row[0] <= before[target][0] or row[1] != 140:
        raise NotYet(f"the expired 'report' should be replaced by a new row with a new revision "
                     f"and deadline 140; returned {revision!r}, found {row[:2] if row else None}.")
    # Live: refuse, and leave it exactly as it was.
    live = ("orchard", "fact", "live")
    revision, error = call(create_fresh, db, "live", plan(7), 110)
    if before[live] != physical(db).get(live):
        raise NotYet("create_fresh changed a live row (deadline 160, now 110); a live row must be "
                     "left alone: only an expired one may be deleted.")
    if error is None:
        raise NotYet(f"create_fresh returned {revision!r} for a key whose row is still live; it "
                     "must refuse with Conflict (put with expected=None does that for you).")
    return ("the expired row was purged and created again with a new revision, its three expired "
            "neighbours were left alone, and the live row was refused with Conflict.")


# ---------------------------------------------------------------- the exercises

q1 = Exercise(
    "3.1", "Write increment(db, now) that adds one to the visits fact without losing a "
           "concurrent update.", check_increment,
    hints=["Read with get, compute the new count from the value you read, and put it with the "
           "revision you read as expected.",
           "Wrap read, compute and put in `for _ in range(5):`; on Conflict, `continue` "
           "so the next attempt rereads. After the loop, raise Conflict."])

q2 = Exercise(
    "3.2", "Predict the outcome of each put in show_steps().", check_predictions,
    hints=["Three questions for each step: does a physical row exist for this exact tenant, kind "
           "and key? Has its deadline (now+ttl of its last write) passed? Does expected equal its "
           "revision (None when there is no row)?",
           "Only a successful put takes a number from the sequence; a Conflict takes none."])

q3 = Exercise(
    "3.3", "Write create_fresh that purges an expired row of one identity, creates it, and "
           "refuses a live one.", check_create_fresh,
    hints=["A DELETE whose WHERE names tenant, kind and key, and also `expires<=?` with now, "
           "removes the row only when it has expired.",
           "Then put with expected=None: it creates when the row is gone, and raises Conflict "
           "when a live row is still there."])
