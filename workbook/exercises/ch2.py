"""Chapter 2 exercises: the exclusive deadline, visible versus present, predicting get."""
import re

from workbook.exercises import Exercise, NotYet
from workbook.records import connect, get
from workbook.validation import kind_of, payload

TEA = {"schema": 1, "text": "Fictional team prefers green tea.",
       "source": "workshop-note-2", "reviewed": False}
ORDERS = {"schema": 1, "step": 1, "items": ["collected"]}


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


def table(db):
    return db.execute("SELECT * FROM records ORDER BY tenant, kind, key").fetchall()


def unchanged(db, before, name):
    if table(db) != before:
        raise NotYet(f"{name} changed the records table; a read helper must only read.")


# ---------------------------------------------------------------- 2.1 last_visible

# (written at, ttl, start): the fact orchard/fact/tea, beside decoys with the same key.
DEADLINES = [(100, 10, 100), (100, 1, 100), (250, 37, 260), (0, 600, 5),
             (1000, 3600, 1000), (100, 10, 110), (100, 10, 500)]


def deadline_store(now, ttl):
    db = connect()
    insert(db, "harbour", "fact", "tea", TEA, now, ttl + 50)
    insert(db, "orchard", "checkpoint", "tea", ORDERS, now, ttl + 100)
    insert(db, "orchard", "fact", "tea", TEA, now, ttl)
    return db


def check_last_visible(last_visible):
    if not callable(last_visible):
        raise NotYet("last_visible should be a function taking db, tenant, kind, key and start.")
    for now, ttl, start in DEADLINES:
        db = deadline_store(now, ttl)
        before = table(db)
        answer = last_visible(db, "orchard", "fact", "tea", start)
        unchanged(db, before, "last_visible")
        written = f"a fact written at {now} with ttl {ttl}"
        visible_at_start = get(db, "orchard", "fact", "tea", start) is not None
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
        if get(db, "orchard", "fact", "tea", answer) is None:
            why = ("the deadline is exclusive" if get(db, "orchard", "fact", "tea", answer - 1)
                   else f"{answer} is past the last visible tick")
            raise NotYet(f"for {written}, get at {answer} already returns None: {why}.")
        if get(db, "orchard", "fact", "tea", answer + 1) is not None:
            raise NotYet(f"for {written}, get at {answer + 1} still returns the fact, "
                         f"so {answer} is not the last visible tick.")
        db.close()
    return (f"on {len(DEADLINES)} fresh stores with ttls from 1 to 3600, you found the last "
            "visible tick each time, said None when the fact was already hidden, "
            "and changed no row.")


# ---------------------------------------------------------------- 2.2 read_state

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


def state_store():
    db = connect()
    insert(db, "harbour", "fact", "rope", TEA, 100, 5)
    insert(db, "orchard", "checkpoint", "run-a", ORDERS, 100, 60)
    insert(db, "orchard", "fact", "tea", TEA, 100, 10)
    return db


class Watched:
    """A connection that keeps the text of every statement it is given, and runs it as usual."""

    def __init__(self, db):
        self.db = db
        self.statements = []

    def execute(self, sql, *parameters):
        self.statements.append(sql)
        return self.db.execute(sql, *parameters)

    def cursor(self):
        cursor = Watched(self.db.cursor())
        cursor.statements = self.statements  # one list: a cursor's statements count too
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


def check_read_state(read_state):
    if not callable(read_state):
        raise NotYet("read_state should be a function taking db, tenant, kind, key and now.")
    db = state_store()
    before = table(db)
    for (tenant, kind, key, now), expected in STATES:
        watched = Watched(db)
        answer = read_state(watched, tenant, kind, key, now)
        unchanged(db, before, "read_state")
        value = pasted(watched.statements, (tenant, kind, key, now))
        if value is not None:
            raise NotYet(f"your SQL text contains the value {value!r} itself; pass every value "
                         "as a ? placeholder with a tuple of parameters, as get does.")
        if answer not in ("visible", "expired", "absent"):
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
    db.close()
    return (f"all {len(STATES)} questions answered as the store sees them, including the "
            "deadline tick itself, other tenants and kinds, and an earlier clock.")


# ---------------------------------------------------------------- 2.3 predict

CALLS = [("a", 104, "orchard"), ("b", 105, "orchard"), ("c", 102, "orchard"),
         ("d", 102, "harbour"), ("e", 300, "orchard")]
REASONS = {
    "a": "a is your own copy, so a['expires'] = 500 changed it, and only it",
    "b": "the fact expires at 105 and the deadline is exclusive",
    "c": "102 is before the deadline, and the 500 in a never reached the database",
    "d": "tenant harbour has no fact called tea",
    "e": "300 is past the deadline of 105; the 500 lived only in a's copy",
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


def check_prediction(predicted):
    if not isinstance(predicted, (list, tuple)) or len(predicted) != len(CALLS):
        raise NotYet("predicted should be a list of five entries, one for each of a to e.")
    for (name, now, tenant), actual, guess in zip(CALLS, run_sequence(), predicted):
        if guess != actual or type(guess) is not type(actual):
            raise NotYet(f"{name} prints as {actual}, not {guess!r}: {REASONS[name]}.")
    return ("all five match: a is a copy you changed, 105 is already hidden, an earlier tick "
            "sees the row again, and another tenant sees nothing.")


q1 = Exercise(
    "2.1", "Write last_visible(db, tenant, kind, key, start): the last tick get still returns "
    "the record.", check_last_visible,
    hints=["get returns the record's expires; the query keeps a row while expires > now.",
           "If get at start returns None, return None; otherwise the answer is one less than "
           "the expires it returned."])

q2 = Exercise(
    "2.2", "Write read_state(db, tenant, kind, key, now) returning 'visible', 'expired' or "
    "'absent'.", check_read_state,
    hints=["Ask get first: if it returns the record, the answer is 'visible'.",
           "Otherwise SELECT from records by tenant, kind and key with ? placeholders and no "
           "condition on expires: a row means 'expired', no row means 'absent'."])

def show_run(predicted):
    """The sequence, run for real, printed under the learner's prediction."""
    print(f"you predicted:      {predicted}")
    print(f"the sequence shows: {run_sequence()}")


q3 = Exercise(
    "2.3", "Predict the list the sequence's last line prints.", check_prediction,
    reveal=show_run,
    hints=["The fact is written at 100 with ttl 5, so expires is 105; get keeps it while "
           "expires > now.",
           "a is a dict that belongs to you: changing it never touches the database."])
