"""The timeline in words: what a reader who cannot see the picture needs from it.

``describe_timeline(run, title)`` reads the same data ``plot_timeline`` draws (the run's frame,
its intervals and the markers' events) and says, in this order:

- which ticks and identities the figure covers (and, when the clock moves back, its passes);
- each identity's story, one sentence per band in time order (one sentence per clock pass when
  the clock moves back), with the figure's point in it: how long a row was hidden but present,
  or that there was no gap;
- one table of every event in the order it happened: step (counted from 1, as the time explorer
  counts), tick, pass (when the clock moves back), identity, what happens and what ``get``
  returns afterwards. A deadline is not an operation, so its step cell says "no operation".

The picture's lanes, bands and markers and these words come from one computation, so they
cannot disagree. ``predicted`` (a list of ``(start, end)`` visible intervals) adds whether a
prediction matches the run, and where it differs, to the alt and the description.
"""

from workbook.teaching.figures import Description, Table
from workbook.teaching.timeline.observing import acted_on, frame_of, lane, lane_names, marker_kind, verb
from workbook.teaching.timeline.spans import intervals, passes

NO_OPERATION = "no operation"  # the step cell of a deadline, which no operation caused
BAND_ORDER = {"present": 0, "visible": 1, "hidden": 2}
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def counted(number, noun):
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def ordinal(number):
    """1 -> "first"; past the eighth, "9th"."""
    return ORDINALS[number - 1] if number <= len(ORDINALS) else f"{number}th"


def listed(words):
    """a, b and c."""
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def present_clause(span):
    ends = {"purge": f"until {span.end}, when purge removes the row",
            "forget": f"until {span.end}, when forget removes the row",
            "end of run": f"and still there when the run ends at {span.end}",
            "clock moved back": f"until the clock moves back after {span.end} (the row stays)"}
    return (f"present in records from {span.start} "
            + ends.get(span.ends, f"until {span.end}, when {span.ends} runs"))


def visible_clause(span, again=False):
    ends = {"expiry": f"until its deadline, {span.end}",
            "purge": f"until purge removes it at {span.end}",
            "forget": f"until forget removes it at {span.end}",
            "end of run": f"and still visible when the run ends at {span.end}",
            "clock moved back": f"until the clock moves back after {span.end}"}
    return (f"visible to get {'again ' if again else ''}from {span.start} "
            + ends.get(span.ends, f"until {span.end}, when {span.ends} runs"))


def hidden_clause(span):
    ends = {"purge": "until purge removes the row", "forget": "until forget removes the row",
            "end of run": "until the run ends", "clock moved back": "until the clock moves back",
            "visible again": "until it is visible again"}
    return (f"hidden but present for {counted(span.end - span.start, 'tick')}, "
            f"{span.start} to {span.end}, " + ends.get(span.ends, f"until {span.ends} runs"))


def clauses(spans, again=False):
    """The lane's story in one pass: a clause per band, in time order, and "no gap" wherever a
    present interval ends with its visible one and was never hidden."""
    said = []
    rows = sorted(spans.itertuples(index=False), key=lambda s: (s.start, BAND_ORDER[s.band]))
    hidden = [s for s in rows if s.band == "hidden"]
    visible = [s for s in rows if s.band == "visible"]
    for span in rows:
        if span.band == "present":
            said.append((span.start, 0, present_clause(span)))
            inside = [h for h in hidden if span.start <= h.start and h.end <= span.end]
            if not inside and any(v.end == span.end for v in visible):
                said.append((span.end, 3, f"no gap: present and visible end together at "
                                          f"{span.end}"))
        elif span.band == "visible":
            said.append((span.start, 1, visible_clause(span, again)))
        else:
            said.append((span.start, 2, hidden_clause(span)))
    return [words for _, _, words in sorted(said, key=lambda s: (s[0], s[1]))]


def brief(spans):
    """The alt's version of one pass: present A to B, visible A to C, hidden but present C to B
    (or "present and visible A to B, no gap")."""
    said = []
    for present in sorted((s for s in spans.itertuples(index=False) if s.band == "present"),
                          key=lambda s: s.start):
        inside = lambda band: [s for s in spans.itertuples(index=False) if s.band == band
                               and present.start <= s.start and s.end <= present.end]
        shown, hidden = inside("visible"), inside("hidden")
        if not hidden and [(s.start, s.end) for s in shown] == [(present.start, present.end)]:
            said.append(f"present and visible {present.start} to {present.end}, no gap")
            continue
        words = f"present {present.start} to {present.end}"
        if shown:
            words += ", visible " + " and ".join(f"{s.start} to {s.end}" for s in shown)
        if hidden:
            words += ", hidden but present " + " and ".join(f"{s.start} to {s.end}" for s in hidden)
        said.append(words)
    return "; ".join(said)


def returns(row):
    """What get returns for the row's identity right after its operation."""
    return f"revision {row['revision']}" if row["visible"] else "None"


def event(frame, order, row, name):
    """What the operation at ``order`` did to this identity, in words (what get then returns
    has a column of its own)."""
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
        return "get reads it"
    if kind == "read-none":
        return ("get reads it: the row is still present, but hidden" if row["present"]
                else "get reads it: there is no row")
    if kind == "purge":
        tenant = row["tenant"]
        if was_present and not row["present"]:
            return f"purge {tenant} removes the row"
        if row["present"]:
            return f"purge {tenant} keeps the row (its deadline has not come)"
        return f"purge {tenant}: no row here to remove"
    if kind == "forget":
        words = row["operation"].split()
        removed = "; the row is removed" if was_present and not row["present"] else ""
        return f"forget revision {words[-1]} returns {outcome}{removed}"
    return row["operation"]


def shared(frame, order, lanes):
    """(what happens, get returns) for a reopen or a clock change: every identity at once."""
    numbers = passes(frame)
    rows = frame.loc[[order]]
    first = rows.iloc[0]
    if verb(first["operation"]) == "reopen":
        what = "the file is closed and reopened"
    else:
        back = order > 0 and numbers.loc[order] > numbers.loc[order - 1]
        what = f"the clock is set {'back ' if back else ''}to {first['time']}"
    got = [(lane(r["tenant"], r["kind"], r["key"]), returns(r)) for _, r in rows.iterrows()]
    if len(lanes) == 1:
        return what, got[0][1]
    found = [f"{value} for {name}" for name, value in got if value != "None"]
    if not found:
        return what, "None for every identity"
    return what, "; ".join(found) + ("; None for the others" if len(found) < len(got) else "")


def events(frame, spans, lanes):
    """Every event, in the order it happened: (step, tick, pass, identity, what, get returns).

    An operation gives one row per identity it acted on (a purge, one per row of its tenant);
    a reopen or a clock change one row for every identity; a deadline one row, placed after
    the last operation before it in its clock pass."""
    numbers = passes(frame)
    found = []
    everyone = lane(*lanes[0]) if len(lanes) == 1 else "every identity"
    for order, rows in frame.groupby(level="order", sort=True):
        first = rows.iloc[0]
        if verb(first["operation"]) in ("reopen", "clock"):
            what, got = shared(frame, order, lanes)
            found.append(((order, 0, 0), str(order + 1), int(first["time"]),
                          int(numbers.loc[order]), everyone, what, got))
            continue
        for _, row in rows.iterrows():
            if acted_on(row):
                name = (row["tenant"], row["kind"], row["key"])
                found.append(((order, 0, lanes.index(name)), str(order + 1), int(row["time"]),
                              int(numbers.loc[order]), lane(*name),
                              event(frame, order, row, name), returns(row)))
    for span in spans[(spans["band"] == "visible") & (spans["ends"] == "expiry")].itertuples():
        orders = [o for o in numbers.index[numbers == span.pass_]
                  if frame.loc[[o], "time"].iloc[0] < span.end]
        name = (span.tenant, span.kind, span.key)
        found.append(((orders[-1] if orders else -1, 1, lanes.index(name)), NO_OPERATION,
                      int(span.end), int(span.pass_), lane(*name),
                      "its deadline: from this tick get returns None; the row stays in records",
                      "None"))
    return [row[1:] for row in sorted(found, key=lambda row: row[0])]


def prediction(predicted, spans):
    """Whether the predicted visible intervals are the run's, and where they differ."""
    shown = sorted((int(s.pass_), int(s.start), int(s.end)) for s in spans.itertuples()
                   if s.band == "visible")
    real = [(start, end) for _, start, end in shown]
    guess = [(int(start), int(end)) for start, end in predicted]
    if guess == real:
        return "Your prediction matches the run: visible " + listed(
            f"{start} to {end}" for start, end in real) + "."
    said = []
    for number, (mine, theirs) in enumerate(zip(guess, real), start=1):
        if mine[0] != theirs[0]:
            said.append(f"your {ordinal(number)} interval starts at {mine[0]}, "
                        f"the run's at {theirs[0]}")
        if mine[1] != theirs[1]:
            said.append(f"your {ordinal(number)} interval ends at {mine[1]}, "
                        f"the run's at {theirs[1]}")
    for number, (start, end) in enumerate(guess[len(real):], start=len(real) + 1):
        said.append(f"you predicted a {ordinal(number)} interval, {start} to {end}, "
                    "which the run does not have")
    for number, (start, end) in enumerate(real[len(guess):], start=len(guess) + 1):
        said.append(f"the run has a {ordinal(number)} interval, {start} to {end}, "
                    "which you did not predict")
    return "Your prediction differs from the run: " + "; ".join(said) + "."


def describe_timeline(observed, title="Present in records vs visible to get", predicted=None):
    """The timeline's ``Description``: a short alt, what it covers, each identity's story and
    every event in one table, in the order it happened."""
    frame = frame_of(observed)
    spans = intervals(frame).rename(columns={"pass": "pass_"})
    numbers = passes(frame)
    lanes = lane_names(frame)
    low, high = int(frame["time"].min()), int(frame["time"].max())
    count = int(numbers.max())
    times = frame.groupby(level="order")["time"].first()
    covers = (f"Ticks {low} to {high}, one identity: {lane(*lanes[0])}." if len(lanes) == 1
              else f"Ticks {low} to {high}, {len(lanes)} identities: "
                   f"{listed(lane(*name) for name in lanes)}.")
    covers += " Steps count the operations from 1, in the order they ran, as the time explorer does."
    if count > 1:
        starts = [int(order) for order in numbers.index[numbers.diff() > 0]]
        ranges = [(int(times[numbers == n].iloc[0]), int(times[numbers == n].iloc[-1]))
                  for n in range(1, count + 1)]
        covers += (" The clock moves back at " + listed(f"step {o + 1}, to {times[o]}"
                                                       for o in starts)
                   + f", so time runs in {count} passes: "
                   + listed(f"pass {n} covers ticks {a} to {b}"
                            for n, (a, b) in enumerate(ranges, start=1)) + ".")
    parts = [covers]
    said = prediction(predicted, spans) if predicted is not None else None
    if said:
        parts.append(said)
    short = []
    for name in lanes:
        mine = spans[(spans["tenant"] == name[0]) & (spans["kind"] == name[1])
                     & (spans["key"] == name[2])]
        if mine.empty:
            parts.append(f"{lane(*name)}: never present in records, so get never returns it.")
            short.append(f"{lane(*name)} never present")
            continue
        sentences, briefs = [], []
        for number in range(1, count + 1):
            in_pass = mine[mine["pass_"] == number]
            if in_pass.empty:
                continue
            said_here = clauses(in_pass, again=number > 1)
            if count == 1:
                sentences += [words[0].upper() + words[1:] + "." for words in said_here]
                briefs.append(brief(in_pass))
            else:
                first = times[numbers == number]
                moved = f", after the clock moves back to {first.iloc[0]}" if number > 1 else ""
                sentences.append(f"Pass {number}{moved}, ticks {first.iloc[0]} to "
                                 f"{first.iloc[-1]}: " + "; ".join(said_here) + ".")
                briefs.append(f"in pass {number}, {brief(in_pass)}")
        story = " ".join(sentences)
        parts.append(f"{lane(*name)}: {story[0].lower() + story[1:] if count == 1 else story}")
        short.append(f"{lane(*name)} " + "; ".join(briefs))
    rows = events(frame, spans, lanes)
    columns = ["step", "tick", "pass", "identity", "what happens", "get returns"]
    keep = [c for c in columns if not (c == "pass" and count == 1)
            and not (c == "identity" and len(lanes) == 1)]
    caption = ("Every event, in the order it happened" if len(lanes) > 1
               else f"Every event on {lane(*lanes[0])}, in the order it happened")
    parts.append(Table(caption, tuple(keep), tuple(
        tuple(str(value) for column, value in zip(columns, row) if column in keep)
        for row in rows)))
    alt = (f"Timeline “{title}”, ticks {low} to {high}: " + "; ".join(short) + "."
           + (f" {said}" if said else "") + " The full description follows the figure.")
    return Description(title, alt, tuple(parts))
