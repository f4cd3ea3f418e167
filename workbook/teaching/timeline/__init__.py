"""Watch the store over time: present rows, visible records and the gap between.

A record can be PRESENT (a physical row in ``records``) without being VISIBLE
(returned by ``get``). It is visible until a deadline that no read extends, and
present until ``purge`` or ``forget`` removes it. This module shows that gap on
real runs instead of describing it.

A scenario is a list of timed operations, for example::

    scenario = [
        Put(103, "orchard", "fact", "preference", fact(), expected=None, ttl=5),
        Get(107, "orchard", "fact", "preference"),
        Get(108, "orchard", "fact", "preference"),
        Purge(115, "orchard"),
    ]
    run = observe(scenario)   # runs it against a fresh SQLite file
    run.frame                 # what get returned and what records held, after each operation
    intervals(run)            # when each row was present, visible, and hidden but present
    plot_timeline(run)        # the same story as a picture, one lane per identity
    describe_timeline(run)    # and in words: the picture's text alternative

``demo_tables()`` turns the specification's demonstration into its three
chapter-5 tables, computed from such a run.

The package, by concern: ``scenarios`` (the operations and the chapters' scenarios),
``observing`` (running one and recording each step), ``spans`` (intervals), ``tables`` (the
demo's tables), ``picture`` (the plot) and ``description`` (the plot in words).
"""

# The module became a package by concern; every name it had is still importable from here.
import io  # noqa: F401
from dataclasses import dataclass, field, replace  # noqa: F401
from pathlib import Path  # noqa: F401
from tempfile import TemporaryDirectory  # noqa: F401

import matplotlib  # noqa: F401
import pandas as pd  # noqa: F401
from matplotlib.figure import Figure  # noqa: F401
from matplotlib.lines import Line2D  # noqa: F401
from matplotlib.patches import Patch, Rectangle  # noqa: F401
from matplotlib.ticker import MaxNLocator, MultipleLocator  # noqa: F401
from pandas.io.formats.style import Styler  # noqa: F401

from workbook.store import Conflict, connect, forget, get, identity, integer, purge, put  # noqa: F401
from workbook.teaching.timeline.scenarios import *  # noqa: F401,F403
from workbook.teaching.timeline.observing import *  # noqa: F401,F403
from workbook.teaching.timeline.spans import *  # noqa: F401,F403
from workbook.teaching.timeline.tables import *  # noqa: F401,F403
from workbook.teaching.timeline.picture import *  # noqa: F401,F403
from workbook.teaching.timeline.description import describe_timeline  # noqa: F401
