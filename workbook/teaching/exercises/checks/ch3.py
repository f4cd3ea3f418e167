"""Checks of chapter 3's exercises: a worker step that survives a concurrent writer, predicting
put, fresh creation."""
from pathlib import Path
from tempfile import TemporaryDirectory

from workbook.teaching.exercises import NotYet
from workbook.teaching.exercises.ch3 import START, STEPS, Runaway, plan
from workbook.records import connect, get
from workbook.validation import Conflict
from workbook.writes import put

# ---------------------------------------------------------------- Exercise 3.1: increment

VISITS = ("orchard", "fact", "visits")
STATEMENT_LIMIT = 300


def visits(count):
    return {"schema": 1, "text": str(count), "source": "visit-counter", "reviewed": False}


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
        self.refused = 0  # writes the store refused: a ROLLBACK, or a write that changed no row
        self.ran_away = False

    @property
    def in_transaction(self):
        return self._db.in_transaction

    def execute(self, sql, parameters=()):
        self.statements += 1
        if self.statements > STATEMENT_LIMIT:
            self.ran_away = True
            raise Runaway()
        reading = (not self._db.in_transaction and "records" in sql
                   and sql.lstrip()[:6].upper() == "SELECT")
        if not reading or self.turns <= 0:
            cursor = self._db.execute(sql, parameters)
            head = sql.lstrip()[:8].upper()
            if head.startswith("ROLLBACK") or (head.startswith(("UPDATE", "INSERT", "REPLACE"))
                                               and cursor.rowcount == 0):
                self.refused += 1
            return cursor
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
        if not proxy.ran_away:
            raise  # the answer's own: decide() says it raised it
        return None, proxy, "runaway"
    except Conflict as error:
        return None, proxy, error


ALWAYS = 10**6  # another worker writes before every one of your writes


def check_increment(increment, rng=None):
    if not callable(increment):
        raise NotYet("increment should be a function increment(db, now).")
    if rng is None:
        start, now, steps = 0, 100, [0, 1, 2, ALWAYS]
    else:  # more steps, in an order an answer cannot count on
        start, now = rng.randint(1, 10**6), rng.randint(101, 10**6)
        steps = [0] + rng.sample([0, 1, 1, 2, rng.randint(3, 4), ALWAYS, ALWAYS], 7)
    with TemporaryDirectory() as folder:
        path = Path(folder) / "visits.db"
        db, other = connect(path), connect(path)
        try:
            put(db, *VISITS, visits(start), None, now, 60)
            attempts = [check_step(increment, db, other, now + number, turns)
                        for number, turns in enumerate(steps, start=1)]
            given_up = max(n for n in attempts if n is not None)
            return ("no update was lost: alone, and with one and then two other writes between "
                    "your read and your write, every increment counted; when the other worker won "
                    f"every time, your step gave up with Conflict after {given_up} attempts.")
        finally:
            db.close()
            other.close()


def check_step(increment, db, other, now, turns):
    """One call of increment with `turns` writes by another worker after its reads; NotYet if it
    went wrong. Returns the attempts it made when the other worker always wins."""
    before = stored(db)[1]
    result, proxy, error = run_step(increment, db, other, now, turns)
    revision, count = stored(db)
    if turns == 0:
        if error == "runaway":
            raise NotYet(f"with nobody else writing, increment ran over {STATEMENT_LIMIT} "
                         "statements without finishing.")
        if error is not None:
            raise NotYet(f"with nobody else writing, increment raised Conflict ({error}); "
                         "pass the revision you read as expected.")
        if count != before + 1:
            raise NotYet(f"with nobody else writing, increment(db, {now}) took the count from "
                         f"{before} to {count}; it should add exactly one.")
        if result != revision:
            raise NotYet(f"increment should return the revision its put returned ({revision}), "
                         f"got {result!r}.")
        return None
    if proxy.interposed == 0:
        raise NotYet("increment never read the visits fact before writing; read it with get "
                     "and pass its revision to put.")
    if turns == ALWAYS:
        if error == "runaway":
            raise NotYet("when another worker wins every time, increment never gives up; stop "
                         "after a few attempts (say five) and let the Conflict out.")
        if error is None:
            raise NotYet(f"when another worker wins every time, increment returned {result!r} "
                         "instead of raising Conflict.")
        if proxy.interposed < 2:
            raise NotYet("when another worker won, increment gave up at once; after a Conflict, "
                         "reread the record and try again a few times before you give up.")
        if proxy.refused < 2:
            # The Conflict is the answer's own unless the check saw its writes refused.
            raise NotYet("when another worker wins every time, increment raised Conflict though "
                         f"the store refused {'none' if not proxy.refused else 'only one'} of its "
                         "writes: put with the revision you read, and after each Conflict reread "
                         "and try again, a few times, before you let the Conflict out.")
        if count != before + proxy.interposed:
            raise NotYet(f"when another worker wins every time, the count should hold only that "
                         f"worker's {proxy.interposed} increments, but it is {count - before} "
                         "higher.")
        return proxy.refused
    said = "one other write" if turns == 1 else f"{turns} other writes"
    if error == "runaway":
        raise NotYet(f"after another worker's write, increment ran over {STATEMENT_LIMIT} "
                     "statements; after a Conflict, reread with get before you put again.")
    if error is not None:
        raise NotYet(f"when {said} landed between your read and your write, "
                     "Conflict escaped from increment; catch it, reread and recompute.")
    expected = before + turns + 1
    if count < expected:
        lost = expected - count
        raise NotYet(f"with {said} between your read and your write, the count "
                     f"went from {before} to {count}, not {expected}: "
                     f"{'one increment was' if lost == 1 else f'{lost} increments were'} "
                     "lost; after a Conflict, reread the record and compute the new count "
                     "from what you read.")
    if count > expected:
        raise NotYet(f"with {said} between your read and your write, the count "
                     f"went from {before} to {count}, not {expected}: your step counted more "
                     "than once.")
    if result != revision:
        raise NotYet(f"increment should return the revision of its successful put "
                     f"({revision}), got {result!r}.")
    return None


# ---------------------------------------------------------------- Exercise 3.2: predictions

# The rules Exercise 3.2 practises. A rule covers several steps, so naming the one a prediction
# breaks first says what to reread, never which step is wrong or what the store answered there.
NUMBERING = ("a fresh store hands out revisions from 1, each successful put takes the next number "
             "of the one sequence every record of every tenant shares, and a refused put takes none")
CREATING = ("expected=None creates a record only when no row is present for that exact tenant, "
            "kind and key: a fact and a checkpoint under one key are two records, and so are the "
            "same key's rows in two tenants")
REPLACING = ("an int expected replaces only a row that is present at exactly that revision; it "
             "never creates one")
EXPIRING = ("a row is live until its deadline, the now + ttl of its last successful put, and from "
            "that tick on it refuses every put, whatever expected is")
# The rule that decides whether each step of STEPS succeeds.
DECIDES = [CREATING, CREATING, CREATING, REPLACING, REPLACING, REPLACING, CREATING, EXPIRING,
           EXPIRING]


def outcomes():
    db = connect()
    try:
        found = []
        for tenant, kind, key, value, expected, now, ttl in STEPS:
            value = START if value == "START" else plan(int(value[5]))
            try:
                found.append(put(db, tenant, kind, key, value, expected, now, ttl))
            except Conflict:
                found.append("Conflict")
        return found
    finally:
        db.close()


def as_outcomes(predictions):
    """The predictions with the Conflict class read as its name; NotYet if their form is wrong."""
    if not isinstance(predictions, (list, tuple)) or len(predictions) != len(STEPS):
        raise NotYet(f"predictions should be a list of {len(STEPS)} outcomes, one per put.")
    guesses = ["Conflict" if p is Conflict else p for p in predictions]
    for number, guess in enumerate(guesses, 1):
        if type(guess) not in (int, str) or (type(guess) is str and guess != "Conflict"):
            got = repr(guess) if isinstance(guess, str) else type(guess).__name__
            raise NotYet(f"put {number}: write each outcome as an int revision or the string "
                         f"'Conflict' (spelt so), got {got}.")
    return guesses


def broken_rule(guess, actual, decides):
    """The rule a wrong guess breaks: a wrong number breaks the numbering; a success predicted
    for a refusal, or the other way round, breaks the rule that decides the step."""
    return NUMBERING if type(guess) is int and type(actual) is int else decides


def check_predictions(predictions, rng=None):
    guesses = as_outcomes(predictions)
    wrong = [broken_rule(guess, actual, decides)
             for guess, actual, decides in zip(guesses, outcomes(), DECIDES) if guess != actual]
    if wrong:
        raise NotYet(f"your list is not what the store answers. The first rule it breaks: "
                     f"{wrong[0]}.")
    return (f"all {len(STEPS)} outcomes match the store: four Conflicts, and revisions 1 to 5 "
            "with no number spent on a refused write.")


def show_outcomes(predictions, show=True):
    """Each put of Exercise 3.2, run for real, beside the prediction (with show=False, only the
    prediction's form is checked)."""
    guesses = as_outcomes(predictions)
    if not show:
        return
    print(f"{'put':<5} {'you predicted':<15} the store answered")
    for number, (guess, actual) in enumerate(zip(guesses, outcomes()), 1):
        print(f"{number:<5} {guess!s:<15} {actual}{'' if guess == actual else '   <- differs'}")


# ---------------------------------------------------------------- Exercise 3.3: create_fresh

class Layout:
    """One store for create_fresh: an expired target, expired neighbours of it, and a live row.
    The chapter's layout, or (with rng) one with other names and ticks."""

    def __init__(self, rng=None):
        if rng is None:
            self.tenant, self.neighbour, self.now = "orchard", "harbour", 110
            self.target, self.other, self.live, self.new = "report", "summary", "live", "new"
        else:
            self.tenant, self.neighbour = rng.sample(["orchard", "harbour", "quarry", "meadow"], 2)
            self.target, self.other, self.live, self.new = rng.sample(
                ["report", "summary", "live", "new", "ledger", "notes", "gate", "tally"], 4)
            self.now = rng.randint(200, 10**6)

    def store(self):
        now, db = self.now, connect()
        put(db, self.tenant, "fact", self.target, plan(1), None, now - 30, 30)      # expires now
        put(db, self.tenant, "checkpoint", self.target, START, None, now - 30, 20)  # other kind
        put(db, self.tenant, "fact", self.other, plan(2), None, now - 30, 20)       # other key
        put(db, self.neighbour, "fact", self.target, plan(3), None, now - 30, 20)   # other tenant
        put(db, self.tenant, "fact", self.live, plan(4), None, now - 10, 60)        # live
        return db


def physical(db):
    return {row[:3]: row[3:] for row in db.execute(
        "SELECT tenant, kind, key, revision, expires, body FROM records")}


def name(identity):
    tenant, kind, key = identity
    return f"{tenant}'s {kind} {key!r}"


def check_create_fresh(create_fresh, rng=None):
    if not callable(create_fresh):
        raise NotYet("create_fresh should be a function create_fresh(db, tenant, kind, key, value, now, ttl).")
    layouts = [Layout()] + ([Layout(rng)] if rng else [])
    for layout in layouts:
        db = layout.store()
        try:
            check_fresh_against(create_fresh, db, layout)
        finally:
            db.close()
    return ("the expired row was purged and created again with a new revision, its three expired "
            "neighbours were left alone, and the live row was refused with Conflict.")


def call(create_fresh, db, layout, key, value):
    try:
        return create_fresh(db, layout.tenant, "fact", key, value, layout.now, 30), None
    except Conflict as error:
        return None, error


def check_fresh_against(create_fresh, db, layout):
    before, now, tenant = physical(db), layout.now, layout.tenant
    # Absent: a plain create.
    revision, error = call(create_fresh, db, layout, layout.new, plan(5))
    if error is not None:
        raise NotYet(f"create_fresh raised Conflict for a key that has no row at all ({error}).")
    row = physical(db).get((tenant, "fact", layout.new))
    if row is None or row[0] != revision or row[1] != now + 30:
        raise NotYet(f"after create_fresh(db, {tenant!r}, 'fact', {layout.new!r}, value, {now}, 30) "
                     f"the row should exist with the revision you returned and deadline "
                     f"{now + 30}; returned {revision!r}, found {row[:2] if row else None}.")
    # Expired exactly now: purge that identity only, then create.
    target, live = (tenant, "fact", layout.target), (tenant, "fact", layout.live)
    revision, error = call(create_fresh, db, layout, layout.target, plan(6))
    if error is not None:
        raise NotYet(f"create_fresh raised Conflict for a row whose deadline {now} equals "
                     f"now={now}; that row has expired (a deadline equal to now has passed), so "
                     "delete it first, then create.")
    after = physical(db)
    for identity, old in before.items():
        if identity not in (target, live) and after.get(identity) != old:
            raise NotYet(f"create_fresh also removed or changed {name(identity)}; delete only the "
                         "identity you are creating.")
    row = after.get(target)
    if row is None or row[0] != revision or row[0] <= before[target][0] or row[1] != now + 30:
        raise NotYet(f"the expired {layout.target!r} should be replaced by a new row with a new "
                     f"revision and deadline {now + 30}; returned {revision!r}, found "
                     f"{row[:2] if row else None}.")
    # Live: refuse, and leave it exactly as it was.
    revision, error = call(create_fresh, db, layout, layout.live, plan(7))
    if before[live] != physical(db).get(live):
        raise NotYet(f"create_fresh changed a live row (deadline {now + 50}, now {now}); a live "
                     "row must be left alone: only an expired one may be deleted.")
    if error is None:
        raise NotYet(f"create_fresh returned {revision!r} for a key whose row is still live; it "
                     "must refuse with Conflict (put with expected=None does that for you).")
