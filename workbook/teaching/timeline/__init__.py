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

# The package's names, by concern.
from workbook.teaching.timeline.scenarios import *  # noqa: F401,F403
from workbook.teaching.timeline.observing import *  # noqa: F401,F403
from workbook.teaching.timeline.spans import *  # noqa: F401,F403
from workbook.teaching.timeline.tables import *  # noqa: F401,F403
from workbook.teaching.timeline.picture import *  # noqa: F401,F403
from workbook.teaching.timeline.description import describe_timeline  # noqa: F401
