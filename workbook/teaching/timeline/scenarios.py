"""Scenarios: timed operations on the store, and the three the chapters watch."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Put:
    """Write ``value`` at ``time``; it stays visible until ``time + ttl``.

    ``expected`` is None (create only), an exact revision, or "current": the
    revision ``get`` returns at that moment, as ``workbook.demo.advance`` does
    (None when ``get`` returns None).
    """
    time: int
    tenant: str
    kind: str
    key: str
    value: dict = field(repr=False)  # a fact's text never appears in a repr
    expected: object = "current"
    ttl: int = 60


@dataclass(frozen=True)
class Get:
    """Read one identity at ``time``; the outcome is its revision or None."""
    time: int
    tenant: str
    kind: str
    key: str


@dataclass(frozen=True)
class Forget:
    """Delete one identity if its revision is still ``revision``.

    ``revision`` is an exact revision or "current": the one ``get`` returns at
    that moment.
    """
    time: int
    tenant: str
    kind: str
    key: str
    revision: object = "current"


@dataclass(frozen=True)
class Purge:
    """Delete every row of ``tenant`` whose deadline is ``time`` or earlier."""
    time: int
    tenant: str


@dataclass(frozen=True)
class Reopen:
    """Close the database file and connect to it again."""
    time: int


@dataclass(frozen=True)
class Clock:
    """Set the clock to ``time`` and look; nothing is written.

    A Clock earlier than the operation before it moves the clock backwards.
    Add one at the end of a scenario to watch further along the time axis.
    """
    time: int


OPERATIONS = (Put, Get, Forget, Purge, Reopen, Clock)


def checkpoint(step):
    """A valid checkpoint value at ``step`` 0, 1 or 2, with the demo's items."""
    return {"schema": 1, "step": step, "items": ["collected", "drafted"][:step]}


def fact(text="Fictional team likes checklists.", source="workshop-note-1"):
    """A valid, fictional, unreviewed fact value."""
    return {"schema": 1, "text": text, "source": source, "reviewed": False}


def demo_scenario(fact_ttl=5, checkpoint_ttl=60):
    """The specification's demonstration (``workbook.demo.main``) plus a read at 107.

    Each "current" Put is one ``advance``: it reads the checkpoint and writes
    the next step with the revision it read. The Get at 103 is the advance that
    finds step 2 and writes nothing; the Put at 103 expecting 1 is the stale write.
    """
    run = ("orchard", "checkpoint", "run-a")
    preference = ("orchard", "fact", "preference")
    return [
        Put(100, *run, checkpoint(0), expected=None, ttl=checkpoint_ttl),
        Put(101, *run, checkpoint(1), ttl=checkpoint_ttl),
        Reopen(102),
        Get(102, *run),
        Put(102, *run, checkpoint(2), ttl=checkpoint_ttl),
        Get(103, *run),
        Put(103, *run, checkpoint(0), expected=1, ttl=checkpoint_ttl),
        Put(103, *preference, fact(), expected=None, ttl=fact_ttl),
        Get(104, "harbour", "fact", "preference"),
        Get(107, *preference),
        Get(108, *preference),
        Purge(108, "orchard"),
        Forget(108, *run),
    ]


def late_purge_scenario():
    """The fact expires at 108 but is purged only at 115: a wide hidden-but-present gap.

    The create at 110 is rejected because the expired row is still there.
    """
    preference = ("orchard", "fact", "preference")
    return [
        Put(103, *preference, fact(), expected=None, ttl=5),
        Get(105, *preference),
        Get(108, *preference),
        Put(110, *preference, fact(), expected=None, ttl=5),
        Get(112, *preference),
        Purge(115, "orchard"),
    ]


def clock_backwards_scenario():
    """The fact expires at 105; at 107 the clock is set back to 104 and it is visible again.

    The row was never purged, so ``get`` at 104 finds it before its deadline.
    """
    preference = ("orchard", "fact", "preference")
    return [
        Put(100, *preference, fact(), expected=None, ttl=5),
        Get(103, *preference),
        Get(107, *preference),
        Clock(104),
        Get(104, *preference),
        Get(106, *preference),
        Purge(106, "orchard"),
    ]


SCENARIOS = {
    "spec demo": demo_scenario,
    "late purge": late_purge_scenario,
    "clock moves backwards": clock_backwards_scenario,
}
