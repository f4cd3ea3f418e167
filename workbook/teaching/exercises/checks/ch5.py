"""Checks of chapter 5's exercises: predict a timeline, build a hidden-but-present gap, send at
most once."""
import tempfile
from pathlib import Path

from workbook.teaching.exercises import NotYet
from workbook.teaching.exercises.ch5 import GAP, PREDICT, SimulatedCrash
from workbook.store import connect, get, put
from workbook.teaching.timeline import Purge, intervals, observe, plot_timeline


def visible_spans(scenario):
    """The visible intervals the run shows (a scenario with one lane, like PREDICT)."""
    spans = intervals(observe(scenario))
    return spans[spans["band"] == "visible"]


# ---------------------------------------------------------------- 5.1 predict a timeline

WHY_IT_ENDS = {
    "expiry": "it ends at the deadline that the latest successful put set (its now + ttl), "
              "the first tick at which get returns None",
    "forget": "it ends when forget removes the row: a row that is not present cannot be visible",
    "purge": "it ends when purge removes the row",
}


def as_pairs(predicted):
    if not isinstance(predicted, (list, tuple)):
        raise NotYet("visible should be a list of (start, end) tuples, one per visible interval.")
    pairs = []
    for item in predicted:
        if (not isinstance(item, (list, tuple)) or len(item) != 2
                or not all(type(t) is int for t in item)):
            raise NotYet(f"each entry should be a (start, end) tuple of two ints, got {item!r}.")
        pairs.append(tuple(item))
    return pairs


def check_prediction(predicted, rng=None):
    pairs = as_pairs(predicted)
    spans = visible_spans(PREDICT)
    actual = list(zip(spans["start"], spans["end"]))
    if len(pairs) != len(actual):
        raise NotYet(f"the run shows {len(actual)} separate visible intervals, and you wrote "
                     f"{len(pairs)}: count the times a put made the note visible after it was "
                     "hidden or gone.")
    for number, ((start, end), span) in enumerate(zip(pairs, spans.itertuples()), start=1):
        if start != span.start:
            raise NotYet(f"interval {number} starts at {start} in your answer, which is not "
                         "what the run shows: an interval starts with the successful put that "
                         "made the note visible.")
        if end != span.end:
            extra = ""
            if span.ends == "expiry" and end == span.end - 1:
                extra = " (you wrote the last visible tick; the end is the first hidden one)"
            elif span.ends == "expiry" and end < span.end:
                extra = " (did a later put set a new deadline?)"
            raise NotYet(f"interval {number} ends at {end} in your answer, which is not what the "
                         f"run shows: {WHY_IT_ENDS[span.ends]}{extra}.")
    return (f"the run shows exactly {actual}: the rewrite at 104 moved the deadline to 109, and "
            "the forget at 113 ended the second interval before its deadline.")


# ---------------------------------------------------------------- 5.2 a hidden-but-present gap

MOST_OPERATIONS = 50  # a gap needs a few; observing costs time with the square of the count


def check_gap(scenario, rng=None):
    if not isinstance(scenario, (list, tuple)):
        raise NotYet("the scenario should be a list of operations such as Put, Get and Purge.")
    if len(scenario) > MOST_OPERATIONS:
        raise NotYet(f"the scenario has {len(scenario)} operations; a gap needs a few, so keep it "
                     f"to {MOST_OPERATIONS} or fewer.")
    try:
        run = observe(scenario)
    except ValueError as error:
        raise NotYet(f"observe refused the scenario: {error}.") from None
    if not any(isinstance(op, Purge) for op in run.operations):
        raise NotYet("the scenario has no Purge: the gap has to end when a purge removes the row.")
    spans = intervals(run)
    facts = spans[spans["kind"] == "fact"]
    if facts.empty:
        raise NotYet("no fact was ever present: write one with Put(time, tenant, 'fact', key, "
                     "fact(), expected=None, ttl=...).")
    hidden = facts[facts["band"] == "hidden"]
    purged = hidden[hidden["ends"] == "purge"]
    if purged.empty:
        if not hidden.empty:
            span = hidden.iloc[0]
            raise NotYet(f"the fact was hidden but present from {span.start}, but no purge removed "
                         f"it (the gap ends by {span.ends}): a purge at tick t removes the rows of "
                         "its tenant whose deadline is t or earlier.")
        raise NotYet("the fact was never hidden while present: a purge at or before its deadline "
                     "either removes it the moment it expires or does not touch it.")
    span = purged.iloc[0]
    width = span.end - span.start
    if width != GAP:
        raise NotYet(f"the fact was hidden but present from {span.start} to {span.end}: {width} "
                     f"ticks, not {GAP}; the gap starts at the deadline (the put's now + ttl) and "
                     "ends at the purge.")
    return (f"get returned None from {span.start} while the row stayed in records until the "
            f"purge at {span.end}: {GAP} ticks hidden but present.")


# ---------------------------------------------------------------- 5.3 send at most once

RUN = ("orchard", "checkpoint", "notify")
START = {"schema": 1, "step": 0, "items": []}
TTL = 60
RETRIES = 2


class Plan:
    """Numbers every commit and send as events; raises SimulatedCrash at event ``crash_at``."""

    def __init__(self, crash_at=None):
        self.crash_at = crash_at
        self.commits = 0
        self.events = []
        self.crashed = False
        self.went_on = False  # whether the function used the database or the mailer after the crash

    def event(self, name):
        self.dead()
        self.events.append(name)
        if len(self.events) - 1 == self.crash_at:
            self.crashed = True
            raise SimulatedCrash("the process dies here")  # where, only the check knows

    def dead(self):
        """After the crash nothing runs: any write, read or send is refused (a ROLLBACK, which a
        crash does anyway, is let through)."""
        if self.crashed:
            self.went_on = True
            raise SimulatedCrash("the process died")


class Connection:
    """A real connection that reports each COMMIT to the plan after it has committed."""

    def __init__(self, db, plan):
        self._db = db
        self._plan = plan

    def execute(self, sql, *args):
        if sql.strip().upper() != "ROLLBACK":
            self._plan.dead()
        cursor = self._db.execute(sql, *args)
        if sql.strip().upper() == "COMMIT":
            self._plan.commits += 1
            self._plan.event(f"just after commit {self._plan.commits}")
        return cursor

    def __getattr__(self, name):
        if name not in ("in_transaction", "total_changes"):
            self._plan.dead()
        return getattr(self._db, name)


class Mailer:
    """A fake mail service: send only counts. Nothing leaves the process."""

    def __init__(self):
        self.plan = Plan()
        self.sent = 0

    def send(self, message):
        self.plan.event("just before the send")
        self.sent += 1
        self.plan.event("just after the send")


OWN_CRASH = ("your function raised SimulatedCrash itself; only the check's simulated crash is "
             "a crash (it comes from the mailer or the database), so let it through and never "
             "raise one of your own.")


def attempt(send_once, path, plan, mailer, now):
    """One process: open the file, run send_once, close. True if it crashed: the plan's own
    simulated crash, let through. A SimulatedCrash the plan did not raise is the answer's own,
    never evidence of a crash (the plan's record is), and NotYet says so."""
    db = connect(path)
    mailer.plan = plan
    try:
        send_once(Connection(db, plan), mailer, now)
    except SimulatedCrash:
        if not plan.crashed:
            raise NotYet(OWN_CRASH) from None
        return True
    finally:
        db.close()  # a crash inside a transaction rolls it back, as SQLite does
    return False


def run_worker(send_once, crash_at=None, start=100, retries=RETRIES):
    """Run send_once, crashing at event ``crash_at``; after a crash, retry on the same file.

    Returns the events of the first attempt, the number of sends and the final step.
    """
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "worker.db"
        db = connect(path)
        put(db, *RUN, dict(START, items=[]), None, start, TTL)
        db.close()
        plan, mailer, now = Plan(crash_at), Mailer(), start + 1
        crashed = attempt(send_once, path, plan, mailer, now)
        if plan.went_on:
            raise NotYet(f"your function went on after the simulated crash {plan.events[-1]}: "
                         "a crashed process runs nothing more, so let SimulatedCrash through "
                         "without writing or sending first.")
        if plan.crashed and not crashed:
            raise NotYet(f"your function caught the simulated crash {plan.events[-1]}; a real "
                         "crash cannot be caught, so let SimulatedCrash through.")
        for _ in range(retries if crashed else 0):
            now += 1
            try:
                attempt(send_once, path, Plan(), mailer, now)
            except NotYet:
                raise
            except Exception as error:
                raise NotYet(f"after a crash {plan.events[-1]}, the retry raised "
                             f"{type(error).__name__}: {error}.") from None
        db = connect(path)
        record = get(db, *RUN, now)
        db.close()
    return plan.events, mailer.sent, None if record is None else record["value"]["step"]


def check_send_once(send_once, rng=None):
    if not callable(send_once):
        raise NotYet("send_once should be a function taking db, mailer and now.")
    start, retries = (100, RETRIES) if rng is None else (rng.randint(100, 10**6), rng.randint(2, 3))
    events, sent, step = run_worker(send_once, None, start, retries)
    if sent != 1:
        raise NotYet(f"with no crash at all, mailer.send was called {sent} times; one run should "
                     "send exactly once.")
    if step != 2:
        raise NotYet(f"with no crash, the checkpoint ends at step {step}; after a confirmed send "
                     "it should say step 2.")
    intent_first = bool(events) and events[0].startswith("just after commit")
    lost = []
    for crash_at, point in enumerate(events):
        _, sent, step = run_worker(send_once, crash_at, start, retries)
        if sent > 1:
            why = ("the retry found the intent and sent anyway, though it cannot know whether the "
                   "first send happened, so it must not send again" if intent_first else
                   "nothing was committed before the send, so the retry found the checkpoint "
                   "unchanged: record the intent (step 1) with put before sending")
            raise NotYet(f"a crash {point}, then a retry on the reopened file: mailer.send was "
                         f"called {sent} times for one message, because {why}.")
        if sent == 0 and step == 2:
            raise NotYet(f"after a crash {point}, nothing was sent, yet the checkpoint says step 2 "
                         "(sent): record step 2 only after mailer.send has returned, and never "
                         "on a retry that did not send.")
        if sent == 0:
            lost.append(point)
    said = (f"; a crash between recording the intent and sending ({' or '.join(lost)}) leaves "
            "step 1 and no send, which is at most once, not exactly once, and only a person or "
            "the mail service's own records can settle it" if lost else "")
    return (f"{len(events)} crash points, each followed by {retries} retries on the reopened "
            f"file: never more than one send{said}.")


def draw_run(predicted, show=True):
    """PREDICT run for real and drawn as a timeline, titled with the learner's prediction (with
    show=False, only the prediction's form is checked)."""
    pairs = as_pairs(predicted)
    if not show:
        return None
    return plot_timeline(observe(PREDICT), title=f"Exercise 5.1 as it ran (you predicted {predicted})",
                         predicted=pairs)


