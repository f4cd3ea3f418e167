"""The time explorer shows what the store says: get beside the raw rows, at every step."""

import base64
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest
import traitlets

from workbook.teaching.explorer import CURSOR_LEAD, CURSOR_WIDTH, FUTURE_ALPHA, Explorer, State, explore, state_at
from workbook.store import Conflict, connect, forget, get, purge, put
from workbook.teaching.timeline import (
    Clock, Forget, Get, Purge, Put, Reopen, checkpoint, clock_backwards_scenario, demo_scenario,
    fact, late_purge_scenario, observe, passes, plot_timeline)

SCENARIOS = [demo_scenario, late_purge_scenario, clock_backwards_scenario]
FACT_TEXT = fact()["text"]


def replay(operations, folder):
    """Run the operations as performed against a fresh file with the store's own functions.

    Yields, after each one, its time, what get returns for each identity at that time and
    every raw row of records. An oracle independent of workbook.teaching.timeline's bookkeeping.
    """
    path = Path(folder) / "replay.db"
    db = connect(path)
    names = []
    for operation in operations:
        if isinstance(operation, (Put, Get, Forget)):
            name = (operation.tenant, operation.kind, operation.key)
            if name not in names:
                names.append(name)
    try:
        for operation in operations:
            try:
                match operation:
                    case Put(time, tenant, kind, key, value, expected, ttl):
                        put(db, tenant, kind, key, value, expected, time, ttl)
                    case Get():
                        pass
                    case Forget(_, tenant, kind, key, revision):
                        forget(db, tenant, kind, key, revision)
                    case Purge(time, tenant):
                        purge(db, tenant, time)
                    case Reopen():
                        db.close()
                        db = connect(path)
            except (Conflict, ValueError):
                pass
            gets = {name: get(db, *name, operation.time) for name in names}
            rows = sorted(db.execute("SELECT tenant, kind, key, revision, expires FROM records"))
            yield operation.time, gets, rows
    finally:
        db.close()


def shown_gets(state):
    return {tuple(identity.split(" / ")): (None if returns == "None" else (revision, expires))
            for identity, returns, revision, expires in state.gets.itertuples(index=False)}


def shown_rows(state):
    return sorted((*identity.split(" / "), revision, expires)
                  for identity, revision, expires, _ in state.rows.itertuples(index=False))


@pytest.mark.parametrize("make", SCENARIOS)
def test_every_slider_position_shows_what_the_store_says(make, tmp_path):
    run = observe(make())
    explorer = explore(run)
    assert (explorer.step, explorer.steps) == (1, len(run.operations))
    expected = list(replay(run.operations, tmp_path))
    images = set()
    # forwards, then backwards: the callback must not depend on where the slider came from
    orders = list(range(len(run.operations)))
    for order in orders + orders[::-1]:
        explorer.step = order + 1  # the slider counts steps from 1
        state = explorer.state
        assert explorer.order == order and state.step == order + 1
        time, gets, rows = expected[order]
        assert state == state_at(run, order)
        assert (explorer.header, explorer.tables) == (state.header(), state.tables_html())
        assert state.to_html() == f"<div><p style=\"margin:0 0 6px 0\"><b>{state.header()}</b></p>" \
            f"{state.tables_html()}</div>"
        assert state.time == time and state.order == order
        assert shown_gets(state) == {name: None if record is None
                                     else (record["revision"], record["expires"])
                                     for name, record in gets.items()}
        assert shown_rows(state) == [tuple(row) for row in rows]
        for identity, _, _, visible in state.rows.itertuples(index=False):
            record = gets[tuple(identity.split(" / "))]
            assert visible == ("hidden" if record is None else "visible")
        images.add(explorer.picture)
    assert len(images) == len(orders)  # the cursor moved on the picture at every step


def test_hidden_but_present_at_108_in_the_demo():
    run = observe(demo_scenario())
    state = state_at(run, 10)  # the get at 108, before the purge
    assert state.header() == ("step 11 of 13 · now = 108 · "
                              "get orchard / fact / preference returns None")
    assert state.rows.values.tolist() == [["orchard / checkpoint / run-a", 3, 162, "visible"],
                                          ["orchard / fact / preference", 4, 108, "hidden"]]
    assert "hidden</b>: the row is still in" in state.to_html()
    after_purge = state_at(run, 11)
    assert after_purge.rows["identity"].tolist() == ["orchard / checkpoint / run-a"]
    after_forget = state_at(run, 12)
    assert after_forget.rows.empty and "records holds no rows" in after_forget.to_text()
    assert "<i>no rows</i>" in after_forget.to_html()


def test_clock_pass_is_named_and_the_cursor_follows_it():
    run = observe(clock_backwards_scenario())
    explorer = explore(run)
    numbers = passes(run)
    for order in range(len(run.operations)):
        explorer.step = order + 1
        bands = [patch for patch in explorer.cursor.figure.findobj(matplotlib.patches.Rectangle)
                 if (patch.get_gid() or "").startswith("cursor_")]
        assert len(bands) == 2  # one per clock pass
        shown = [patch for patch in bands if patch.get_visible()]
        assert [patch.get_gid() for patch in shown] == [f"cursor_{numbers[order]}"]
        left, right = shown[0].get_x(), shown[0].get_x() + shown[0].get_width()
        tick = run.operations[order].time
        assert tick - CURSOR_LEAD <= left and right <= tick - CURSOR_LEAD + CURSOR_WIDTH + 1e-9
    assert "(clock pass 2)" in state_at(run, 4).header()
    assert "clock pass" not in state_at(run, 2).header()


def test_the_current_operation_is_enlarged_and_the_others_are_not():
    run = observe(demo_scenario())
    explorer = explore(run)
    for order in (0, 6, 11):
        explorer.step = order + 1
        for at, found in explorer.cursor.markers.items():
            for line, size, width in found:
                if line.get_marker() in ("None", None, ""):
                    assert (line.get_linewidth() > width) == (at == order)
                else:
                    assert (line.get_markersize() > size) == (at == order)
    assert set(explorer.cursor.markers) == set(range(len(run.operations)))


def test_static_fallback_is_deterministic_and_holds_no_ids():
    first = explore(observe(late_purge_scenario()), order=3)
    again = explore(late_purge_scenario(), order=3)  # a scenario is observed first
    (one, _), (two, _) = first._repr_mimebundle_(), again._repr_mimebundle_()
    assert set(one) == {"text/plain", "text/html", "image/png",
                        "application/vnd.jupyter.widget-view+json"}
    for mime in ("text/plain", "text/html", "image/png"):
        assert one[mime] == two[mime], mime
    assert one["application/vnd.jupyter.widget-view+json"]["model_id"] \
        != two["application/vnd.jupyter.widget-view+json"]["model_id"]
    for mime in ("text/plain", "text/html"):
        assert not re.search(r"0x[0-9a-f]{4,}|model_id|[0-9a-f]{32}", one[mime])
        assert first.run.operations[3].time == 110 and "now = 110" in one[mime]
    assert base64.b64decode(one["image/png"]).startswith(b"\x89PNG")
    assert "run the notebook and move the slider" in one["text/html"]
    assert "<script" not in one["text/html"] and " id=" not in one["text/html"]
    assert repr(first) == "<time explorer at step 4 of 6>"


def test_no_fact_text_anywhere():
    run = observe(demo_scenario())
    for order in range(len(run.operations)):
        state = state_at(run, order)
        assert FACT_TEXT not in state.to_text() + state.to_html()
    bundle, _ = explore(run)._repr_mimebundle_()
    assert FACT_TEXT not in bundle["text/plain"] + bundle["text/html"]


def test_the_widget_is_what_the_browser_test_looks_for():
    explorer = explore(demo_scenario())
    assert isinstance(explorer, Explorer)
    assert "workbook-explorer" in explorer._dom_classes
    # a labelled range input the keyboard moves, and a live region read at every step
    for part in ('type: "range"', 'label.textContent = "step"', 'label.htmlFor = id',
                 '"role", "status"', '"aria-live", "polite"', '"aria-atomic", "true"',
                 '"aria-valuetext", `step ${step} of ${steps}`', 'picture, "alt"',
                 'model.set("step"', "model.save_changes()",
                 '"data-lm-suppress-shortcuts", "true"'):
        assert part in explorer._esm, part
    assert (explorer.step, explorer.steps) == (1, 13)


def test_every_step_is_announced_in_short_and_the_whole_step_on_request():
    run = observe(demo_scenario())
    explorer = explore(run)
    said = set()
    for order in range(len(run.operations)):
        explorer.step = order + 1
        state = explorer.state
        spoken = explorer.announcement  # the live region's text at each step
        assert explorer.announced == order + 1  # the step it was said for
        # the slider's value text says the step; the live region does not repeat it
        assert "step " not in spoken and " of 13" not in spoken
        assert spoken.endswith(f"({state.did()}, now {state.time}).") and "→" not in spoken
        # what changed and the operation only: every identity and row wait for the button
        assert "get returns:" not in spoken and "records holds" not in spoken
        assert len(spoken.split()) <= 30, spoken
        whole = explorer.details  # what the button says
        assert whole.startswith(f"{state.did()}, now {state.time}. get returns: ")
        for name, returns in zip(state.gets["identity"], state.gets["returns"]):
            assert f"{name} {returns}" in whole
        assert f"records holds {len(state.rows)} row" in whole or "records holds no rows" in whole
        assert f"step {order + 1} of 13" in explorer.alt and "→" not in explorer.alt
        said.add(spoken + whole)
    assert len(said) == len(run.operations)
    explorer.step = 11
    assert explorer.announcement == (
        "orchard / fact / preference: hidden from get, the row stays in records (get orchard / "
        "fact / preference returns None, now 108).")
    assert explorer.details == (
        "get orchard / fact / preference returns None, now 108. get returns: orchard / checkpoint "
        "/ run-a revision 3; orchard / fact / preference None; harbour / fact / preference None. "
        "records holds 2 rows: orchard / checkpoint / run-a revision 3, expires 162, visible to "
        "get; orchard / fact / preference revision 4, expires 108, hidden from get.")
    with pytest.raises(traitlets.TraitError, match="step must be from 1 to 13"):
        explorer.step = 14
    assert explorer.step == 11


def test_the_whole_step_is_a_button_away_in_the_front_end():
    esm = explore(observe(demo_scenario()))._esm
    assert 'more.type = "button"' in esm and 'more.textContent = "Announce the whole step"' in esm
    # the button writes the whole step into the live region, emptied first so a repeat is said
    assert 'spoken.textContent = "";' in esm and 'spoken.textContent = model.get("details")' in esm
    assert '"details"' in esm.split("function render")[0]


def test_the_last_steps_alt_says_nothing_is_still_to_come():
    run = observe(demo_scenario())
    explorer = explore(run, step=13)
    assert explorer.alt.endswith("This is the last step: nothing is still to come.")
    assert "dimmed" not in explorer.alt
    explorer.step = 12
    assert explorer.alt.endswith("What is still to come is dimmed.")


def test_the_announcement_leads_with_what_changed():
    run = observe(demo_scenario())
    explorer = explore(run)
    first = {}
    for order in range(len(run.operations)):
        explorer.step = order + 1
        first[order + 1] = explorer.announcement.split(" (")[0]
    assert first[1] == "orchard / checkpoint / run-a: revision 1 written, expires 160"
    assert first[2] == "orchard / checkpoint / run-a: revision 2 replaces 1, expires 161"
    assert first[3] == "Nothing changed"  # the reopen: the file holds what it held
    assert first[7] == "Nothing changed"  # the stale write is refused
    assert first[12] == "orchard / fact / preference: row removed from records"
    assert first[13] == ("orchard / checkpoint / run-a: row removed from records; "
                         "orchard / checkpoint / run-a: get now returns None") or \
        first[13] == "orchard / checkpoint / run-a: row removed from records"
    # the clock moving back makes a hidden row visible again
    back = explore(observe(clock_backwards_scenario()))
    back.step = next(o for o, op in enumerate(back.run.operations) if isinstance(op, Clock)) + 1
    assert back.announcement.startswith("orchard / fact / preference: visible to get again "
                                        "(the clock is set to 104, now 104 (clock pass 2)).")


def test_a_stale_announcement_is_dropped_by_the_front_end():
    explorer = explore(observe(demo_scenario()))
    esm = explorer._esm
    # the live region is written only when the announcement is for the step the slider is on
    assert 'if (model.get("announced") === Number(input.value))' in esm
    assert '"announced"' in esm.split("function render")[0]  # a change to it re-renders
    # the header is shown but not inside the live region
    assert "heading.append(header)" in esm and "spoken.append" not in esm
    assert 'el.append(control, heading, spoken, more, tables, picture, description)' in esm


def test_the_picture_has_its_alt_and_the_timelines_description():
    run = observe(late_purge_scenario())
    explorer = explore(run, step=3)  # never drawn above: the still carries the full description
    assert explorer.title == "Present in records vs visible to get"
    assert explorer.alt.startswith("The timeline “Present in records vs visible to get” with "
                                   "the cursor at step 3 of 6, now = 108: get orchard / fact / "
                                   "preference returns None.")
    assert "Hidden but present for 7 ticks, 108 to 115" in explorer.description
    assert "Still to come: step 4, put at 110; step 5, get at 112; step 6, purge at 115." \
        in explorer.description
    data, metadata = explorer._repr_mimebundle_()
    assert metadata["image/png"]["alt"] == explorer.alt
    assert f'alt="{explorer.alt}"' in data["text/html"]
    assert f'src="data:image/png;base64,{data["image/png"]}"' in data["text/html"]


def test_a_still_below_its_figure_points_to_it_instead_of_repeating_it():
    from bs4 import BeautifulSoup

    run = observe(late_purge_scenario())
    figure = plot_timeline(run, title="A late purge")
    explorer = explore(run, step=3)
    assert explorer.title == "A late purge"  # the title of the figure it steps through
    assert "“A late purge” with the cursor at step 3 of 6" in explorer.alt
    data, _ = explorer._repr_mimebundle_()
    details = BeautifulSoup(data["text/html"], "html.parser").find("details")
    said = [p.get_text() for p in details.find_all("p")]
    assert said == ["The same run as the figure above (“A late purge”); its description is there.",
                    "Still to come: step 4, put at 110; step 5, get at 112; step 6, purge at 115."]
    assert details.find("table") is None  # the figure's events table is not repeated
    for part in figure.description.parts:
        if isinstance(part, str):
            assert part not in data["text/html"] and part not in data["text/plain"]
    explorer.step = 6
    assert "Nothing is still to come: this is the last step." in explorer.description
    assert explore(run, title="Another title").title == "Another title"
    assert explore(run).title == "A late purge"  # an explorer's own picture is not a figure above


def test_state_at_refuses_an_order_outside_the_run():
    run = observe(late_purge_scenario())
    for bad in (-1, 6, 2.0, True, "3"):
        with pytest.raises(ValueError, match="order must be an int from 0 to 5"):
            state_at(run, bad)
    assert isinstance(state_at(run, 5), State)


def test_a_scenario_with_a_rejected_write_and_a_reopen(tmp_path):
    scenario = [Put(100, "orchard", "checkpoint", "run-b", checkpoint(0), expected=None, ttl=3),
                Reopen(101),
                Put(101, "orchard", "checkpoint", "run-b", checkpoint(1), expected=7, ttl=3),
                Clock(104)]
    run = observe(scenario)
    states = [state_at(run, order) for order in range(4)]
    assert [s.outcome for s in states] == ["revision 1", "reopened", "Conflict", "clock set"]
    assert [s.rows["get"].tolist() for s in states] == [["visible"], ["visible"], ["visible"],
                                                        ["hidden"]]
    for state, (time, gets, rows) in zip(states, replay(run.operations, tmp_path)):
        assert shown_rows(state) == [tuple(row) for row in rows]


def test_the_cursor_moves_for_every_step_even_within_one_tick():
    run = observe(demo_scenario())  # at 108: a get, a purge and a forget
    explorer = explore(run)
    at_108 = [order for order, op in enumerate(run.operations) if op.time == 108]
    assert len(at_108) == 3
    places = []
    for order in at_108:
        explorer.step = order + 1
        band = next(p for p in explorer.cursor.bands if p.get_visible())
        places.append((band.get_x(), band.get_width()))
    lefts = [left for left, _ in places]
    assert lefts == sorted(lefts) and len(set(lefts)) == 3
    assert all(abs(width - CURSOR_WIDTH / 3) < 1e-9 for _, width in places)
    assert abs(lefts[0] - (108 - CURSOR_LEAD)) < 1e-9  # the three share the tick's width,
    assert lefts[0] < 108 < lefts[0] + places[0][1]     # and the first covers the tick itself


def test_what_has_not_happened_yet_is_dimmed():
    run = observe(clock_backwards_scenario())
    explorer = explore(run)
    numbers = passes(run)
    for order in range(len(run.operations)):
        explorer.step = order + 1
        band = next(p for p in explorer.cursor.bands if p.get_visible())
        for number, (ax, veil) in enumerate(zip(explorer.cursor.axes, explorer.cursor.veils), 1):
            low, high = ax.get_xlim()
            if number < numbers[order]:
                assert not veil.get_visible()  # an earlier clock pass: all of it has happened
            elif number > numbers[order]:
                assert veil.get_visible() and veil.get_x() == low  # a later pass: all to come
            else:
                assert veil.get_visible() and veil.get_x() == band.get_x() + band.get_width()
                assert abs(veil.get_x() + veil.get_width() - high) < 1e-9
        for at, found in explorer.cursor.markers.items():
            for line, _, _ in found:
                assert (line.get_alpha() == FUTURE_ALPHA) == (at > order)


def test_nothing_that_has_happened_is_veiled():
    """Every marker and line of a step already taken lies left of the veil (the demo reopens
    the file at 102 and does three things at 108)."""
    run = observe(demo_scenario())
    explorer = explore(run)
    for order in range(len(run.operations)):
        explorer.step = order + 1
        veil = next(v for v in explorer.cursor.veils if v.get_visible())
        for at, found in explorer.cursor.markers.items():
            if at <= order:
                for line, _, _ in found:
                    assert max(line.get_xdata()) < veil.get_x(), (order, at, line.get_gid())


def test_step_counts_from_one_as_the_slider_does():
    run = observe(late_purge_scenario())
    assert explore(run, step=4).state == explore(run, order=3).state
    assert explore(run, step=4).step == 4
    last = len(run.operations)
    assert explore(run, step=last).state.order == last - 1
    for wrong in (0, last + 1, 2.0, True, "4"):
        with pytest.raises(ValueError, match=f"step must be an int from 1 to {last}, got"):
            explore(run, step=wrong)
