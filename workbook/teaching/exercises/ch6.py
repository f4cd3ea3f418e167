"""Chapter 6 exercises: write a test that kills a broken store and passes on the real one.
Their checks: checks/ch6.py."""
from workbook.teaching.exercises import Exercise, InChecks

q1 = Exercise(
    "6.1", "Write a test that fails on a purge using < instead of <=.",
    InChecks("ch6", "check_purge_killer"),
    hints=["The two purges differ only for a row whose expires is exactly now.",
           "Write the row so that its deadline falls on the tick you purge at, then assert on "
           "what purge returns or on what is left."])

q2 = Exercise(
    "6.2", "Write a test that fails on a forget that ignores the revision.",
    InChecks("ch6", "check_forget_killer"),
    hints=["Give the record a second revision, then forget with the first one.",
           "A correct forget returns False for a stale revision and leaves the record visible."])

q3 = Exercise(
    "6.3", "Write a test that fails when revisions restart after a forget.",
    InChecks("ch6", "check_put_killer"),
    hints=["The broken put only differs after a row is deleted and created again.",
           "Create, forget with the revision you got, create again: compare the two revisions."])
