"""A figure with its text alternative: the picture, a short ``alt`` and the full description.

Every figure the workbook shows carries a description computed from the data it was drawn from,
in the places each front end reads (checked in nbconvert 7.17 and JupyterLab 4.6):

- ``metadata["image/png"]["alt"]``: where IPython's ``Image(alt=...)`` puts it and nbconvert's
  classic template reads it (its lab template reads no alt; the HTML edition's template does);
- ``text/html``: the picture as ``<img alt="...">`` followed by the full description in a
  collapsible ``<details>`` block. JupyterLab's image renderer sets no alt from metadata, and it
  shows ``text/html`` before ``image/png``, so this is what a JupyterLab reader gets; nbconvert's
  HTML and the HTML edition show it too;
- ``text/plain``: the full description as text, for any front end without pictures.

nbval compares ``text/plain`` and ``text/html`` (never metadata or ``image/png``), so a stored
description is held to a fresh run like any other output.

``shown(frame)`` is the same care for a table: no unnamed 0-based index read out as row headers
(a frame indexed by ``order`` gets a ``step`` column counted from 1 instead), whole numbers as
ints, "none" for a missing value, an optional caption. tests/chapters/test_tables.py holds every
table the chapters store to it.
"""

import base64
import hashlib
import io
import numbers
from dataclasses import dataclass
from html import escape

import pandas as pd
from pandas.io.formats.style import Styler

PLACEHOLDER = "No description has been provided for this image"  # nbconvert's alt for none


@dataclass(frozen=True)
class Table:
    """A small table in a description: a caption, column names, rows of strings."""
    caption: str
    columns: tuple
    rows: tuple

    def to_text(self):
        widths = [max(len(str(cell)) for cell in column)
                  for column in zip(self.columns, *self.rows)]
        line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
        return "\n".join([self.caption + ":", *("  " + line(r) for r in (self.columns, *self.rows))])

    def to_html(self):
        cell = "text-align:left;padding:2px 10px;border-bottom:1px solid #767676"
        head = "".join(f'<th scope="col" style="{cell}">{escape(c)}</th>' for c in self.columns)
        body = "".join("<tr>" + "".join(f'<td style="{cell}">{escape(str(v))}</td>' for v in row)
                       + "</tr>" for row in self.rows)
        return ('<table style="border-collapse:collapse;margin:4px 0 10px 0">'
                f'<caption style="caption-side:top;text-align:left;font-weight:bold">'
                f"{escape(self.caption)}</caption><thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>")


@dataclass(frozen=True)
class Description:
    """What a figure shows, in words: ``alt`` (a sentence or two) and ``parts``, the full text.

    ``parts`` are paragraphs (strings) and ``Table``s, in reading order.
    """
    title: str
    alt: str
    parts: tuple

    def to_text(self):
        return "\n\n".join([f"Figure: {self.title}. {self.alt}",
                            *(p.to_text() if isinstance(p, Table) else p for p in self.parts)])

    def to_html(self):
        body = "".join(p.to_html() if isinstance(p, Table) else f'<p style="margin:4px 0">{escape(p)}</p>'
                       for p in self.parts)
        return ('<details class="workbook-description" style="margin:4px 0 8px 0">'
                f"<summary>Text description of the figure “{escape(self.title)}”</summary>"
                f"{body}</details>")


def png_bytes(fig, dpi=100):
    """The figure as PNG bytes, for ``IPython.display.Image`` or a file."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def bundle(png, description):
    """The notebook output of a described figure: (data, metadata) for IPython's display."""
    encoded = base64.b64encode(png).decode("ascii")
    html = (f'<div class="workbook-figure"><img src="data:image/png;base64,{encoded}" '
            f'alt="{escape(description.alt)}" style="max-width:100%;height:auto">'
            f"{description.to_html()}</div>")
    data = {"image/png": encoded, "text/html": html, "text/plain": description.to_text()}
    return data, {"image/png": {"alt": description.alt}}


class DescribedFigure:
    """A drawn figure and its description, shown by a notebook as ``bundle`` says."""

    def __init__(self, figure, description):
        if not isinstance(description, Description) or not description.alt.strip():
            raise ValueError("description must be a Description with a non-empty alt")
        self.figure, self.description = figure, description

    def _repr_mimebundle_(self, include=None, exclude=None):
        return bundle(png_bytes(self.figure), self.description)

    def __repr__(self):
        return self.description.to_text()


def described(figure, title, alt, parts):
    """Show ``figure`` with its description: ``alt`` (short) and ``parts`` (the full text)."""
    return DescribedFigure(figure, Description(title, alt, tuple(parts)))


# ---------------------------------------------------------------- tables

class StyledTable(Styler):
    """A Styler whose notebook output is the same on every run, for nbval.

    Its HTML ids come from the caption (or the table's contents) instead of a random uuid, and
    its plain-text form is the table itself (under its caption) instead of a memory address.
    """

    def __repr__(self):
        table = self.data.to_string(index=False)
        return f"{self.caption}:\n{table}" if self.caption else table


TABLE_STYLES = [
    {"selector": "th", "props": "text-align: left; padding: 4px 12px;"},
    {"selector": "td", "props": "text-align: left; padding: 4px 12px;"},
    {"selector": "caption", "props": "caption-side: top; font-weight: bold;"
                                     " text-align: left; padding-bottom: 6px;"},
]


def missing(value):
    return value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value)


def whole(values):
    """Whether every value that is not missing is a whole number (an int, or a float such as
    20.0 that pandas made of an int when a column of ints had a gap)."""
    present = [v for v in values if not missing(v)]
    return bool(present) and all(
        (isinstance(v, numbers.Integral) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer()) for v in present)


def readable(values):
    """A column's values as a table shows them: whole numbers as ints (20, not 20.0 or
    20.000000), pandas' missing values (<NA>, NaN) as "none"; a Python None stays "None", a
    value. The result is a column of Python objects, so that nothing turns it back to floats."""
    values = list(values)
    if whole(values):
        values = [v if missing(v) else int(v) for v in values]
    return pd.Series(["none" if missing(v) else v for v in values], dtype=object)


def readable_frame(frame):
    """A copy of ``frame`` whose every column ``readable`` has made ready to read."""
    data = pd.DataFrame({number: readable(frame.iloc[:, number])
                         for number in range(len(frame.columns))})
    data.columns = frame.columns
    return data


def shown(frame, caption=None):
    """``frame`` as a table to read, on screen or aloud: its index hidden, so no unnamed column
    of 0-based row numbers becomes every row's header; a frame indexed by ``order`` (the
    timeline's frame) instead gets a first column, ``step``, counted from 1 as the time explorer
    counts; a whole number reads as an int and a missing value as "none" (never 20.0, <NA> or
    NaN); ``caption``, if given, above the table. The frame itself is not changed."""
    data = frame.copy()
    if data.index.name == "order":
        data.insert(0, "step", [int(order) + 1 for order in data.index])
    data = readable_frame(data.reset_index(drop=True))
    seed = (caption or "") + data.to_csv()
    uuid = "t" + hashlib.sha1(seed.encode()).hexdigest()[:12]
    styler = StyledTable(data, uuid=uuid).hide(axis="index").format(str)  # 1.5, not 1.500000
    styler = styler.set_table_styles(TABLE_STYLES)
    return styler.set_caption(caption) if caption else styler
