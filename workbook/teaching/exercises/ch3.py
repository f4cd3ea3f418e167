"""Chapter 3 exercises: a worker step that survives a concurrent writer, predicting put, fresh
creation. Their checks: checks/ch3.py."""
from workbook.teaching.exercises import Exercise, InChecks

__all__ = ["q1", "q2", "q3", "show_steps"]


class Runaway(BaseException):
    """Raised into the learner's loop when it never stops; a BaseException so `except Exception` lets it out."""


START = {"schema": 1, "step": 0, "items": []}


def plan(n):
    return {"schema": 1, "text": f"Fictional plan, draft {n}.", "source": "quiz", "reviewed": False}


# Exercise 3.2's puts on one fresh store: tenant, kind, key, value (as shown), expected, now, ttl.
STEPS = [
    ("orchard", "fact", "plan", "plan(1)", None, 100, 10),
    ("orchard", "fact", "plan", "plan(2)", None, 101, 10),
    ("orchard", "checkpoint", "plan", "START", None, 101, 10),
    ("orchard", "fact", "plan", "plan(3)", 1, 102, 10),
    ("orchard", "fact", "plan", "plan(4)", 1, 103, 10),
    ("harbour", "fact", "plan", "plan(5)", 3, 103, 10),
    ("harbour", "fact", "plan", "plan(6)", None, 104, 10),
    ("orchard", "checkpoint", "plan", "START", 2, 111, 10),
    ("orchard", "fact", "plan", "plan(7)", 3, 111, 10),
]


def show_steps():
    """Print the puts of Exercise 3.2, numbered, as calls on one fresh store."""
    print(f"START = {START}")
    print("plan(n) = a valid fact whose text mentions draft n")
    for number, (tenant, kind, key, value, expected, now, ttl) in enumerate(STEPS, 1):
        print(f"{number}. put(db, {tenant!r}, {kind!r}, {key!r}, {value}, "
              f"expected={expected}, now={now}, ttl={ttl})")


# ---------------------------------------------------------------- the exercises

q1 = Exercise(
    "3.1", "Write increment(db, now) that adds one to the visits fact without losing a "
           "concurrent update.", InChecks("ch3", "check_increment"),
    hints=["Read with get, compute the new count from the value you read, and put it with the "
           "revision you read as expected.",
           "One attempt is a read, a count and a put; a Conflict from the put means another "
           "worker wrote first, so the next attempt starts again from a fresh read. Make a few "
           "attempts, not endless ones, and raise when every one of them lost."])

q2 = Exercise(
    "3.2", "Predict the outcome of each put in show_steps().", InChecks("ch3", "check_predictions"),
    reveal=InChecks("ch3", "show_outcomes"),
    hints=["Three questions for each put: does a physical row exist for this exact tenant, kind "
           "and key? Has its deadline (now+ttl of its last write) passed? Does expected equal its "
           "revision (None when there is no row)?",
           "Only a successful put takes a number from the sequence, which every tenant, kind and "
           "key share; a Conflict takes none."])

q3 = Exercise(
    "3.3", "Write create_fresh that purges an expired row of one identity, creates it, and "
           "refuses a live one.", InChecks("ch3", "check_create_fresh"),
    hints=["A DELETE whose WHERE names tenant, kind and key, and also `expires<=?` with now, "
           "removes the row only when it has expired.",
           "Then put with expected=None: it creates when the row is gone, and raises Conflict "
           "when a live row is still there."])
