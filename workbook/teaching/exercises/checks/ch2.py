"""Checks of chapter 2's exercises: the exclusive deadline, visible versus present, predicting get."""
import re

from workbook.teaching.exercises import NotYet
from workbook.records import connect, get
from workbook.validation import kind_of, payload

TEA = {"schema": 1, "text": "Fictional team prefers green tea.",
       "source": "workshop-note-2", "reviewed": False}
ORDERS = {"schema": 1, "step": 1, "items": ["collected"]}
TENANTS = ["orchard", "harbour", "quarry", "meadow"]
KEYS = ["tea", "rope", "gate", "ladder", "pears", "buoy", "run-a", "summary"]


def insert(db, tenant, kind, key, value, now, ttl):
    """Stand-in for chapter 3's put (the same as the chapter's): add a new row."""
    body = payload(kind, value)
    db.execute("BEGIN IMMEDIATE")
    try:
        revision = db.execute("SELECT value FROM sequence").fetchone()[0] + 1
        db.execute("UPDATE sequence SET value=?", (revision,))
        db.execute("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?)",
                   (tenant, kind, key, revision, now + ttl, body))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return revision


def value_for(kind):
    return TEA if kind == "fact" else ORDERS


def table(db):
    return db.execute("SELECT * FROM records ORDER BY tenant, kind, key").fetchall()


def unchanged(db, before, name):
    if table(db) != before:
        raise NotYet(f"{name} changed the records table; a read helper must only read.")


# ---------------------------------------------------------------- 2.1 last_visible

# (written at, ttl, start): the fact orchard/fact/tea, beside decoys with the same key.
DEADLINES = [(100, 10, 100), (100, 1, 100), (250, 37, 260), (0, 600, 5),
             (1000, 3600, 1000), (100, 10, 110), (100, 10, 500)]


def deadline_cases(rng):
    """The chapter's cases, then (with rng) more of them, each with its own tenant and key."""
    cases = [(now, ttl, start, "orchard", "tea") for now, ttl, start in DEADLINES]
    for _ in range(8 if rng else 0):
        now, ttl = rng.randint(0, 10**6), rng.choice([1, 2, rng.randint(3, 86400)])
        start = rng.choice([now, now + ttl - 1, now + ttl, now + rng.randint(0, ttl + 50)])
        cases.append((now, ttl, start, rng.choice(TENANTS), rng.choice(KEYS)))
    return cases


def deadline_store(now, ttl, tenant="orchard", key="tea"):
    """The fact tenant/fact/key, written at now with ttl, beside two decoys of the same key."""
    db = connect()
    other = next(t for t in TENANTS if t != tenant)
    insert(db, other, "fact", key, TEA, now, ttl + 50)
    insert(db, tenant, "checkpoint", key, ORDERS, now, ttl + 100)
    insert(db, tenant, "fact", key, TEA, now, ttl)
    return db


def check_last_visible(last_visible, rng=None):
    if not callable(last_visible):
        raise NotYet("last_visible should be a function taking db, tenant, kind, key and start.")
    cases = deadline_cases(rng)
    for now, ttl, start, tenant, key in cases:
        db = deadline_store(now, ttl, tenant, key)
        before = table(db)
        answer = last_visible(db, tenant, "fact", key, start)
        unchanged(db, before, "last_visible")
        written = f"a fact written at {now} with ttl {ttl}"
        visible_at_start = get(db, tenant, "fact", key, start) is not None
        if answer is not None and type(answer) is not int:
            raise NotYet(f"return an int tick or None, got {kind_of(answer)}.")
        if not visible_at_start:
            if answer is not None:
                raise NotYet(f"for {written}, get at start {start} already returns None, "
                             f"so the answer is None; you returned {answer}.")
            continue
        if answer is None:
            raise NotYet(f"for {written}, get at start {start} returns the fact, "
                         "but you returned None.")
        if answer < start:
            raise NotYet(f"for {written} and start {start}, you returned {answer}, "
                         "which is before start.")
        if answer > 10**10:
            raise NotYet(f"for {written}, you returned {answer}, beyond the largest tick "
                         "get accepts (10**10).")
        if get(db, tenant, "fact", key, answer) is None:
            why = ("the deadline is exclusive" if get(db, tenant, "fact", key, answer - 1)
                   else f"{answer} is past the last visible tick")
            raise NotYet(f"for {written}, get at {answer} already returns None: {why}.")
        if get(db, tenant, "fact", key, answer + 1) is not None:
            raise NotYet(f"for {written}, get at {answer + 1} still returns the fact, "
                         f"so {answer} is not the last visible tick.")
        db.close()
    ttls = [ttl for _, ttl, *_ in cases]
    return (f"on {len(cases)} fresh stores with ttls from {min(ttls)} to {max(ttls)}, you found the last "
            "visible tick each time, said None when the fact was already hidden, "
            "and changed no row.")


# ---------------------------------------------------------------- 2.2 read_state

STATE_ROWS = [("harbour", "fact", "rope", 100, 5), ("orchard", "checkpoint", "run-a", 100, 60),
              ("orchard", "fact", "tea", 100, 10)]
STATES = [
    (("orchard", "fact", "tea", 105), "visible"),
    (("orchard", "fact", "tea", 109), "visible"),
    (("orchard", "fact", "tea", 110), "expired"),
    (("orchard", "fact", "tea", 5000), "expired"),
    (("orchard", "fact", "coffee", 105), "absent"),
    (("harbour", "fact", "tea", 105), "absent"),
    (("orchard", "checkpoint", "tea", 105), "absent"),
    (("orchard", "checkpoint", "run-a", 170), "expired"),
    (("harbour", "fact", "rope", 104), "visible"),
    (("harbour", "fact", "rope", 105), "expired"),
    (("orchard", "fact", "rope", 101), "absent"),
    (("orchard", "fact", "tea", 50), "visible"),
]


def state_store(rows):
    db = connect()
    for tenant, kind, key, now, ttl in rows:
        insert(db, tenant, kind, key, value_for(kind), now, ttl)
    return db


def state_of(rows, tenant, kind, key, now):
    """What read_state should say, from the rows as they were written."""
    for row in rows:
        if row[:3] == (tenant, kind, key):
            return "visible" if row[3] + row[4] > now else "expired"
    return "absent"


def random_states(rng):
    """Rows of a random store, and questions about them: at their deadlines, around them,
    and about identities that differ from a row in one part only."""
    rows, seen = [], set()
    while len(rows) < 6:
        row = (rng.choice(TENANTS), rng.choice(["fact", "checkpoint"]), rng.choice(KEYS),
               rng.randint(1000, 10**6), rng.randint(1, 500))
        if row[:3] not in seen:
            seen.add(row[:3])
            rows.append(row)
    questions = []
    for tenant, kind, key, now, ttl in rows:
        for tick in (now + ttl - 1, now + ttl, now + rng.randint(0, 2 * ttl)):
            questions.append((tenant, kind, key, tick))
        other = (rng.choice(TENANTS), kind, key, now)
        questions.append(other)
    return rows, [(q, state_of(rows, *q)) for q in questions]


class Watched:
    """A connection that keeps the text of every statement it is given, and runs it as usual."""

    def __init__(self, db):
        self.db = db
        self.statements = []
        self.bound = []  # (sql, the values bound to its placeholders)

    def execute(self, sql, *parameters):
        self.statements.append(sql)
        given = parameters[0] if parameters else ()
        self.bound.append((sql, list(given.values()) if isinstance(given, dict) else list(given)))
        return self.db.execute(sql, *parameters)

    def cursor(self):
        cursor = Watched(self.db.cursor())
        cursor.statements, cursor.bound = self.statements, self.bound  # a cursor's count too
        return cursor

    def __getattr__(self, name):
        return getattr(self.db, name)


def pasted(statements, values):
    """The first value that appears literally in a statement's SQL text, if any."""
    for sql in statements:
        for value in values:
            if re.search(rf"(?<![\w-]){re.escape(str(value))}(?![\w-])", sql):
                return value
    return None


def check_read_state(read_state, rng=None):
    if not callable(read_state):
        raise NotYet("read_state should be a function taking db, tenant, kind, key and now.")
    stores = [(STATE_ROWS, STATES)] + ([random_states(rng) for _ in range(2)] if rng else [])
    for rows, questions in stores:
        ask_store(read_state, rows, questions)
    asked = sum(len(questions) for _, questions in stores)
    return (f"all {asked} questions answered as the store sees them, including the "
            "deadline tick itself, other tenants and kinds, and an earlier clock.")


def ask_store(read_state, rows, questions):
    db = state_store(rows)
    before, unbound = table(db), False
    for (tenant, kind, key, now), expected in questions:
        watched = Watched(db)
        answer = read_state(watched, tenant, kind, key, now)
        unchanged(db, before, "read_state")
        value = pasted(watched.statements, (tenant, kind, key, now))
        if value is not None:
            raise NotYet(f"your SQL text contains the value {value!r} itself; pass every value "
                         "as a ? placeholder with a tuple of parameters, as get does.")
        if answer not in ("visible", "expired", "absent") or type(answer) is not str:
            got = repr(answer) if isinstance(answer, str) else kind_of(answer)
            raise NotYet(f"return 'visible', 'expired' or 'absent', got {got}.")
        if answer != expected:
            record = get(db, tenant, kind, key, now)
            physical = db.execute("SELECT expires FROM records WHERE tenant=? AND kind=? AND key=?",
                                  (tenant, kind, key)).fetchone()
            seen = "returns the record" if record is not None else "returns None"
            held = "has no such row" if physical is None else f"holds its row (expires {physical[0]})"
            raise NotYet(f"read_state(db, {tenant!r}, {kind!r}, {key!r}, {now}) gave {answer!r}, "
                         f"but get {seen} and the table {held}, so the answer is {expected!r}.")
        unbound = unbound or any("records" in sql.lower() and not all(v in values for v in (tenant, kind, key))
                                 for sql, values in watched.bound)
    if unbound:  # right answers, but a value reached the SQL some other way than a placeholder
        raise NotYet("a statement of yours reads records without binding the tenant, kind and "
                     "key as ? parameters; pass them in a tuple, as get does.")
    db.close()


# ---------------------------------------------------------------- 2.3 predict

CALLS = [("a", 104, "orchard"), ("b", 105, "orchard"), ("c", 102, "orchard"),
         ("d", 102, "harbour"), ("e", 300, "orchard")]
# The rule each entry's line depends on, said without the entry's name or its value, so that a
# wrong prediction learns which rule it broke, never the answer.
RULES = {
    "a": "a record get returns is a new dict of your own: a change you make to it shows in that "
         "dict, and nowhere else",
    "b": "the deadline is exclusive: from the tick now + ttl on, get returns None",
    "c": "a change to a returned record never reaches the database, so a later get reads the "
         "stored record, deadline and all",
    "d": "get reads one tenant's records only: another tenant's record is never returned",
    "e": "only a successful write moves a deadline; once now has reached the stored one, get "
         "returns None",
}
def run_sequence():
    """The chapter's sequence, run for real; the list its last line prints."""
    db = connect()
    insert(db, "orchard", "fact", "tea", TEA, now=100, ttl=5)
    results = {}
    for name, now, tenant in CALLS:
        results[name] = get(db, tenant, "fact", "tea", now)
        if name == "a":
            results["a"]["expires"] = 500
    db.close()
    return [None if r is None else r["expires"] for r in results.values()]


def well_formed(predicted):
    """A prediction the sequence can be compared with: five ints or Nones."""
    if not isinstance(predicted, (list, tuple)) or len(predicted) != len(CALLS):
        raise NotYet("predicted should be a list of five entries, one for each of a to e.")
    for (name, *_), guess in zip(CALLS, predicted):
        if guess is not None and type(guess) is not int:
            raise NotYet(f"each entry is what its line prints, an int or None; the entry for "
                         f"{name} is {kind_of(guess)}.")


def mismatches(guesses, actual):
    """The entries of a prediction that differ from what the sequence prints, in order."""
    return [name for (name, *_), value, guess in zip(CALLS, actual, guesses)
            if guess != value or type(guess) is not type(value)]


def check_prediction(predicted, rng=None):
    well_formed(predicted)
    wrong = mismatches(predicted, run_sequence())
    if wrong:
        count = f"{len(wrong)} of {len(CALLS)} entries " + ("is" if len(wrong) == 1 else "are")
        raise NotYet(f"{count} not what the sequence prints. The first rule your list breaks: "
                     f"{RULES[wrong[0]]}.")
    return ("all five match: a is a copy you changed, 105 is already hidden, an earlier tick "
            "sees the row again, and another tenant sees nothing.")


def show_run(predicted, show=True):
    """The sequence, run for real, printed under the learner's prediction (with show=False,
    only the prediction's form is checked)."""
    well_formed(predicted)
    if not show:
        return
    print(f"you predicted:      {list(predicted)}")
    print(f"the sequence shows: {run_sequence()}")
