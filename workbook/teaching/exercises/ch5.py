"""Chapter 5 exercises: predict a timeline, build a hidden-but-present gap, send at most once.
Their checks: checks/ch5.py."""
import pandas as pd

from workbook.teaching.exercises import Exercise, InChecks
from workbook.teaching.timeline import Forget, Get, Purge, Put, describe, fact, styled


def table(scenario, caption="The scenario's operations, in the order they run"):
    """A scenario as a small table under a caption: each operation's time and what it does (never
    a value), left-aligned and without an index, so that it reads down the page as the scenario
    does."""
    return styled(pd.DataFrame([(op.time, describe(op)) for op in scenario],
                               columns=["time", "operation"]), caption)


# ---------------------------------------------------------------- 5.1 predict a timeline

NOTE = ("orchard", "fact", "note")
PREDICT = [
    Put(100, *NOTE, fact(), expected=None, ttl=5),
    Get(103, *NOTE),
    Put(104, *NOTE, fact(), ttl=5),
    Get(109, *NOTE),
    Purge(110, "orchard"),
    Put(111, *NOTE, fact(), expected=None, ttl=4),
    Forget(113, *NOTE),
]

# ---------------------------------------------------------------- 5.2 a hidden-but-present gap

GAP = 3

# ---------------------------------------------------------------- 5.3 send at most once


class SimulatedCrash(BaseException):
    """The process dies here. A BaseException, so `except Exception` cannot swallow it."""


# ---------------------------------------------------------------- the exercises

q1 = Exercise(
    "5.1", "Predict the visible intervals of PREDICT as a list of (start, end) tuples.",
    InChecks("ch5", "check_prediction"), reveal=InChecks("ch5", "draw_run"),
    hints=["An interval [start, end) starts with a successful put and ends at the first tick "
           "get returns None. A put with expected 'current' rewrites the note and sets a new "
           "deadline, now + ttl.",
           "Two puts succeed before the purge and one after it. Which event ends the second "
           "interval first: its deadline or the forget?"])

q2 = Exercise(
    "5.2", f"Write a scenario in which a fact is present but hidden for exactly {GAP} ticks "
    "before a purge removes it.", InChecks("ch5", "check_gap"),
    hints=["A fact written at now with ttl t is hidden from now + t on; it stays present until "
           "a purge at or after that tick.",
           "Put(100, 'orchard', 'fact', 'gap', fact(), expected=None, ttl=5) is hidden from 105. "
           "When must the purge come?"])

q3 = Exercise(
    "5.3", "Write send_once(db, mailer, now): record the intent in the checkpoint before the "
    "send, so that no retry after a crash sends again.", InChecks("ch5", "check_send_once"),
    hints=["Three states: step 0 (nothing done), step 1 (intent recorded, outcome unknown), "
           "step 2 (send confirmed). Only step 0 may lead to a send.",
           "At step 0: put step 1, then call mailer.send, then put step 2 with the revision the "
           "first put returned. At step 1 or 2, return without sending or writing."])
