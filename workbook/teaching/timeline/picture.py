"""The timeline as a picture: one lane per identity, bands for present and visible, markers for events."""

import io
import weakref

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator, MultipleLocator

from workbook.teaching.figures import bundle, png_bytes  # noqa: F401 (png_bytes: a public name here)
from workbook.teaching.timeline.description import describe_timeline
from workbook.teaching.timeline.observing import Run, acted_on, frame_of, lane, lane_names, marker_kind, verb
from workbook.teaching.timeline.spans import intervals, passes


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
    """A matplotlib Figure that a notebook shows as PNG, with or without %matplotlib inline.

    ``description`` is its text alternative (``describe_timeline``), which the notebook output
    carries beside the picture (see ``workbook.teaching.figures``).
    """
    description = None

    def _repr_png_(self):
        return png_bytes(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return bundle(png_bytes(self), self.description)

    def __repr__(self):
        return self.description.to_text() if self.description else super().__repr__()


def plot_timeline(observed, title="Present in records vs visible to get", predicted=None):
    """Draw each identity's lane: when its row was present and when get returned it.

    The x axis is time in ticks. The wide hatched band is the physical row;
    the narrow dark band inside it is when ``get`` returns the record, so
    hatching with no dark core is a row that is hidden but present. Markers
    show writes, reads, deadlines, purges and forgets; dashed and dotted
    lines show reopening the file and setting the clock. When the clock moves
    backwards each pass gets its own panel (see ``passes``).
    Accepts a Run or its frame; returns a matplotlib Figure (never shown by
    pyplot, so a notebook displays it once: the PNG with its text alternative,
    ``fig.description``, from the same frame and intervals). ``predicted``, a list of
    ``(start, end)`` visible intervals, makes the description say whether the run matches it.
    A Run's title is remembered (``drawn_title``), so the time explorer stepping through the
    same run can name the figure it steps through.
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
    fig.description = describe_timeline(frame, title, predicted=predicted)
    if isinstance(observed, Run):
        DRAWN[observed] = title
    return fig


DRAWN = weakref.WeakKeyDictionary()  # Run -> the title it was last drawn with


def drawn_title(run):
    """The title ``plot_timeline`` last drew this run with, or None if it never drew it."""
    try:
        return DRAWN.get(run)
    except TypeError:  # not a Run: never drawn as one
        return None


def svg_bytes(fig):
    """The figure as SVG bytes that are identical on every render of the same data."""
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": SVG_SALT}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
