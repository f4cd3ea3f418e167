"""Run a scenario against a fresh SQLite file and record what a learner could see after each step."""

from dataclasses import dataclass, replace
from pathlib import Path
from tempfile import TemporaryDirectory

import pandas as pd

from workbook.store import Conflict, connect, forget, get, identity, integer, purge, put
from workbook.teaching.timeline.scenarios import OPERATIONS, Clock, Forget, Get, Purge, Put, Reopen


COLUMNS = ["time", "operation", "tenant", "kind", "key", "revision",
           "expires", "present", "visible", "outcome"]


@dataclass(frozen=True, eq=False, repr=False)
class Run:
    """One observed scenario.

    ``frame`` is the tidy table: one row per operation and identity, indexed by
    ``order`` (the operation's position in the scenario, so ``frame.loc[[3]]``
    is every identity right after operation 3; ``at(run, 108)`` is every row
    observed at tick 108). ``operations`` are the operations
    as performed, with "current" replaced by the revision used. ``returned``
    holds what each operation returned or raised, ``records`` what ``get``
    returned per identity after it, ``counters`` the revision counter after it.
    """
    operations: tuple
    frame: pd.DataFrame
    returned: tuple
    records: tuple
    counters: tuple

    def __repr__(self):
        return (f"<Run of {len(self.operations)} operations; "
                f"see .frame, intervals(run), plot_timeline(run)>")


def lane(tenant, kind, key):
    """Name an identity the way the workbook writes it: orchard / fact / preference."""
    return f"{tenant} / {kind} / {key}"


def describe(operation):
    """The operation column: a verb, then what it acted on, e.g. "purge orchard"."""
    match operation:
        case Put():
            return (f"put {lane(operation.tenant, operation.kind, operation.key)}"
                    f" expected {operation.expected} ttl {operation.ttl}")
        case Get():
            return f"get {lane(operation.tenant, operation.kind, operation.key)}"
        case Forget():
            return (f"forget {lane(operation.tenant, operation.kind, operation.key)}"
                    f" revision {operation.revision}")
        case Purge():
            return f"purge {operation.tenant}"
        case Reopen():
            return "reopen"
        case Clock():
            return "clock"


def outcome(operation, result):
    """Say what an operation returned or raised, never a value's contents."""
    if isinstance(result, Exception):
        return type(result).__name__
    match operation:
        case Put():
            return f"revision {result}"
        case Get():
            return "None" if result is None else f"revision {result['revision']}"
        case Purge():
            return f"{result} removed"
    return str(result)


def identities(scenario):
    """Every valid identity the scenario names, in order of first mention."""
    found = []
    for operation in scenario:
        if isinstance(operation, (Put, Get, Forget)):
            name = (operation.tenant, operation.kind, operation.key)
            try:
                identity(*name)
            except ValueError:
                continue  # the store rejects it; it gets an outcome but no lane
            if name not in found:
                found.append(name)
    return found


def checked(scenario):
    """The scenario as a tuple, after checking each item is an operation at a valid time."""
    scenario = tuple(scenario)
    for position, operation in enumerate(scenario):
        if not isinstance(operation, OPERATIONS):
            raise ValueError(f"scenario item {position} must be one of "
                             f"{', '.join(kind.__name__ for kind in OPERATIONS)}, "
                             f"got {type(operation).__name__}")
        integer(operation.time, 0, 10**10, name=f"scenario item {position} time")
    return scenario


def seen_revision(db, operation):
    """The revision ``get`` returns for the operation's identity now, or None."""
    record = get(db, operation.tenant, operation.kind, operation.key, operation.time)
    return None if record is None else record["revision"]


def resolved(db, operation):
    """Replace "current" with the revision ``get`` returns at the operation's time."""
    if isinstance(operation, Put) and operation.expected == "current":
        return replace(operation, expected=seen_revision(db, operation))
    if isinstance(operation, Forget) and operation.revision == "current":
        return replace(operation, revision=seen_revision(db, operation))
    return operation


def call(db, operation):
    """Call the store function the operation names and return its result."""
    match operation:
        case Put(time, tenant, kind, key, value, expected, ttl):
            return put(db, tenant, kind, key, value, expected, time, ttl)
        case Get(time, tenant, kind, key):
            return get(db, tenant, kind, key, time)
        case Forget(time, tenant, kind, key, revision):
            return forget(db, tenant, kind, key, revision)
        case Purge(time, tenant):
            return purge(db, tenant, time)


def perform(db, path, operation):
    """Run one operation; return the connection to use next, the operation as run, its result."""
    if isinstance(operation, Reopen):
        db.close()
        return connect(path), operation, "reopened"
    if isinstance(operation, Clock):
        return db, operation, "clock set"
    try:
        operation = resolved(db, operation)
        return db, operation, call(db, operation)
    except (Conflict, ValueError) as error:  # the store said no: that is an observation
        return db, operation, error


def physical_rows(db):
    """What ``records`` holds, as {(tenant, kind, key): (revision, expires)}; never the body."""
    rows = db.execute("SELECT tenant, kind, key, revision, expires FROM records")
    return {(t, k, key): (revision, expires) for t, k, key, revision, expires in rows}


def counter(db):
    """The global revision counter in ``sequence``."""
    return db.execute("SELECT value FROM sequence WHERE singleton=1").fetchone()[0]


def observe(scenario):
    """Run a scenario against a fresh SQLite file and record what a learner could see.

    After every operation, for every identity the scenario names, the frame
    says what ``get`` returns at that operation's time (``visible``) and
    whether ``records`` physically holds a row (``present``, with that row's
    ``revision`` and ``expires``). ``outcome`` is what the operation itself
    returned or raised. The file lives in a temporary directory that is
    removed afterwards.
    """
    scenario = checked(scenario)
    names = identities(scenario)
    if not names:
        raise ValueError("a scenario needs at least one Put, Get or Forget of a valid "
                         "identity, so that there is a lane to watch")
    performed, returned, records, counters, rows = [], [], [], [], []
    with TemporaryDirectory() as folder:
        path = Path(folder) / "timeline.db"
        db = connect(path)
        try:
            for order, operation in enumerate(scenario):
                db, operation, result = perform(db, path, operation)
                stored = physical_rows(db)
                seen = {name: get(db, *name, operation.time) for name in names}
                performed.append(operation)
                returned.append(result)
                records.append(seen)
                counters.append(counter(db))
                for name in names:
                    revision, expires = stored.get(name, (None, None))
                    rows.append({
                        "order": order, "time": operation.time,
                        "operation": describe(operation),
                        "tenant": name[0], "kind": name[1], "key": name[2],
                        "revision": revision, "expires": expires,
                        "present": name in stored, "visible": seen[name] is not None,
                        "outcome": outcome(operation, result)})
        finally:
            db.close()
    frame = pd.DataFrame(rows, columns=["order", *COLUMNS]).set_index("order")
    frame = frame.astype({"time": "int64", "revision": "Int64", "expires": "Int64",
                          "present": "bool", "visible": "bool"})
    return Run(tuple(performed), frame, tuple(returned), tuple(records), tuple(counters))


def frame_of(observed):
    """Accept a Run or its frame; return the frame."""
    return observed.frame if isinstance(observed, Run) else observed


def at(observed, time):
    """The frame's rows for every operation at ``time``, in the order they ran."""
    frame = frame_of(observed)
    return frame[frame["time"] == time]


def verb(operation):
    """The first word of an operation description: put, get, forget, purge, reopen, clock."""
    return operation.split()[0]


def acted_on(row):
    """True when the row's identity is what its operation named (purge: the whole tenant)."""
    words = row["operation"].split()
    if words[0] in ("put", "get", "forget"):
        return (words[1], words[3], words[5]) == (row["tenant"], row["kind"], row["key"])
    if words[0] == "purge":
        return words[1] == row["tenant"]
    return False


def marker_kind(row):
    """Which marker an operation gets on a lane it acted on."""
    acting = verb(row["operation"])
    if acting == "put":
        return "write" if row["outcome"].startswith("revision") else "rejected-write"
    if acting == "get":
        return "read-none" if row["outcome"] == "None" else "read"
    return acting


def lane_names(frame):
    """The identities in the frame, in order of first mention."""
    return list(dict.fromkeys(zip(frame["tenant"], frame["kind"], frame["key"])))
