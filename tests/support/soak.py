"""Sizes for the long-running tests: quick under make test, bigger under make soak."""
import os

SOAK = os.environ.get("WORKBOOK_SOAK", "0") not in ("", "0")


def scaled(quick, soak):
    """`quick` in a normal run; `soak` when WORKBOOK_SOAK=1 (make soak)."""
    return soak if SOAK else quick
