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

Everything shown comes from ``workbook.timeline.observe``: ``run.records``
(what ``get`` returned) and ``run.frame`` (what ``records`` held). Nothing
here recomputes visibility. ``state_at(run, order)`` is the pure function
behind the widget; tests and a static render use it directly.

A stored notebook keeps the widget's first state as plain text, an HTML
table and a PNG image, so the page still says something where no kernel
runs (nbval compares the text and the HTML, which never hold a memory
address or a random id).
"""

import base64
import numbers
from dataclasses import dataclass
from html import escape

import ipywidgets as widgets
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from workbook.timeline import LINES, MARKERS, Run, lane, observe, passes, plot_timeline, png_bytes

CURSOR = "#F0E442"  # Okabe-Ito yellow: the one colour the timeline does not use
CURSOR_WIDTH = 0.7  # ticks, shared by the operations at one tick
CURSOR_LEAD = 0.15  # how far the cursor starts before its tick, so the first step covers it
FUTURE_ALPHA = 0.3  # markers of operations still to come
VEIL = 0.65  # how strongly the part of the picture after the cursor is whitened
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

    def header(self):
        """One line: which step, the tick, the operation and its outcome."""
        passing = f" (clock pass {self.pass_})" if self.pass_ > 1 else ""
        return (f"step {self.step} of {self.last + 1} · now = {self.time}{passing} · "
                f"{self.operation} → {self.outcome}")

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
        """Two tables side by side, with inline styles only (no classes, scripts or ids)."""
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
        return ("<div>"
                f"<p style=\"margin:0 0 6px 0\"><b>{escape(self.header())}</b></p>"
                "<div style=\"display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start\">"
                f"{gets}{rows}</div>{note}</div>")


CELL = "text-align:left;padding:2px 10px;border-bottom:1px solid #ccc"


def table(caption, columns, rows, empty=None):
    """A small HTML table with a caption; ``empty`` fills a table with no rows."""
    head = "".join(f"<th style=\"{CELL}\">{escape(column)}</th>" for column in columns)
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
        self.figure = plot_timeline(run, title=title)
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

class Explorer(widgets.VBox):
    """The explorer: a slider over the operations, the state, and the picture.

    ``slider`` moves it; ``state`` is what it shows (``state_at(run, slider.value)``),
    ``table`` the HTML widget showing ``state.to_html()``, ``image`` the picture.
    """

    def __init__(self, run, order=0, title="Present in records vs visible to get"):
        self.run = run
        self.cursor = Cursor(run, title)
        steps = len(run.operations)
        self.slider = widgets.IntSlider(
            value=order + 1, min=1, max=steps, step=1, description="step",
            style={"description_width": "initial"},
            layout=widgets.Layout(width="min(100%, 640px)"))
        self.table = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        super().__init__([self.slider, self.table, self.image])
        self.add_class("workbook-explorer")
        self.state = None
        self.slider.observe(self.show, names="value")
        self.show()

    @property
    def order(self):
        """The operation the slider is on, as an index of ``run.frame`` (step - 1)."""
        return self.slider.value - 1

    def show(self, change=None):
        """The slider moved (or the widget was built): render the state at its value."""
        self.state = state_at(self.run, self.order)
        self.table.value = self.state.to_html()
        self.image.value = self.cursor.png(self.order)

    def __repr__(self):
        return f"<time explorer at step {self.slider.value} of {self.slider.max}>"

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, plus a static fallback: text, an HTML table and the picture."""
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/plain"] = self.state.to_text()
        bundle["text/html"] = (self.state.to_html()
                               + f"<p style=\"margin:4px 0\"><i>{escape(STATIC_NOTE)}</i></p>")
        bundle["image/png"] = base64.b64encode(self.image.value).decode("ascii")
        return bundle


def explore(run, order=0, title="Present in records vs visible to get", *, step=None):
    """A slider over ``run``'s operations showing ``get`` beside ``records`` at each one.

    ``run`` is an observed Run, or a scenario (a list of operations) to observe
    first. The slider starts on ``step``, counted from 1 as the slider and its
    header count, or else on ``order``, counted from 0 like ``run.frame``
    (``step=5`` and ``order=4`` are the same operation). The stored notebook
    shows that state when no kernel runs.
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
