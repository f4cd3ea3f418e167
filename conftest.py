"""Plain test reports wherever pytest does not colour its own output (a file, a CI log).

nbval colours its reports unless it is given --color=no, whatever the output is, and a chapter
cell that raises brings the kernel's traceback, which IPython colours for a notebook's screen.
So the colour is decided once, as pytest decides it for itself (a terminal, or FORCE_COLOR,
PY_COLORS, NO_COLOR), before nbval reads it; and without colour the escape codes of a kernel's
traceback are taken out of the report. `make test COLOR=yes` (pytest's --color=yes) asks for
colour anyway. This file must stand alone: tests/tooling/test_plain_output.py runs a copy of it.
"""
import re

import pytest

ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    # trylast: after pytest's terminal plugin has made its writer. Under pytest-xdist the
    # workers receive the controller's decision instead of deciding for their own pipes.
    if config.option.color == "auto":
        config.option.color = "yes" if config.get_terminal_writer().hasmarkup else "no"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed and isinstance(report.longrepr, str) and item.config.option.color == "no":
        report.longrepr = ESCAPES.sub("", report.longrepr)
    return report
