"""The timeline observes real runs: its tables, intervals and pictures must match them."""

import sys

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from workbook.store import connect, get, purge, put
from workbook.teaching.timeline import (
    COLUMNS, Clock, Get, Put, Purge, Run, at, checkpoint, clock_backwards_scenario,
    demo_scenario, demo_tables, fact, intervals, late_purge_scenario, observe,
    passes, plot_timeline, styled, styled_demo_tables, svg_bytes)
from workbook.teaching.timeline import Forget as timeline_forget

FACT_TEXT = fact()["text"]


def frame(rows, columns):
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------- the spec's tables

def test_demo_tables_are_the_spec_tables():
    tables = demo_tables()
    pd.testing.assert_frame_equal(tables.checkpoints, frame(
        [(100, 0, 1, 160), (101, 1, 2, 161), (102, 2, 3, 162)],
        ["Time", "Step", "Revision", "Expires"]))
    pd.testing.assert_frame_equal(tables.visibility, frame(
        [("103: create", "Visible", "Present"),
         ("107: read", "Visible", "Present"),
         ("108: expiry", "Hidden", "Present"),
         ("108: purge", "Hidden", "Removed")],
        ["Event", "Get result", "Stored row"]))
    pd.testing.assert_frame_equal(tables.results, frame(
        [("102: reopen", "Step 1 survives; advance writes step 2"),
         ("103: completed read", "Revision 3; expiry 162 unchanged"),
         ("103: stale write", "Expected revision 1 rejected; current revision 3"),
         ("104: other tenant", "Harbour read returns None; Orchard fact stays present"),
         ("108: purge", "1 fact removed; 1 checkpoint remains"),
         ("108: forget revision 3", "True; 0 rows remain; counter stays 4")],
        ["Operation", "Observed result"]))


def test_demo_tables_follow_the_checkpoint_ttl():
    tables = demo_tables(checkpoint_ttl=30)
    assert tables.checkpoints["Expires"].tolist() == [130, 131, 132]
    assert tables.results["Observed result"][1] == "Revision 3; expiry 132 unchanged"


def test_demo_tables_follow_the_fact_ttl():
    tables = demo_tables(fact_ttl=10)  # expires at 113: still visible when purged at 108
    pd.testing.assert_frame_equal(tables.visibility, frame(
        [("103: create", "Visible", "Present"),
         ("107: read", "Visible", "Present"),
         ("108: read", "Visible", "Present"),
         ("108: purge", "Visible", "Present")],
        ["Event", "Get result", "Stored row"]))
    assert tables.results["Observed result"].tolist()[-2:] == [
        "0 facts removed; 1 checkpoint remains",
        "True; 1 row remains; counter stays 4"]


def test_styled_tables_hide_the_index_and_keep_the_data():
    tables = demo_tables()
    stylers = styled_demo_tables(tables)
    # the same cells, as Python objects a table shows as they are (an int stays an int)
    for styler, table in zip(stylers, (tables.checkpoints, tables.visibility, tables.results)):
        assert list(styler.data.columns) == list(table.columns)
        assert styler.data.values.tolist() == table.values.tolist()
    html = stylers[2].to_html()
    assert "Recovery, rejected changes and deletion results" in html
    assert "Harbour read returns None" in html
    assert html == styled_demo_tables(demo_tables())[2].to_html()  # no random uuid
    assert "0x" not in repr(styled(tables.results))  # no memory address for nbval


# ---------------------------------------------------------------- observations

def test_observation_frame_shape_and_outcomes():
    run = observe(demo_scenario())
    assert isinstance(run, Run)
    assert list(run.frame.columns) == COLUMNS
    assert len(run.frame) == 13 * 3  # every operation, for each of three identities
    outcomes = run.frame.groupby(level="order")["outcome"].first().tolist()
    assert outcomes == ["revision 1", "revision 2", "reopened", "revision 2", "revision 3",
                        "revision 3", "Conflict", "revision 4", "None", "revision 4",
                        "None", "1 removed", "True"]
    assert run.counters[-1] == 4


def test_at_108_the_fact_is_present_but_not_visible():
    run = observe(demo_scenario())
    rows = at(run, 108)
    fact_rows = rows[(rows["kind"] == "fact") & (rows["tenant"] == "orchard")]
    # after the get at 108, then after the purge, then after the forget
    assert fact_rows["present"].tolist() == [True, False, False]
    assert fact_rows["visible"].tolist() == [False, False, False]
    assert fact_rows["revision"].iloc[0] == 4 and fact_rows["expires"].iloc[0] == 108
    at_107 = at(run, 107)
    assert at_107[at_107["kind"] == "fact"]["visible"].tolist() == [True, False]
    harbour = run.frame[run.frame["tenant"] == "harbour"]
    assert not harbour["present"].any() and not harbour["visible"].any()


def test_observations_match_the_store_called_directly():
    run = observe(late_purge_scenario())
    db = connect()
    try:
        put(db, "orchard", "fact", "preference", fact(), None, 103, 5)
        for time in (105, 108, 112):
            record = get(db, "orchard", "fact", "preference", time)
            row = db.execute("SELECT revision, expires FROM records").fetchone()
            seen = at(run, time).iloc[-1]
            assert seen["visible"] == (record is not None)
            assert (seen["revision"], seen["expires"]) == row
        assert purge(db, "orchard", 115) == 1
        assert not at(run, 115).iloc[-1]["present"]
    finally:
        db.close()
    assert at(run, 110)["outcome"].tolist() == ["Conflict"]  # the expired row blocks a create


def test_current_means_the_revision_get_returns():
    run = observe(demo_scenario())
    assert run.operations[1].expected == 1 and run.operations[4].expected == 2
    assert run.operations[-1].revision == 3
    scenario = [Put(100, "orchard", "fact", "note", fact(), expected=None, ttl=5),
                Put(106, "orchard", "fact", "note", fact(), ttl=5)]
    late = observe(scenario)
    assert late.operations[1].expected is None  # get saw nothing, so it tried to create
    assert late.frame["outcome"].tolist() == ["revision 1", "Conflict"]


def test_no_fact_text_in_any_output():
    run = observe(demo_scenario())
    tables = demo_tables()
    texts = [run.frame.to_string(), repr(run), repr(run.operations), intervals(run).to_string(),
             *(table.to_string() for table in (tables.checkpoints, tables.visibility,
                                                tables.results)),
             svg_bytes(plot_timeline(run)).decode()]
    assert not any(FACT_TEXT in text for text in texts)


def test_bad_scenarios_are_refused_before_running():
    with pytest.raises(ValueError, match="scenario item 1"):
        observe([Clock(100), ("put", 101)])
    with pytest.raises(ValueError, match="time"):
        observe([Get(-1, "orchard", "fact", "a")])
    with pytest.raises(ValueError, match="lane to watch"):
        observe([Purge(100, "orchard"), Clock(101)])


def test_a_refused_operation_is_an_observation_not_a_crash():
    scenario = [Put(100, *PREFERENCE, fact(), expected=None, ttl=0),
                Get(100, "Not Valid", "fact", "a"),
                Put(101, *PREFERENCE, fact(), expected=None, ttl=5)]
    run = observe(scenario)
    assert run.frame["outcome"].tolist() == ["ValueError", "ValueError", "revision 1"]
    assert run.counters == (0, 0, 1)  # a refused write leaves the counter alone


# ---------------------------------------------------------------- intervals

INTERVALS = ["tenant", "kind", "key", "pass", "band", "start", "end", "ends"]
PREFERENCE = ("orchard", "fact", "preference")
RUN_A = ("orchard", "checkpoint", "run-a")


def test_demo_intervals():
    expected = frame([(*RUN_A, 1, "present", 100, 108, "forget"),
                      (*RUN_A, 1, "visible", 100, 108, "forget"),
                      (*PREFERENCE, 1, "present", 103, 108, "purge"),
                      (*PREFERENCE, 1, "visible", 103, 108, "expiry")], INTERVALS)
    pd.testing.assert_frame_equal(intervals(observe(demo_scenario())), expected)


def test_late_purge_intervals_have_a_wide_gap():
    expected = frame([(*PREFERENCE, 1, "present", 103, 115, "purge"),
                      (*PREFERENCE, 1, "visible", 103, 108, "expiry"),
                      (*PREFERENCE, 1, "hidden", 108, 115, "purge")], INTERVALS)
    pd.testing.assert_frame_equal(intervals(observe(late_purge_scenario())), expected)


def test_clock_backwards_reopens_visibility():
    run = observe(clock_backwards_scenario())
    assert run.frame["visible"].tolist() == [True, True, False, True, True, False, False]
    expected = frame([(*PREFERENCE, 1, "present", 100, 107, "clock moved back"),
                      (*PREFERENCE, 1, "visible", 100, 105, "expiry"),
                      (*PREFERENCE, 1, "hidden", 105, 107, "clock moved back"),
                      (*PREFERENCE, 2, "present", 104, 106, "purge"),
                      (*PREFERENCE, 2, "visible", 104, 105, "expiry"),
                      (*PREFERENCE, 2, "hidden", 105, 106, "purge")], INTERVALS)
    pd.testing.assert_frame_equal(intervals(run), expected)


def test_a_rewrite_moves_the_deadline_and_the_run_end_closes_intervals():
    scenario = [Put(100, *PREFERENCE, fact(), expected=None, ttl=5),
                Put(104, *PREFERENCE, fact(), ttl=5),
                Clock(112)]
    expected = frame([(*PREFERENCE, 1, "present", 100, 112, "end of run"),
                      (*PREFERENCE, 1, "visible", 100, 109, "expiry"),
                      (*PREFERENCE, 1, "hidden", 109, 112, "end of run")], INTERVALS)
    pd.testing.assert_frame_equal(intervals(observe(scenario)), expected)


# ---------------------------------------------------------------- pictures

SCENARIOS = [demo_scenario, late_purge_scenario, clock_backwards_scenario]


def bands_drawn(fig):
    """(tenant, kind, key, pass, band, start, end) for every band rectangle in the figure."""
    drawn = []
    for patch in fig.findobj(Rectangle):
        parts = (patch.get_gid() or "").split("_")
        if parts[0] in ("present", "visible"):
            band, tenant, kind, key, number, _ = parts
            start, end = patch.get_x(), patch.get_x() + patch.get_width()
            drawn.append((tenant, kind, key, int(number), band, start, end))
    return sorted(drawn)


def marker_lines(fig):
    return [(line, line.get_gid().split("_")) for line in fig.findobj(Line2D)
            if line.get_gid()]


@pytest.mark.parametrize("make", SCENARIOS)
def test_bands_drawn_equal_the_intervals(make):
    run = observe(make())
    spans = intervals(run).rename(columns={"pass": "number"})
    spans = spans[spans["band"] != "hidden"]
    expected = sorted((s.tenant, s.kind, s.key, s.number, s.band, s.start, s.end)
                      for s in spans.itertuples(index=False))
    assert bands_drawn(plot_timeline(run)) == expected


@pytest.mark.parametrize("make", SCENARIOS)
def test_every_marker_sits_at_its_operations_time(make):
    run = observe(make())
    fig = plot_timeline(run)
    times = run.frame.groupby(level="order")["time"].first()
    lanes = list(dict.fromkeys(zip(run.frame["tenant"], run.frame["kind"], run.frame["key"])))
    spans = intervals(run)
    deadlines = sorted((s.tenant, s.kind, s.key, s.end) for s in spans.itertuples()
                       if s.band == "visible" and s.ends == "expiry")
    seen_orders, seen_deadlines = set(), []
    for line, parts in marker_lines(fig):
        x = line.get_xdata()[0]
        if parts[0] in ("reopen", "clock"):
            assert list(line.get_xdata()) == [times[int(parts[1])]] * 2
            seen_orders.add(int(parts[1]))
        elif parts[0] == "expiry":
            _, tenant, kind, key, _, end = parts
            assert x == int(end)
            assert round(line.get_ydata()[0]) == lanes.index((tenant, kind, key))
            seen_deadlines.append((tenant, kind, key, x))
        else:
            kind_of_marker, tenant, kind, key, order = parts
            assert x == times[int(order)]
            assert round(line.get_ydata()[0]) == lanes.index((tenant, kind, key))
            seen_orders.add(int(order))
    assert seen_orders == set(range(len(run.operations)))  # nothing left unmarked
    assert sorted(seen_deadlines) == deadlines


def test_demo_markers_name_what_happened():
    fig = plot_timeline(observe(demo_scenario()))
    kinds = sorted(parts[0] for _, parts in marker_lines(fig))
    assert kinds.count("write") == 4 and kinds.count("rejected-write") == 1
    assert kinds.count("read") == 3 and kinds.count("read-none") == 2
    assert kinds.count("purge") == 2  # both orchard lanes; harbour is another tenant
    assert kinds.count("forget") == 1 and kinds.count("reopen") == 1
    assert kinds.count("expiry") == 1


def test_figure_is_labelled_for_a_learner():
    fig = plot_timeline(observe(clock_backwards_scenario()), title="Clock moves backwards")
    assert fig._suptitle.get_text() == "Clock moves backwards"
    axes = fig.get_axes()
    assert len(axes) == 2  # one panel per clock pass
    assert "pass 2" in axes[1].get_title(loc="left")
    assert axes[-1].get_xlabel().startswith("time (ticks)")
    assert [label.get_text() for label in axes[0].get_yticklabels()] == [
        "orchard / fact / preference"]
    legend = [text.get_text() for text in fig.legends[0].get_texts()]
    assert legend[:2] == ["present: a row in records (no dark core: hidden)",
                          "visible: get returns the record"]
    assert "clock set" in legend and "deadline (expires)" in legend


def test_svg_is_identical_on_every_render_and_headless():
    run = observe(late_purge_scenario())
    first = svg_bytes(plot_timeline(run))
    again = svg_bytes(plot_timeline(observe(late_purge_scenario())))
    assert first == again
    assert b"<dc:date>" not in first  # no wall-clock time in the file
    assert b'id="present_orchard_fact_preference_1_103"' in first
    assert matplotlib.get_backend().lower() == "agg"
    if "matplotlib.pyplot" in sys.modules:  # the module never registers figures with pyplot
        assert sys.modules["matplotlib.pyplot"].get_fignums() == []


def test_notebook_shows_the_figure_as_png():
    png = plot_timeline(observe(late_purge_scenario()))._repr_png_()
    assert png.startswith(b"\x89PNG")


# ---------------------------------------------------------------- the picture in words

EVENT_WORDS = {"write": "put writes revision", "rejected-write": "put raises",
               "read": "get reads it", "read-none": "get reads it",
               "purge": "purge orchard", "forget": "forget revision"}
BAND_WORDS = {"present": "present in records from {start} ",
              "visible": "visible to get {again}from {start} ",
              "hidden": "hidden but present for {ticks}, {start} to {end}"}


def events_table(description):
    """The description's one events table, as a list of {column: cell}."""
    from workbook.teaching.figures import Table
    [table] = [part for part in description.parts if isinstance(part, Table)]
    return [dict(zip(table.columns, row)) for row in table.rows]


def lane_story(description, name):
    return next(p for p in description.parts if isinstance(p, str) and p.startswith(f"{name}: "))


def sentences(text):
    return [s for s in text.replace("; ", ". ").split(". ") if s]


@pytest.mark.parametrize("make", SCENARIOS)
def test_the_description_says_what_the_picture_draws(make):
    run = observe(make())
    fig = plot_timeline(run, title="A title")
    description = fig.description
    text = description.to_text()
    rows = events_table(description)
    lanes = [" / ".join(name) for name in dict.fromkeys(zip(run.frame["tenant"], run.frame["kind"],
                                                             run.frame["key"]))]
    one = len(lanes) == 1
    name_of = (lambda row: lanes[0]) if one else (lambda row: row["identity"])
    # every band of every lane, with its ticks, in the lane's own paragraph
    for span in intervals(run).itertuples(index=False):
        story = lane_story(description, f"{span.tenant} / {span.kind} / {span.key}")
        ticks = f"{span.end - span.start} tick" + ("" if span.end - span.start == 1 else "s")
        words = BAND_WORDS[span.band].format(start=span.start, end=span.end, ticks=ticks,
                                             again="again " if span.band == "visible"
                                             and span[3] > 1 else "")
        assert words.lower() in story.lower(), (words, story)
        assert str(span.end) in story
    # every marker drawn is a row of the one events table at its step and tick
    times = run.frame.groupby(level="order")["time"].first()
    for line, parts in marker_lines(fig):
        if parts[0] in ("reopen", "clock"):
            order = int(parts[1])
            [row] = [r for r in rows if r["step"] == str(order + 1)]
            assert name_of(row) == (lanes[0] if one else "every identity")
        elif parts[0] == "expiry":
            _, tenant, kind, key, _, end = parts
            assert any(r["step"] == "no operation" and r["tick"] == end
                       and name_of(r) == f"{tenant} / {kind} / {key}"
                       and r["get returns"] == "None" for r in rows)
        else:
            kind_of_marker, tenant, kind, key, order = parts
            [row] = [r for r in rows if r["step"] == str(int(order) + 1)
                     and name_of(r) == f"{tenant} / {kind} / {key}"]
            assert row["tick"] == str(times[int(order)])
            assert row["what happens"].startswith(EVENT_WORDS[kind_of_marker])
    assert len(rows) == len(marker_lines(fig))
    assert description.alt.startswith("Timeline “A title”, ticks ")
    assert all(name in description.alt for name in lanes)
    assert FACT_TEXT not in text


@pytest.mark.parametrize("make", SCENARIOS)
def test_one_events_table_in_the_order_things_happened(make):
    """A listener hears every event once, in order: steps never go back, ticks only go back
    where the clock does (a new pass), and a deadline, which no operation caused, says so."""
    run = observe(make())
    rows = events_table(plot_timeline(run).description)
    steps = [int(r["step"]) for r in rows if r["step"] != "no operation"]
    assert steps == sorted(steps) and set(steps) == set(range(1, len(run.operations) + 1))
    for before, after in zip(rows, rows[1:]):
        same_pass = before.get("pass", "1") == after.get("pass", "1")
        assert int(after["tick"]) >= int(before["tick"]) or not same_pass, (before, after)
    assert all(r["step"] not in ("", "—") for r in rows)
    deadlines = [r for r in rows if r["step"] == "no operation"]
    assert deadlines and all(r["what happens"].startswith("its deadline") for r in deadlines)
    if passes(run).max() > 1:
        assert "pass" in rows[0]
        assert [r["pass"] for r in rows] == sorted(r["pass"] for r in rows)
    else:
        assert "pass" not in rows[0]


def test_a_line_across_every_lane_is_said_once():
    rows = events_table(plot_timeline(observe(demo_scenario())).description)
    [reopen] = [r for r in rows if "reopened" in r["what happens"]]
    assert reopen == {"step": "3", "tick": "102", "identity": "every identity",
                      "what happens": "the file is closed and reopened",
                      "get returns": "revision 2 for orchard / checkpoint / run-a; "
                                     "None for the others"}


def test_the_demo_description_tells_the_story():
    description = plot_timeline(observe(demo_scenario()), title="The demonstration").description
    text = description.to_text()
    assert description.alt == (
        "Timeline “The demonstration”, ticks 100 to 108: orchard / checkpoint / run-a present "
        "and visible 100 to 108, no gap; orchard / fact / preference present and visible 103 to "
        "108, no gap; harbour / fact / preference never present. The full description follows "
        "the figure.")
    rows = events_table(description)
    assert {"step": "no operation", "tick": "108", "identity": "orchard / fact / preference",
            "what happens": "its deadline: from this tick get returns None; the row stays in "
                            "records", "get returns": "None"} == rows[10]
    assert [(r["step"], r["identity"], r["what happens"]) for r in rows[11:14]] == [
        ("11", "orchard / fact / preference", "get reads it: the row is still present, but hidden"),
        ("12", "orchard / checkpoint / run-a", "purge orchard keeps the row (its deadline has not come)"),
        ("12", "orchard / fact / preference", "purge orchard removes the row")]
    assert "harbour / fact / preference: never present in records" in text
    assert "No gap: present and visible end together at 108." in text


def test_the_description_says_the_figures_point_in_short_sentences():
    late = plot_timeline(observe(late_purge_scenario())).description
    story = lane_story(late, "orchard / fact / preference")
    assert "Hidden but present for 7 ticks, 108 to 115, until purge removes the row." in story
    assert "hidden but present 108 to 115" in late.alt
    gate = ("orchard", "fact", "gate")
    forgotten = plot_timeline(observe([Put(103, *gate, fact(), expected=None, ttl=20),
                                       timeline_forget(106, *gate)])).description
    assert "No gap: present and visible end together at 106." in lane_story(
        forgotten, "orchard / fact / gate")
    assert "present and visible 103 to 106, no gap" in forgotten.alt
    for make in SCENARIOS:
        description = plot_timeline(observe(make())).description
        text = description.to_text()
        # no sentence a listener has to hold for long, and nothing about how the picture is drawn
        for part in description.parts:
            if isinstance(part, str):
                assert all(len(s.split()) <= 45 for s in sentences(part)), part
        for boilerplate in ("marker", "one per identity", "1 lane", "lanes,"):
            assert boilerplate not in text, boilerplate


def test_a_clock_that_moves_back_has_a_sentence_per_pass():
    description = plot_timeline(observe(clock_backwards_scenario())).description
    story = lane_story(description, "orchard / fact / preference")
    said = story.split(": ", 1)[1]
    assert said.startswith("Pass 1, ticks 100 to 107: ")
    assert " Pass 2, after the clock moves back to 104, ticks 104 to 106: " in said
    assert said.count("Pass ") == 2 and said.count(". P") == 1
    assert "The clock moves back at step 4, to 104, so time runs in 2 passes" in \
        description.parts[0]


def test_a_prediction_is_said_to_match_or_where_it_differs():
    from workbook.teaching.exercises.checks.ch5 import PREDICT
    run = observe(PREDICT)
    right = plot_timeline(run, predicted=[(100, 109), (111, 113)]).description
    assert "Your prediction matches the run: visible 100 to 109 and 111 to 113." in right.alt
    assert right.parts[1] == "Your prediction matches the run: visible 100 to 109 and 111 to 113."
    wrong = plot_timeline(run, predicted=[(100, 105), (111, 113), (114, 115)]).description
    said = ("Your prediction differs from the run: your first interval ends at 105, the run's "
            "at 109; you predicted a third interval, 114 to 115, which the run does not have.")
    assert said in wrong.alt and said in wrong.parts
    short = plot_timeline(run, predicted=[(101, 109)]).description
    assert ("your first interval starts at 101, the run's at 100; the run has a second "
            "interval, 111 to 113, which you did not predict.") in short.alt
    assert "prediction" not in plot_timeline(run).description.to_text()


def test_a_described_figure_is_shown_with_its_alt_description_and_picture():
    import base64
    fig = plot_timeline(observe(late_purge_scenario()), title="Late")
    data, metadata = fig._repr_mimebundle_()
    alt = fig.description.alt
    assert metadata == {"image/png": {"alt": alt}}  # IPython's place; nbconvert reads it
    assert base64.b64decode(data["image/png"]).startswith(b"\x89PNG")
    html = data["text/html"]
    assert f'<img src="data:image/png;base64,{data["image/png"]}" alt="{alt}"' in html
    assert "<details" in html and "<summary>Text description of the figure “Late”</summary>" in html
    assert "Hidden but present for 7 ticks, 108 to 115, until purge removes the row." in html
    assert data["text/plain"] == fig.description.to_text() == repr(fig)
    assert "<th scope=\"col\"" in html and "<caption" in html
