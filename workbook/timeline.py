"""Watch the store over time: present rows, visible records and the gap between.

A record can be PRESENT (a physical row in ``records``) without being VISIBLE
(returned by ``get``). It is visible until a deadline that no read extends, and
present until ``purge`` or ``forget`` removes it. This module shows that gap on
real runs instead of describing it.

A scenario is a list of timed operations, for example::

    scenario = [
        Put(103, "orchard", "fact", "preference", fact(), expected=None, ttl=5),
        Get(107, "orchard", "fact", "preference"),
        Get(108, "orchard", "fact", "preference"),
        Purge(115, "orchard"),
    ]
    run = observe(scenario)   # runs it against a fresh SQLite file
    run.frame                 # what get returned and what records held, after each operation
    intervals(run)            # when each row was present, visible, and hidden but present
    plot_timeline(run)        # the same story as a picture, one lane per identity

``demo_tables()`` turns the specification's demonstration into its three
chapter-5 tables, computed from such a run.
"""

import io
from dataclasses import dataclass, field, replace
from pathlib import Path
from tempfile import TemporaryDirectory

import matplotlib
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator, MultipleLocator
from pandas.io.formats.style import Styler

from workbook.store import Conflict, connect, forget, get, identity, integer, purge, put


# ---------------------------------------------------------------- scenarios

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


# ---------------------------------------------------------------- observing

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


# ---------------------------------------------------------------- intervals

INTERVAL_COLUMNS = ["tenant", "kind", "key", "pass", "band", "start", "end", "ends"]
BANDS = ("present", "visible", "hidden")


def passes(observed):
    """Number each operation's clock pass, indexed by order.

    Pass 1 starts with the first operation; a new pass starts whenever an
    operation's time is earlier than the one before it (the clock moved back).
    Within a pass, time never decreases, so intervals can be drawn on one axis.
    """
    times = frame_of(observed).groupby(level="order")["time"].first()
    return (times.diff() < 0).cumsum().rename("pass") + 1


def lane_intervals(observations, last_time, closing):
    """Present and visible intervals of one identity within one pass.

    ``observations`` are (time, verb, present, visible, expires) after each
    operation. A visible interval closes at its deadline when the next
    observation comes at or after it, else at the operation that hid it.
    Intervals still open when the pass ends close at its last time, for the
    reason ``closing``.
    """
    found = []
    present_since = visible_since = deadline = None
    for time, acting, present, visible, expires in observations:
        if visible_since is not None and deadline <= time:
            found.append(("visible", visible_since, deadline, "expiry"))
            visible_since = None
        if visible:
            visible_since = time if visible_since is None else visible_since
            deadline = expires  # a write sets a new deadline; a read never does
        elif visible_since is not None:
            found.append(("visible", visible_since, time, acting))
            visible_since = None
        if present and present_since is None:
            present_since = time
        elif not present and present_since is not None:
            found.append(("present", present_since, time, acting))
            present_since = None
    if visible_since is not None:
        found.append(("visible", visible_since, last_time, closing))
    if present_since is not None:
        found.append(("present", present_since, last_time, closing))
    return found


def hidden_intervals(found):
    """The parts of each present interval with no visible interval: hidden but present."""
    visible = sorted((start, end) for band, start, end, _ in found if band == "visible")
    hidden = []
    for band, start, end, ends in found:
        if band != "present":
            continue
        cursor = start
        for shown_from, shown_until in visible:
            if shown_until <= cursor or shown_from >= end:
                continue
            if shown_from > cursor:
                hidden.append(("hidden", cursor, shown_from, "visible again"))
            cursor = max(cursor, shown_until)
        if cursor < end:
            hidden.append(("hidden", cursor, end, ends))
    return hidden


def intervals(observed):
    """When each identity's row was present, visible, and hidden but present.

    One row per interval, ``[start, end)`` in ticks: the row holds at
    ``start`` and no longer at ``end``. ``band`` is "present" (a row in
    ``records``), "visible" (``get`` returns it) or "hidden" (present but not
    visible). ``ends`` says why it ended: "expiry" (the exclusive deadline),
    "purge", "forget", "clock moved back", or "end of run".

    Intervals are measured in ticks within a clock ``pass`` (see ``passes``).
    When the clock moves backwards the current pass ends at its last time and
    a new pass starts, so a row that was hidden can open a new visible
    interval in pass 2. The picture covers only the ticks a scenario looked
    at: add ``Clock(t)`` to look further. Intervals of zero length (a row
    written and removed at the same tick) are left out; markers still show them.
    """
    frame = frame_of(observed)
    numbers = passes(frame)
    frame = frame.assign(**{"pass": numbers.loc[frame.index].to_numpy()})
    last_times = frame.groupby("pass")["time"].max()
    final = numbers.max()
    rows = []
    for (tenant, kind, key, number), part in frame.groupby(
            ["tenant", "kind", "key", "pass"], sort=False):
        observations = zip(part["time"], part["operation"].map(verb),
                           part["present"], part["visible"], part["expires"])
        closing = "end of run" if number == final else "clock moved back"
        found = lane_intervals(observations, last_times[number], closing)
        for band, start, end, ends in found + hidden_intervals(found):
            if start < end:
                rows.append((tenant, kind, key, number, band, start, end, ends))
    table = pd.DataFrame(rows, columns=INTERVAL_COLUMNS)
    table = table.astype({"pass": "int64", "start": "int64", "end": "int64"})
    band_order = table["band"].map(BANDS.index)
    lane_order = table.groupby(["tenant", "kind", "key"], sort=False).ngroup()
    return (table.assign(_lane=lane_order, _band=band_order)
            .sort_values(["_lane", "pass", "_band", "start"], kind="stable")
            .drop(columns=["_lane", "_band"]).reset_index(drop=True))


# ---------------------------------------------------------------- demo tables

TITLES = {
    "checkpoints": "Checkpoint after each successful write",
    "visibility": "Fact visibility and physical row presence are different",
    "results": "Recovery, rejected changes and deletion results",
}
LAST_STEP = 2  # checkpoint.step runs from 0 to 2 (validation.payload)


@dataclass(frozen=True, eq=False)
class DemoTables:
    """The three chapter-5 tables; ``TITLES`` has their headings."""
    checkpoints: pd.DataFrame
    visibility: pd.DataFrame
    results: pd.DataFrame


def counted(number, noun):
    """1 fact, 0 facts, 2 rows."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def remain(number):
    return "remains" if number == 1 else "remain"


def rows_of(run, name):
    """The frame's rows for one identity, indexed by order."""
    frame = run.frame
    tenant, kind, key = name
    return frame[(frame["tenant"] == tenant) & (frame["kind"] == kind) & (frame["key"] == key)]


def first(run, test, after=-1):
    """The order of the first operation after ``after`` that passes ``test(order, operation)``."""
    for order, operation in enumerate(run.operations):
        if order > after and test(order, operation):
            return order
    raise LookupError("the demonstration is missing an operation this table needs")


def names(operation):
    return (operation.tenant, operation.kind, operation.key)


def checkpoint_table(run, name):
    """Time, Step, Revision, Expires after each successful checkpoint write."""
    rows = rows_of(run, name)
    table = []
    for order, operation in enumerate(run.operations):
        if isinstance(operation, Put) and names(operation) == name \
                and not isinstance(run.returned[order], Exception):
            table.append({"Time": operation.time,
                          "Step": run.records[order][name]["value"]["step"],
                          "Revision": run.returned[order],
                          "Expires": int(rows.loc[order, "expires"])})
    return pd.DataFrame(table, columns=["Time", "Step", "Revision", "Expires"])


def visibility_event(operation, row):
    """What happened to the fact at this operation, in the spec's words."""
    if isinstance(operation, Put):
        return "create" if operation.expected is None else "replace"
    if isinstance(operation, Get):
        return "expiry" if row["present"] and not row["visible"] else "read"
    return verb(row["operation"])


def visibility_table(run, name):
    """Event, Get result, Stored row for the fact, from its creation on."""
    rows = rows_of(run, name)
    created = first(run, lambda order, op: isinstance(op, Put)
                    and names(op) == name and op.expected is None)
    table = []
    for order, row in rows.loc[created:].iterrows():
        if not acted_on(row):
            continue
        event = visibility_event(run.operations[order], row)
        table.append({"Event": f"{row['time']}: {event}",
                      "Get result": "Visible" if row["visible"] else "Hidden",
                      "Stored row": "Present" if row["present"] else "Removed"})
    return pd.DataFrame(table, columns=["Event", "Get result", "Stored row"])


def reopen_result(run, run_name):
    reopened = first(run, lambda order, op: isinstance(op, Reopen))
    read = first(run, lambda order, op: isinstance(op, Get) and names(op) == run_name,
                 after=reopened)
    written = first(run, lambda order, op: isinstance(op, Put) and names(op) == run_name
                    and not isinstance(run.returned[order], Exception), after=read)
    survived = run.returned[read]["value"]["step"]
    advanced = run.records[written][run_name]["value"]["step"]
    return (reopened, "reopen",
            f"Step {survived} survives; advance writes step {advanced}")


def completed_read_result(run, run_name):
    def completed(order, op):
        record = run.returned[order]
        return (isinstance(op, Get) and names(op) == run_name and record is not None
                and record["value"]["step"] == LAST_STEP)
    read = first(run, completed)
    rows = rows_of(run, run_name)
    before, after = rows.loc[read - 1], rows.loc[read]
    same = ((before["revision"], before["expires"]) == (after["revision"], after["expires"])
            and run.counters[read - 1] == run.counters[read])
    record = run.returned[read]
    return (read, "completed read",
            f"Revision {record['revision']}; expiry {record['expires']} "
            f"{'unchanged' if same else 'changed'}")


def stale_write_result(run):
    def stale(order, op):
        error = run.returned[order]
        return (isinstance(op, Put) and isinstance(error, Conflict)
                and error.current is not None and error.current != error.expected)
    write = first(run, stale)
    error = run.returned[write]
    return (write, "stale write",
            f"Expected revision {error.expected} rejected; current revision {error.current}")


def other_tenant_result(run, fact_name):
    tenant = fact_name[0]
    read = first(run, lambda order, op: isinstance(op, Get) and op.tenant != tenant)
    operation = run.operations[read]
    present = rows_of(run, fact_name).loc[read, "present"]
    return (read, "other tenant",
            f"{operation.tenant.capitalize()} read returns "
            f"{outcome(operation, run.returned[read])}; {tenant.capitalize()} "
            f"{fact_name[1]} {'stays present' if present else 'is not present'}")


def purge_result(run, fact_name, run_name):
    purged = first(run, lambda order, op: isinstance(op, Purge))
    frame = run.frame
    tenant = run.operations[purged].tenant
    before, after = frame.loc[[purged - 1]], frame.loc[[purged]]
    mine = (after["tenant"] == tenant).to_numpy()
    removed = (before["present"].to_numpy() & ~after["present"].to_numpy() & mine
               & (after["kind"] == fact_name[1]).to_numpy()).sum()
    kept = (after["present"].to_numpy() & mine
            & (after["kind"] == run_name[1]).to_numpy()).sum()
    return (purged, "purge",
            f"{counted(int(removed), fact_name[1])} removed; "
            f"{counted(int(kept), run_name[1])} {remain(int(kept))}")


def forget_result(run):
    forgotten = first(run, lambda order, op: isinstance(op, Forget))
    left = int(run.frame.loc[[forgotten], "present"].sum())
    before, after = run.counters[forgotten - 1], run.counters[forgotten]
    return (forgotten, f"forget revision {run.operations[forgotten].revision}",
            f"{run.returned[forgotten]}; {counted(left, 'row')} {remain(left)}; "
            f"counter {'stays' if after == before else 'moves to'} {after}")


def results_table(run, run_name, fact_name):
    """Operation, Observed result for the demo's recovery, rejections and deletions."""
    found = sorted([reopen_result(run, run_name),
                    completed_read_result(run, run_name),
                    stale_write_result(run),
                    other_tenant_result(run, fact_name),
                    purge_result(run, fact_name, run_name),
                    forget_result(run)])
    table = [{"Operation": f"{run.operations[order].time}: {name}",
              "Observed result": text} for order, name, text in found]
    return pd.DataFrame(table, columns=["Operation", "Observed result"])


def demo_tables(fact_ttl=5, checkpoint_ttl=60):
    """Run the spec's demonstration and return its three chapter-5 tables.

    Every cell comes from the run: times, steps, revisions and deadlines from
    what the store returned and what ``records`` held. Change a ttl and the
    tables change with it.
    """
    run = observe(demo_scenario(fact_ttl, checkpoint_ttl))
    run_name = names(run.operations[0])
    fact_name = next(names(op) for op in run.operations
                     if isinstance(op, Put) and op.kind == "fact")
    return DemoTables(checkpoint_table(run, run_name),
                      visibility_table(run, fact_name),
                      results_table(run, run_name, fact_name))


class StyledTable(Styler):
    """A Styler whose notebook output is the same on every run, for nbval.

    Its HTML ids come from the caption instead of a random uuid, and its
    plain-text form is the table itself instead of a memory address.
    """

    def __repr__(self):
        return self.data.to_string(index=False)


def styled(table, caption=None):
    """A table for the notebook: no index, left-aligned text, blanks for missing values."""
    uuid = "-".join((caption or "table").lower().replace(",", "").split())
    styler = StyledTable(table, uuid=uuid).hide(axis="index").format(na_rep="")
    styler = styler.set_table_styles([
        {"selector": "th", "props": "text-align: left; padding: 4px 12px;"},
        {"selector": "td", "props": "text-align: left; padding: 4px 12px;"},
        {"selector": "caption", "props": "caption-side: top; font-weight: bold;"
                                         " text-align: left; padding-bottom: 6px;"},
    ])
    return styler.set_caption(caption) if caption else styler


def styled_demo_tables(tables):
    """The three demo tables as captioned Stylers, in the spec's order."""
    return [styled(getattr(tables, part), title) for part, title in TITLES.items()]


# ---------------------------------------------------------------- the picture

# Okabe-Ito colours; every marker also differs by shape, so grey prints work.
BLUE, SKY, GREEN, ORANGE = "#0072B2", "#56B4E9", "#009E73", "#E69F00"
VERMILLION, PURPLE, BLACK, GREY = "#D55E00", "#CC79A7", "#000000", "#666666"

MARKERS = {  # kind: (legend label, marker style)
    "write": ("write (put)", dict(marker="o", color=GREEN)),
    "rejected-write": ("put raised (Conflict or ValueError)", dict(marker="X", color=PURPLE)),
    "read": ("get returns the record", dict(marker="D", color=BLACK)),
    "read-none": ("get returns None", dict(marker="D", color="white")),
    "expiry": ("deadline (expires)", dict(marker="|", color=VERMILLION)),
    "purge": ("purge (whole tenant)", dict(marker="s", color=ORANGE)),
    "forget": ("forget", dict(marker="v", color=VERMILLION)),
}
LINES = {  # operations that touch no lane: drawn across every lane
    "reopen": ("reopen file", dict(color=GREY, linestyle="--")),
    "clock": ("clock set", dict(color=GREY, linestyle=":")),
}
PRESENT_STYLE = dict(facecolor="#D5ECF9", edgecolor=SKY, hatch="///", linewidth=1)
VISIBLE_STYLE = dict(facecolor=BLUE, edgecolor=BLUE, linewidth=1)
PRESENT_HEIGHT, VISIBLE_HEIGHT = 0.56, 0.26
SVG_SALT = "agent-memory-workbook"


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


def gid(*parts):
    """An artist id for tests and SVG: parts joined by "_", which names never contain."""
    return "_".join(str(part) for part in parts)


def draw_bands(ax, spans, lanes):
    """One presence rectangle and one visibility rectangle per interval."""
    for span in spans.itertuples(index=False):
        if span.band == "hidden":
            continue  # drawn by the presence band showing through
        name = (span.tenant, span.kind, span.key)
        height = PRESENT_HEIGHT if span.band == "present" else VISIBLE_HEIGHT
        style = PRESENT_STYLE if span.band == "present" else VISIBLE_STYLE
        y = lanes.index(name)
        ax.add_patch(Rectangle((span.start, y - height / 2), span.end - span.start, height,
                               gid=gid(span.band, *name, span.pass_, span.start),
                               zorder=1 if span.band == "present" else 2, **style))


def label_gaps(ax, spans, lanes):
    """Write "hidden but present" inside gaps wide enough to hold it."""
    for span in spans[spans["band"] == "hidden"].itertuples(index=False):
        if span.end - span.start >= 2:
            y = lanes.index((span.tenant, span.kind, span.key))
            ax.text((span.start + span.end) / 2, y + PRESENT_HEIGHT / 2 + 0.05,
                    "hidden but present", ha="center", va="top", fontsize=8,
                    color=BLACK)


def draw_markers(ax, part, spans, lanes):
    """A marker for every operation on every lane it acted on, plus each deadline."""
    used = set()
    stacked = {}
    for order, row in part.iterrows():
        if not acted_on(row):
            continue
        name = (row["tenant"], row["kind"], row["key"])
        kind = marker_kind(row)
        place = (name, row["time"])
        stacked[place] = stacked.get(place, 0) + 1
        # markers at the same tick on one lane stack upwards instead of hiding each other
        y = lanes.index(name) - 0.3 * (stacked[place] - 1)
        ax.plot([row["time"]], [y], linestyle="none", markersize=9,
                markeredgecolor=BLACK, markerfacecolor=MARKERS[kind][1]["color"],
                marker=MARKERS[kind][1]["marker"], zorder=4, gid=gid(kind, *name, order))
        used.add(kind)
    for span in spans[(spans["band"] == "visible") & (spans["ends"] == "expiry")].itertuples():
        name = (span.tenant, span.kind, span.key)
        ax.plot([span.end], [lanes.index(name)], linestyle="none", marker="|",
                markersize=28, markeredgewidth=3, color=VERMILLION, zorder=3,
                gid=gid("expiry", *name, span.pass_, span.end))
        used.add("expiry")
    return used


def draw_lines(ax, part):
    """A vertical line, labelled at the top, for each reopen and clock change."""
    used = set()
    for order, row in part.groupby(level="order").first().iterrows():
        acting = verb(row["operation"])
        if acting in LINES:
            ax.axvline(row["time"], zorder=0, linewidth=1.5, gid=gid(acting, order),
                       **LINES[acting][1])
            words = "reopen" if acting == "reopen" else f"clock set to {row['time']}"
            ax.text(row["time"], 1.0, words, transform=ax.get_xaxis_transform(),
                    ha="center", va="bottom", fontsize=8, color=GREY)
            used.add(acting)
    return used


def legend_handles(used):
    """Legend entries: both bands, then only the markers this figure uses."""
    handles = [Patch(label="present: a row in records (no dark core: hidden)",
                     **PRESENT_STYLE),
               Patch(label="visible: get returns the record", **VISIBLE_STYLE)]
    for kind, (label, style) in MARKERS.items():
        if kind in used:
            if kind == "expiry":
                handles.append(Line2D([], [], linestyle="none", marker="|", markersize=14,
                                      markeredgewidth=3, color=VERMILLION, label=label))
            else:
                handles.append(Line2D([], [], linestyle="none", marker=style["marker"],
                                      markersize=8, markeredgecolor=BLACK,
                                      markerfacecolor=style["color"], label=label))
    for kind, (label, style) in LINES.items():
        if kind in used:
            handles.append(Line2D([], [], linewidth=1.5, label=label, **style))
    return handles


def time_axis(ax, low, high):
    """Integer ticks, one per tick when the run is short, with a light grid."""
    ax.set_xlim(low - 0.8, high + 0.8)
    ax.xaxis.set_major_locator(MultipleLocator(1) if high - low <= 24
                               else MaxNLocator(integer=True))
    ax.grid(axis="x", color="#DDDDDD", linewidth=0.8, zorder=0)
    ax.set_axisbelow(True)


class TimelineFigure(Figure):
    """A matplotlib Figure that a notebook shows as PNG, with or without %matplotlib inline."""

    def _repr_png_(self):
        return png_bytes(self)


def plot_timeline(observed, title="Present in records vs visible to get"):
    """Draw each identity's lane: when its row was present and when get returned it.

    The x axis is time in ticks. The wide hatched band is the physical row;
    the narrow dark band inside it is when ``get`` returns the record, so
    hatching with no dark core is a row that is hidden but present. Markers
    show writes, reads, deadlines, purges and forgets; dashed and dotted
    lines show reopening the file and setting the clock. When the clock moves
    backwards each pass gets its own panel (see ``passes``).
    Accepts a Run or its frame; returns a matplotlib Figure (never shown by
    pyplot, so a notebook displays it once, as PNG).
    """
    frame = frame_of(observed)
    spans = intervals(frame).rename(columns={"pass": "pass_"})
    numbers = passes(frame)
    lanes = lane_names(frame)
    count = int(numbers.max())
    fig = TimelineFigure(figsize=(9, 1.5 + count * (0.45 + 0.8 * len(lanes))), layout="constrained")
    axes = fig.subplots(count, 1, sharex=True, squeeze=False)[:, 0]
    low, high = frame["time"].min(), frame["time"].max()
    used = set()
    for number, ax in enumerate(axes, start=1):
        orders = numbers.index[numbers == number]
        part = frame.loc[orders]
        mine = spans[spans["pass_"] == number]
        draw_bands(ax, mine, lanes)
        label_gaps(ax, mine, lanes)
        used |= draw_markers(ax, part, mine, lanes)
        used |= draw_lines(ax, part)
        ax.set_yticks(range(len(lanes)), [lane(*name) for name in lanes])
        ax.set_ylim(len(lanes) - 0.5, -0.75)
        time_axis(ax, low, high)
        if count > 1:
            first_time, last_time = part["time"].iloc[0], part["time"].iloc[-1]
            ax.set_title(f"pass {number}: ticks {first_time} to {last_time}"
                         + (" (the clock moved back)" if number > 1 else ""),
                         loc="left", fontsize=9, pad=14)
    axes[-1].set_xlabel("time (ticks); a deadline is exclusive: get returns None from that tick on")
    fig.suptitle(title, fontsize=12)
    fig.legend(handles=legend_handles(used), loc="outside lower center", ncols=3,
               fontsize=8, frameon=False)
    return fig


def svg_bytes(fig):
    """The figure as SVG bytes that are identical on every render of the same data."""
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": SVG_SALT}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def png_bytes(fig, dpi=100):
    """The figure as PNG bytes, for ``IPython.display.Image`` or a file."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()
