"""When each identity's row was present, visible, and hidden but present: intervals in ticks."""

import pandas as pd

from workbook.teaching.timeline.observing import frame_of, verb


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
