"""Step through an observed run: what ``get`` returns beside what ``records`` holds.

``explore(run)`` returns a widget with one slider. Each slider position is one
operation of the scenario, in the order it ran, and shows the state right after
it. The slider and the header count steps from 1 ("step 3 of 7"), and so does
``explore(run, step=3)``; ``order``, an operation's index in ``run.frame``,
starts at 0 (``order=2`` is step 3):

- on the left, what ``get(tenant, kind, key, now)`` returned for every identity;
- on the right, the rows the ``records`` table physically held;
- below, the timeline picture with a cursor at ``now`` and the operation's
  markers enlarged; what has not happened yet is dimmed. Operations that share
  a tick share its width, so the cursor moves at every step.

The slider moves along operations rather than ticks because several
operations can share a tick (at 108 the demo reads, purges and forgets), a
tick with no operation was never observed, and when the clock moves
backwards a tick comes round twice. The header always says which tick
``now`` is.

In JupyterLab the widget is an anywidget: a labelled range input that the
keyboard moves (its value text says "step 3 of 7"), the header line, a live
region that screen readers announce at every step (what changed since the step
before, and the operation; an announcement for a step the slider has already
left is dropped), a button that announces the whole step on request (what
``get`` returned for each identity and what ``records`` held), the two tables,
the picture with its alt text, and its description: where the run was drawn above (by
``plot_timeline``), a pointer to that figure's description and the steps still
to come, otherwise the timeline's full description
(``workbook.teaching.timeline.describe_timeline``).

Everything shown comes from ``workbook.teaching.timeline.observe``: ``run.records``
(what ``get`` returned) and ``run.frame`` (what ``records`` held). Nothing
here recomputes visibility. ``state_at(run, order)`` is the pure function
behind the widget; tests and a static render use it directly.

A stored notebook keeps the widget's first state as plain text, HTML tables
and the picture (with its alt and description, as ``workbook.teaching.figures`` stores
every figure), so the page still says something where no kernel runs (nbval
compares the text and the HTML, which never hold a memory address or a
random id).
"""

import base64
import numbers
from dataclasses import dataclass
from html import escape

import anywidget
import pandas as pd
import traitlets
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from workbook.teaching.figures import Description, bundle
from workbook.teaching.timeline import (LINES, MARKERS, Run, drawn_title, lane, observe, passes,
                               plot_timeline, png_bytes)

CURSOR = "#F0E442"  # Okabe-Ito yellow: the one colour the timeline does not use
CURSOR_WIDTH = 0.7  # ticks, shared by the operations at one tick
CURSOR_LEAD = 0.15  # how far the cursor starts before its tick, so the first step covers it
FUTURE_ALPHA = 0.3  # markers of operations still to come
VEIL = 0.65  # how strongly the part of the picture after the cursor is whitened
TITLE = "Present in records vs visible to get"  # when the run was never drawn
STATIC_NOTE = ("A still of one step: run the notebook and move the slider "
               "to step through the operations.")


# ---------------------------------------------------------------- the state, as data

@dataclass(frozen=True, eq=False)
class State:
    """What the explorer shows after operation ``order``.

    ``gets`` has one row per identity: what ``get`` returned at ``time``
    (``returns`` is "None" or "revision R"; ``revision`` and ``expires`` are
    the returned record's, or missing). ``rows`` has one row per physical row
    in ``records``: its ``revision`` and ``expires``, and ``get``, which says
    whether ``get`` returned it ("visible") or not ("hidden"). Neither ever
    holds a value's contents.
    """
    order: int
    last: int
    time: int
    pass_: int
    operation: str
    outcome: str
    gets: pd.DataFrame
    rows: pd.DataFrame

    def __eq__(self, other):
        return (isinstance(other, State) and self.header() == other.header()
                and self.gets.equals(other.gets) and self.rows.equals(other.rows))

    @property
    def step(self):
        """The operation's place in the run, counted from 1."""
        return self.order + 1

    @property
    def passing(self):
        return f" (clock pass {self.pass_})" if self.pass_ > 1 else ""

    def did(self):
        """The operation and what it returned, in words: "get orchard / fact / preference
        returns None", "put ... raises Conflict", "the file is closed and reopened"."""
        if self.operation == "reopen":
            return "the file is closed and reopened"
        if self.operation == "clock":
            return f"the clock is set to {self.time}"
        raised = self.outcome in ("Conflict", "ValueError")
        return f"{self.operation} {'raises' if raised else 'returns'} {self.outcome}"

    def header(self):
        """One line: which step, the tick, the operation and its outcome."""
        return f"step {self.step} of {self.last + 1} · now = {self.time}{self.passing} · {self.did()}"

    def to_text(self):
        """The state as plain text, the same on every run."""
        gets = self.gets[["identity", "returns"]].rename(
            columns={"returns": f"get(..., now={self.time})"})
        lines = [self.header(), "", gets.to_string(index=False), ""]
        if self.rows.empty:
            lines.append("records holds no rows")
        else:
            rows = self.rows[["identity", "revision", "expires", "get"]]
            lines += ["records holds:", rows.to_string(index=False)]
        return "\n".join(lines)

    def to_html(self):
        """The header, then two tables side by side, with inline styles only (no classes,
        scripts or ids)."""
        return ("<div>"
                f"<p style=\"margin:0 0 6px 0\"><b>{escape(self.header())}</b></p>"
                f"{self.tables_html()}</div>")

    def tables_html(self):
        """The two tables side by side, and a note on what hidden means when a row is."""
        gets = table(
            f"get(tenant, kind, key, now={self.time}) returns",
            ["identity", "returns", "expires"],
            [(name, returns, "" if pd.isna(expires) else expires)
             for name, returns, expires in zip(self.gets["identity"], self.gets["returns"],
                                               self.gets["expires"])])
        rows = table(
            "records holds these rows",
            ["identity", "revision", "expires", "get"],
            [tuple(row) for row in self.rows[["identity", "revision", "expires", "get"]]
             .itertuples(index=False)],
            empty="no rows")
        hidden = (self.rows["get"] == "hidden").any()
        note = ("<p style=\"margin:4px 0 0 0\"><b>hidden</b>: the row is still in "
                "<code>records</code>, but <code>now</code> has reached its deadline "
                "(<code>expires</code>), so <code>get</code> returns None.</p>" if hidden else "")
        return ("<div style=\"display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start\">"
                f"{gets}{rows}</div>{note}")


CELL = "text-align:left;padding:2px 10px;border-bottom:1px solid #ccc"


def table(caption, columns, rows, empty=None):
    """A small HTML table with a caption; ``empty`` fills a table with no rows."""
    head = "".join(f"<th scope=\"col\" style=\"{CELL}\">{escape(column)}</th>" for column in columns)
    body = "".join("<tr>" + "".join(f"<td style=\"{CELL}\">{escape(str(value))}</td>"
                                    for value in row) + "</tr>" for row in rows)
    if not rows and empty:
        body = f"<tr><td style=\"{CELL}\" colspan=\"{len(columns)}\"><i>{escape(empty)}</i></td></tr>"
    return ("<table style=\"border-collapse:collapse\">"
            f"<caption style=\"caption-side:top;text-align:left;font-weight:bold;"
            f"padding-bottom:4px\">{escape(caption)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def identities_of(run):
    """The run's identities, in order of first mention (the lanes of the picture)."""
    frame = run.frame
    return list(dict.fromkeys(zip(frame["tenant"], frame["kind"], frame["key"])))


def state_at(run, order):
    """The state right after operation ``order`` (0 to ``len(run.operations) - 1``).

    ``gets`` comes from ``run.records`` (what ``get`` returned at that
    operation's time), ``rows`` from ``run.frame`` (what ``records`` held).
    """
    last = len(run.operations) - 1
    if isinstance(order, bool) or not isinstance(order, numbers.Integral) \
            or not 0 <= order <= last:
        raise ValueError(f"order must be an int from 0 to {last}, got {order!r}")
    order = int(order)
    seen = run.frame.loc[[order]]
    first = seen.iloc[0]
    gets, rows = [], []
    for name in identities_of(run):
        record = run.records[order][name]
        gets.append({"identity": lane(*name),
                     "returns": "None" if record is None else f"revision {record['revision']}",
                     "revision": None if record is None else record["revision"],
                     "expires": None if record is None else record["expires"]})
    for row in seen.itertuples(index=False):
        if row.present:
            rows.append({"identity": lane(row.tenant, row.kind, row.key),
                         "revision": int(row.revision), "expires": int(row.expires),
                         "get": "visible" if row.visible else "hidden"})
    gets = pd.DataFrame(gets, columns=["identity", "returns", "revision", "expires"])
    gets = gets.astype({"revision": "Int64", "expires": "Int64"})
    rows = pd.DataFrame(rows, columns=["identity", "revision", "expires", "get"])
    rows = rows.astype({"revision": "int64", "expires": "int64"})
    return State(order=order, last=last, time=int(first["time"]),
                 pass_=int(passes(run).loc[order]), operation=first["operation"],
                 outcome=first["outcome"], gets=gets, rows=rows)


# ---------------------------------------------------------------- the picture with a cursor

def slots(run):
    """(left edge, width) of each operation's cursor: the tick's width, shared in order.

    The first step of a tick covers the tick itself and later ones follow to its right, so
    nothing that happened at the tick is veiled as still to come."""
    frame = pd.DataFrame({"time": run.frame.groupby(level="order")["time"].first(),
                          "pass": passes(run)})
    group = frame.groupby(["pass", "time"], sort=False)
    place, count = group.cumcount(), group["time"].transform("size")
    width = CURSOR_WIDTH / count
    return pd.DataFrame({"left": frame["time"] - CURSOR_LEAD + place * width,
                         "width": width})


class Cursor:
    """The timeline figure with a yellow band at the current step, the step's markers
    enlarged, and everything after it dimmed."""

    def __init__(self, run, title):
        self.figure = plot_timeline(run.frame, title=title)  # a frame: not remembered as drawn
        self.axes = self.figure.get_axes()
        self.passes = passes(run)
        self.slots = slots(run)
        self.bands, self.veils = [], []
        for number, ax in enumerate(self.axes, start=1):
            band = Rectangle((self.slots["left"].iloc[0], 0), self.slots["width"].iloc[0], 1,
                             transform=ax.get_xaxis_transform(), facecolor=CURSOR, alpha=0.6,
                             edgecolor="none", zorder=3, gid=f"cursor_{number}")
            veil = Rectangle((0, 0), 0, 1, transform=ax.get_xaxis_transform(), facecolor="white",
                             alpha=VEIL, edgecolor="none", zorder=6, gid=f"future_{number}")
            ax.add_patch(band)
            ax.add_patch(veil)
            self.bands.append(band)
            self.veils.append(veil)
        self.markers = {}  # order -> [(line, original size, original edge width)]
        for line in self.figure.findobj(Line2D):
            parts = (line.get_gid() or "").split("_")
            if parts[0] in MARKERS and parts[0] != "expiry" or parts[0] in LINES:
                self.markers.setdefault(int(parts[-1]), []).append(
                    (line, line.get_markersize(), line.get_linewidth()))
        self.alphas = {line: line.get_alpha() for found in self.markers.values() for line, _, _ in found}
        self.images = {}

    def move(self, order):
        """Put the band at operation ``order``'s slot, in its clock pass's panel, and dim what
        comes after: the rest of that panel, every later panel, and later markers."""
        number = int(self.passes.loc[order])
        left, width = self.slots.loc[order, "left"], self.slots.loc[order, "width"]
        for index, (ax, band, veil) in enumerate(zip(self.axes, self.bands, self.veils), start=1):
            band.set_x(left)
            band.set_width(width)
            band.set_visible(index == number)
            low, high = ax.get_xlim()
            start = left + width if index == number else low
            veil.set_x(start)
            veil.set_width(max(high - start, 0))
            veil.set_visible(index >= number)
        for at, found in self.markers.items():
            for line, size, width in found:
                if line.get_marker() in ("None", None, ""):  # reopen and clock lines
                    line.set_linewidth(width * 2.5 if at == order else width)
                else:
                    line.set_markersize(size * 1.6 if at == order else size)
                line.set_alpha(FUTURE_ALPHA if at > order else self.alphas[line])

    def png(self, order):
        """PNG bytes of the picture with the cursor at ``order`` (drawn once per order)."""
        if order not in self.images:
            self.move(order)
            self.images[order] = png_bytes(self.figure)
        return self.images[order]


# ---------------------------------------------------------------- the widget

# The front end (anywidget runs it in JupyterLab): a labelled native range input, which the
# keyboard moves (arrows, Home, End, Page Up and Down) and whose value text says "step N of M";
# a header line; a live region (role="status") that screen readers announce at every step: what
# changed and the operation, in a few words (never "step N of M", which the slider's value text
# says, and never a step the slider has left); a button that announces the whole step, every
# identity's get and every row, when asked; the two tables; the picture with its alt; the
# description (a pointer to the figure above, and the steps still to come).
# Everything shown comes from the kernel's traits; the front end computes nothing.
ESM = """
const FIELDS = ["step", "steps", "header", "announcement", "announced", "details", "tables",
                "picture", "alt", "description"];

function render({ model, el }) {
  const id = `workbook-explorer-${Math.random().toString(36).slice(2)}`;
  const control = document.createElement("div");
  control.className = "workbook-explorer-control";
  const label = document.createElement("label");
  label.htmlFor = id;
  label.textContent = "step";
  const input = document.createElement("input");
  Object.assign(input, { type: "range", id, min: "1", step: "1" });
  // JupyterLab's own way to leave a control its keys: no notebook shortcut (the arrows move
  // between cells) runs while the slider has the focus.
  input.setAttribute("data-lm-suppress-shortcuts", "true");
  const readout = document.createElement("output");
  readout.className = "workbook-explorer-readout";
  readout.htmlFor = id;
  control.append(label, input, readout);
  // The header is seen, not announced: the live region says what changed, and the slider's
  // value text says which step it is.
  const heading = document.createElement("p");
  heading.className = "workbook-explorer-status";
  const header = document.createElement("b");
  heading.append(header);
  const spoken = document.createElement("p");
  spoken.className = "workbook-sr-only workbook-explorer-spoken";
  spoken.setAttribute("role", "status");
  spoken.setAttribute("aria-live", "polite");
  spoken.setAttribute("aria-atomic", "true");
  // The rest of the step, on request: every identity's get and every row, said in the live
  // region. Emptied first, so that asking twice says it twice.
  const more = document.createElement("button");
  more.type = "button";
  more.className = "workbook-explorer-more";
  more.textContent = "Announce the whole step";
  more.addEventListener("click", () => {
    spoken.textContent = "";
    setTimeout(() => { spoken.textContent = model.get("details"); }, 100);
  });
  const tables = document.createElement("div");
  tables.className = "workbook-explorer-tables";
  const picture = document.createElement("img");
  picture.className = "workbook-explorer-picture";
  const description = document.createElement("div");
  description.className = "workbook-explorer-description";
  el.append(control, heading, spoken, more, tables, picture, description);

  const put = (node, key, value) => { if (node[key] !== value) node[key] = value; };
  const show = () => {
    const step = model.get("step"), steps = model.get("steps");
    put(input, "max", String(steps));
    put(input, "value", String(step));
    input.setAttribute("aria-valuetext", `step ${step} of ${steps}`);
    put(readout, "textContent", String(step));
    put(header, "textContent", model.get("header"));
    // An announcement computed for a step the slider has already left is stale: drop it, and
    // say the one for the step the slider is on when it arrives.
    if (model.get("announced") === Number(input.value)) {
      put(spoken, "textContent", model.get("announcement"));
    }
    put(tables, "innerHTML", model.get("tables"));
    put(picture, "src", `data:image/png;base64,${model.get("picture")}`);
    put(picture, "alt", model.get("alt"));
    put(description, "innerHTML", model.get("description"));
  };
  input.addEventListener("input", () => {
    model.set("step", Number(input.value));
    model.save_changes();
  });
  for (const name of FIELDS) model.on(`change:${name}`, show);
  show();
  return () => { for (const name of FIELDS) model.off(`change:${name}`, show); };
}

export default { render };
"""

CSS = """
.workbook-explorer .workbook-explorer-control { display: flex; align-items: center; gap: 10px;
  max-width: 640px; }
.workbook-explorer .workbook-explorer-control input { flex: 1; }
.workbook-explorer .workbook-explorer-status { margin: 6px 0; }
.workbook-explorer .workbook-explorer-more { margin: 0 0 8px 0; }
.workbook-explorer .workbook-explorer-picture { max-width: 100%; height: auto; }
.workbook-explorer .workbook-sr-only { position: absolute; width: 1px; height: 1px;
  overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
"""


def changes(before, after):
    """What changed for each identity from ``before`` (the state one step earlier, or None
    before the first step) to ``after``, in words; "Nothing changed" if nothing did."""
    old_rows = {} if before is None else {r.identity: r for r in before.rows.itertuples(index=False)}
    old_gets = {} if before is None else dict(zip(before.gets["identity"], before.gets["returns"]))
    new_rows = {r.identity: r for r in after.rows.itertuples(index=False)}
    said = []
    for name, returns in zip(after.gets["identity"], after.gets["returns"]):
        was, now = old_rows.get(name), new_rows.get(name)
        if was is None and now is not None:
            said.append(f"{name}: revision {now.revision} written, expires {now.expires}")
        elif was is not None and now is None:
            said.append(f"{name}: row removed from records")
        elif was is not None and was.revision != now.revision:
            said.append(f"{name}: revision {now.revision} replaces {was.revision}, "
                        f"expires {now.expires}")
        elif was is not None and was.get != now.get:
            said.append(f"{name}: hidden from get, the row stays in records" if now.get == "hidden"
                        else f"{name}: visible to get again")
        elif old_gets.get(name, "None") != returns:
            said.append(f"{name}: get now returns {returns}")
    return "; ".join(said) if said else "Nothing changed"


def announcement(state, before=None):
    """What a screen reader says at a step, the live region's text: what changed since the step
    before, then the operation and its tick. The rest, every identity's get and every row, is
    ``details``, said when asked. The step number is the slider's own value text, so it is not
    repeated here."""
    return f"{changes(before, state)} ({state.did()}, now {state.time}{state.passing})."


def details(state):
    """The whole step in words, said on request: the operation and its tick, what get returns
    for every identity, and what records holds."""
    gets = "; ".join(f"{name} {returns}" for name, returns in
                     zip(state.gets["identity"], state.gets["returns"]))
    if state.rows.empty:
        rows = "records holds no rows"
    else:
        rows = f"records holds {len(state.rows)} {'row' if len(state.rows) == 1 else 'rows'}: " + \
            "; ".join(f"{name} revision {revision}, expires {expires}, "
                      f"{'visible to' if shown == 'visible' else 'hidden from'} get"
                      for name, revision, expires, shown in state.rows.itertuples(index=False))
    return f"{state.did()}, now {state.time}{state.passing}. get returns: {gets}. {rows}."


def still_to_come(run, order):
    """The steps after ``order``, each as "step 6, get at 112"."""
    frame = run.frame.groupby(level="order").first()
    later = [f"step {at + 1}, " + (f"clock set to {row.time}" if row.operation == "clock"
                                   else f"{row.operation.split()[0]} at {row.time}")
             for at, row in frame.loc[order + 1:].iterrows()]
    return ("Still to come: " + "; ".join(later) + "." if later
            else "Nothing is still to come: this is the last step.")


class Explorer(anywidget.AnyWidget):
    """The explorer: a slider over the operations, the state, and the picture.

    ``step`` (counted from 1) moves it; ``state`` is what it shows
    (``state_at(run, step - 1)``). The other traits are what the front end shows:
    ``header`` (the line above the tables), ``announcement`` (the live region) and
    ``announced``, the step it was said for (the front end drops an announcement whose step
    the slider has already left), ``details`` (the whole step, said when the learner asks),
    ``tables`` (``state.to_html()``'s tables), ``picture`` (the
    PNG, base64) with its ``alt``, and ``description``: where the run was drawn above, a line
    that points to that figure's description and the steps still to come; otherwise the
    timeline's full description and the steps still to come.
    """
    _esm = ESM
    _css = CSS
    step = traitlets.Int(1).tag(sync=True)
    steps = traitlets.Int(1).tag(sync=True)
    header = traitlets.Unicode().tag(sync=True)
    announcement = traitlets.Unicode().tag(sync=True)
    announced = traitlets.Int(0).tag(sync=True)
    details = traitlets.Unicode().tag(sync=True)
    tables = traitlets.Unicode().tag(sync=True)
    picture = traitlets.Unicode().tag(sync=True)
    alt = traitlets.Unicode().tag(sync=True)
    description = traitlets.Unicode().tag(sync=True)

    def __init__(self, run, order=0, title=None):
        self.run = run
        self.above = drawn_title(run)  # the figure this run was drawn as, above the explorer
        self.title = title or self.above or TITLE
        self.cursor = Cursor(run, self.title)
        self.state = None
        super().__init__(steps=len(run.operations), step=order + 1)
        self.add_class("workbook-explorer")
        self.show()

    @traitlets.validate("step")
    def _valid_step(self, proposal):
        value, steps = proposal["value"], self.steps
        if not 1 <= value <= max(steps, 1):
            raise traitlets.TraitError(f"step must be from 1 to {steps}, got {value}")
        return value

    @traitlets.observe("step")
    def _moved(self, change):
        if self.state is not None:
            self.show()

    @property
    def order(self):
        """The operation the slider is on, as an index of ``run.frame`` (step - 1)."""
        return self.step - 1

    def picture_alt(self):
        state = self.state
        coming = ("What is still to come is dimmed." if state.order < state.last
                  else "This is the last step: nothing is still to come.")
        return (f"The timeline “{self.title}” with the cursor at step {state.step} of "
                f"{state.last + 1}, now = {state.time}: {state.did()}. {coming}")

    def still(self):
        """The still's description: the figure above is the same run, so point to its
        description instead of repeating it, then say which steps are still to come."""
        coming = still_to_come(self.run, self.order)
        if self.above is not None:
            parts = (f"The same run as the figure above (“{self.above}”); its description is "
                     "there.", coming)
        else:
            parts = (*self.cursor.figure.description.parts, coming)
        return Description(self.title, self.picture_alt(), parts)

    def show(self, change=None):
        """The slider moved (or the widget was built): render the state at its step."""
        self.state = state_at(self.run, self.order)
        with self.hold_sync():
            self.header = self.state.header()
            before = state_at(self.run, self.order - 1) if self.order else None
            self.announcement = announcement(self.state, before)
            self.announced = self.step
            self.details = details(self.state)
            self.tables = self.state.tables_html()
            self.picture = base64.b64encode(self.cursor.png(self.order)).decode("ascii")
            self.alt = self.picture_alt()
            self.description = self.still().to_html()

    def __repr__(self):
        return f"<time explorer at step {self.step} of {self.steps}>"

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, plus a static fallback: text, the HTML tables and the picture with
        its alt and description (see ``workbook.teaching.figures``)."""
        data, metadata = super()._repr_mimebundle_(**kwargs) or ({}, {})
        still, still_metadata = bundle(self.cursor.png(self.order), self.still())
        data["text/plain"] = self.state.to_text()
        data["text/html"] = (self.state.to_html()
                             + f"<p style=\"margin:4px 0\"><i>{escape(STATIC_NOTE)}</i></p>"
                             + still["text/html"])
        data["image/png"] = still["image/png"]
        return data, {**metadata, **still_metadata}


def explore(run, order=0, title=None, *, step=None):
    """A slider over ``run``'s operations showing ``get`` beside ``records`` at each one.

    ``run`` is an observed Run, or a scenario (a list of operations) to observe
    first. The slider starts on ``step``, counted from 1 as the slider and its
    header count, or else on ``order``, counted from 0 like ``run.frame``
    (``step=5`` and ``order=4`` are the same operation). The stored notebook
    shows that state when no kernel runs. ``title`` defaults to the title the run was
    drawn with by ``plot_timeline``, so the explorer names the figure it steps through.
    """
    if not isinstance(run, Run):
        run = observe(run)
    if step is not None:
        steps = len(run.operations)
        if isinstance(step, bool) or not isinstance(step, numbers.Integral) \
                or not 1 <= step <= steps:
            raise ValueError(f"step must be an int from 1 to {steps}, got {step!r}")
        order = int(step) - 1
    return Explorer(run, order, title)
