"""The timeline in words: what a reader who cannot see the picture needs from it.

``describe_timeline(run, title)`` reads the same data ``plot_timeline`` draws (the run's frame,
its intervals and the markers' events) and says, for each lane: when the row was present in
``records``, when ``get`` returned it, and each marked event with its tick and its step (counted
from 1, as the time explorer counts). The picture's lanes, bands and markers and these words
come from one computation, so they cannot disagree.
"""

from workbook.figures import Description, Table
from workbook.timeline.observing import acted_on, frame_of, lane, lane_names, marker_kind, verb
from workbook.timeline.spans import intervals, passes

PRESENT_ENDS = {  # why a present interval ended
    "purge": "when purge removes the row",
    "forget": "when forget removes the row",
    "end of run": "and is still there when the run ends",
    "clock moved back": "when the clock moves back (the row stays)",
}
VISIBLE_ENDS = {
    "expiry": "its deadline, from which get returns None",
    "purge": "when purge removes it",
    "forget": "when forget removes it",
    "end of run": "and is still visible when the run ends",
    "clock moved back": "when the clock moves back",
}
HIDDEN_ENDS = {
    "purge": "when purge removes the row",
    "forget": "when forget removes the row",
    "end of run": "until the run ends",
    "clock moved back": "when the clock moves back",
    "visible again": "when get returns it again",
}
BANDS = {"present": ("present in records", PRESENT_ENDS),
         "visible": ("visible to get", VISIBLE_ENDS),
         "hidden": ("hidden but present", HIDDEN_ENDS)}


def counted(number, noun):
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def span_sentences(spans):
    """One clause per interval of one lane in one pass, in the picture's band order."""
    said = []
    for span in spans.itertuples(index=False):
        words, reasons = BANDS[span.band]
        said.append(f"{words} from {span.start} until {span.end}, "
                    f"{reasons.get(span.ends, 'when ' + span.ends + ' runs')}")
    return said


def short_spans(spans):
    """The alt's version: present A to B, visible A to C."""
    said = []
    for band in ("present", "visible"):
        found = spans[spans["band"] == band]
        if len(found):
            said.append(f"{band} " + " and ".join(f"{s.start} to {s.end}"
                                                   for s in found.itertuples(index=False)))
    return ", ".join(said)


def event(frame, order, row, name):
    """What the marker at this operation on this lane means, in words."""
    kind = marker_kind(row)
    outcome = row["outcome"]
    before = None
    if order > 0:
        earlier = frame.loc[[order - 1]]
        before = earlier[(earlier["tenant"] == name[0]) & (earlier["kind"] == name[1])
                         & (earlier["key"] == name[2])].iloc[0]
    was_present = bool(before is not None and before["present"])
    if kind == "write":
        return f"put writes {outcome}, visible until {row['expires']}"
    if kind == "rejected-write":
        why = " (a row is still present, though hidden)" if row["present"] and not row["visible"] \
            else ""
        return f"put raises {outcome}{why}; nothing is written"
    if kind == "read":
        return f"get returns {outcome}"
    if kind == "read-none":
        return ("get returns None, although the row is still present" if row["present"]
                else "get returns None: there is no row")
    if kind == "purge":
        tenant = row["tenant"]
        if was_present and not row["present"]:
            return f"purge {tenant} removes this row"
        if row["present"]:
            return f"purge {tenant} keeps this row (its deadline has not come)"
        return f"purge {tenant}: no row here to remove"
    if kind == "forget":
        words = row["operation"].split()
        removed = "; the row is removed" if was_present and not row["present"] else ""
        return f"forget revision {words[-1]} returns {outcome}{removed}"
    return row["operation"]


def lane_events(frame, name, spans):
    """(tick, step, what) for every marker on one lane, and each line drawn across it, in the
    order they happened."""
    found = [(order, 0, tick, str(order + 1), what) for order, tick, what in shared_events(frame)]
    rows = frame[(frame["tenant"] == name[0]) & (frame["kind"] == name[1])
                 & (frame["key"] == name[2])]
    for order, row in rows.iterrows():
        if acted_on(row):
            found.append((order, 0, int(row["time"]), str(order + 1), event(frame, order, row, name)))
    numbers = passes(frame)
    for span in spans[(spans["band"] == "visible") & (spans["ends"] == "expiry")].itertuples():
        # the deadline marker sits after the last operation before it, in its clock pass
        orders = [o for o in numbers.index[numbers == span.pass_]
                  if frame.loc[[o], "time"].iloc[0] < span.end]
        found.append((orders[-1] if orders else -1, 1, int(span.end), "",
                      "deadline (expires): get returns None from this tick on"))
    return [(tick, step, what) for _, _, tick, step, what in sorted(found)]


def shared_events(frame):
    """(order, tick, what) of each reopen and clock change: lines drawn across every lane."""
    numbers = passes(frame)
    said = []
    for order, row in frame.groupby(level="order").first().iterrows():
        acting = verb(row["operation"])
        if acting == "reopen":
            said.append((order, int(row["time"]), "the file is closed and reopened"))
        elif acting == "clock":
            back = order > 0 and numbers.loc[order] > numbers.loc[order - 1]
            said.append((order, int(row["time"]), f"the clock is set {'back ' if back else ''}"
                                                   f"to {row['time']}"))
    return said


def describe_timeline(observed, title="Present in records vs visible to get"):
    """The timeline's ``Description``: a short alt, then each lane's story and events."""
    frame = frame_of(observed)
    spans = intervals(frame).rename(columns={"pass": "pass_"})
    numbers = passes(frame)
    lanes = lane_names(frame)
    low, high = int(frame["time"].min()), int(frame["time"].max())
    count = int(numbers.max())
    short, parts = [], []
    parts.append(
        f"A timeline over ticks {low} to {high} with {counted(len(lanes), 'lane')}, one per "
        "identity. For each lane it shows when the row was present in records, when get "
        "returned it, and a marker at each operation on it. Steps are counted from 1 in the "
        "order the operations ran, as the time explorer counts them."
        + (f" The clock moves backwards, so the picture has {count} panels, one per pass of "
           "the clock." if count > 1 else ""))
    shared = shared_events(frame)
    if shared:
        parts.append("Across every lane: " + "; ".join(
            f"at step {order + 1}, {what}" for order, _, what in shared) + ".")
    for name in lanes:
        mine = spans[(spans["tenant"] == name[0]) & (spans["kind"] == name[1])
                     & (spans["key"] == name[2])]
        clauses, brief = [], []
        for number in range(1, count + 1):
            in_pass = mine[mine["pass_"] == number]
            if in_pass.empty:
                continue
            said = "; ".join(span_sentences(in_pass))
            if count > 1:
                first = frame.loc[numbers.index[numbers == number], "time"]
                said = f"in pass {number} (ticks {first.iloc[0]} to {first.iloc[-1]}), {said}"
            clauses.append(said)
            if count == 1:
                brief.append(short_spans(in_pass))
            elif number == 1:
                brief.append(f"until the clock moves back, {short_spans(in_pass)}")
            else:
                brief.append(f"after it moves back to {first.iloc[0]}, {short_spans(in_pass)}")
        story = "; ".join(clauses) if clauses else "never present in records, so get never returns it"
        parts.append(f"Lane {lane(*name)}: {story}.")
        events = lane_events(frame, name, mine)
        if events:
            parts.append(Table(f"Events on {lane(*name)}", ("tick", "step", "what happens"),
                               tuple((str(t), s, w) for t, s, w in events)))
        short.append(f"{lane(*name)} " + ("; ".join(brief) if brief else "never present"))
    alt = (f"Timeline “{title}”, ticks {low} to {high}: " + "; ".join(short)
           + ". The full description follows the figure.")
    return Description(title, alt, tuple(parts))
