"""Chapter 2 exercises: the exclusive deadline, visible versus present, predicting get.
Their checks: checks/ch2.py."""
from workbook.teaching.exercises import Exercise, InChecks

q1 = Exercise(
    "2.1", "Write last_visible(db, tenant, kind, key, start): the last tick get still returns "
    "the record.", InChecks("ch2", "check_last_visible"),
    hints=["get returns the record's expires; the query keeps a row while expires > now.",
           "If get at start returns None, return None; otherwise the answer is one less than "
           "the expires it returned."])

q2 = Exercise(
    "2.2", "Write read_state(db, tenant, kind, key, now) returning 'visible', 'expired' or "
    "'absent'.", InChecks("ch2", "check_read_state"),
    hints=["Ask get first: if it returns the record, the answer is 'visible'.",
           "Otherwise SELECT from records by tenant, kind and key with ? placeholders and no "
           "condition on expires: a row means 'expired', no row means 'absent'."])

q3 = Exercise(
    "2.3", "Predict the list the sequence's last line prints.", InChecks("ch2", "check_prediction"),
    reveal=InChecks("ch2", "show_run"),
    hints=["The fact is written at 100 with ttl 5, so expires is 105; get keeps it while "
           "expires > now.",
           "a is a dict that belongs to you: changing it never touches the database."])
