"""The timeline observes real runs: its tables, intervals and pictures must match them."""

import sys

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from workbook.store import connect, get, purge, put
from workbook.timeline import (
    COLUMNS, Clock, Get, Put, Purge, Run, at, checkpoint, clock_backwards_scenario,
    demo_scenario, demo_tables, fact, intervals, late_purge_scenario, observe,
    plot_timeline, styled, styled_demo_tables, svg_bytes)

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
    assert [styler.data is table for styler, table in
            zip(stylers, (tables.checkpoints, tables.visibility, tables.results))] == [True] * 3
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
               "read": "get returns revision", "read-none": "get returns None",
               "purge": "purge orchard", "forget": "forget revision"}
BAND_WORDS = {"present": "present in records", "visible": "visible to get",
              "hidden": "hidden but present"}


def event_rows(description):
    """{lane: [(tick, step, what)]} from the description's event tables."""
    from workbook.figures import Table
    return {part.caption.removeprefix("Events on "): list(part.rows)
            for part in description.parts if isinstance(part, Table)}


@pytest.mark.parametrize("make", SCENARIOS)
def test_the_description_says_what_the_picture_draws(make):
    run = observe(make())
    fig = plot_timeline(run, title="A title")
    description = fig.description
    text = description.to_text()
    events = event_rows(description)
    lanes = list(dict.fromkeys(zip(run.frame["tenant"], run.frame["kind"], run.frame["key"])))
    assert list(events) == [" / ".join(name) for name in lanes if
                            any(parts[1:4] == list(name) for _, parts in marker_lines(fig))]
    # every band of every lane, with its ticks
    for span in intervals(run).itertuples(index=False):
        lane_text = next(p for p in description.parts if isinstance(p, str)
                         and p.startswith(f"Lane {span.tenant} / {span.kind} / {span.key}:"))
        assert f"{BAND_WORDS[span.band]} from {span.start} until {span.end}" in lane_text
    # every marker drawn is an event row at its tick (and its step, for an operation)
    times = run.frame.groupby(level="order")["time"].first()
    for line, parts in marker_lines(fig):
        if parts[0] in ("reopen", "clock"):
            order = int(parts[1])
            for rows in events.values():
                assert any(step == str(order + 1) for _, step, _ in rows)
        elif parts[0] == "expiry":
            _, tenant, kind, key, _, end = parts
            assert (end, "", "deadline (expires): get returns None from this tick on") in \
                events[f"{tenant} / {kind} / {key}"]
        else:
            kind_of_marker, tenant, kind, key, order = parts
            [(tick, what)] = [(tick, what) for tick, step, what in events[f"{tenant} / {kind} / {key}"]
                              if step == str(int(order) + 1)]
            assert tick == str(times[int(order)]) and what.startswith(EVENT_WORDS[kind_of_marker])
    drawn = sum(1 for _, parts in marker_lines(fig) if parts[0] not in ("reopen", "clock"))
    lines = sum(1 for _, parts in marker_lines(fig) if parts[0] in ("reopen", "clock"))
    assert sum(len(rows) for rows in events.values()) == drawn + lines * len(events)
    assert description.alt.startswith("Timeline “A title”, ticks ")
    assert all(" / ".join(name) in description.alt for name in lanes)
    assert FACT_TEXT not in text


def test_the_demo_description_tells_the_story():
    description = plot_timeline(observe(demo_scenario()), title="The demonstration").description
    text = description.to_text()
    assert description.alt == (
        "Timeline “The demonstration”, ticks 100 to 108: orchard / checkpoint / run-a present "
        "100 to 108, visible 100 to 108; orchard / fact / preference present 103 to 108, visible "
        "103 to 108; harbour / fact / preference never present. The full description follows "
        "the figure.")
    assert "Across every lane: at step 3, the file is closed and reopened." in text
    assert "108         deadline (expires): get returns None from this tick on" in text
    assert "108   11    get returns None, although the row is still present" in text
    assert "108   12    purge orchard removes this row" in text
    assert "108   12    purge orchard keeps this row (its deadline has not come)" in text
    assert "Lane harbour / fact / preference: never present in records" in text


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
    assert "hidden but present from 108 until 115, when purge removes the row" in html
    assert data["text/plain"] == fig.description.to_text() == repr(fig)
    assert "<th scope=\"col\"" in html and "<caption" in html
