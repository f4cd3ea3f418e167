"""The specification's demonstration as chapter 5's three tables, every cell computed from a run."""

from dataclasses import dataclass

import pandas as pd
from pandas.io.formats.style import Styler  # noqa: F401 (a public name here)

from workbook.teaching.figures import TABLE_STYLES, StyledTable, readable_frame, shown  # noqa: F401 (public names here)

from workbook.store import Conflict
from workbook.teaching.timeline.observing import acted_on, observe, outcome, verb
from workbook.teaching.timeline.scenarios import Forget, Get, Purge, Put, Reopen, demo_scenario


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


def styled(table, caption=None):
    """A table for the notebook: no index, left-aligned text, whole numbers as ints and "none"
    for a missing value (as ``shown`` does)."""
    uuid = "-".join((caption or "table").lower().replace(",", "").split())
    styler = StyledTable(readable_frame(table), uuid=uuid).hide(axis="index").format(str)
    styler = styler.set_table_styles(TABLE_STYLES)
    return styler.set_caption(caption) if caption else styler


def styled_demo_tables(tables):
    """The three demo tables as captioned Stylers, in the spec's order."""
    return [styled(getattr(tables, part), title) for part, title in TITLES.items()]
